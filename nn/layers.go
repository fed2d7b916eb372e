package nn

import (
	"math"
	"sync"

	"github.com/flipzero/flipzero/env"
)

// This file is the network as plain arrays, for code that computes or
// stores the network without Gorgonia: other compute backends and export
// formats.
//
// The computation, for a batch of N positions encoded (N, planes, H, W):
//
//	x = relu(conv3×3(input; stem))
//	for each block: x = relu(x + bn(conv3×3(relu(bn(conv3×3(x; a))); b)))
//	policy logits   = flatten(relu(bn(conv1×1(x; policy.conv)))) · policy.fc.w + policy.fc.b
//	value logits    = relu(flatten(relu(bn(conv1×1(x; value.conv)))) · value.fc1.w + value.fc1.b) · value.fc2.w + value.fc2.b
//	win/draw/loss   = softmax(value logits); the value is P(win) − P(loss)
//
// Convolutions are 'same' padded with zeros, stride 1, without bias of
// their own (batch norm provides it). Flatten is in (channel, row,
// column) order per position. Batch norm is y = γ (x − μ)/√(σ² + BNEpsilon) + β.

// BNEpsilon is added to the batch-norm variance, in training and when
// folding batch norm into the convolutions for inference.
const BNEpsilon = 1e-5

// bnEpsilon is BNEpsilon, short.
const bnEpsilon = BNEpsilon

// Tensor is one named array of a network. Data is the network's own
// array, not a copy: a backend that trains elsewhere writes its results
// back through it.
type Tensor struct {
	Name  string
	Shape []int
	Data  []float32
	// Decay is whether L2 weight decay applies: convolution and fully
	// connected weights, not biases or batch-norm parameters.
	Decay bool
}

// Learnables lists the trained arrays in the fixed order of the checkpoint
// and of the optimizer's state, the order the layers are made in: stem,
// block0.a, block0.b, …, policy.conv, policy.fc, value.conv, value.fc1,
// value.fc2. A convolution has weights (out, in, kernel, kernel), then
// batch-norm γ and β (1, out, 1, 1); a fully connected layer weights (in,
// out), then bias (1, out). Names say which is which.
func (n *Network) Learnables() []Tensor { return tensors(n.learnables) }

// Statistics lists the batch-norm running means and variances (out) of
// each convolution in graph order, mean before variance.
func (n *Network) Statistics() []Tensor { return tensors(n.stats) }

func tensors(ps []*param) []Tensor {
	out := make([]Tensor, len(ps))
	for i, p := range ps {
		out[i] = Tensor{Name: p.name, Shape: append([]int(nil), p.shape...), Data: p.data, Decay: p.decay}
	}
	return out
}

// ConvLayer is a convolution with batch norm folded in: Weights are
// (out, in, kernel, kernel), Bias is (out).
type ConvLayer struct {
	Kernel, In, Out int
	Weights, Bias   []float32
}

// DenseLayer is a fully connected layer: Weights are (in, out) row-major,
// so that output = input · Weights + Bias; Bias is (out).
type DenseLayer struct {
	In, Out       int
	Weights, Bias []float32
}

// Layers is an inference network as plain arrays: the computation at the
// top of this file with every batch norm folded into its convolution.
type Layers struct {
	Game                   string
	Planes, Height, Width  int
	Actions                int
	Stem                   ConvLayer
	Blocks                 [][2]ConvLayer
	PolicyConv, ValueConv  ConvLayer
	PolicyFC               DenseLayer
	ValueFC1, ValueFC2     DenseLayer
	ValueOutputs           int // 3: win, draw, loss
	PolicyFilters, Filters int
	// GlobalPool is each block's global pooling layer (2·filters →
	// filters), nil in the blocks without: after the block's first
	// convolution and its ReLU, x_a += pool(x_a) · w + b at every cell,
	// pool being each channel's mean over the cells, then each channel's
	// maximum.
	GlobalPool []*DenseLayer
	// PolicyOut, for a convolutional policy head, replaces PolicyFC: a
	// 1×1 convolution from relu(policy conv) to the game's policy planes
	// (no ReLU). PolicyGlobal, where some actions have no cell, takes
	// the mean, then the maximum, of each of relu(policy conv)'s channels
	// over the board to their logits. Logit a is then
	// concat(flatten(PolicyOut's planes), PolicyGlobal's logits)[PolicyIndex[a]].
	PolicyOut    *ConvLayer
	PolicyGlobal *DenseLayer
	PolicyIndex  []int32
}

