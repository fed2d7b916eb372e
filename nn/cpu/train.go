package cpu

import (
	"errors"
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/flipzero/flipzero/nn"
)

const illegalLogit = -1e4

// Trainer trains a network with Gorgonia: one graph and tape machine per
// batch size, built on first use. It owns the network's weights while it
// runs; it is not safe for concurrent use.
type Trainer struct {
	net *nn.Network
	cfg nn.TrainConfig
	// learnables are the network's arrays; shape its game's encoding.
	learnables []nn.Tensor
	shape      shape
	// velocity is the momentum buffer, parallel to net.learnables.
	velocity [][]float32
	steps    int64
	graphs   map[int]*trainGraph
	// gorgoniaOps builds graphs with Gorgonia's own convolution and batch
	// norm: the reference the package's operations are tested against.
	gorgoniaOps bool
	// kernels are the direct convolution kernels the package's 3×3
	// convolutions run on, nil for im2col + matrix multiply (set when the
	// trainer is made, as evaluators choose theirs).
	kernels *directArch
}

// trainGraph is the forward pass, the losses and their gradients for one
// batch size.
type trainGraph struct {
	gr *graph
	vm G.VM
	// Backing arrays of the target nodes.
	maskData, maskBiasData, policyData, valueData []float32
	policyLoss, valueLoss                         *G.Node
	// The auxiliary heads' targets and weights (each sample's share of
	// the loss, times the config's weight) and their weighted losses,
	// where the network has the heads.
	ownTarget, ownWeight, scoreTarget, scoreWeight []float32
	ownLoss, scoreLoss                             *G.Node
	grads                                          G.Nodes // parallel to net.learnables
}

// NewTrainer makes a trainer for net with a zero momentum buffer.
func NewTrainer(net *nn.Network, cfg nn.TrainConfig) (*Trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("train config: %w", err)
	}
	t := &Trainer{net: net, cfg: cfg, graphs: map[int]*trainGraph{}}
	if arch, ok := directDefault(); ok {
		t.kernels = &arch
	}
	d := net.Describe()
	t.shape = shape{planes: d.Planes, height: d.Height, width: d.Width, actions: d.Actions}
	t.learnables = net.Learnables()
	for _, p := range t.learnables {
		t.velocity = append(t.velocity, make([]float32, len(p.Data)))
	}
	return t, nil
}

// NewReferenceTrainer is a trainer whose graph uses Gorgonia's own
// convolution and batch norm, which share no code with any backend's:
// the reference that backends and the package's own operations are
// checked against (nntest), not one to train with.
func NewReferenceTrainer(net *nn.Network, cfg nn.TrainConfig) (*Trainer, error) {
	t, err := NewTrainer(net, cfg)
	if err != nil {
		return nil, err
	}
	t.gorgoniaOps = true
	return t, nil
}

// Network is the network being trained.
func (t *Trainer) Network() *nn.Network { return t.net }

// Config is the optimizer's current configuration.
func (t *Trainer) Config() nn.TrainConfig { return t.cfg }

// SetLearningRate changes the learning rate from the next step on.
func (t *Trainer) SetLearningRate(lr float64) error {
	c := t.cfg
	c.LearningRate = lr
	if err := c.Validate(); err != nil {
		return fmt.Errorf("train config: %w", err)
	}
	t.cfg = c
	return nil
}

// Steps is the number of training steps taken, including those before
// the checkpoint the trainer was loaded from.
func (t *Trainer) Steps() int64 { return t.steps }

// Step takes one optimizer step on the batch and returns its losses,
// computed before the update.
func (t *Trainer) Step(b nn.Batch) (nn.Losses, error) {
	losses, grads, err := t.gradients(b)
	if err != nil {
		return nn.Losses{}, err
	}
	l2 := 0.0
	for _, p := range t.learnables {
		if p.Decay {
			for _, w := range p.Data {
				l2 += float64(w) * float64(w)
			}
		}
	}
	losses.L2 = t.cfg.WeightDecay * l2
	losses.Total = losses.Policy + losses.Value + t.cfg.OwnershipWeight*losses.Ownership + t.cfg.ScoreWeight*losses.Score + losses.L2
	if math.IsNaN(losses.Total) || math.IsInf(losses.Total, 0) {
		return losses, fmt.Errorf("training step %d: policy loss %g, value loss %g, ownership %g, score %g, L2 %g; weights left unchanged",
			t.steps+1, losses.Policy, losses.Value, losses.Ownership, losses.Score, losses.L2)
	}
	lr, mu, decay := float32(t.cfg.LearningRate), float32(t.cfg.Momentum), float32(2*t.cfg.WeightDecay)
	for i, p := range t.learnables {
		v, g := t.velocity[i], grads[i]
		d := decay
		if !p.Decay {
			d = 0
		}
		for j, w := range p.Data {
			v[j] = mu*v[j] + g[j] + d*w
			p.Data[j] = w - lr*v[j]
		}
	}
	t.steps++
	return losses, nil
}

