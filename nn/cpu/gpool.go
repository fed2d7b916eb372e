package cpu

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/flipzero/flipzero/nn"
)

// Global pooling (KataGo's global pooling bias): in a block that has it,
// the output of the block's first convolution is pooled over the board,
// each channel's mean and maximum, and a fully connected layer turns the
// pooled values into a bias for every channel, added at every cell before
// the block's second convolution. A 3×3 tower sees a few cells further
// each block; the pooling lets every cell see the whole board at once
// (how much is at stake where, whose regions are alive) from the first
// blocks on.
//
// These are the training graph's operations for it; inference (Evaluator)
// does the same on its own layout.

// poolOp pools x (batch, channels, h, w) into (batch, 2·channels): each
// channel's mean over the cells, then each channel's maximum.
type poolOp struct {
	pureOp
	name string
	// argmax is the cell of each maximum, kept for the gradient.
	argmax []int
	y      []float32
}

// poolGradOp is poolOp's gradient: a mean's gradient shared by every cell,
// a maximum's going to its cell.
type poolGradOp struct {
	pureOp
	pool *poolOp
	dx   []float32
}

// channelBiasOp adds a bias per position and channel, (batch, channels),
// to every cell of x (batch, channels, h, w).
type channelBiasOp struct {
	pureOp
	name string
	y    []float32
}

// cellSumOp sums x (batch, channels, h, w) over the cells: the gradient of
// channelBiasOp's bias.
type cellSumOp struct {
	pureOp
	name string
	y    []float32
}

func (op *poolOp) Arity() int { return 1 }
func (op *poolOp) Type() hm.Type {
	return hm.NewFnType(tensorType(4), tensorType(2))
}
func (op *poolOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, ok := in[0].(tensor.Shape)
	if !ok || len(s) != 4 {
		return nil, fmt.Errorf("%s pooling: want an NCHW input, got %v", op.name, in[0])
	}
	return tensor.Shape{s[0], 2 * s[1]}, nil
}
func (op *poolOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "flipzero.pool %s %p", op.name, op) }
func (op *poolOp) Hashcode() uint32      { return opHash(op) }
func (op *poolOp) String() string        { return "Pool " + op.name }

func (op *poolOp) Do(in ...G.Value) (G.Value, error) {
	x, xs, err := float32s(in[0], op.name)
	if err != nil {
		return nil, err
	}
	if len(xs) != 4 || len(x) != xs.TotalSize() {
		return nil, fmt.Errorf("%s pooling: input %v", op.name, xs)
	}
	batch, channels, cells := xs[0], xs[1], xs[2]*xs[3]
	op.y = grow(op.y, batch*2*channels)
	if cap(op.argmax) < batch*channels {
		op.argmax = make([]int, batch*channels)
	}
	op.argmax = op.argmax[:batch*channels]
	for i := 0; i < batch*channels; i++ {
		plane := x[i*cells : (i+1)*cells]
		sum, best, at := 0.0, float32(math.Inf(-1)), 0
		for c, v := range plane {
			sum += float64(v)
			if v > best {
				best, at = v, c
			}
		}
		b, ch := i/channels, i%channels
		op.y[b*2*channels+ch] = float32(sum / float64(cells))
		op.y[b*2*channels+channels+ch] = best
		op.argmax[i] = at
	}
	return tensor.New(tensor.WithShape(batch, 2*channels), tensor.WithBacking(op.y)), nil
}

func (op *poolOp) DiffWRT(int) []bool { return []bool{true} }

func (op *poolOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	dx, err := G.ApplyOp(&poolGradOp{pool: op}, inputs[0], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx}, nil
}

func (op *poolGradOp) Arity() int { return 2 }
func (op *poolGradOp) Type() hm.Type {
	return hm.NewFnType(tensorType(4), tensorType(2), tensorType(4))
}
func (op *poolGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, ok := in[0].(tensor.Shape)
	if !ok || len(s) != 4 {
		return nil, fmt.Errorf("%s pooling gradient: got %v", op.pool.name, in[0])
	}
	return s.Clone(), nil
}
func (op *poolGradOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "flipzero.pool.grad %s %p", op.pool.name, op)
}
func (op *poolGradOp) Hashcode() uint32 { return opHash(op) }
func (op *poolGradOp) String() string   { return "PoolGrad " + op.pool.name }

func (op *poolGradOp) Do(in ...G.Value) (G.Value, error) {
	_, xs, err := float32s(in[0], op.pool.name)
	if err != nil {
		return nil, err
	}
	dy, _, err := float32s(in[1], op.pool.name)
	if err != nil {
		return nil, err
	}
	batch, channels, cells := xs[0], xs[1], xs[2]*xs[3]
	if len(dy) != batch*2*channels || len(op.pool.argmax) != batch*channels {
		return nil, fmt.Errorf("%s pooling gradient: %d gradients for input %v, before or without a forward pass", op.pool.name, len(dy), xs)
	}
	op.dx = grow(op.dx, batch*channels*cells)
	for i := 0; i < batch*channels; i++ {
		b, ch := i/channels, i%channels
		share := dy[b*2*channels+ch] / float32(cells)
		plane := op.dx[i*cells : (i+1)*cells]
		for c := range plane {
			plane[c] = share
		}
		plane[op.pool.argmax[i]] += dy[b*2*channels+channels+ch]
	}
	return dense4(op.dx, xs...), nil
}

