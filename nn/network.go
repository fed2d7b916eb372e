package nn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/flipzero/flipzero/env"
)

// param is one named array of the network: a learnable weight, or a batch
// norm running statistic.
type param struct {
	name  string
	shape []int
	data  []float32
	// decay is whether weight decay applies: convolution and fully
	// connected weights, not biases or batch-norm parameters.
	decay bool
}

// size is the number of values the array holds (or would hold, in a
// network laid out without its arrays).
func (p *param) size() int {
	n := 1
	for _, d := range p.shape {
		n *= d
	}
	return n
}

// conv is a convolution without bias followed by batch norm.
type conv struct {
	kernel         int
	in, out        int
	w, gamma, beta *param // w is (out, in, kernel, kernel); gamma, beta (1, out, 1, 1)
	mean, variance *param // running statistics, (out)
}

// dense is a fully connected layer: w is (in, out), b is (1, out).
type dense struct {
	in, out int
	w, b    *param
}

// Network is the policy/value network of one game: its weights and batch
// norm statistics. Its methods are not safe for concurrent use with
// training; Fold takes a read-only snapshot for inference.
type Network struct {
	game  env.Game
	cfg   Config
	shape shape
	// dry: the layers are laid out (names, shapes) without their arrays,
	// to size a network before trusting a file that describes it.
	dry bool

	stem   conv
	blocks [][2]conv
	// gpool is each block's global pooling layer (2·filters → filters),
	// nil in blocks without.
	gpool                 []*dense
	policyConv, valueConv conv
	// policyFC is the dense policy head's layer (policy filters · cells →
	// actions); a convolutional head has instead policyOut (1×1, policy
	// filters → the game's policy planes, batch norm without ReLU) and
	// policyGlobal (the policy convolution's pooled mean and maximum →
	// the actions without a cell), and policyIndex, each action's logit
	// as an index into the planes (plane·cells + cell) followed by the
	// global logits.
	policyFC           dense
	policyOut          *conv
	policyGlobal       *dense
	policyIndex        []int32
	valueFC1, valueFC2 dense
	// The auxiliary heads, where the architecture has them (training
	// only): ownership of each cell, and the score margin.
	ownershipConv *conv
	scoreFC       *dense
	// The soft policy head (training only): a second last layer of the
	// policy head, softPolicyFC where policyFC is, softPolicyOut and
	// softPolicyGlobal where policyOut and policyGlobal are, reading the
	// same policy convolution and the same policyIndex.
	softPolicyFC     *dense
	softPolicyOut    *conv
	softPolicyGlobal *dense

	// learnables and stats list every array in a fixed order: the order of
	// the optimizer's state and of the checkpoint.
	learnables []*param
	stats      []*param
}

// gpoolBlock says which residual blocks pool: every other one from the
// first, as KataGo puts the pooling in some of its blocks, not all.
func gpoolBlock(i int) bool { return i%2 == 0 }

// valueOutputs is the size of the win/draw/loss value head.
const valueOutputs = 3

// New builds a network for game with random weights drawn from seed.
func New(game env.Game, cfg Config, seed uint64) (*Network, error) {
	n, err := layout(game, cfg, false)
	if err != nil {
		return nil, err
	}
	n.initialize(seed)
	return n, nil
}

// layout builds the network's layers, with their arrays zero, or with dry
// without them.
func layout(game env.Game, cfg Config, dry bool) (*Network, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("network config: %w", err)
	}
	sh, err := gameShape(game)
	if err != nil {
		return nil, err
	}
	n := &Network{game: game, cfg: cfg.normal(), shape: sh, dry: dry}
	n.stem = n.newConv("stem", 3, sh.planes, cfg.Filters)
	for b := 0; b < cfg.Blocks; b++ {
		n.blocks = append(n.blocks, [2]conv{
			n.newConv(fmt.Sprintf("block%d.a", b), 3, cfg.Filters, cfg.Filters),
			n.newConv(fmt.Sprintf("block%d.b", b), 3, cfg.Filters, cfg.Filters),
		})
		var pool *dense
		if cfg.GlobalPooling && gpoolBlock(b) {
			d := n.newDense(fmt.Sprintf("block%d.gpool", b), 2*cfg.Filters, cfg.Filters)
			pool = &d
		}
		n.gpool = append(n.gpool, pool)
	}
	n.policyConv = n.newConv("policy.conv", 1, cfg.Filters, cfg.PolicyFilters)
	if cfg.ConvPolicy() {
		if err := n.convPolicyHead(); err != nil {
			return nil, err
		}
	} else {
		n.policyFC = n.newDense("policy.fc", cfg.PolicyFilters*sh.cells(), sh.actions)
	}
	n.valueConv = n.newConv("value.conv", 1, cfg.Filters, cfg.ValueFilters)
	n.valueFC1 = n.newDense("value.fc1", cfg.ValueFilters*sh.cells(), cfg.ValueHidden)
	n.valueFC2 = n.newDense("value.fc2", cfg.ValueHidden, valueOutputs)
	// The auxiliary heads' arrays come last, so that a network without
	// them has the same arrays in the same order as before they existed.
	if cfg.Ownership {
		c := n.newConv("ownership.conv", 1, cfg.Filters, 1)
		n.ownershipConv = &c
	}
	if cfg.Score {
		d := n.newDense("score.fc", cfg.ValueHidden, 1)
		n.scoreFC = &d
	}
	if cfg.SoftPolicy {
		n.softPolicyHead()
	}
	return n, nil
}

