package cuda

import (
	"fmt"

	"github.com/flipzero/flipzero/nn"
)

// maxBatchLimit bounds a batch so that every buffer size fits an int32,
// the type of cuBLAS's and cuDNN's dimensions.
const maxBatchLimit = 1 << 16

// checkLayers verifies that the arrays have the sizes the shapes promise,
// so that no copy to the GPU reads or writes out of bounds.
func checkLayers(l nn.Layers) error {
	if l.Planes < 1 || l.Height < 1 || l.Width < 1 || l.Actions < 1 {
		return fmt.Errorf("layers of %q: input %d×%d×%d with %d actions", l.Game, l.Planes, l.Height, l.Width, l.Actions)
	}
	if l.ValueOutputs != 3 {
		return fmt.Errorf("layers of %q: %d value outputs, want 3 (win, draw, loss)", l.Game, l.ValueOutputs)
	}
	cells := l.Height * l.Width
	conv := func(name string, c nn.ConvLayer, in, kernel int) error {
		switch {
		case c.In != in || c.Kernel != kernel || c.Out < 1:
			return fmt.Errorf("layers of %q: %s is %d→%d with kernel %d, want %d inputs and kernel %d", l.Game, name, c.In, c.Out, c.Kernel, in, kernel)
		case len(c.Weights) != c.Out*c.In*c.Kernel*c.Kernel || len(c.Bias) != c.Out:
			return fmt.Errorf("layers of %q: %s has %d weights and %d biases, want %d and %d", l.Game, name, len(c.Weights), len(c.Bias), c.Out*c.In*c.Kernel*c.Kernel, c.Out)
		}
		return nil
	}
	dense := func(name string, d nn.DenseLayer, in, out int) error {
		switch {
		case d.In != in || d.Out != out || out < 1:
			return fmt.Errorf("layers of %q: %s is %d→%d, want %d→%d", l.Game, name, d.In, d.Out, in, out)
		case len(d.Weights) != in*out || len(d.Bias) != out:
			return fmt.Errorf("layers of %q: %s has %d weights and %d biases, want %d and %d", l.Game, name, len(d.Weights), len(d.Bias), in*out, out)
		}
		return nil
	}
	if err := conv("stem", l.Stem, l.Planes, 3); err != nil {
		return err
	}
	width := l.Stem.Out
	if len(l.GlobalPool) != 0 && len(l.GlobalPool) != len(l.Blocks) {
		return fmt.Errorf("layers of %q: %d global pooling layers for %d blocks", l.Game, len(l.GlobalPool), len(l.Blocks))
	}
	for i, b := range l.Blocks {
		if err := conv(fmt.Sprintf("block %d a", i), b[0], width, 3); err != nil {
			return err
		}
		if err := conv(fmt.Sprintf("block %d b", i), b[1], b[0].Out, 3); err != nil {
			return err
		}
		if b[1].Out != width {
			return fmt.Errorf("layers of %q: block %d outputs %d channels, its skip %d", l.Game, i, b[1].Out, width)
		}
		if i < len(l.GlobalPool) && l.GlobalPool[i] != nil {
			if err := dense(fmt.Sprintf("block %d pooling", i), *l.GlobalPool[i], 2*b[0].Out, b[0].Out); err != nil {
				return err
			}
		}
	}
	if err := conv("policy conv", l.PolicyConv, width, 1); err != nil {
		return err
	}
	if err := conv("value conv", l.ValueConv, width, 1); err != nil {
		return err
	}
	if err := checkPolicy(l, conv, dense); err != nil {
		return err
	}
	if err := dense("value fc1", l.ValueFC1, l.ValueConv.Out*cells, l.ValueFC1.Out); err != nil {
		return err
	}
	return dense("value fc2", l.ValueFC2, l.ValueFC1.Out, l.ValueOutputs)
}