// gradients runs the forward and backward passes on the batch, updates the
// batch-norm running statistics and returns the losses (but L2) and the
// gradient of their weighted sum for each learnable (valid until the next
// call).
func (t *Trainer) gradients(b nn.Batch) (losses nn.Losses, grads [][]float32, err error) {
	sh := t.shape
	size := sh.planes * sh.cells()
	if size == 0 || len(b.Inputs)%size != 0 || len(b.Inputs) == 0 {
		return losses, nil, fmt.Errorf("training batch: %d input values, want a positive multiple of %d", len(b.Inputs), size)
	}
	n := len(b.Inputs) / size
	if err := b.Check(n, sh.actions, sh.cells()); err != nil {
		return losses, nil, fmt.Errorf("training batch of %d: %w", n, err)
	}
	tg, err := t.graph(n)
	if err != nil {
		return losses, nil, err
	}
	weightSum := 0.0
	for i := 0; i < n; i++ {
		weightSum += float64(b.Weight(i))
	}
	if weightSum <= 0 {
		return losses, nil, errors.New("training batch: the sample weights sum to zero")
	}
	tg.gr.setInput(b.Inputs)
	copy(tg.maskData, b.Legal)
	for i, m := range b.Legal {
		tg.maskBiasData[i] = (1 - m) * illegalLogit
	}
	for i := 0; i < n; i++ {
		w := float32(float64(b.Weight(i)) / weightSum)
		for a := i * sh.actions; a < (i+1)*sh.actions; a++ {
			tg.policyData[a] = b.Policy[a] * w
		}
		for k := i * valueOutputs; k < (i+1)*valueOutputs; k++ {
			tg.valueData[k] = b.Value[k] * w
		}
	}
	auxShare := tg.setAuxTargets(b, n, sh.cells(), t.cfg)
	if err := tg.gr.loadStats(); err != nil {
		return losses, nil, err
	}
	// Reset rewinds the tape; Gorgonia's batch norm also needs the fresh
	// output buffers it gives.
	tg.vm.Reset()
	if err := tg.vm.RunAll(); err != nil {
		return losses, nil, fmt.Errorf("training step: %w", err)
	}
	tg.gr.storeStats()
	grads = make([][]float32, len(tg.grads))
	for i, g := range tg.grads {
		grads[i] = g.Value().Data().([]float32)
	}
	losses = nn.Losses{Policy: scalar(tg.policyLoss), Value: scalar(tg.valueLoss)}
	// The weighted losses back to mean squared errors over the samples
	// that have targets.
	if tg.ownLoss != nil && auxShare > 0 && t.cfg.OwnershipWeight > 0 {
		losses.Ownership = scalar(tg.ownLoss) / (t.cfg.OwnershipWeight * auxShare)
	}
	if tg.scoreLoss != nil && auxShare > 0 && t.cfg.ScoreWeight > 0 {
		losses.Score = scalar(tg.scoreLoss) / (t.cfg.ScoreWeight * auxShare)
	}
	return losses, grads, nil
}

// setAuxTargets fills the auxiliary heads' targets and weights for the
// batch and returns the share of the batch's weight that has targets.
// The weights make each head's loss the mean squared error over the
// samples with targets (per cell for ownership), times the config's
// weight, times that share: samples without targets neither count nor
// dilute the others.
func (tg *trainGraph) setAuxTargets(b nn.Batch, n, cells int, cfg nn.TrainConfig) (share float64) {
	if tg.ownLoss == nil && tg.scoreLoss == nil {
		return 0
	}
	clear(tg.ownWeight)
	clear(tg.scoreWeight)
	if b.Aux == nil {
		return 0
	}
	total, with := 0.0, 0.0
	for i := 0; i < n; i++ {
		total += float64(b.Weight(i))
		if b.Aux[i] == 1 {
			with += float64(b.Weight(i))
		}
	}
	if with == 0 {
		return 0
	}
	for i := 0; i < n; i++ {
		if b.Aux[i] != 1 {
			continue
		}
		w := float64(b.Weight(i)) / total
		if tg.ownLoss != nil {
			copy(tg.ownTarget[i*cells:(i+1)*cells], b.Ownership[i*cells:(i+1)*cells])
			ow := float32(w * cfg.OwnershipWeight / float64(cells))
			for c := i * cells; c < (i+1)*cells; c++ {
				tg.ownWeight[c] = ow
			}
		}
		if tg.scoreLoss != nil {
			tg.scoreTarget[i] = b.Margin[i]
			tg.scoreWeight[i] = float32(w * cfg.ScoreWeight)
		}
	}
	return with / total
}

