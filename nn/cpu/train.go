package cpu

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/flipzero/flipzero/nn"
)

const illegalLogit = -1e4

// Trainer trains a network with Gorgonia: for each batch size, one graph
// and tape machine per replica of a data-parallel step (replicas.go),
// built on first use. It owns the network's weights while it runs; it is
// not safe for concurrent use.
type Trainer struct {
	net *nn.Network
	cfg nn.TrainConfig
	// learnables are the network's arrays; shape its game's encoding.
	learnables []nn.Tensor
	shape      shape
	// velocity is the momentum buffer, parallel to net.learnables.
	velocity [][]float32
	steps    int64
	graphs   map[stepKey]*stepGraphs
	// maxReplicas bounds the replicas of a data-parallel step (0: one
	// per core).
	maxReplicas int
	// gradSum holds the replicas' gradients added up, parallel to
	// learnables.
	gradSum [][]float32
	// gorgoniaOps builds graphs with Gorgonia's own convolution and batch
	// norm: the reference the package's operations are tested against.
	gorgoniaOps bool
	// kernels are the direct convolution kernels the package's 3×3
	// convolutions run on, nil for im2col + matrix multiply (set when the
	// trainer is made, as evaluators choose theirs).
	kernels *directArch
}

// trainGraph is the forward pass, the losses and their gradients for one
// replica: its share of a step's batch.
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
	// The soft policy head's target (each sample's share of the loss
	// times the config's weight, folded in) and its weighted loss, where
	// the network has the head.
	softData []float32
	softLoss *G.Node
	grads    G.Nodes // parallel to net.learnables
}

// NewTrainer makes a trainer for net with a zero momentum buffer, in
// float32 (Backend's training) unless FLIPZERO_CONV names a bfloat16
// kernel set.
func NewTrainer(net *nn.Network, cfg nn.TrainConfig) (*Trainer, error) {
	arch, direct := backend{}.trainArch()
	return newTrainer(net, cfg, arch, direct)
}

// newTrainer makes a trainer whose 3×3 convolutions run on the kernel set
// arch where direct, else on im2col and a matrix multiply.
func newTrainer(net *nn.Network, cfg nn.TrainConfig, arch directArch, direct bool) (*Trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("train config: %w", err)
	}
	t := &Trainer{net: net, cfg: cfg, graphs: map[stepKey]*stepGraphs{}}
	if direct {
		t.kernels = &arch
	}
	limit, err := replicaLimit()
	if err != nil {
		return nil, err
	}
	t.maxReplicas = limit
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
	losses.Total = losses.Policy + losses.Value + t.cfg.OwnershipWeight*losses.Ownership + t.cfg.ScoreWeight*losses.Score +
		t.cfg.SoftPolicyWeight*losses.SoftPolicy + losses.L2
	if math.IsNaN(losses.Total) || math.IsInf(losses.Total, 0) {
		return losses, fmt.Errorf("training step %d: policy loss %g, value loss %g, ownership %g, score %g, soft policy %g, L2 %g; weights left unchanged",
			t.steps+1, losses.Policy, losses.Value, losses.Ownership, losses.Score, losses.SoftPolicy, losses.L2)
	}
	lr, mu, decay := float32(t.cfg.LearningRate), float32(t.cfg.Momentum), float32(2*t.cfg.WeightDecay)
	parallelFor(len(t.learnables), 0, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			p, v, g := t.learnables[i], t.velocity[i], grads[i]
			d := decay
			if !p.Decay {
				d = 0
			}
			for j, w := range p.Data {
				v[j] = mu*v[j] + g[j] + d*w
				p.Data[j] = w - lr*v[j]
			}
		}
	})
	t.steps++
	return losses, nil
}

// gradients runs the forward and backward passes on the batch, updates the
// batch-norm running statistics and returns the losses (but L2) and the
// gradient of their weighted sum for each learnable (valid until the next
// call). The batch is split over the step's replicas, run side by side.
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
	sg, err := t.stepGraphs(n)
	if err != nil {
		return losses, nil, err
	}
	weightSum, auxSum := 0.0, 0.0
	for i := 0; i < n; i++ {
		weightSum += float64(b.Weight(i))
		if b.Aux != nil && b.Aux[i] == 1 {
			auxSum += float64(b.Weight(i))
		}
	}
	if weightSum <= 0 {
		return losses, nil, errors.New("training batch: the sample weights sum to zero")
	}
	if err := sg.run(b, weightSum, t.cfg); err != nil {
		return losses, nil, err
	}
	for _, tg := range sg.replicas {
		losses.Policy += scalar(tg.policyLoss)
		losses.Value += scalar(tg.valueLoss)
		if tg.ownLoss != nil {
			losses.Ownership += scalar(tg.ownLoss)
		}
		if tg.scoreLoss != nil {
			losses.Score += scalar(tg.scoreLoss)
		}
		if tg.softLoss != nil {
			losses.SoftPolicy += scalar(tg.softLoss)
		}
	}
	// The weighted losses back to mean squared errors over the samples
	// that have targets.
	auxShare := auxSum / weightSum
	losses.Ownership = unweighted(losses.Ownership, t.cfg.OwnershipWeight*auxShare)
	losses.Score = unweighted(losses.Score, t.cfg.ScoreWeight*auxShare)
	losses.SoftPolicy = unweighted(losses.SoftPolicy, t.cfg.SoftPolicyWeight)
	return losses, t.sumGradients(sg), nil
}

