package cpu

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/flipzero/flipzero/nn"
)

// The convolutional policy head (Config.PolicyHead "conv"): the policy
// convolution's planes (ReLU) go through a 1×1 convolution to the game's
// policy planes, one logit per cell and kind of action, and through their
// mean and maximum over the board to the logits of the actions that have
// no cell; each action then reads its logit where the game puts it
// (env.PolicyMap).

// convPolicy is the head's logits (batch, actions) in the graph, from the
// policy convolution's output p (batch, policy filters, h, w), through
// the output convolution out and, where the game has actions without a
// cell, the pooled layer global; index places each action's logit (the
// policy head's, or the soft policy head's with its own out and global).
func (b *builder) convPolicy(p *G.Node, out nn.ConvDesc, global *nn.DenseDesc, index []int32) *G.Node {
	if b.err != nil {
		return nil
	}
	planes := b.convBN(p, out, false)
	inputs := []*G.Node{planes}
	globals := 0
	if global != nil {
		pooled, err := G.ApplyOp(&poolOp{name: global.Name}, p)
		if err != nil {
			b.err = fmt.Errorf("%s: %w", global.Name, err)
			return nil
		}
		inputs = append(inputs, b.dense(pooled, *global))
		globals = global.Out
	}
	if b.err != nil {
		return nil
	}
	op := &gatherOp{index: index, spatial: out.Out * b.height * b.width, global: globals}
	logits, err := G.ApplyOp(op, inputs...)
	if err != nil {
		b.err = fmt.Errorf("policy gather: %w", err)
		return nil
	}
	return logits
}

// gatherOp picks each action's logit out of the policy planes (batch,
// planes, h, w), flattened per position, followed by the global logits
// (batch, global) when there are any: logit a = values[index[a]].
type gatherOp struct {
	pureOp
	index           []int32
	spatial, global int
	y               []float32
}

// scatterOp is gatherOp's gradient for one of its inputs: each action's
// gradient added where its logit came from.
type scatterOp struct {
	pureOp
	gather *gatherOp
	which  int // 0: the planes, 1: the global logits
	dx     []float32
}

func (op *gatherOp) Arity() int {
	if op.global > 0 {
		return 2
	}
	return 1
}
func (op *gatherOp) Type() hm.Type {
	if op.global > 0 {
		return hm.NewFnType(tensorType(4), tensorType(2), tensorType(2))
	}
	return hm.NewFnType(tensorType(4), tensorType(2))
}
func (op *gatherOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, ok := in[0].(tensor.Shape)
	if !ok || len(s) != 4 {
		return nil, fmt.Errorf("policy gather: want NCHW planes, got %v", in[0])
	}
	return tensor.Shape{s[0], len(op.index)}, nil
}
func (op *gatherOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "flipzero.gather %p", op) }
func (op *gatherOp) Hashcode() uint32      { return opHash(op) }
func (op *gatherOp) String() string        { return "PolicyGather" }

// inputs reads the planes and the global logits of a batch.
func (op *gatherOp) inputs(in []G.Value) (planes, global []float32, batch int, err error) {
	planes, ps, err := float32s(in[0], "policy gather")
	if err != nil {
		return nil, nil, 0, err
	}
	batch = ps[0]
	if len(planes) != batch*op.spatial {
		return nil, nil, 0, fmt.Errorf("policy gather: planes %v, want %d values a position", ps, op.spatial)
	}
	if op.global > 0 {
		if global, _, err = float32s(in[1], "policy gather"); err != nil {
			return nil, nil, 0, err
		}
		if len(global) != batch*op.global {
			return nil, nil, 0, fmt.Errorf("policy gather: %d global logits, want %d a position", len(global), op.global)
		}
	}
	return planes, global, batch, nil
}

func (op *gatherOp) Do(in ...G.Value) (G.Value, error) {
	planes, global, batch, err := op.inputs(in)
	if err != nil {
		return nil, err
	}
	actions := len(op.index)
	op.y = grow(op.y, batch*actions)
	for b := 0; b < batch; b++ {
		p, g, out := planes[b*op.spatial:(b+1)*op.spatial], global[b*op.global:(b+1)*op.global], op.y[b*actions:(b+1)*actions]
		for a, i := range op.index {
			if int(i) < op.spatial {
				out[a] = p[i]
			} else {
				out[a] = g[int(i)-op.spatial]
			}
		}
	}
	return tensor.New(tensor.WithShape(batch, actions), tensor.WithBacking(op.y)), nil
}

