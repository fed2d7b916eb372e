package nn

import (
	"errors"
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TrainConfig sets the optimizer: SGD with momentum and L2 weight decay.
// LearningRate may be changed between steps (Trainer.SetLearningRate) to
// follow a schedule.
type TrainConfig struct {
	// LearningRate is the step size, changed between steps by a schedule
	// (the loop's train.learning_rate), so it has no config key here.
	LearningRate float64 `json:"learning_rate" yaml:"-"`
	// Momentum of SGD (default 0.9, AlphaZero's).
	Momentum float64 `json:"momentum" yaml:"momentum"`
	// WeightDecay is c in the loss term c·Σw² over the convolution and
	// fully connected weights (default 1e-4, AlphaZero's).
	WeightDecay float64 `json:"weight_decay" yaml:"weight_decay"`
	// BatchNormMomentum is how much of each batch's statistics goes into
	// the running statistics used for inference (0 < m ≤ 1; default 0.1, so
	// the statistics follow a network that changes every step).
	BatchNormMomentum float64 `json:"batch_norm_momentum" yaml:"batch_norm_momentum"`
	// OwnershipWeight and ScoreWeight scale the auxiliary heads' losses
	// (mean squared errors, per cell and per sample) in the total, where
	// the network has the heads (default 1.5 and 0.5: KataGo weighs
	// ownership as much as the value, and the margin, which mostly
	// repeats the result, less).
	OwnershipWeight float64 `json:"ownership_weight,omitempty" yaml:"ownership_weight"`
	ScoreWeight     float64 `json:"score_weight,omitempty" yaml:"score_weight"`
}

// DefaultTrainConfig is AlphaZero's optimizer at a learning rate suited to
// small batches.
func DefaultTrainConfig() TrainConfig {
	return TrainConfig{LearningRate: 0.02, Momentum: 0.9, WeightDecay: 1e-4, BatchNormMomentum: 0.1,
		OwnershipWeight: 1.5, ScoreWeight: 0.5}
}

// Validate checks that every setting is in range.
func (c TrainConfig) Validate() error {
	switch {
	case !(c.LearningRate > 0 && c.LearningRate < 100):
		return fmt.Errorf("learning_rate: %g, want in (0, 100)", c.LearningRate)
	case !(c.Momentum >= 0 && c.Momentum < 1):
		return fmt.Errorf("momentum: %g, want in [0, 1)", c.Momentum)
	case !(c.WeightDecay >= 0 && c.WeightDecay < 1):
		return fmt.Errorf("weight_decay: %g, want in [0, 1)", c.WeightDecay)
	case !(c.BatchNormMomentum > 0 && c.BatchNormMomentum <= 1):
		return fmt.Errorf("batch_norm_momentum: %g, want in (0, 1]", c.BatchNormMomentum)
	case !(c.OwnershipWeight >= 0 && c.OwnershipWeight <= 100):
		return fmt.Errorf("ownership_weight: %g, want in [0, 100]", c.OwnershipWeight)
	case !(c.ScoreWeight >= 0 && c.ScoreWeight <= 100):
		return fmt.Errorf("score_weight: %g, want in [0, 100]", c.ScoreWeight)
	}
	return nil
}

// Batch is one training batch of B samples as flat slices.
type Batch struct {
	// Inputs are the encoded positions, B × planes × height × width,
	// already augmented by symmetry.
	Inputs []float32
	// Policy is the search's visit distribution, B × actions, zero on
	// illegal actions.
	Policy []float32
	// Legal is 1 for a legal action and 0 otherwise, B × actions.
	Legal []float32
	// Value is the outcome as win/draw/loss probabilities from the view of
	// the player to move, B × 3.
	Value []float32
	// Weights weigh each sample's loss, B values ≥ 0 (nil: all 1).
	Weights []float32
	// Ownership (B × cells, each −1 to 1) and Margin (B, −1 to 1) are
	// the auxiliary targets from the mover's point of view, for the
	// samples Aux marks with 1 (B values, 0 or 1); all three nil where no
	// sample has them. A network without the heads ignores them.
	Ownership, Margin, Aux []float32
}

// WDLTarget is the value head's win/draw/loss target for a game's outcome
// z in [-1, 1] from the mover's view (a training sample's): 1, 0 and -1
// give the one-hot win, draw and loss of a two-player game, and a value
// between them, a one-player game's normalised score, is shared between
// its two neighbours (z = 0.5: half a win, half a draw). Cross-entropy
// against a soft target is least where the head predicts the target's
// mean, so the head's value P(win) − P(loss) learns the expected z — the
// number the search backs up, in the same [-1, 1]. Sharing between win
// and loss alone ((1+z)/2, 0, (1−z)/2) would teach the same value but
// make a two-player draw half a win and half a loss.
func WDLTarget(z float32) (win, draw, loss float32) {
	z = min(max(z, -1), 1)
	if z >= 0 {
		return z, 1 - z, 0
	}
	return 0, 1 + z, -z
}

// Losses are a step's losses, averaged over the batch (by sample weight).
type Losses struct {
	// Policy is the cross-entropy of the policy (over legal actions)
	// against the visit distribution.
	Policy float64
	// Value is the cross-entropy of the win/draw/loss head against the
	// outcome.
	Value float64
	// Ownership and Score are the auxiliary heads' mean squared errors
	// (per cell, per sample) over the samples that have the targets, 0
	// for a network without the heads; Total counts them times their
	// weights.
	Ownership, Score float64
	// L2 is the weight-decay term.
	L2    float64
	Total float64
}

// illegalLogit replaces the logits of illegal actions, so that their
// softmax is zero to float32 precision and their gradient is zero.
const illegalLogit = -1e4

// Trainer trains a Network with Gorgonia: one graph and tape machine per
// batch size, built on first use. It owns the network's weights while it
// runs; it is not safe for concurrent use.
type Trainer struct {
	net *Network
	cfg TrainConfig
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
func NewTrainer(net *Network, cfg TrainConfig) (*Trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("train config: %w", err)
	}
	t := &Trainer{net: net, cfg: cfg, graphs: map[int]*trainGraph{}}
	if arch, ok := directDefault(); ok {
		t.kernels = &arch
	}
	for _, p := range net.learnables {
		t.velocity = append(t.velocity, make([]float32, len(p.data)))
	}
	return t, nil
}

// NewReferenceTrainer is a trainer whose graph uses Gorgonia's own
// convolution and batch norm, which share no code with any backend's:
// the reference that backends and the package's own operations are
// checked against (nntest), not one to train with.
func NewReferenceTrainer(net *Network, cfg TrainConfig) (*Trainer, error) {
	t, err := NewTrainer(net, cfg)
	if err != nil {
		return nil, err
	}
	t.gorgoniaOps = true
	return t, nil
}

// Network is the network being trained.
func (t *Trainer) Network() *Network { return t.net }

// Config is the optimizer's current configuration.
func (t *Trainer) Config() TrainConfig { return t.cfg }

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
func (t *Trainer) Step(b Batch) (Losses, error) {
	losses, grads, err := t.gradients(b)
	if err != nil {
		return Losses{}, err
	}
	l2 := 0.0
	for _, p := range t.net.learnables {
		if p.decay {
			for _, w := range p.data {
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
	for i, p := range t.net.learnables {
		v, g := t.velocity[i], grads[i]
		d := decay
		if !p.decay {
			d = 0
		}
		for j, w := range p.data {
			v[j] = mu*v[j] + g[j] + d*w
			p.data[j] = w - lr*v[j]
		}
	}
	t.steps++
	return losses, nil
}

// gradients runs the forward and backward passes on the batch, updates the
// batch-norm running statistics and returns the losses (but L2) and the
// gradient of their weighted sum for each learnable (valid until the next
// call).
func (t *Trainer) gradients(b Batch) (losses Losses, grads [][]float32, err error) {
	sh := t.net.shape
	size := sh.planes * sh.cells()
	if size == 0 || len(b.Inputs)%size != 0 || len(b.Inputs) == 0 {
		return losses, nil, fmt.Errorf("training batch: %d input values, want a positive multiple of %d", len(b.Inputs), size)
	}
	n := len(b.Inputs) / size
	if err := b.check(n, sh.actions, sh.cells()); err != nil {
		return losses, nil, fmt.Errorf("training batch of %d: %w", n, err)
	}
	tg, err := t.graph(n)
	if err != nil {
		return losses, nil, err
	}
	weightSum := 0.0
	for i := 0; i < n; i++ {
		weightSum += float64(b.weight(i))
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
		w := float32(float64(b.weight(i)) / weightSum)
		for a := i * sh.actions; a < (i+1)*sh.actions; a++ {
			tg.policyData[a] = b.Policy[a] * w
		}
		for k := i * valueOutputs; k < (i+1)*valueOutputs; k++ {
			tg.valueData[k] = b.Value[k] * w
		}
	}
	auxShare := tg.setAuxTargets(b, n, sh.cells(), t.cfg)
	if err := tg.gr.loadStats(t.net); err != nil {
		return losses, nil, err
	}
	// Reset rewinds the tape; Gorgonia's batch norm also needs the fresh
	// output buffers it gives.
	tg.vm.Reset()
	if err := tg.vm.RunAll(); err != nil {
		return losses, nil, fmt.Errorf("training step: %w", err)
	}
	tg.gr.storeStats(t.net)
	grads = make([][]float32, len(tg.grads))
	for i, g := range tg.grads {
		grads[i] = g.Value().Data().([]float32)
	}
	losses = Losses{Policy: scalar(tg.policyLoss), Value: scalar(tg.valueLoss)}
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
func (tg *trainGraph) setAuxTargets(b Batch, n, cells int, cfg TrainConfig) (share float64) {
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
		total += float64(b.weight(i))
		if b.Aux[i] == 1 {
			with += float64(b.weight(i))
		}
	}
	if with == 0 {
		return 0
	}
	for i := 0; i < n; i++ {
		if b.Aux[i] != 1 {
			continue
		}
		w := float64(b.weight(i)) / total
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

func (b Batch) weight(i int) float32 {
	if b.Weights == nil {
		return 1
	}
	return b.Weights[i]
}

// check validates the batch's sizes and contents for n samples.
func (b Batch) check(n, actions, cells int) error {
	switch {
	case len(b.Policy) != n*actions:
		return fmt.Errorf("%d policy values, want %d", len(b.Policy), n*actions)
	case len(b.Legal) != n*actions:
		return fmt.Errorf("%d legal-mask values, want %d", len(b.Legal), n*actions)
	case len(b.Value) != n*valueOutputs:
		return fmt.Errorf("%d value targets, want %d (win/draw/loss per sample)", len(b.Value), n*valueOutputs)
	case b.Weights != nil && len(b.Weights) != n:
		return fmt.Errorf("%d sample weights, want %d", len(b.Weights), n)
	case b.Aux != nil && (len(b.Aux) != n || len(b.Margin) != n || len(b.Ownership) != n*cells):
		return fmt.Errorf("auxiliary targets: %d marks, %d margins and %d ownership values, want %d, %d and %d",
			len(b.Aux), len(b.Margin), len(b.Ownership), n, n, n*cells)
	case b.Aux == nil && (b.Margin != nil || b.Ownership != nil):
		return errors.New("auxiliary targets without the marks of the samples that have them")
	}
	for i := 0; i < n; i++ {
		if w := b.weight(i); !(w >= 0) || math.IsInf(float64(w), 0) {
			return fmt.Errorf("sample %d: weight %g", i, w)
		}
		legal := 0
		for a := i * actions; a < (i+1)*actions; a++ {
			switch m := b.Legal[a]; {
			case m == 1:
				legal++
			case m != 0:
				return fmt.Errorf("sample %d: legal mask %g for action %d, want 0 or 1", i, m, a-i*actions)
			case b.Policy[a] != 0:
				return fmt.Errorf("sample %d: policy target %g on illegal action %d", i, b.Policy[a], a-i*actions)
			}
			if p := b.Policy[a]; !(p >= 0 && p <= 1) {
				return fmt.Errorf("sample %d: policy target %g for action %d", i, p, a-i*actions)
			}
		}
		if legal == 0 {
			return fmt.Errorf("sample %d: no legal action", i)
		}
		for k := i * valueOutputs; k < (i+1)*valueOutputs; k++ {
			if v := b.Value[k]; !(v >= 0 && v <= 1) {
				return fmt.Errorf("sample %d: value target %g", i, v)
			}
		}
		if err := b.checkAux(i, cells); err != nil {
			return err
		}
	}
	return nil
}

// checkAux validates sample i's auxiliary targets, if the batch has any.
func (b Batch) checkAux(i, cells int) error {
	if b.Aux == nil {
		return nil
	}
	switch a := b.Aux[i]; {
	case a == 0:
		return nil
	case a != 1:
		return fmt.Errorf("sample %d: auxiliary mark %g, want 0 or 1", i, a)
	case !(b.Margin[i] >= -1 && b.Margin[i] <= 1):
		return fmt.Errorf("sample %d: score margin %g, want in [-1, 1]", i, b.Margin[i])
	}
	for c := i * cells; c < (i+1)*cells; c++ {
		if o := b.Ownership[c]; !(o >= -1 && o <= 1) {
			return fmt.Errorf("sample %d: ownership %g of cell %d, want in [-1, 1]", i, o, c-i*cells)
		}
	}
	return nil
}

// graph returns the training graph for batch size n, building it on first
// use.
func (t *Trainer) graph(n int) (*trainGraph, error) {
	if tg, ok := t.graphs[n]; ok {
		return tg, nil
	}
	gr, err := t.net.buildGraph(n, true, !t.gorgoniaOps, t.cfg.BatchNormMomentum, t.kernels)
	if err != nil {
		return nil, err
	}
	actions := t.net.shape.actions
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
		cells := t.net.shape.cells()
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