func scalar(n *G.Node) float64 {
	switch v := n.Value().Data().(type) {
	case float32:
		return float64(v)
	case []float32:
		return float64(v[0])
	}
	return math.NaN()
}

// use.
func (t *Trainer) graph(n int) (*trainGraph, error) {
	if tg, ok := t.graphs[n]; ok {
		return tg, nil
	}
	gr, err := buildGraph(t.net, n, true, !t.gorgoniaOps, t.cfg.BatchNormMomentum, t.kernels)
	if err != nil {
		return nil, err
	}
	actions := t.shape.actions
	tg := &trainGraph{
		gr:           gr,
		maskData:     make([]float32, n*actions),
		maskBiasData: make([]float32, n*actions),
		policyData:   make([]float32, n*actions),
		valueData:    make([]float32, n*valueOutputs),
	}
	input := func(name string, data []float32, cols int) *G.Node {
		return G.NewMatrix(gr.g, tensor.Float32, G.WithName(name),
			G.WithValue(tensor.New(tensor.WithShape(n, cols), tensor.WithBacking(data))))
	}
	mask := input("legal", tg.maskData, actions)
	maskBias := input("illegal-bias", tg.maskBiasData, actions)
	policyTarget := input("policy-target", tg.policyData, actions)
	valueTarget := input("value-target", tg.valueData, valueOutputs)

	var chainErr error
	do := func(f func() (*G.Node, error)) *G.Node {
		if chainErr != nil {
			return nil
		}
		out, err := f()
		chainErr = err
		return out
	}
	// Illegal actions get a fixed very negative logit: no probability and
	// no gradient, whatever the network says about them.
	masked := do(func() (*G.Node, error) { return G.HadamardProd(gr.policy, mask) })
	masked = do(func() (*G.Node, error) { return G.Add(masked, maskBias) })
	logPolicy := do(func() (*G.Node, error) { return logSoftmaxRows(masked) })
	tg.policyLoss = do(func() (*G.Node, error) { return crossEntropy(policyTarget, logPolicy) })
	logValue := do(func() (*G.Node, error) { return logSoftmaxRows(gr.value) })
	tg.valueLoss = do(func() (*G.Node, error) { return crossEntropy(valueTarget, logValue) })
	cost := do(func() (*G.Node, error) { return G.Add(tg.policyLoss, tg.valueLoss) })
	if gr.ownership != nil {
		cells := t.shape.cells()
		tg.ownTarget, tg.ownWeight = make([]float32, n*cells), make([]float32, n*cells)
		target, weight := input("ownership-target", tg.ownTarget, cells), input("ownership-weight", tg.ownWeight, cells)
		tg.ownLoss = do(func() (*G.Node, error) { return weightedSquares(gr.ownership, target, weight) })
		cost = do(func() (*G.Node, error) { return G.Add(cost, tg.ownLoss) })
	}
	if gr.score != nil {
		tg.scoreTarget, tg.scoreWeight = make([]float32, n), make([]float32, n)
		target, weight := input("score-target", tg.scoreTarget, 1), input("score-weight", tg.scoreWeight, 1)
		tg.scoreLoss = do(func() (*G.Node, error) { return weightedSquares(gr.score, target, weight) })
		cost = do(func() (*G.Node, error) { return G.Add(cost, tg.scoreLoss) })
	}
	if chainErr != nil {
		return nil, fmt.Errorf("build training graph: %w", chainErr)
	}
	if tg.grads, err = G.Grad(cost, gr.weights...); err != nil {
		return nil, fmt.Errorf("build training gradients: %w", err)
	}
	tg.vm = G.NewTapeMachine(gr.g)
	t.graphs[n] = tg
	return tg, nil
}

// crossEntropy is −Σ target·logProb over the whole batch (the targets
// already carry each sample's share of the batch weight).
func crossEntropy(target, logProb *G.Node) (*G.Node, error) {
	prod, err := G.HadamardProd(target, logProb)
	if err != nil {
		return nil, err
	}
	sum, err := G.Sum(prod)
	if err != nil {
		return nil, err
	}
	return G.Neg(sum)
}

// weightedSquares is Σ weight·(prediction − target)² over the batch.
func weightedSquares(prediction, target, weight *G.Node) (*G.Node, error) {
	diff, err := G.Sub(prediction, target)
	if err != nil {
		return nil, err
	}
	sq, err := G.Square(diff)
	if err != nil {
		return nil, err
	}
	prod, err := G.HadamardProd(weight, sq)
	if err != nil {
		return nil, err
	}
	return G.Sum(prod)
}