func (op *gatherOp) DiffWRT(n int) []bool {
	d := make([]bool, n)
	for i := range d {
		d[i] = true
	}
	return d
}

func (op *gatherOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	var out G.Nodes
	for which := range op.Arity() {
		d, err := G.ApplyOp(&scatterOp{gather: op, which: which}, inputs[which], grad)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

func (op *scatterOp) Arity() int { return 2 }
func (op *scatterOp) Type() hm.Type {
	if op.which == 0 {
		return hm.NewFnType(tensorType(4), tensorType(2), tensorType(4))
	}
	return hm.NewFnType(tensorType(2), tensorType(2), tensorType(2))
}
func (op *scatterOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, ok := in[0].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("policy gather gradient: got %v", in[0])
	}
	return s.Clone(), nil
}
func (op *scatterOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "flipzero.scatter%d %p", op.which, op.gather)
}
func (op *scatterOp) Hashcode() uint32 { return opHash(op) }
func (op *scatterOp) String() string   { return fmt.Sprintf("PolicyScatter%d", op.which) }

func (op *scatterOp) Do(in ...G.Value) (G.Value, error) {
	_, xs, err := float32s(in[0], "policy gather gradient")
	if err != nil {
		return nil, err
	}
	dy, _, err := float32s(in[1], "policy gather gradient")
	if err != nil {
		return nil, err
	}
	g := op.gather
	batch, actions := xs[0], len(g.index)
	width := g.spatial
	if op.which == 1 {
		width = g.global
	}
	if len(dy) != batch*actions || xs.TotalSize() != batch*width {
		return nil, fmt.Errorf("policy gather gradient: %d gradients for input %v", len(dy), xs)
	}
	op.dx = grow(op.dx, batch*width)
	clear(op.dx)
	for b := 0; b < batch; b++ {
		d, out := dy[b*actions:(b+1)*actions], op.dx[b*width:(b+1)*width]
		for a, i := range g.index {
			switch {
			case op.which == 0 && int(i) < g.spatial:
				out[i] += d[a]
			case op.which == 1 && int(i) >= g.spatial:
				out[int(i)-g.spatial] += d[a]
			}
		}
	}
	return tensor.New(tensor.WithShape(xs...), tensor.WithBacking(op.dx)), nil
}

// convPolicy computes the head's logits for count positions from the
// policy convolution's output h (count·cells rows of policy filters,
// cell-major) into logits (count × actions).
func (e *Evaluator) convPolicy(h, logits []float32, count int) {
	f := e.m
	cells, planes, filters := f.shape.cells(), f.policyOut.out, f.cfg.PolicyFilters
	out := e.policyPlanes[:count*cells*planes]
	sgemm(count*cells, planes, filters, h, filters, f.policyOut.w, planes, out, planes)
	for r := 0; r < count*cells; r++ {
		row := out[r*planes : (r+1)*planes]
		for i, b := range f.policyOut.b {
			row[i] += b
		}
	}
	var global []float32
	if g := f.policyGlobal; g != nil {
		global = e.policyGlobals[:count*g.out]
		for b := 0; b < count; b++ {
			pool(h[b*cells*filters:(b+1)*cells*filters], filters, e.policyPooled)
			dst := global[b*g.out : (b+1)*g.out]
			sgemm(1, g.out, g.in, e.policyPooled, g.in, g.w, g.out, dst, g.out)
			for i, v := range g.b {
				dst[i] += v
			}
		}
	}
	actions, spatial, globals := f.shape.actions, cells*planes, 0
	if f.policyGlobal != nil {
		globals = f.policyGlobal.out
	}
	for b := 0; b < count; b++ {
		p, g, dst := out[b*spatial:(b+1)*spatial], global[b*globals:(b+1)*globals], logits[b*actions:(b+1)*actions]
		for a, i := range f.policyGather {
			if int(i) < spatial {
				dst[a] = p[i]
			} else {
				dst[a] = g[int(i)-spatial]
			}
		}
	}
}
