package cpu

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/flipzero/flipzero/nn"
)

// bnEpsilon is added to the batch-norm variance, in training and when
// folding batch norm into the convolutions for inference.
const bnEpsilon = nn.BNEpsilon

// valueOutputs is the size of the win/draw/loss value head.
const valueOutputs = 3

// graph is the network as a Gorgonia expression graph for one batch size.
// Its weight nodes share the Network's arrays, so a graph built once sees
// every later weight update.
type graph struct {
	g      *G.ExprGraph
	batch  int
	shape  shape
	input  *G.Node // (batch, planes, height, width)
	policy *G.Node // logits (batch, actions)
	value  *G.Node // win/draw/loss logits (batch, 3)
	// ownership (batch, cells) and score (batch, 1) are the auxiliary
	// heads' tanh outputs, in training graphs of networks that have them.
	ownership, score *G.Node
	// softPolicy is the soft policy head's logits (batch, actions), in
	// training graphs of networks that have it.
	softPolicy *G.Node
	// inputData backs the input node.
	inputData []float32
	// weights is parallel to Network.Learnables.
	weights []*G.Node
	// bn are Gorgonia's batch norms (in graphs with its operations), and
	// bnConvs the convolution each normalizes; stats is the network's
	// running statistics, which they read and update.
	bn      []*G.BatchNormOp
	bnConvs []nn.ConvDesc
	stats   []nn.Tensor
}

// graphOptions say what buildGraph builds.
type graphOptions struct {
	// training: batch norm normalizes with the batch's statistics and
	// moves its running statistics by bnMomentum towards them; otherwise
	// it uses the running statistics.
	training   bool
	bnMomentum float64
	// ownOps: the training graph's convolutions and batch norms are the
	// package's own operations (trainops.go), which update the Network's
	// running statistics directly; otherwise Gorgonia's, whose statistics
	// loadStats and storeStats copy.
	ownOps bool
	// kernels, where not nil, are the direct convolution kernels that the
	// package's own 3×3 convolutions and their input gradients run on.
	kernels *directArch
	// replica is which replica of a data-parallel step the graph is
	// (replicas.go), with the package's own operations; zero: alone.
	replica replicaPart
}

// buildGraph builds the network's forward pass for batch positions.
func buildGraph(n *nn.Network, batch int, opts graphOptions) (*graph, error) {
	if batch < 1 {
		return nil, fmt.Errorf("batch size %d, want at least 1", batch)
	}
	d := n.Describe()
	sh := shape{planes: d.Planes, height: d.Height, width: d.Width, actions: d.Actions}
	gr := &graph{g: G.NewGraph(), batch: batch, shape: sh, stats: n.Statistics()}
	gr.inputData = make([]float32, batch*sh.planes*sh.cells())
	gr.input = G.NewTensor(gr.g, tensor.Float32, 4, G.WithName("input"),
		G.WithValue(tensor.New(tensor.WithShape(batch, sh.planes, sh.height, sh.width), tensor.WithBacking(gr.inputData))))
	learnables := n.Learnables()
	for _, p := range learnables {
		// A tensor of its own over the shared array: Gorgonia may reshape
		// the tensor it is given, never the Network's array.
		v := tensor.New(tensor.WithShape(p.Shape...), tensor.WithBacking(p.Data))
		gr.weights = append(gr.weights, G.NewTensor(gr.g, tensor.Float32, len(p.Shape), G.WithName(p.Name), G.WithValue(v)))
	}

	b := builder{gr: gr, learnables: learnables, training: opts.training, ownOps: opts.ownOps && opts.training, momentum: opts.bnMomentum,
		height: sh.height, width: sh.width, kernels: opts.kernels, replica: opts.replica}
	x := b.convBN(gr.input, d.Stem, true)
	for _, block := range d.Blocks {
		y := b.convBN(x, block.A, true)
		if block.Pool != nil {
			y = b.gpoolBias(y, *block.Pool)
		}
		if b.ownOps {
			x = b.ownConvBN(y, block.B, true, x)
			continue
		}
		y = b.convBN(y, block.B, false)
		x = b.relu(b.add(x, y))
	}
	p := b.convBN(x, d.PolicyConv, true)
	var flatP *G.Node
	if d.PolicyFC != nil {
		flatP = b.flatten(p)
		gr.policy = b.dense(flatP, *d.PolicyFC)
	}
	v := b.convBN(x, d.ValueConv, true)
	v = b.relu(b.dense(b.flatten(v), d.ValueFC1))
	gr.value = b.dense(v, d.ValueFC2)
	if d.PolicyOut != nil {
		gr.policy = b.convPolicy(p, *d.PolicyOut, d.PolicyGlobal, d.PolicyIndex)
	}
	switch {
	case !opts.training:
	case d.SoftPolicyFC != nil:
		gr.softPolicy = b.dense(flatP, *d.SoftPolicyFC)
	case d.SoftPolicyOut != nil:
		gr.softPolicy = b.convPolicy(p, *d.SoftPolicyOut, d.SoftPolicyGlobal, d.PolicyIndex)
	}
	if opts.training && d.Ownership != nil {
		gr.ownership = b.tanh(b.flatten(b.convBN(x, *d.Ownership, false)))
	}
	if opts.training && d.Score != nil {
		gr.score = b.tanh(b.dense(v, *d.Score))
	}
	if b.err != nil {
		return nil, fmt.Errorf("build network graph: %w", b.err)
	}
	return gr, nil
}