// checkPolicy checks the policy head: the dense layer, or the
// convolutional head's output convolution, global layer and each
// action's index into their logits.
func checkPolicy(l nn.Layers, conv func(string, nn.ConvLayer, int, int) error, dense func(string, nn.DenseLayer, int, int) error) error {
	cells, pf := l.Height*l.Width, l.PolicyConv.Out
	if l.PolicyOut == nil {
		return dense("policy fc", l.PolicyFC, pf*cells, l.Actions)
	}
	if err := conv("policy output", *l.PolicyOut, pf, 1); err != nil {
		return err
	}
	logits := l.PolicyOut.Out * cells
	if l.PolicyGlobal != nil {
		if err := dense("policy global", *l.PolicyGlobal, 2*pf, l.PolicyGlobal.Out); err != nil {
			return err
		}
		logits += l.PolicyGlobal.Out
	}
	if len(l.PolicyIndex) != l.Actions {
		return fmt.Errorf("layers of %q: %d policy indices for %d actions", l.Game, len(l.PolicyIndex), l.Actions)
	}
	for a, i := range l.PolicyIndex {
		if i < 0 || int(i) >= logits {
			return fmt.Errorf("layers of %q: action %d reads policy logit %d of %d", l.Game, a, i, logits)
		}
	}
	return nil
}

// mergeHeads makes the policy and value 1×1 convolutions one convolution
// whose first outputs are the policy's: one launch instead of two, and
// each position's policy and value features stay contiguous.
func mergeHeads(p, v nn.ConvLayer) nn.ConvLayer {
	m := nn.ConvLayer{Kernel: p.Kernel, In: p.In, Out: p.Out + v.Out}
	m.Weights = append(append([]float32(nil), p.Weights...), v.Weights...)
	m.Bias = append(append([]float32(nil), p.Bias...), v.Bias...)
	return m
}

// bucket is the batch a forward pass of count positions runs at: counts
// are rounded up to powers of two and their halfway points (at most a
// third wasted) so that a few plans, each with its algorithms chosen and
// its CUDA graph captured, serve every count.
func bucket(count, maxBatch int) int {
	b := 1
	for b < count {
		switch {
		case b < 4:
			b++
		case b&(b-1) == 0: // a power of two: next is 1.5×
			b += b / 2
		default: // 1.5 × a power of two: next is 2×
			b += b / 3
		}
	}
	return min(b, maxBatch)
}

// gemm is one column-major cuBLAS SGEMM, C(m×n) = A(m×k)·B(k×n), with
// leading dimensions and offsets in floats.
type gemm struct {
	m, n, k       int
	lda, ldb, ldc int
	offB          int
}

// denseGemm is the SGEMM that computes rows of a row-major output
// (rows × out) = input (rows × in) · weights (in × out), the input rows
// taken stride floats apart from offset: in column-major terms
// outputᵀ (out × rows) = weightsᵀ (out × in) · inputᵀ (in × rows), each
// being its row-major matrix read as-is.
func denseGemm(in, out, rows, stride, offset int) gemm {
	return gemm{m: out, n: rows, k: in, lda: out, ldb: stride, ldc: out, offB: offset}
}

// columnMajorGemm multiplies as cuBLAS does, beta 0: the reference the
// pure-Go tests check denseGemm's arguments against.
func columnMajorGemm(g gemm, a, b, c []float32) {
	for j := 0; j < g.n; j++ {
		for i := 0; i < g.m; i++ {
			var s float32
			for p := 0; p < g.k; p++ {
				s += a[i+p*g.lda] * b[g.offB+p+j*g.ldb]
			}
			c[i+j*g.ldc] = s
		}
	}
}

// gemmMaxBatch is the largest batch tried with convolutions as im2row and
// cuBLAS SGEMM: cuDNN's kernels take tens of microseconds even for one
// position, while the SGEMM path's cost follows the work; past a few
// hundred positions cuDNN's implicit GEMM wins and im2row's buffer grows
// large.
const gemmMaxBatch = 512

// rowWeights lays a convolution's (out, in, ky, kx) weights out as the
// (ky·kx·in, out) matrix that multiplies im2row's rows.
func rowWeights(c nn.ConvLayer) []float32 {
	return permuteWeights(c, func(o, i, ky, kx int) int { return ((ky*c.Kernel+kx)*c.In+i)*c.Out + o })
}

// permuteWeights lays a convolution's (out, in, ky, kx) weights out, each
// at the index at gives it.
func permuteWeights(c nn.ConvLayer, at func(o, i, ky, kx int) int) []float32 {
	k := c.Kernel
	w := make([]float32, len(c.Weights))
	for o := 0; o < c.Out; o++ {
		for i := 0; i < c.In; i++ {
			for ky := 0; ky < k; ky++ {
				for kx := 0; kx < k; kx++ {
					w[at(o, i, ky, kx)] = c.Weights[((o*c.In+i)*k+ky)*k+kx]
				}
			}
		}
	}
	return w
}

