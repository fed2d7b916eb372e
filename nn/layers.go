package nn

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
const BNEpsilon = bnEpsilon

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

// Layers returns a copy of the snapshot's weights as plain arrays.
func (f *Folded) Layers() Layers {
	l := Layers{
		Game:   f.game.Name(),
		Planes: f.shape.planes, Height: f.shape.height, Width: f.shape.width,
		Actions:       f.shape.actions,
		Stem:          f.stem.layer(),
		PolicyConv:    f.policyConv.layer(),
		ValueConv:     f.valueConv.layer(),
		PolicyFC:      f.policyFC.layer(),
		ValueFC1:      f.valueFC1.layer(),
		ValueFC2:      f.valueFC2.layer(),
		ValueOutputs:  valueOutputs,
		PolicyFilters: f.cfg.PolicyFilters,
		Filters:       f.cfg.Filters,
	}
	for i, b := range f.blocks {
		l.Blocks = append(l.Blocks, [2]ConvLayer{b[0].layer(), b[1].layer()})
		var pool *DenseLayer
		if d := f.gpool[i]; d != nil {
			layer := d.layer()
			pool = &layer
		}
		l.GlobalPool = append(l.GlobalPool, pool)
	}
	if f.policyOut != nil {
		out := f.policyOut.layer()
		l.PolicyOut = &out
		if f.policyGlobal != nil {
			g := f.policyGlobal.layer()
			l.PolicyGlobal = &g
		}
		cells, planes := f.shape.cells(), f.policyOut.out
		l.PolicyIndex = make([]int32, len(f.policyGather))
		for a, i := range f.policyGather {
			if int(i) < cells*planes {
				l.PolicyIndex[a] = int32(int(i)%planes*cells + int(i)/planes)
			} else {
				l.PolicyIndex[a] = i
			}
		}
	}
	return l
}

// layer turns the (kernel·kernel·in, out) layout of the im2row forward
// pass into (out, in, kernel, kernel).
func (c *foldedConv) layer() ConvLayer {
	kk := c.kernel * c.kernel
	w := make([]float32, len(c.w))
	for o := 0; o < c.out; o++ {
		for in := 0; in < c.in; in++ {
			for k := 0; k < kk; k++ {
				w[(o*c.in+in)*kk+k] = c.w[(k*c.in+in)*c.out+o]
			}
		}
	}
	return ConvLayer{Kernel: c.kernel, In: c.in, Out: c.out, Weights: w, Bias: append([]float32(nil), c.b...)}
}

func (d *foldedDense) layer() DenseLayer {
	return DenseLayer{In: d.in, Out: d.out, Weights: append([]float32(nil), d.w...), Bias: append([]float32(nil), d.b...)}
}