// softPolicyHead lays out the soft policy head's last layer, the same
// shape as the policy head's.
func (n *Network) softPolicyHead() {
	if n.policyOut == nil {
		d := n.newDense("softpolicy.fc", n.policyFC.in, n.policyFC.out)
		n.softPolicyFC = &d
		return
	}
	c := n.newConv("softpolicy.out", 1, n.policyOut.in, n.policyOut.out)
	n.softPolicyOut = &c
	if g := n.policyGlobal; g != nil {
		d := n.newDense("softpolicy.global", g.in, g.out)
		n.softPolicyGlobal = &d
	}
}

// convPolicyHead lays out the convolutional policy head from the game's
// policy planes (env.PolicyMap).
func (n *Network) convPolicyHead() error {
	pm, ok := n.game.(env.PolicyMap)
	if !ok {
		return fmt.Errorf("network config: policy_head: conv: %s does not lay its actions out on its board", n.game.Name())
	}
	planes, cells := pm.PolicyPlanes(), n.shape.cells()
	if planes < 1 || planes > maxWidth {
		return fmt.Errorf("network config: policy_head: conv: %s has %d policy planes", n.game.Name(), planes)
	}
	n.policyIndex = make([]int32, n.shape.actions)
	taken := make(map[int32]bool, n.shape.actions)
	global := 0
	for a := range n.policyIndex {
		plane, cell, ok := pm.PolicyCell(a)
		switch {
		case !ok:
			n.policyIndex[a] = int32(planes*cells + global)
			global++
		case plane < 0 || plane >= planes || cell < 0 || cell >= cells:
			return fmt.Errorf("network config: policy_head: conv: %s puts action %d on plane %d, cell %d", n.game.Name(), a, plane, cell)
		default:
			n.policyIndex[a] = int32(plane*cells + cell)
		}
		if taken[n.policyIndex[a]] {
			return fmt.Errorf("network config: policy_head: conv: %s puts two actions where action %d is", n.game.Name(), a)
		}
		taken[n.policyIndex[a]] = true
	}
	c := n.newConv("policy.out", 1, n.cfg.PolicyFilters, planes)
	n.policyOut = &c
	if global > 0 {
		d := n.newDense("policy.global", 2*n.cfg.PolicyFilters, global)
		n.policyGlobal = &d
	}
	return nil
}

func (n *Network) newParam(name string, decay bool, shape ...int) *param {
	p := &param{name: name, shape: shape, decay: decay}
	if !n.dry {
		p.data = make([]float32, p.size())
	}
	return p
}

func (n *Network) newConv(name string, kernel, in, out int) conv {
	c := conv{
		kernel: kernel, in: in, out: out,
		w:        n.newParam(name+".w", true, out, in, kernel, kernel),
		gamma:    n.newParam(name+".bn.gamma", false, 1, out, 1, 1),
		beta:     n.newParam(name+".bn.beta", false, 1, out, 1, 1),
		mean:     n.newParam(name+".bn.mean", false, out),
		variance: n.newParam(name+".bn.var", false, out),
	}
	n.learnables = append(n.learnables, c.w, c.gamma, c.beta)
	n.stats = append(n.stats, c.mean, c.variance)
	return c
}

func (n *Network) newDense(name string, in, out int) dense {
	d := dense{in: in, out: out, w: n.newParam(name+".w", true, in, out), b: n.newParam(name+".b", false, 1, out)}
	n.learnables = append(n.learnables, d.w, d.b)
	return d
}

