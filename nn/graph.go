package nn

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// bnEpsilon is added to the batch-norm variance, in training and when
// folding batch norm into the convolutions for inference.
const bnEpsilon = 1e-5

// graph is the network as a Gorgonia expression graph for one batch size.
// Its weight nodes share the Network's arrays, so a graph built once sees
// every later weight update.
type graph struct {
	g      *G.ExprGraph
	batch  int
	input  *G.Node // (batch, planes, height, width)
	policy *G.Node // logits (batch, actions)
	value  *G.Node // win/draw/loss logits (batch, 3)
	// ownership (batch, cells) and score (batch, 1) are the auxiliary
	// heads' tanh outputs, in training graphs of networks that have them.
	ownership, score *G.Node
	// inputData backs the input node.
	inputData []float32
	// weights is parallel to Network.learnables.
	weights []*G.Node
	// bn is parallel to Network.allConvs() (with Gorgonia's batch norm).
	bn []*G.BatchNormOp
}

// buildGraph builds the network's forward pass for batch positions. In
// training mode batch norm normalizes with the batch's statistics and
// updates its running statistics with bnMomentum; otherwise it uses the
// running statistics.
//
// With ownOps the training graph's convolutions and batch norms are the
// package's own operations (trainops.go), which update the Network's
// running statistics directly; otherwise Gorgonia's, whose statistics
// loadStats and storeStats copy.
//
// kernels, where not nil, are the direct convolution kernels that the
// package's own 3×3 convolutions and their input gradients run on.
func (n *Network) buildGraph(batch int, training, ownOps bool, bnMomentum float64, kernels *directArch) (*graph, error) {
	if batch < 1 {
		return nil, fmt.Errorf("batch size %d, want at least 1", batch)
	}
	sh := n.shape
	gr := &graph{g: G.NewGraph(), batch: batch}
	gr.inputData = make([]float32, batch*sh.planes*sh.cells())
	gr.input = G.NewTensor(gr.g, tensor.Float32, 4, G.WithName("input"),
		G.WithValue(tensor.New(tensor.WithShape(batch, sh.planes, sh.height, sh.width), tensor.WithBacking(gr.inputData))))
	nodes := make(map[*param]*G.Node, len(n.learnables))
	for _, p := range n.learnables {
		// A tensor of its own over the shared array: Gorgonia may reshape
		// the tensor it is given, never the Network's array.
		v := tensor.New(tensor.WithShape(p.shape...), tensor.WithBacking(p.data))
		node := G.NewTensor(gr.g, tensor.Float32, len(p.shape), G.WithName(p.name), G.WithValue(v))
		nodes[p] = node
		gr.weights = append(gr.weights, node)
	}

	b := builder{gr: gr, nodes: nodes, training: training, ownOps: ownOps && training, momentum: bnMomentum, height: sh.height, width: sh.width, kernels: kernels}
	x := b.convBN(gr.input, &n.stem, true)
	for i := range n.blocks {
		y := b.convBN(x, &n.blocks[i][0], true)
		if d := n.gpool[i]; d != nil {
			y = b.gpoolBias(y, *d, fmt.Sprintf("block%d.gpool", i))
		}
		if b.ownOps {
			x = b.ownConvBN(y, &n.blocks[i][1], true, x)
			continue
		}
		y = b.convBN(y, &n.blocks[i][1], false)
		x = b.relu(b.add(x, y))
	}
	// The convolutions in Network.allConvs's order, which Gorgonia's
	// batch norms are matched to.
	p := b.convBN(x, &n.policyConv, true)
	if n.policyOut == nil {
		gr.policy = b.dense(b.flatten(p), n.policyFC)
	}
	v := b.convBN(x, &n.valueConv, true)
	v = b.relu(b.dense(b.flatten(v), n.valueFC1))
	gr.value = b.dense(v, n.valueFC2)
	if n.policyOut != nil {
		gr.policy = b.convPolicy(p, n)
	}
	if training && n.ownershipConv != nil {
		gr.ownership = b.tanh(b.flatten(b.convBN(x, n.ownershipConv, false)))
	}
	if training && n.scoreFC != nil {
		gr.score = b.tanh(b.dense(v, *n.scoreFC))
	}
	if b.err != nil {
		return nil, fmt.Errorf("build network graph: %w", b.err)
	}
	return gr, nil
}

// builder keeps the first error of a chain of graph constructions.
type builder struct {
	gr       *graph
	nodes    map[*param]*G.Node
	training bool
	ownOps   bool
	momentum float64
	height   int
	width    int
	ws       *workspace // shared by the graph's own convolutions
	kernels  *directArch
	err      error
}

func (b *builder) convBN(x *G.Node, c *conv, relu bool) *G.Node {
	if b.err != nil {
		return nil
	}
	if b.ownOps {
		return b.ownConvBN(x, c, relu, nil)
	}
	pad := c.kernel / 2
	y, err := G.Conv2d(x, b.nodes[c.w], tensor.Shape{c.kernel, c.kernel}, []int{pad, pad}, []int{1, 1}, []int{1, 1})
	if err != nil {
		b.err = fmt.Errorf("%s: %w", c.w.name, err)
		return nil
	}
	y, _, _, op, err := G.BatchNorm(y, b.nodes[c.gamma], b.nodes[c.beta], b.momentum, bnEpsilon)
	if err != nil {
		b.err = fmt.Errorf("%s: %w", c.gamma.name, err)
		return nil
	}
	if err := op.SetTraining(b.training); err != nil {
		b.err = err
		return nil
	}
	b.gr.bn = append(b.gr.bn, op)
	if relu {
		return b.relu(y)
	}
	return y
}