// headWeights rearranges a head's dense weights, which read its
// channels flattened (channel, cell), to read the merged heads' output as
// the SGEMM path lays it out, (cell, channel) over all heads' channels:
// rows of the other head's channels are zero. first is the head's first
// channel among the heads channels.
func headWeights(d nn.DenseLayer, cells, heads, first, channels int) []float32 {
	w := make([]float32, cells*heads*d.Out)
	for c := 0; c < channels; c++ {
		for p := 0; p < cells; p++ {
			copy(w[(p*heads+first+c)*d.Out:][:d.Out], d.Weights[(c*cells+p)*d.Out:][:d.Out])
		}
	}
	return w
}

// im2rowArgs are the im2row kernel's parameters after the two pointers.
type im2rowArgs struct {
	total, channels, height, width, kernel, cells uint32
	strideN, strideC, strideP                     uint32
}

// im2rowFor gathers count positions' kernel×kernel neighbourhoods of a
// tensor with the given channels, laid out NCHW (input) or as
// (position·cell, channel) rows (activations).
func im2rowFor(count, channels, height, width, kernel int, nchw bool) im2rowArgs {
	cells := height * width
	a := im2rowArgs{
		total:    uint32(count * cells * kernel * kernel * channels),
		channels: uint32(channels), height: uint32(height), width: uint32(width),
		kernel: uint32(kernel), cells: uint32(cells),
	}
	if nchw {
		a.strideN, a.strideC, a.strideP = uint32(channels*cells), uint32(cells), 1
	} else {
		a.strideN, a.strideC, a.strideP = uint32(cells*channels), 1, uint32(channels)
	}
	return a
}

// im2rowHost does on the CPU what the im2row kernel does, index for
// index: the reference its arguments are tested against.
func im2rowHost(a im2rowArgs, src, dst []float32) {
	for i := uint32(0); i < a.total; i++ {
		c, t := i%a.channels, i/a.channels
		kk, r := t%(a.kernel*a.kernel), t/(a.kernel*a.kernel)
		ky, kx := kk/a.kernel, kk%a.kernel
		n, p := r/a.cells, r%a.cells
		y, x := p/a.width, p%a.width
		sy, sx := y+ky-a.kernel/2, x+kx-a.kernel/2 // wraps below zero, as unsigned in the kernel
		v := float32(0)
		if sy < a.height && sx < a.width {
			v = src[n*a.strideN+c*a.strideC+(sy*a.width+sx)*a.strideP]
		}
		dst[i] = v
	}
}

// rowGemm is the SGEMM computing the row-major C (m×n) = op(A)·op(B), A
// and B row-major as stored (A is m×k, or k×m when transA; B is k×n, or
// n×k when transB): column-major cuBLAS computes Cᵀ = op(B)ᵀ·op(A)ᵀ,
// reading each stored matrix as its transpose.
type rowGemmArgs struct {
	opFirst, opSecond int32 // cuBLAS ops on the first (B) and second (A) operand
	m, n, k           int   // cuBLAS's m, n, k
	ldFirst, ldSecond int
	ldc               int
}

func rowGemm(transA, transB bool, m, n, k int) rowGemmArgs {
	g := rowGemmArgs{opFirst: cublasOpN, opSecond: cublasOpN, m: n, n: m, k: k, ldFirst: n, ldSecond: k, ldc: n}
	if transB {
		g.opFirst, g.ldFirst = cublasOpT, k
	}
	if transA {
		g.opSecond, g.ldSecond = cublasOpT, m
	}
	return g
}

// columnMajorGemmOps multiplies as cuBLAS does with transposes, beta 0:
// the reference rowGemm is tested against.
func columnMajorGemmOps(opA, opB int32, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	at := func(i, p int) float32 {
		if opA == cublasOpT {
			return a[p+i*lda]
		}
		return a[i+p*lda]
	}
	bt := func(p, j int) float32 {
		if opB == cublasOpT {
			return b[j+p*ldb]
		}
		return b[p+j*ldb]
	}
	for j := 0; j < n; j++ {
		for i := 0; i < m; i++ {
			var s float32
			for p := 0; p < k; p++ {
				s += at(i, p) * bt(p, j)
			}
			c[i+j*ldc] = s
		}
	}
}