// unweighted undoes an auxiliary loss's weight (the mean squares of the
// ownership and score heads, the soft policy's cross-entropy): 0 where
// nothing weighed.
func unweighted(loss, weight float64) float64 {
	if weight <= 0 {
		return 0
	}
	return loss / weight
}

// sumGradients returns the gradient of each learnable over the whole
// batch: the one replica's, or the replicas' added up.
func (t *Trainer) sumGradients(sg *stepGraphs) [][]float32 {
	if len(sg.replicas) == 1 {
		return sg.replicas[0].gradValues()
	}
	if t.gradSum == nil {
		for _, p := range t.learnables {
			t.gradSum = append(t.gradSum, make([]float32, len(p.Data)))
		}
	}
	parts := make([][][]float32, len(sg.replicas))
	for r, tg := range sg.replicas {
		parts[r] = tg.gradValues()
	}
	parallelFor(len(t.gradSum), 0, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			sum := t.gradSum[i]
			copy(sum, parts[0][i])
			for _, p := range parts[1:] {
				for j, v := range p[i] {
					sum[j] += v
				}
			}
		}
	})
	return t.gradSum
}

// gradValues are the graph's gradients of the last run, parallel to the
// learnables.
func (tg *trainGraph) gradValues() [][]float32 {
	grads := make([][]float32, len(tg.grads))
	for i, g := range tg.grads {
		grads[i] = g.Value().Data().([]float32)
	}
	return grads
}

// stepKey names a step's graphs: its batch size and how many replicas
// split it.
type stepKey struct{ batch, replicas int }

// stepGraphs are the graphs of one batch size, one per replica, replica
// r computing samples bounds[r] to bounds[r+1].
type stepGraphs struct {
	replicas []*trainGraph
	bounds   []int
	group    *replicaGroup // nil for one replica
	errs     []error
}

// run runs every replica's forward and backward pass on its samples of
// b, each sample's targets weighted by its share of the whole batch's
// weight, weightSum.
func (sg *stepGraphs) run(b nn.Batch, weightSum float64, cfg nn.TrainConfig) error {
	if sg.group == nil {
		return sg.replicas[0].run(b, 0, sg.bounds[1], weightSum, cfg)
	}
	sg.group.start()
	var wg sync.WaitGroup
	for r := range sg.replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sg.errs[r] = sg.replicas[r].run(b, sg.bounds[r], sg.bounds[r+1], weightSum, cfg)
			if sg.errs[r] != nil {
				sg.group.fail()
			}
		}()
	}
	wg.Wait()
	// The error of the replica that failed first, not the others' word
	// that it did.
	var failed error
	for _, err := range sg.errs {
		if err != nil && (failed == nil || errors.Is(failed, errReplicaFailed)) {
			failed = err
		}
	}
	return failed
}

// run loads samples lo to hi of b into the graph and runs its forward and
// backward passes.
func (tg *trainGraph) run(b nn.Batch, lo, hi int, weightSum float64, cfg nn.TrainConfig) error {
	sh := tg.gr.shape
	size, actions := sh.planes*sh.cells(), sh.actions
	tg.gr.setInput(b.Inputs[lo*size : hi*size])
	copy(tg.maskData, b.Legal[lo*actions:hi*actions])
	for i, m := range tg.maskData {
		tg.maskBiasData[i] = (1 - m) * illegalLogit
	}
	for i := lo; i < hi; i++ {
		w := float32(float64(b.Weight(i)) / weightSum)
		for a := i * actions; a < (i+1)*actions; a++ {
			tg.policyData[a-lo*actions] = b.Policy[a] * w
		}
		for k := i * valueOutputs; k < (i+1)*valueOutputs; k++ {
			tg.valueData[k-lo*valueOutputs] = b.Value[k] * w
		}
	}
	tg.setAuxTargets(b, lo, hi, sh.cells(), weightSum, cfg)
	tg.setSoftTargets(b, lo, hi, weightSum, cfg)
	if err := tg.gr.loadStats(); err != nil {
		return err
	}
	// Reset rewinds the tape; Gorgonia's batch norm also needs the fresh
	// output buffers it gives.
	tg.vm.Reset()
	if err := tg.vm.RunAll(); err != nil {
		return fmt.Errorf("training step: %w", err)
	}
	tg.gr.storeStats()
	return nil
}