func (op *channelBiasOp) Arity() int { return 2 }
func (op *channelBiasOp) Type() hm.Type {
	return hm.NewFnType(tensorType(4), tensorType(2), tensorType(4))
}
func (op *channelBiasOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, ok := in[0].(tensor.Shape)
	if !ok || len(s) != 4 {
		return nil, fmt.Errorf("%s pooling bias: want an NCHW input, got %v", op.name, in[0])
	}
	return s.Clone(), nil
}
func (op *channelBiasOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "flipzero.chanbias %s %p", op.name, op)
}
func (op *channelBiasOp) Hashcode() uint32 { return opHash(op) }
func (op *channelBiasOp) String() string   { return "ChannelBias " + op.name }

func (op *channelBiasOp) Do(in ...G.Value) (G.Value, error) {
	x, xs, err := float32s(in[0], op.name)
	if err != nil {
		return nil, err
	}
	bias, _, err := float32s(in[1], op.name)
	if err != nil {
		return nil, err
	}
	if len(xs) != 4 || len(bias) != xs[0]*xs[1] {
		return nil, fmt.Errorf("%s pooling bias: input %v, %d biases", op.name, xs, len(bias))
	}
	cells := xs[2] * xs[3]
	op.y = grow(op.y, len(x))
	for i, v := range bias {
		src, dst := x[i*cells:(i+1)*cells], op.y[i*cells:(i+1)*cells]
		for c, s := range src {
			dst[c] = s + v
		}
	}
	return dense4(op.y, xs...), nil
}

func (op *channelBiasOp) DiffWRT(int) []bool { return []bool{true, true} }

func (op *channelBiasOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	db, err := G.ApplyOp(&cellSumOp{name: op.name}, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{grad, db}, nil
}

func (op *cellSumOp) Arity() int { return 1 }
func (op *cellSumOp) Type() hm.Type {
	return hm.NewFnType(tensorType(4), tensorType(2))
}
func (op *cellSumOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, ok := in[0].(tensor.Shape)
	if !ok || len(s) != 4 {
		return nil, fmt.Errorf("%s pooling bias gradient: got %v", op.name, in[0])
	}
	return tensor.Shape{s[0], s[1]}, nil
}
func (op *cellSumOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "flipzero.cellsum %s %p", op.name, op) }
func (op *cellSumOp) Hashcode() uint32      { return opHash(op) }
func (op *cellSumOp) String() string        { return "CellSum " + op.name }

func (op *cellSumOp) Do(in ...G.Value) (G.Value, error) {
	x, xs, err := float32s(in[0], op.name)
	if err != nil {
		return nil, err
	}
	if len(xs) != 4 || len(x) != xs.TotalSize() {
		return nil, fmt.Errorf("%s pooling bias gradient: input %v", op.name, xs)
	}
	cells := xs[2] * xs[3]
	op.y = grow(op.y, xs[0]*xs[1])
	for i := range op.y {
		sum := float32(0)
		for _, v := range x[i*cells : (i+1)*cells] {
			sum += v
		}
		op.y[i] = sum
	}
	return tensor.New(tensor.WithShape(xs[0], xs[1]), tensor.WithBacking(op.y)), nil
}

// gpoolBias applies block b's global pooling bias to y (batch, channels,
// h, w) in the graph.
func (b *builder) gpoolBias(y *G.Node, d nn.DenseDesc) *G.Node {
	name := d.Name
	if b.err != nil {
		return nil
	}
	pooled, err := G.ApplyOp(&poolOp{name: name}, y)
	if err != nil {
		b.err = fmt.Errorf("%s: %w", name, err)
		return nil
	}
	bias := b.dense(pooled, d)
	if b.err != nil {
		return nil
	}
	out, err := G.ApplyOp(&channelBiasOp{name: name}, y, bias)
	if err != nil {
		b.err = fmt.Errorf("%s: %w", name, err)
		return nil
	}
	return out
}

// gpoolBias adds a folded pooling layer's bias to count positions' cells
// of act, whose cell c of position p lies at row pix[p·cells + c] (the
// im2row path's rows, or the direct path's padded pixels), channels
// values a row. pooled and bias are scratch, 2·channels and channels
// values a position: every position is pooled first, so that one matrix
// product makes all their biases.
func gpoolBias(d *foldedDense, act []float32, pix []int32, count, cells, channels int, pooled, bias []float32) {
	pooled, bias = pooled[:count*2*channels], bias[:count*channels]
	for p := 0; p < count; p++ {
		poolInto(act, pix[p*cells:(p+1)*cells], cells, channels, pooled[p*2*channels:(p+1)*2*channels])
	}
	sgemm(count, d.out, d.in, pooled, d.in, d.w, d.out, bias, d.out)
	for p := 0; p < count; p++ {
		b := bias[p*channels : (p+1)*channels]
		for ch, v := range d.b {
			b[ch] += v
		}
		addRows(act, pix[p*cells:(p+1)*cells], channels, b)
	}
}

// pool writes the mean, then the maximum, of each of the channels of the
// rows of act (cells × channels, compact) into pooled (2·channels).
func pool(act []float32, channels int, pooled []float32) {
	poolInto(act, nil, len(act)/channels, channels, pooled)
}

// poolInto writes the mean, then the maximum, of each of the channels of
// n rows of act into pooled (2·channels): the rows pix[i], or the first n
// where pix is nil.
func poolInto(act []float32, pix []int32, n, channels int, pooled []float32) {
	mean, most := pooled[:channels], pooled[channels:2*channels]
	clear(mean)
	for ch := range most {
		most[ch] = float32(math.Inf(-1))
	}
	poolRows(act, pix, n, channels, mean, most)
	for ch := range mean {
		mean[ch] /= float32(n)
	}
}