// ownConvBN is convBN on the package's own operations; a non-nil skip
// ends a residual block: ReLU(batch norm + skip).
func (b *builder) ownConvBN(x *G.Node, c *conv, relu bool, skip *G.Node) *G.Node {
	if b.err != nil {
		return nil
	}
	name := c.w.name[:len(c.w.name)-len(".w")]
	if b.ws == nil {
		b.ws = &workspace{}
	}
	geom := convGeom{name: name, kernel: c.kernel, in: c.in, out: c.out, height: b.height, width: b.width, ws: b.ws, kernels: b.kernels}
	y, err := conv2d(x, b.nodes[c.w], geom)
	if err != nil {
		b.err = fmt.Errorf("%s: %w", c.w.name, err)
		return nil
	}
	y, err = batchNorm(y, b.nodes[c.gamma], b.nodes[c.beta], skip, name, c.mean.data, c.variance.data, b.momentum, relu)
	if err != nil {
		b.err = fmt.Errorf("%s: %w", c.gamma.name, err)
		return nil
	}
	return y
}

func (b *builder) relu(x *G.Node) *G.Node {
	if b.err != nil {
		return nil
	}
	y, err := G.Rectify(x)
	b.err = err
	return y
}

func (b *builder) tanh(x *G.Node) *G.Node {
	if b.err != nil {
		return nil
	}
	y, err := G.Tanh(x)
	b.err = err
	return y
}

func (b *builder) add(x, y *G.Node) *G.Node {
	if b.err != nil {
		return nil
	}
	z, err := G.Add(x, y)
	b.err = err
	return z
}

func (b *builder) flatten(x *G.Node) *G.Node {
	if b.err != nil {
		return nil
	}
	s := x.Shape()
	y, err := G.Reshape(x, tensor.Shape{s[0], s.TotalSize() / s[0]})
	b.err = err
	return y
}

func (b *builder) dense(x *G.Node, d dense) *G.Node {
	if b.err != nil {
		return nil
	}
	y, err := G.Mul(x, b.nodes[d.w])
	if err != nil {
		b.err = fmt.Errorf("%s: %w", d.w.name, err)
		return nil
	}
	y, err = G.BroadcastAdd(y, b.nodes[d.b], nil, []byte{0})
	if err != nil {
		b.err = fmt.Errorf("%s: %w", d.b.name, err)
		return nil
	}
	return y
}

// loadStats copies the Network's running statistics into the graph's
// batch-norm operators.
func (gr *graph) loadStats(n *Network) error {
	if len(gr.bn) == 0 {
		return nil
	}
	for i, c := range n.allConvs()[:len(gr.bn)] {
		mean := tensor.New(tensor.WithShape(c.out), tensor.WithBacking(c.mean.data))
		variance := tensor.New(tensor.WithShape(c.out), tensor.WithBacking(c.variance.data))
		if err := gr.bn[i].SetStats(mean, variance); err != nil {
			return fmt.Errorf("%s: %w", c.mean.name, err)
		}
	}
	return nil
}

// storeStats copies the graph's updated running statistics back into the
// Network.
func (gr *graph) storeStats(n *Network) {
	if len(gr.bn) == 0 {
		return
	}
	for i, c := range n.allConvs()[:len(gr.bn)] {
		mean, variance := gr.bn[i].Stats()
		copy(c.mean.data, mean.Data().([]float32))
		copy(c.variance.data, variance.Data().([]float32))
	}
}

// setInput copies encoded positions into the graph's input, zero-padding
// a partial batch.
func (gr *graph) setInput(inputs []float32) {
	m := copy(gr.inputData, inputs)
	clear(gr.inputData[m:])
}

// GorgoniaForward runs Gorgonia's forward pass in inference mode (batch
// norm with running statistics) on count encoded positions and returns
// the policy logits (count × actions) and the value head's
// win/draw/loss probabilities (count × 3). It builds a graph per call:
// it is the reference the Evaluator is checked against and a measure of
// Gorgonia's speed, not the search's evaluator.
func (n *Network) GorgoniaForward(inputs []float32, count int) (logits, wdl []float32, err error) {
	gr, err := n.buildGraph(count, false, false, 0, nil)
	if err != nil {
		return nil, nil, err
	}
	f := gorgoniaForward{gr: gr, vm: G.NewTapeMachine(gr.g, G.EvalMode())}
	defer f.vm.Close()
	return f.run(n, inputs)
}

// gorgoniaForward is a built inference graph and its machine, reused over
// runs of the same batch size.
type gorgoniaForward struct {
	gr *graph
	vm G.VM
}

func (f gorgoniaForward) run(n *Network, inputs []float32) (logits, wdl []float32, err error) {
	sh := n.shape
	if len(inputs) != f.gr.batch*sh.planes*sh.cells() {
		return nil, nil, fmt.Errorf("forward: %d input values, want %d", len(inputs), f.gr.batch*sh.planes*sh.cells())
	}
	if err := f.gr.loadStats(n); err != nil {
		return nil, nil, err
	}
	f.gr.setInput(inputs)
	// Gorgonia's batch norm writes into its previous output when the
	// machine still holds it, so every run starts from a reset machine.
	f.vm.Reset()
	if err := f.vm.RunAll(); err != nil {
		return nil, nil, fmt.Errorf("forward: %w", err)
	}
	logits = append([]float32(nil), f.gr.policy.Value().Data().([]float32)...)
	wdl = append([]float32(nil), f.gr.value.Value().Data().([]float32)...)
	for i := 0; i < f.gr.batch; i++ {
		softmaxInPlace(wdl[i*valueOutputs : (i+1)*valueOutputs])
	}
	return logits, wdl, nil
}