// Folded is a read-only inference snapshot of a Network: its layers with
// batch norm folded into the convolutions, which every backend's
// inference reads. Any number of inferences, on any backends, may share
// it; each backend prepares its own form of the weights once a snapshot
// (Prepared).
type Folded struct {
	game   env.Game
	cfg    Config
	layers Layers

	mu       sync.Mutex
	prepared map[any]any
}

// Fold takes an inference snapshot of the network's current weights and
// running statistics.
func (n *Network) Fold() *Folded {
	sh := n.shape
	l := Layers{
		Game:   n.game.Name(),
		Planes: sh.planes, Height: sh.height, Width: sh.width,
		Actions:       sh.actions,
		Stem:          foldConv(&n.stem),
		PolicyConv:    foldConv(&n.policyConv),
		ValueConv:     foldConv(&n.valueConv),
		ValueFC1:      copyDense(n.valueFC1),
		ValueFC2:      copyDense(n.valueFC2),
		ValueOutputs:  valueOutputs,
		PolicyFilters: n.cfg.PolicyFilters,
		Filters:       n.cfg.Filters,
	}
	for i := range n.blocks {
		l.Blocks = append(l.Blocks, [2]ConvLayer{foldConv(&n.blocks[i][0]), foldConv(&n.blocks[i][1])})
		var pool *DenseLayer
		if d := n.gpool[i]; d != nil {
			c := copyDense(*d)
			pool = &c
		}
		l.GlobalPool = append(l.GlobalPool, pool)
	}
	if n.policyOut != nil {
		out := foldConv(n.policyOut)
		l.PolicyOut = &out
		if n.policyGlobal != nil {
			g := copyDense(*n.policyGlobal)
			l.PolicyGlobal = &g
		}
		l.PolicyIndex = append([]int32(nil), n.policyIndex...)
	} else {
		l.PolicyFC = copyDense(n.policyFC)
	}
	return &Folded{game: n.game, cfg: n.cfg.Inference(), layers: l}
}

// foldConv scales each output channel's weights by γ/√(σ²+ε) and turns
// the rest of batch norm into a bias, so that inference does one
// convolution and a bias.
func foldConv(c *conv) ConvLayer {
	kk := c.kernel * c.kernel
	l := ConvLayer{Kernel: c.kernel, In: c.in, Out: c.out,
		Weights: make([]float32, c.out*c.in*kk), Bias: make([]float32, c.out)}
	for o := 0; o < c.out; o++ {
		scale := float64(c.gamma.data[o]) / math.Sqrt(float64(c.variance.data[o])+bnEpsilon)
		for i := o * c.in * kk; i < (o+1)*c.in*kk; i++ {
			l.Weights[i] = float32(float64(c.w.data[i]) * scale)
		}
		l.Bias[o] = float32(float64(c.beta.data[o]) - float64(c.mean.data[o])*scale)
	}
	return l
}

func copyDense(d dense) DenseLayer {
	return DenseLayer{In: d.in, Out: d.out, Weights: append([]float32(nil), d.w.data...), Bias: append([]float32(nil), d.b.data...)}
}

// Game is the game the snapshot plays.
func (f *Folded) Game() env.Game { return f.game }

// Config is the architecture of the network the snapshot was taken of,
// without the heads only training uses.
func (f *Folded) Config() Config { return f.cfg }

// Layers is the snapshot's weights as plain arrays, shared by everything
// that reads the snapshot: read them, never change them.
func (f *Folded) Layers() Layers { return f.layers }

// Prepared is a backend's own form of the snapshot's weights, built by
// build on the first call with its key and shared by every later one, so
// that a backend rearranges a snapshot's weights once however many
// inferences run it. Keys are values of a type of the backend's own.
func (f *Folded) Prepared(key any, build func(Layers) (any, error)) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if v, ok := f.prepared[key]; ok {
		return v, nil
	}
	v, err := build(f.layers)
	if err != nil {
		return nil, err
	}
	if f.prepared == nil {
		f.prepared = map[any]any{}
	}
	f.prepared[key] = v
	return v, nil
}