// builder keeps the first error of a chain of graph constructions.
type builder struct {
	gr *graph
	// learnables are the network's arrays, parallel to gr.weights.
	learnables []nn.Tensor
	training   bool
	ownOps     bool
	momentum   float64
	height     int
	width      int
	ws         *workspace // shared by the graph's own convolutions
	kernels    *directArch
	replica    replicaPart
	bnLayers   int // the package's own batch norms built so far
	err        error
}

func (b *builder) convBN(x *G.Node, c nn.ConvDesc, relu bool) *G.Node {
	if b.err != nil {
		return nil
	}
	if b.ownOps {
		return b.ownConvBN(x, c, relu, nil)
	}
	pad := c.Kernel / 2
	w := b.gr.weights
	y, err := G.Conv2d(x, w[c.W], tensor.Shape{c.Kernel, c.Kernel}, []int{pad, pad}, []int{1, 1}, []int{1, 1})
	if err != nil {
		b.err = fmt.Errorf("%s: %w", c.Name, err)
		return nil
	}
	y, _, _, op, err := G.BatchNorm(y, w[c.Gamma], w[c.Beta], b.momentum, bnEpsilon)
	if err != nil {
		b.err = fmt.Errorf("%s batch norm: %w", c.Name, err)
		return nil
	}
	if err := op.SetTraining(b.training); err != nil {
		b.err = err
		return nil
	}
	b.gr.bn = append(b.gr.bn, op)
	b.gr.bnConvs = append(b.gr.bnConvs, c)
	if relu {
		return b.relu(y)
	}
	return y
}

// ownConvBN is convBN on the package's own operations; a non-nil skip
// ends a residual block: ReLU(batch norm + skip).
func (b *builder) ownConvBN(x *G.Node, c nn.ConvDesc, relu bool, skip *G.Node) *G.Node {
	if b.err != nil {
		return nil
	}
	if b.ws == nil {
		b.ws = &workspace{procs: b.replica.procs}
	}
	w, stats := b.gr.weights, b.gr.stats
	geom := convGeom{name: c.Name, kernel: c.Kernel, in: c.In, out: c.Out, height: b.height, width: b.width, ws: b.ws, kernels: b.kernels}
	y, err := conv2d(x, w[c.W], geom)
	if err != nil {
		b.err = fmt.Errorf("%s: %w", c.Name, err)
		return nil
	}
	sums := b.replica.sums(b.bnLayers, 2*c.Out+1)
	b.bnLayers++
	y, err = batchNorm(y, w[c.Gamma], w[c.Beta], skip, c.Name, stats[c.Mean].Data, stats[c.Variance].Data, b.momentum, relu, sums, b.replica.procs)
	if err != nil {
		b.err = fmt.Errorf("%s batch norm: %w", c.Name, err)
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

func (b *builder) dense(x *G.Node, d nn.DenseDesc) *G.Node {
	if b.err != nil {
		return nil
	}
	y, err := G.Mul(x, b.gr.weights[d.W])
	if err != nil {
		b.err = fmt.Errorf("%s: %w", d.Name, err)
		return nil
	}
	y, err = G.BroadcastAdd(y, b.gr.weights[d.B], nil, []byte{0})
	if err != nil {
		b.err = fmt.Errorf("%s bias: %w", d.Name, err)
		return nil
	}
	return y
}

// loadStats copies the network's running statistics into Gorgonia's
// batch-norm operators, where the graph has them.
func (gr *graph) loadStats() error {
	for i, c := range gr.bnConvs {
		mean := tensor.New(tensor.WithShape(c.Out), tensor.WithBacking(gr.stats[c.Mean].Data))
		variance := tensor.New(tensor.WithShape(c.Out), tensor.WithBacking(gr.stats[c.Variance].Data))
		if err := gr.bn[i].SetStats(mean, variance); err != nil {
			return fmt.Errorf("%s batch-norm statistics: %w", c.Name, err)
		}
	}
	return nil
}

// storeStats copies Gorgonia's updated running statistics back into the
// network.
func (gr *graph) storeStats() {
	for i, c := range gr.bnConvs {
		mean, variance := gr.bn[i].Stats()
		copy(gr.stats[c.Mean].Data, mean.Data().([]float32))
		copy(gr.stats[c.Variance].Data, variance.Data().([]float32))
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
func GorgoniaForward(n *nn.Network, inputs []float32, count int) (logits, wdl []float32, err error) {
	gr, err := buildGraph(n, count, graphOptions{})
	if err != nil {
		return nil, nil, err
	}
	f := gorgoniaForward{gr: gr, vm: G.NewTapeMachine(gr.g, G.EvalMode())}
	defer f.vm.Close()
	return f.run(inputs)
}

// gorgoniaForward is a built inference graph and its machine, reused over
// runs of the same batch size.
type gorgoniaForward struct {
	gr *graph
	vm G.VM
}

func (f gorgoniaForward) run(inputs []float32) (logits, wdl []float32, err error) {
	sh := f.gr.shape
	if len(inputs) != f.gr.batch*sh.planes*sh.cells() {
		return nil, nil, fmt.Errorf("forward: %d input values, want %d", len(inputs), f.gr.batch*sh.planes*sh.cells())
	}
	if err := f.gr.loadStats(); err != nil {
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