// sizes counts the values of the network's learnable arrays, of its
// batch-norm statistics, and of its folded snapshot (SaveFolded's arrays).
func (n *Network) sizes() (learnables, stats, folded int64) {
	for _, p := range n.learnables {
		learnables += int64(p.size())
	}
	for _, p := range n.stats {
		stats += int64(p.size())
	}
	for _, c := range n.convs() {
		folded += int64(c.w.size() + c.out)
	}
	for _, d := range n.inferenceDense() {
		folded += int64(d.w.size() + d.out)
	}
	return learnables, stats, folded
}

// convs lists the batch-normed convolutions that inference runs, in graph
// order.
func (n *Network) convs() []*conv {
	out := []*conv{&n.stem}
	for i := range n.blocks {
		out = append(out, &n.blocks[i][0], &n.blocks[i][1])
	}
	out = append(out, &n.policyConv, &n.valueConv)
	if n.policyOut != nil {
		out = append(out, n.policyOut)
	}
	return out
}

// initialize draws He-normal weights, unit batch-norm scales and unit
// running variances.
func (n *Network) initialize(seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x6e6e))
	normal := func(p *param, fanIn int) {
		std := math.Sqrt(2 / float64(fanIn))
		for i := range p.data {
			p.data[i] = float32(rng.NormFloat64() * std)
		}
	}
	for _, c := range n.allConvs() {
		normal(c.w, c.in*c.kernel*c.kernel)
		fill(c.gamma.data, 1)
		fill(c.variance.data, 1)
	}
	for _, d := range n.allDense() {
		normal(d.w, d.in)
	}
}

// NeutralHeads zeroes the last layer of the policy and value heads, so
// that the network predicts a uniform policy and an even value (win, draw
// and loss a third each) for every position, whatever the seed of the
// rest. A run starts from it: its first games are then led by the search
// alone, not by a random network's preferences, which differ from seed to
// seed (a fresh He-normal network's logits spread about as widely as a
// trained one's). The heads learn from the first step on: a zeroed
// layer's gradient is its input's, which the tower still gives.
func (n *Network) NeutralHeads() {
	for _, c := range []*conv{n.policyOut, n.softPolicyOut} {
		if c != nil {
			// Batch norm without ReLU ends the convolutional head: its
			// scale is what makes the logits, whatever the convolution's
			// weights.
			fill(c.gamma.data, 0)
			fill(c.beta.data, 0)
		}
	}
	for _, d := range []*dense{&n.policyFC, n.policyGlobal, &n.valueFC2, n.softPolicyFC, n.softPolicyGlobal} {
		if d != nil && d.w != nil {
			fill(d.w.data, 0)
			fill(d.b.data, 0)
		}
	}
}

// allConvs is convs and the auxiliary heads' convolutions.
func (n *Network) allConvs() []*conv {
	out := n.convs()
	if n.ownershipConv != nil {
		out = append(out, n.ownershipConv)
	}
	if n.softPolicyOut != nil {
		out = append(out, n.softPolicyOut)
	}
	return out
}

// inferenceDense lists the fully connected layers that inference runs:
// the policy head's, the value head's, then the pooling layers'.
func (n *Network) inferenceDense() []dense {
	var out []dense
	if n.policyFC.w != nil {
		out = append(out, n.policyFC)
	}
	out = append(out, n.valueFC1, n.valueFC2)
	for _, d := range n.gpool {
		if d != nil {
			out = append(out, *d)
		}
	}
	if n.policyGlobal != nil {
		out = append(out, *n.policyGlobal)
	}
	return out
}

// allDense lists the fully connected layers, the auxiliary heads' too.
func (n *Network) allDense() []dense {
	out := n.inferenceDense()
	for _, d := range []*dense{n.scoreFC, n.softPolicyFC, n.softPolicyGlobal} {
		if d != nil {
			out = append(out, *d)
		}
	}
	return out
}

func fill(s []float32, v float32) {
	for i := range s {
		s[i] = v
	}
}

// Game is the game the network plays.
func (n *Network) Game() env.Game { return n.game }

// Config is the network's architecture.
func (n *Network) Config() Config { return n.cfg }

// Parameters is the number of learnable weights.
func (n *Network) Parameters() int {
	total := 0
	for _, p := range n.learnables {
		total += p.size()
	}
	return total
}

// FLOPsPerPosition counts the floating-point operations (a multiply-add
// is two) of one position's forward pass in the convolutions and fully
// connected layers, the work that the matrix multiplies do.
func (n *Network) FLOPsPerPosition() float64 {
	cells := float64(n.shape.cells())
	total := 0.0
	for _, c := range n.convs() {
		total += 2 * float64(c.out*c.in*c.kernel*c.kernel) * cells
	}
	for _, d := range n.inferenceDense() {
		total += 2 * float64(d.in*d.out)
	}
	return total
}
