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

func newParam(name string, decay bool, shape ...int) *param {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return &param{name: name, shape: shape, data: make([]float32, n), decay: decay}
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

	stem                  conv
	blocks                [][2]conv
	policyConv, valueConv conv
	policyFC              dense
	valueFC1, valueFC2    dense

	// learnables and stats list every array in a fixed order: the order of
	// the optimizer's state and of the checkpoint.
	learnables []*param
	stats      []*param
}

// valueOutputs is the size of the win/draw/loss value head.
const valueOutputs = 3

// New builds a network for game with random weights drawn from seed.
func New(game env.Game, cfg Config, seed uint64) (*Network, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("network config: %w", err)
	}
	sh, err := gameShape(game)
	if err != nil {
		return nil, err
	}
	n := &Network{game: game, cfg: cfg, shape: sh}
	n.stem = n.newConv("stem", 3, sh.planes, cfg.Filters)
	for b := 0; b < cfg.Blocks; b++ {
		n.blocks = append(n.blocks, [2]conv{
			n.newConv(fmt.Sprintf("block%d.a", b), 3, cfg.Filters, cfg.Filters),
			n.newConv(fmt.Sprintf("block%d.b", b), 3, cfg.Filters, cfg.Filters),
		})
	}
	n.policyConv = n.newConv("policy.conv", 1, cfg.Filters, cfg.PolicyFilters)
	n.policyFC = n.newDense("policy.fc", cfg.PolicyFilters*sh.cells(), sh.actions)
	n.valueConv = n.newConv("value.conv", 1, cfg.Filters, cfg.ValueFilters)
	n.valueFC1 = n.newDense("value.fc1", cfg.ValueFilters*sh.cells(), cfg.ValueHidden)
	n.valueFC2 = n.newDense("value.fc2", cfg.ValueHidden, valueOutputs)
	n.initialize(seed)
	return n, nil
}

func (n *Network) newConv(name string, kernel, in, out int) conv {
	c := conv{
		kernel: kernel, in: in, out: out,
		w:        newParam(name+".w", true, out, in, kernel, kernel),
		gamma:    newParam(name+".bn.gamma", false, 1, out, 1, 1),
		beta:     newParam(name+".bn.beta", false, 1, out, 1, 1),
		mean:     newParam(name+".bn.mean", false, out),
		variance: newParam(name+".bn.var", false, out),
	}
	n.learnables = append(n.learnables, c.w, c.gamma, c.beta)
	n.stats = append(n.stats, c.mean, c.variance)
	return c
}

func (n *Network) newDense(name string, in, out int) dense {
	d := dense{in: in, out: out, w: newParam(name+".w", true, in, out), b: newParam(name+".b", false, 1, out)}
	n.learnables = append(n.learnables, d.w, d.b)
	return d
}

// convs lists the batch-normed convolutions in graph order.
func (n *Network) convs() []*conv {
	out := []*conv{&n.stem}
	for i := range n.blocks {
		out = append(out, &n.blocks[i][0], &n.blocks[i][1])
	}
	return append(out, &n.policyConv, &n.valueConv)
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
	for _, c := range n.convs() {
		normal(c.w, c.in*c.kernel*c.kernel)
		fill(c.gamma.data, 1)
		fill(c.variance.data, 1)
	}
	for _, d := range []dense{n.policyFC, n.valueFC1, n.valueFC2} {
		normal(d.w, d.in)
	}
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
		total += len(p.data)
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
	for _, d := range []dense{n.policyFC, n.valueFC1, n.valueFC2} {
		total += 2 * float64(d.in*d.out)
	}
	return total
}