// setAuxTargets fills the auxiliary heads' targets and weights for samples
// lo to hi of the batch, whose weights sum to weightSum. The weights make
// each head's loss the mean squared error over the samples with targets
// (per cell for ownership), times the config's weight, times their share
// of the batch's weight: samples without targets neither count nor
// dilute the others.
func (tg *trainGraph) setAuxTargets(b nn.Batch, lo, hi, cells int, weightSum float64, cfg nn.TrainConfig) {
	if tg.ownLoss == nil && tg.scoreLoss == nil {
		return
	}
	clear(tg.ownWeight)
	clear(tg.scoreWeight)
	if b.Aux == nil {
		return
	}
	for i := lo; i < hi; i++ {
		if b.Aux[i] != 1 {
			continue
		}
		w, j := float64(b.Weight(i))/weightSum, i-lo
		if tg.ownLoss != nil {
			copy(tg.ownTarget[j*cells:(j+1)*cells], b.Ownership[i*cells:(i+1)*cells])
			ow := float32(w * cfg.OwnershipWeight / float64(cells))
			for c := j * cells; c < (j+1)*cells; c++ {
				tg.ownWeight[c] = ow
			}
		}
		if tg.scoreLoss != nil {
			tg.scoreTarget[j] = b.Margin[i]
			tg.scoreWeight[j] = float32(w * cfg.ScoreWeight)
		}
	}
}

// setSoftTargets fills the soft policy head's targets for samples lo to
// hi of the batch, each weighed by its share of the batch's weight times
// the config's weight.
func (tg *trainGraph) setSoftTargets(b nn.Batch, lo, hi int, weightSum float64, cfg nn.TrainConfig) {
	if tg.softLoss == nil {
		return
	}
	actions := tg.gr.shape.actions
	nn.SoftPolicyTarget(tg.softData, b.Policy[lo*actions:hi*actions], actions, func(row int) float64 {
		return float64(b.Weight(lo+row)) / weightSum * cfg.SoftPolicyWeight
	})
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

// Replicas is how many replicas a step on n samples is split into.
func (t *Trainer) Replicas(n int) int {
	if t.gorgoniaOps {
		return 1
	}
	return replicaCount(n, t.maxReplicas)
}

// stepGraphs returns the graphs of a step on n samples, building them on
// first use: one replica per core with the package's own operations,
// one graph with Gorgonia's.
func (t *Trainer) stepGraphs(n int) (*stepGraphs, error) {
	k := t.Replicas(n)
	key := stepKey{batch: n, replicas: k}
	if sg, ok := t.graphs[key]; ok {
		return sg, nil
	}
	sg := &stepGraphs{bounds: make([]int, k+1), errs: make([]error, k)}
	var parts []replicaPart
	if k == 1 {
		parts = []replicaPart{{}}
	} else {
		sg.group = newReplicaGroup(k)
		layers := &[]*[2][][]float64{}
		procs := (runtime.GOMAXPROCS(0) + k - 1) / k
		for r := range k {
			parts = append(parts, replicaPart{group: sg.group, rank: r, procs: procs, layers: layers})
		}
	}
	for r, part := range parts {
		sg.bounds[r+1] = (r + 1) * n / k
		tg, err := t.graph(sg.bounds[r+1]-sg.bounds[r], part)
		if err != nil {
			return nil, err
		}
		sg.replicas = append(sg.replicas, tg)
	}
	t.graphs[key] = sg
	return sg, nil
}

// graph builds the training graph of one replica, on n samples.
func (t *Trainer) graph(n int, part replicaPart) (*trainGraph, error) {
	gr, err := buildGraph(t.net, n, graphOptions{training: true, bnMomentum: t.cfg.BatchNormMomentum, ownOps: !t.gorgoniaOps, kernels: t.kernels, replica: part})
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
	// no gradient, whatever the network says about them. The policy head
	// and the soft policy head are scored alike.
	policyLoss := func(logits, target *G.Node) *G.Node {
		masked := do(func() (*G.Node, error) { return G.HadamardProd(logits, mask) })
		masked = do(func() (*G.Node, error) { return G.Add(masked, maskBias) })
		logProb := do(func() (*G.Node, error) { return logSoftmaxRows(masked) })
		return do(func() (*G.Node, error) { return crossEntropy(target, logProb) })
	}
	tg.policyLoss = policyLoss(gr.policy, policyTarget)
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
	if gr.softPolicy != nil {
		tg.softData = make([]float32, n*actions)
		tg.softLoss = policyLoss(gr.softPolicy, input("soft-policy-target", tg.softData, actions))
		cost = do(func() (*G.Node, error) { return G.Add(cost, tg.softLoss) })
	}
	if chainErr != nil {
		return nil, fmt.Errorf("build training graph: %w", chainErr)
	}
	if tg.grads, err = G.Grad(cost, gr.weights...); err != nil {
		return nil, fmt.Errorf("build training gradients: %w", err)
	}
	tg.vm = G.NewTapeMachine(gr.g)
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
