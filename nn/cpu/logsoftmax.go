package cpu

import (
	"fmt"
	"hash"
	"hash/fnv"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// logSoftmaxRows is log-softmax along the rows of a float32 matrix.
// Gorgonia's own LogSoftMax (tensor v0.9.23) takes every row's maximum
// from the matrix's first element, so a row whose logits lie far from it
// (e.g. one legal action among masked ones) overflows to NaN.
func logSoftmaxRows(x *G.Node) (*G.Node, error) {
	return G.ApplyOp(logSoftmaxOp{}, x)
}

type logSoftmaxOp struct{ pureOp }

func (logSoftmaxOp) Arity() int { return 1 }
func (logSoftmaxOp) Type() hm.Type {
	t := G.TensorType{Dims: 2, Of: hm.TypeVariable('a')}
	return hm.NewFnType(t, t)
}
func (logSoftmaxOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, ok := in[0].(tensor.Shape)
	if !ok || len(s) != 2 {
		return nil, fmt.Errorf("log-softmax wants a matrix, got %v", in[0])
	}
	return s.Clone(), nil
}
func (logSoftmaxOp) WriteHash(h hash.Hash) { h.Write([]byte("flipzero.logsoftmax")) }
func (op logSoftmaxOp) Hashcode() uint32   { return opHash(op) }
func (logSoftmaxOp) String() string        { return "LogSoftmaxRows" }

func (logSoftmaxOp) Do(in ...G.Value) (G.Value, error) {
	x, ok := in[0].(*tensor.Dense)
	if !ok || x.Dtype() != tensor.Float32 || x.Dims() != 2 {
		return nil, fmt.Errorf("log-softmax wants a float32 matrix, got %v", in[0])
	}
	rows, cols := x.Shape()[0], x.Shape()[1]
	src := x.Float32s()
	out := make([]float32, len(src))
	for r := 0; r < rows; r++ {
		row, dst := src[r*cols:(r+1)*cols], out[r*cols:(r+1)*cols]
		m := row[0]
		for _, v := range row {
			m = max(m, v)
		}
		sum := 0.0
		for _, v := range row {
			sum += math.Exp(float64(v - m))
		}
		lse := m + float32(math.Log(sum))
		for i, v := range row {
			dst[i] = v - lse
		}
	}
	return tensor.New(tensor.WithShape(rows, cols), tensor.WithBacking(out)), nil
}

func (logSoftmaxOp) DiffWRT(int) []bool { return []bool{true} }

// SymDiff: with y = log-softmax(x), dx = dy − softmax(x)·Σdy per row.
func (logSoftmaxOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	dx, err := G.ApplyOp(logSoftmaxGradOp{}, output, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx}, nil
}

// logSoftmaxGradOp computes the input gradient of logSoftmaxOp from its
// output and the output's gradient.
type logSoftmaxGradOp struct{ pureOp }

func (logSoftmaxGradOp) Arity() int { return 2 }
func (logSoftmaxGradOp) Type() hm.Type {
	t := G.TensorType{Dims: 2, Of: hm.TypeVariable('a')}
	return hm.NewFnType(t, t, t)
}
func (logSoftmaxGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, ok := in[0].(tensor.Shape)
	if !ok || len(s) != 2 {
		return nil, fmt.Errorf("log-softmax gradient wants a matrix, got %v", in[0])
	}
	return s.Clone(), nil
}
func (logSoftmaxGradOp) WriteHash(h hash.Hash) { h.Write([]byte("flipzero.logsoftmax.grad")) }
func (op logSoftmaxGradOp) Hashcode() uint32   { return opHash(op) }
func (logSoftmaxGradOp) String() string        { return "LogSoftmaxRowsGrad" }

func (logSoftmaxGradOp) Do(in ...G.Value) (G.Value, error) {
	y, ok1 := in[0].(*tensor.Dense)
	dy, ok2 := in[1].(*tensor.Dense)
	if !ok1 || !ok2 || y.Dtype() != tensor.Float32 || dy.Dtype() != tensor.Float32 || !y.Shape().Eq(dy.Shape()) {
		return nil, fmt.Errorf("log-softmax gradient wants two float32 matrices of one shape, got %v and %v", in[0], in[1])
	}
	rows, cols := y.Shape()[0], y.Shape()[1]
	ys, dys := y.Float32s(), dy.Float32s()
	out := make([]float32, len(ys))
	for r := 0; r < rows; r++ {
		sum := float32(0)
		for _, g := range dys[r*cols : (r+1)*cols] {
			sum += g
		}
		for i := r * cols; i < (r+1)*cols; i++ {
			out[i] = dys[i] - float32(math.Exp(float64(ys[i])))*sum
		}
	}
	return tensor.New(tensor.WithShape(rows, cols), tensor.WithBacking(out)), nil
}

// pureOp is embedded in the package's Gorgonia operations: each returns a
// new value of its own, calls nothing outside Go, and overwrites no input.
type pureOp struct{}

func (pureOp) ReturnsPtr() bool     { return false }
func (pureOp) CallsExtern() bool    { return false }
func (pureOp) OverwritesInput() int { return -1 }

func opHash(op interface{ WriteHash(hash.Hash) }) uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}
