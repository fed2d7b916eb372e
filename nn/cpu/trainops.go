package cpu

import (
	"fmt"
	"hash"
	"math"
	"runtime"
	"sync"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The training graph's convolutions and batch norms are the project's own
// Gorgonia operations. Gorgonia's im2col is slow, allocates every buffer
// afresh on every step (the tape machine's Reset frees them, and its batch
// norm needs that Reset) and runs on one core. These keep their buffers
// from step to step, split each batch over the cores (images for the
// convolutions, channels for batch norm) and multiply with the package's
// BLAS, one GEMM per image. Each operation value belongs to one graph,
// whose machine runs its operations one at a time.

// parallelFor splits [0, n) into at most GOMAXPROCS (and at most limit,
// if positive: the per-worker buffers sized earlier) contiguous ranges,
// runs f on each, worker w getting the w-th range, and waits. It returns
// the number of workers.
func parallelFor(n, limit int, f func(worker, lo, hi int)) int {
	workers := min(runtime.GOMAXPROCS(0), n)
	if limit > 0 {
		workers = min(workers, limit)
	}
	if workers <= 1 {
		f(0, 0, n)
		return 1
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := w*n/workers, (w+1)*n/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(w, lo, hi)
		}()
	}
	wg.Wait()
	return workers
}

// grow returns s with length n, reallocating only when it is too short.
func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// scratch returns buffers of n values each for workers workers.
func scratch(bufs [][]float32, n, workers int) [][]float32 {
	for len(bufs) < workers {
		bufs = append(bufs, nil)
	}
	bufs = bufs[:workers]
	for i := range bufs {
		bufs[i] = grow(bufs[i], n)
	}
	return bufs
}

func float32s(v G.Value, what string) ([]float32, tensor.Shape, error) {
	d, ok := v.(*tensor.Dense)
	if !ok || d.Dtype() != tensor.Float32 {
		return nil, nil, fmt.Errorf("%s: want a float32 tensor, got %T", what, v)
	}
	return d.Float32s(), d.Shape(), nil
}

func dense4(data []float32, s ...int) *tensor.Dense {
	return tensor.New(tensor.WithShape(s...), tensor.WithBacking(data))
}

// workspace holds the per-worker scratch buffers of one graph's
// convolutions. The graph's machine runs one operation at a time, so its
// operations share one workspace: memory grows with the cores, not with
// cores × layers.
type workspace struct {
	cols, prod, partial [][]float32
	// procs bounds the workers, the cores the graph's operations split
	// their work over (0: GOMAXPROCS): a replica of a data-parallel step
	// gets its share of the cores.
	procs int
}

// workers is how many workers the graph's operations split over.
func (ws *workspace) workers() int {
	if ws.procs > 0 {
		return min(ws.procs, runtime.GOMAXPROCS(0))
	}
	return runtime.GOMAXPROCS(0)
}

// buffers sizes the workspace for its workers and returns them.
func (ws *workspace) buffers(cols, prod, partial int) (c, p, q [][]float32) {
	w := ws.workers()
	ws.cols = scratch(ws.cols, cols, w)
	ws.prod = scratch(ws.prod, prod, w)
	ws.partial = scratch(ws.partial, partial, w)
	return ws.cols, ws.prod, ws.partial
}

// convGeom is a same-padded, stride-1 square convolution over NCHW
// tensors; its weights are (out, in, kernel, kernel).
type convGeom struct {
	name                           string
	kernel, in, out, height, width int
	ws                             *workspace
	// kernels, where not nil, run a 3×3 convolution and its input
	// gradient directly (directTrain) instead of by im2col + GEMM.
	kernels *directArch
}

// direct says whether the convolution runs on the direct kernels.
func (g convGeom) direct() bool { return g.kernels != nil && g.kernel == 3 }

func (g convGeom) shape() shape { return shape{height: g.height, width: g.width} }

// packWeights lays weights w (out, in, kernel, kernel) out as the direct
// kernels read them, (kernel·kernel·in, out) rows, into dst; flipped, the
// weights of the input gradient's convolution instead: the kernel turned
// by 180° with in and out swapped, (kernel·kernel·out, in).
func (g convGeom) packWeights(w, dst []float32, flipped bool) {
	kk := g.kernel * g.kernel
	for o := 0; o < g.out; o++ {
		for c := 0; c < g.in; c++ {
			from := w[(o*g.in+c)*kk : (o*g.in+c+1)*kk]
			for k, v := range from {
				if flipped {
					dst[((kk-1-k)*g.out+o)*g.in+c] = v
				} else {
					dst[(k*g.in+c)*g.out+o] = v
				}
			}
		}
	}
}

func (g convGeom) cells() int { return g.height * g.width }

// k is the length of a column of im2col: one weight row.
func (g convGeom) k() int { return g.in * g.kernel * g.kernel }

// groupImages is how many images one GEMM covers: a product with one
// image's 64 or 121 cells as its inner or outer dimension runs well below
// the BLAS's peak, so each worker gathers a few images side by side.
func (g convGeom) groupImages() int { return max(1, 512/g.cells()) }

// im2col writes an image's (in, height, width) neighbourhoods as columns
// of an (in·kernel·kernel, ·) matrix of row stride ld: row
// (c·kernel + ky)·kernel + kx holds, for each cell, channel c at offset
// (ky, kx), zero off the board. Within a plane the offset is one shift
// of the flattened board, so each row is one copy, then the cells whose
// neighbour lies off the board are cleared.
func (g convGeom) im2col(src, dst []float32, ld int) {
	h, w, kk, pad := g.height, g.width, g.kernel, g.kernel/2
	cells := h * w
	row := 0
	for c := 0; c < g.in; c++ {
		plane := src[c*cells : (c+1)*cells]
		for ky := 0; ky < kk; ky++ {
			for kx := 0; kx < kk; kx++ {
				out := dst[row*ld : row*ld+cells]
				row++
				dy, dx := ky-pad, kx-pad
				y0, y1 := max(0, -dy), min(h, h-dy)
				x0, x1 := max(0, -dx), min(w, w-dx)
				if y0 >= y1 || x0 >= x1 {
					clear(out)
					continue
				}
				first, last := y0*w+x0, (y1-1)*w+x1
				off := dy*w + dx
				clear(out[:first])
				copy(out[first:last], plane[first+off:last+off])
				clear(out[last:])
				if x0 > 0 || x1 < w {
					for y := y0; y < y1; y++ {
						line := out[y*w : (y+1)*w]
						for x := 0; x < x0; x++ {
							line[x] = 0
						}
						for x := x1; x < w; x++ {
							line[x] = 0
						}
					}
				}
			}
		}
	}
}

// columns writes image src's (in, height, width) inputs into columns
// j·cells onward of dst, a matrix of row stride ld: its im2col, or for a
// 1×1 kernel its planes as they are.
func (g convGeom) columns(src, dst []float32, j, ld int) {
	cells := g.cells()
	if g.kernel != 1 {
		g.im2col(src, dst[j*cells:], ld)
		return
	}
	for c := 0; c < g.in; c++ {
		copy(dst[c*ld+j*cells:c*ld+(j+1)*cells], src[c*cells:(c+1)*cells])
	}
}

// convolve computes y = x ⊛ w for images [lo, hi) of NCHW tensors, with
// w as an (out, in·kernel·kernel) matrix, a group of images per GEMM;
// cols and prod are one worker's buffers.
func (g convGeom) convolve(x, w, y []float32, lo, hi int, cols, prod []float32) {
	cells, k, group := g.cells(), g.k(), g.groupImages()
	for first := lo; first < hi; first += group {
		n := min(group, hi-first)
		ld := n * cells
		if g.kernel == 1 && n == 1 {
			sgemm(g.out, cells, k, w, k, x[first*g.in*cells:], cells, y[first*g.out*cells:], cells)
			continue
		}
		for j := 0; j < n; j++ {
			g.columns(x[(first+j)*g.in*cells:(first+j+1)*g.in*cells], cols, j, ld)
		}
		sgemm(g.out, ld, k, w, k, cols, ld, prod, ld)
		for j := 0; j < n; j++ {
			dst := y[(first+j)*g.out*cells : (first+j+1)*g.out*cells]
			for o := 0; o < g.out; o++ {
				copy(dst[o*cells:(o+1)*cells], prod[o*ld+j*cells:o*ld+(j+1)*cells])
			}
		}
	}
}

// conv2d is a convolution node: x (batch, in, height, width) and w.
func conv2d(x, w *G.Node, g convGeom) (*G.Node, error) {
	return G.ApplyOp(&convOp{convGeom: g}, x, w)
}

// convOp is the forward convolution.
type convOp struct {
	pureOp
	convGeom
	y  []float32
	dt directTrain
}

func tensorType(dims int) G.TensorType { return G.TensorType{Dims: dims, Of: hm.TypeVariable('a')} }

func (op *convOp) Arity() int { return 2 }
func (op *convOp) Type() hm.Type {
	return hm.NewFnType(tensorType(4), tensorType(4), tensorType(4))
}
func (op *convOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, ok := in[0].(tensor.Shape)
	if !ok || len(s) != 4 {
		return nil, fmt.Errorf("%s: want an NCHW input, got %v", op.name, in[0])
	}
	return tensor.Shape{s[0], op.out, op.height, op.width}, nil
}
func (op *convOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "flipzero.conv %s %p", op.name, op) }
func (op *convOp) Hashcode() uint32      { return opHash(op) }
func (op *convOp) String() string        { return "Conv " + op.name }

func (op *convOp) Do(in ...G.Value) (G.Value, error) {
	x, xs, err := float32s(in[0], op.name)
	if err != nil {
		return nil, err
	}
	w, _, err := float32s(in[1], op.name)
	if err != nil {
		return nil, err
	}
	batch, cells, k := xs[0], op.cells(), op.k()
	if len(x) != batch*op.in*cells || len(w) != op.out*k {
		return nil, fmt.Errorf("%s: input %v, %d weights, want %d channels of %d×%d and %d weights", op.name, xs, len(w), op.in, op.height, op.width, op.out*k)
	}
	op.y = grow(op.y, batch*op.out*cells)
	if op.direct() {
		op.dt.run(*op.kernels, op.shape(), op.kernel, op.in, op.out, batch, op.ws.workers(), x, op.y, func(dst []float32) { op.packWeights(w, dst, false) })
		return dense4(op.y, batch, op.out, op.height, op.width), nil
	}
	group := op.groupImages()
	cols, prod, _ := op.ws.buffers(k*group*cells, op.out*group*cells, 0)
	parallelFor(batch, len(cols), func(worker, lo, hi int) {
		op.convolve(x, w, op.y, lo, hi, cols[worker], prod[worker])
	})
	return dense4(op.y, batch, op.out, op.height, op.width), nil
}

func (op *convOp) DiffWRT(int) []bool { return []bool{true, true} }

func (op *convOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	dx, err := G.ApplyOp(&convInputGradOp{convGeom: op.convGeom}, inputs[1], grad)
	if err != nil {
		return nil, err
	}
	dw, err := G.ApplyOp(&convWeightGradOp{convGeom: op.convGeom}, inputs[0], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx, dw}, nil
}

// convInputGradOp computes the gradient of a convolution's input from
// its weights and the output's gradient. For a same-padded stride-1
// convolution that is the convolution of the gradient with the weights
// flipped in space and transposed (in ↔ out), so it is done as the
// forward pass is.
type convInputGradOp struct {
	pureOp
	convGeom
	flipped []float32 // (in, out, kernel, kernel)
	dx      []float32
	dt      directTrain
}

func (op *convInputGradOp) Arity() int { return 2 }
func (op *convInputGradOp) Type() hm.Type {
	return hm.NewFnType(tensorType(4), tensorType(4), tensorType(4))
}
func (op *convInputGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, ok := in[1].(tensor.Shape)
	if !ok || len(s) != 4 {
		return nil, fmt.Errorf("%s input gradient: want an NCHW gradient, got %v", op.name, in[1])
	}
	return tensor.Shape{s[0], op.in, op.height, op.width}, nil
}
func (op *convInputGradOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "flipzero.conv.dx %s %p", op.name, op)
}
func (op *convInputGradOp) Hashcode() uint32 { return opHash(op) }
func (op *convInputGradOp) String() string   { return "ConvInputGrad " + op.name }

func (op *convInputGradOp) Do(in ...G.Value) (G.Value, error) {
	w, _, err := float32s(in[0], op.name)
	if err != nil {
		return nil, err
	}
	dy, ds, err := float32s(in[1], op.name)
	if err != nil {
		return nil, err
	}
	batch, cells, k := ds[0], op.cells(), op.k()
	if len(dy) != batch*op.out*cells || len(w) != op.out*k {
		return nil, fmt.Errorf("%s input gradient: gradient %v, %d weights", op.name, ds, len(w))
	}
	op.dx = grow(op.dx, batch*op.in*cells)
	if op.direct() {
		op.dt.run(*op.kernels, op.shape(), op.kernel, op.out, op.in, batch, op.ws.workers(), dy, op.dx, func(dst []float32) { op.packWeights(w, dst, true) })
		return dense4(op.dx, batch, op.in, op.height, op.width), nil
	}
	kk := op.kernel * op.kernel
	op.flipped = grow(op.flipped, len(w))
	for o := 0; o < op.out; o++ {
		for c := 0; c < op.in; c++ {
			from := w[(o*op.in+c)*kk : (o*op.in+c+1)*kk]
			to := op.flipped[(c*op.out+o)*kk : (c*op.out+o+1)*kk]
			for i, v := range from {
				to[kk-1-i] = v
			}
		}
	}
	// The gradient's geometry: out channels in, in channels out.
	back := op.convGeom
	back.in, back.out = op.out, op.in
	group := back.groupImages()
	cols, prod, _ := op.ws.buffers(back.k()*group*cells, op.in*group*cells, 0)
	parallelFor(batch, len(cols), func(worker, lo, hi int) {
		back.convolve(dy, op.flipped, op.dx, lo, hi, cols[worker], prod[worker])
	})
	return dense4(op.dx, batch, op.in, op.height, op.width), nil
}

// convWeightGradOp computes the gradient of a convolution's weights from
// its input and the output's gradient: Σ over images of dy·im2col(x)ᵀ,
// each worker summing its images, then the workers' sums added; on the
// AMX kernels (FLIPZERO_CONV=amxbf16), a 3×3 convolution's in bfloat16
// (amxWeightGrad); where the forward pass runs by Winograd, by it
// (winogradWeightGrad); on the other direct kernels, by them
// (directWeightGrad); else by the BLAS.
type convWeightGradOp struct {
	pureOp
	convGeom
	dw  []float32
	amx amxWeightGrad
	dg  directWeightGrad
	wg  winogradWeightGrad
}

func (op *convWeightGradOp) Arity() int { return 2 }
func (op *convWeightGradOp) Type() hm.Type {
	return hm.NewFnType(tensorType(4), tensorType(4), tensorType(4))
}
func (op *convWeightGradOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.out, op.in, op.kernel, op.kernel}, nil
}
func (op *convWeightGradOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "flipzero.conv.dw %s %p", op.name, op)
}
func (op *convWeightGradOp) Hashcode() uint32 { return opHash(op) }
func (op *convWeightGradOp) String() string   { return "ConvWeightGrad " + op.name }

func (op *convWeightGradOp) Do(in ...G.Value) (G.Value, error) {
	x, xs, err := float32s(in[0], op.name)
	if err != nil {
		return nil, err
	}
	dy, ds, err := float32s(in[1], op.name)
	if err != nil {
		return nil, err
	}
	batch, cells, k := xs[0], op.cells(), op.k()
	if len(x) != batch*op.in*cells || len(dy) != batch*op.out*cells {
		return nil, fmt.Errorf("%s weight gradient: input %v, gradient %v", op.name, xs, ds)
	}
	n := op.out * k
	op.dw = grow(op.dw, n)
	if op.direct() && op.kernels.amx && amxGradFits(op.kernel, op.in, op.out) {
		op.amx.run(op.shape(), op.in, op.out, batch, op.ws.workers(), x, dy, op.dw)
		return dense4(op.dw, op.out, op.in, op.kernel, op.kernel), nil
	}
	if op.direct() && op.kernels.winograd && !op.kernels.bf16 && winogradFits(op.kernel, op.in, op.out) {
		op.wg.run(*op.kernels, op.shape(), op.in, op.out, batch, op.ws.workers(), x, dy, op.dw)
		return dense4(op.dw, op.out, op.in, op.kernel, op.kernel), nil
	}
	group := op.groupImages()
	if op.kernels != nil {
		allCols, _, _ := op.ws.buffers(k*group*cells, 0, 0)
		op.dg.run(*op.kernels, op.convGeom, batch, op.ws.workers(), x, dy, op.dw, allCols)
		return dense4(op.dw, op.out, op.in, op.kernel, op.kernel), nil
	}
	allCols, allGrads, partial := op.ws.buffers(k*group*cells, op.out*group*cells, n)
	workers := parallelFor(batch, len(allCols), func(worker, lo, hi int) {
		acc := partial[worker]
		if worker == 0 {
			acc = op.dw
		}
		clear(acc)
		cols, grads := allCols[worker], allGrads[worker]
		for first := lo; first < hi; first += group {
			n := min(group, hi-first)
			ld := n * cells
			for j := 0; j < n; j++ {
				b := first + j
				op.columns(x[b*op.in*cells:(b+1)*op.in*cells], cols, j, ld)
				g := dy[b*op.out*cells : (b+1)*op.out*cells]
				for o := 0; o < op.out; o++ {
					copy(grads[o*ld+j*cells:o*ld+(j+1)*cells], g[o*cells:(o+1)*cells])
				}
			}
			gemm(false, true, op.out, k, ld, 1, grads, ld, cols, ld, 1, acc, k)
		}
	})
	for w := 1; w < workers; w++ {
		for i, v := range partial[w] {
			op.dw[i] += v
		}
	}
	return dense4(op.dw, op.out, op.in, op.kernel, op.kernel), nil
}

// batchNorm is batch norm in training mode over x (batch, channels, h,
// w) with scale gamma and shift beta (1, channels, 1, 1): it normalizes
// with the batch's mean and (biased) variance and moves the running
// statistics, mean and variance (channels), by momentum towards the
// batch's, with the unbiased variance, as Gorgonia's BatchNormOp does.
// With relu a ReLU follows, in the same pass; with a skip, a residual
// block's end: ReLU(batch norm + skip).
//
// In a replica of a data-parallel step, sums shares the per-channel sums
// with the other replicas' batch norms of the same layer, so that the
// statistics and the gradients are the whole batch's; procs bounds the
// cores its loops split over (0: all).
func batchNorm(x, gamma, beta, skip *G.Node, name string, mean, variance []float32, momentum float64, relu bool, sums channelSums, procs int) (*G.Node, error) {
	st := &bnState{name: name, runningMean: mean, runningVar: variance, momentum: momentum, relu: relu || skip != nil, skip: skip != nil,
		sums: sums, procs: procs}
	if skip != nil {
		return G.ApplyOp(&bnOp{bnState: st}, x, gamma, beta, skip)
	}
	return G.ApplyOp(&bnOp{bnState: st}, x, gamma, beta)
}

// bnState is shared by a batch norm and its gradients: the last batch's
// per-channel mean and 1/√(var+ε), and the per-channel sums all three
// gradients need, computed by whichever runs first after a forward pass.
type bnState struct {
	name                    string
	runningMean, runningVar []float32
	momentum                float64
	relu, skip              bool
	sums                    channelSums
	procs                   int
	// count is the values each channel's statistics are over (the whole
	// batch's, over the replicas).
	count        float64
	mean, invStd []float64
	y            []float32
	// forwards counts forward passes; sums are of the one numbered summed:
	// sumDy and sumDyXhat over this graph's samples (the gradients of γ
	// and β), allDy and allDyXhat over the whole batch's (that of x).
	forwards, summed int
	// grad is dy where the forward pass's output is above 0 (all of dy
	// without a ReLU), computed with the sums: every gradient reads it.
	grad, masked     []float32
	sumDy, sumDyXhat []float64
	allDy, allDyXhat []float64
	local, total     []float64 // reduction buffers, 2·channels + 1
	// scale and shift are the forward pass's per channel, gradS, gradA
	// and gradK the input gradient's (bnGradOp.Do).
	scale, shift        []float32
	gradS, gradA, gradK []float32
}

type bnOp struct {
	pureOp
	*bnState
}

func (op bnOp) Arity() int {
	if op.skip {
		return 4
	}
	return 3
}
func (op bnOp) Type() hm.Type {
	if op.skip {
		return hm.NewFnType(tensorType(4), tensorType(4), tensorType(4), tensorType(4), tensorType(4))
	}
	return hm.NewFnType(tensorType(4), tensorType(4), tensorType(4), tensorType(4))
}
func (op bnOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, ok := in[0].(tensor.Shape)
	if !ok || len(s) != 4 {
		return nil, fmt.Errorf("%s batch norm: want an NCHW input, got %v", op.name, in[0])
	}
	return s.Clone(), nil
}
func (op bnOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "flipzero.bn %s %p", op.name, op.bnState) }
func (op bnOp) Hashcode() uint32      { return opHash(op) }
func (op bnOp) String() string        { return "BatchNorm " + op.name }

// bnShape checks x against gamma and returns its batch, channels and
// cells per channel.
func bnShape(name string, xs tensor.Shape, x, gamma []float32) (batch, channels, cells int, err error) {
	if len(xs) != 4 || xs[1] != len(gamma) || len(x) != xs.TotalSize() {
		return 0, 0, 0, fmt.Errorf("%s batch norm: input %v with %d scales", name, xs, len(gamma))
	}
	return xs[0], xs[1], xs[2] * xs[3], nil
}

func (op bnOp) Do(in ...G.Value) (G.Value, error) {
	x, xs, err := float32s(in[0], op.name)
	if err != nil {
		return nil, err
	}
	gamma, _, err := float32s(in[1], op.name)
	if err != nil {
		return nil, err
	}
	beta, _, err := float32s(in[2], op.name)
	if err != nil {
		return nil, err
	}
	var skip []float32
	if op.skip {
		if skip, _, err = float32s(in[3], op.name); err != nil {
			return nil, err
		}
	}
	batch, channels, cells, err := bnShape(op.name, xs, x, gamma)
	if err != nil {
		return nil, err
	}
	if len(op.runningMean) != channels || len(beta) != channels || (op.skip && len(skip) != len(x)) {
		return nil, fmt.Errorf("%s batch norm: %d channels, %d running means, %d shifts", op.name, channels, len(op.runningMean), len(beta))
	}
	op.y = grow(op.y, len(x))
	if len(op.mean) != channels {
		op.mean, op.invStd = make([]float64, channels), make([]float64, channels)
		op.sumDy, op.sumDyXhat = make([]float64, channels), make([]float64, channels)
		op.allDy, op.allDyXhat = make([]float64, channels), make([]float64, channels)
		op.local, op.total = make([]float64, 2*channels+1), make([]float64, 2*channels+1)
		op.scale, op.shift = make([]float32, channels), make([]float32, channels)
		op.gradS, op.gradA, op.gradK = make([]float32, channels), make([]float32, channels), make([]float32, channels)
	}
	op.forwards++
	// The mean: each channel's sum and the count, over the replicas.
	local, total := op.local[:channels+1], op.total[:channels+1]
	parallelFor(channels, op.procs, func(_, lo, hi int) {
		clear(local[lo:hi])
		for b := range batch {
			sum64(x, imageChannels(b, lo, hi, channels, cells), local[lo:hi])
		}
	})
	local[channels] = float64(batch * cells)
	if err := op.sums.allReduce(local, total); err != nil {
		return nil, fmt.Errorf("%s batch norm: %w", op.name, err)
	}
	n := total[channels]
	op.count = n
	for c := range channels {
		op.mean[c] = total[c] / n
	}
	// The variance: squares about the whole batch's mean.
	local, total = op.local[:channels], op.total[:channels]
	parallelFor(channels, op.procs, func(_, lo, hi int) {
		clear(local[lo:hi])
		for b := range batch {
			squares64(x, imageChannels(b, lo, hi, channels, cells), op.mean[lo:hi], local[lo:hi])
		}
	})
	if err := op.sums.allReduce(local, total); err != nil {
		return nil, fmt.Errorf("%s batch norm: %w", op.name, err)
	}
	mom, moveStats := op.momentum, op.sums.ownsStatistics()
	kind := op.affineKind()
	parallelFor(channels, op.procs, func(_, lo, hi int) {
		for c := lo; c < hi; c++ {
			mean, ss := op.mean[c], total[c]
			invStd := 1 / math.Sqrt(ss/n+bnEpsilon)
			op.invStd[c] = invStd
			if moveStats {
				op.runningMean[c] = float32(mom*mean + (1-mom)*float64(op.runningMean[c]))
				op.runningVar[c] = float32(mom*ss/max(n-1, 1) + (1-mom)*float64(op.runningVar[c]))
			}
			op.scale[c] = float32(float64(gamma[c]) * invStd)
			op.shift[c] = beta[c] - float32(mean)*op.scale[c]
		}
		// The output: x scaled and shifted, plus the skip and through the
		// ReLU where the batch norm has them.
		for b := range batch {
			affineRows(op.y, x, skip, imageChannels(b, lo, hi, channels, cells), op.scale[lo:hi], op.shift[lo:hi], kind)
		}
	})
	return dense4(op.y, xs...), nil
}

// affineKind is what follows the scale and shift in the output.
func (op bnOp) affineKind() int {
	switch {
	case op.skip:
		return affineSkipRelu
	case op.relu:
		return affineRelu
	}
	return affinePlain
}

func (op bnOp) DiffWRT(n int) []bool {
	d := make([]bool, n)
	for i := range d {
		d[i] = true
	}
	return d
}

func (op bnOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	var out G.Nodes
	for which := range op.Arity() {
		d, err := G.ApplyOp(&bnGradOp{bnState: op.bnState, which: which}, inputs[0], inputs[1], output, grad)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// bnGradOp computes one of batch norm's gradients from its input x, its
// scale, its output y and the output's gradient dy (taken as zero where a
// fused ReLU cut y to 0), with x̂ = (x − mean)·invStd:
// dβ = Σdy, dγ = Σdy·x̂, dx = γ·invStd·(dy − mean(dy) − x̂·mean(dy·x̂)).
type bnGradOp struct {
	pureOp
	*bnState
	which int // 0: dx, 1: dγ, 2: dβ, 3: the skip's (dy where y > 0)
	out   []float32
}

func (op *bnGradOp) Arity() int { return 4 }
func (op *bnGradOp) Type() hm.Type {
	return hm.NewFnType(tensorType(4), tensorType(4), tensorType(4), tensorType(4), tensorType(4))
}
func (op *bnGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	like := in[0] // x's shape for dx and the skip's gradient, γ's for the others
	if op.which == 1 || op.which == 2 {
		like = in[1]
	}
	s, ok := like.(tensor.Shape)
	if !ok || len(s) != 4 {
		return nil, fmt.Errorf("%s batch norm gradient: got %v", op.name, like)
	}
	return s.Clone(), nil
}
func (op *bnGradOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "flipzero.bn.grad%d %s %p", op.which, op.name, op.bnState)
}
func (op *bnGradOp) Hashcode() uint32 { return opHash(op) }
func (op *bnGradOp) String() string   { return fmt.Sprintf("BatchNormGrad%d %s", op.which, op.name) }

// sumGradients computes, once a forward pass, the gradient through the
// ReLU (grad) and the per-channel sums of it and of it times x̂ that the
// gradients need, over this graph's samples and over the whole batch.
func (op *bnGradOp) sumGradients(x, y, dy []float32, batch, channels, cells int) error {
	op.summed = op.forwards
	op.grad = dy
	if op.relu {
		op.masked = grow(op.masked, len(dy))
		op.grad = op.masked
	}
	parallelFor(channels, op.procs, func(_, lo, hi int) {
		// sumDyXhat holds Σdy·x until the end.
		sumDy, sumDyX := op.sumDy[lo:hi], op.sumDyXhat[lo:hi]
		clear(sumDy)
		clear(sumDyX)
		for b := range batch {
			if r := imageChannels(b, lo, hi, channels, cells); op.relu {
				maskSumDot64(op.grad, dy, y, x, r, sumDy, sumDyX)
			} else {
				sumDot64(dy, x, r, sumDy, sumDyX)
			}
		}
		for c := lo; c < hi; c++ {
			op.sumDyXhat[c] = (op.sumDyXhat[c] - op.mean[c]*op.sumDy[c]) * op.invStd[c]
		}
	})
	local, total := op.local[:2*channels], op.total[:2*channels]
	copy(local, op.sumDy)
	copy(local[channels:], op.sumDyXhat)
	if err := op.sums.allReduce(local, total); err != nil {
		return fmt.Errorf("%s batch norm gradient: %w", op.name, err)
	}
	copy(op.allDy, total[:channels])
	copy(op.allDyXhat, total[channels:])
	return nil
}

func (op *bnGradOp) Do(in ...G.Value) (G.Value, error) {
	x, xs, err := float32s(in[0], op.name)
	if err != nil {
		return nil, err
	}
	gamma, gs, err := float32s(in[1], op.name)
	if err != nil {
		return nil, err
	}
	y, _, err := float32s(in[2], op.name)
	if err != nil {
		return nil, err
	}
	dy, _, err := float32s(in[3], op.name)
	if err != nil {
		return nil, err
	}
	batch, channels, cells, err := bnShape(op.name, xs, x, gamma)
	if err != nil {
		return nil, err
	}
	if len(dy) != len(x) || len(y) != len(x) || len(op.mean) != channels {
		return nil, fmt.Errorf("%s batch norm gradient: %d gradients for %d inputs, before or without a forward pass", op.name, len(dy), len(x))
	}
	if op.which == 0 || op.which == 3 {
		op.out = grow(op.out, len(x))
	} else {
		op.out = grow(op.out, channels)
	}
	if op.summed != op.forwards {
		if err := op.sumGradients(x, y, dy, batch, channels, cells); err != nil {
			return nil, err
		}
	}
	switch op.which {
	case 3:
		copy(op.out, op.grad)
		return dense4(op.out, xs...), nil
	case 1:
		for c := range op.out {
			op.out[c] = float32(op.sumDyXhat[c])
		}
		return dense4(op.out, gs...), nil
	case 2:
		for c := range op.out {
			op.out[c] = float32(op.sumDy[c])
		}
		return dense4(op.out, gs...), nil
	}
	// The whole batch's sums and count: in a replica, x's gradient
	// includes what its samples did to the other replicas' statistics.
	n := op.count
	parallelFor(channels, op.procs, func(_, lo, hi int) {
		for c := lo; c < hi; c++ {
			mean, invStd := op.mean[c], op.invStd[c]
			scale := float64(gamma[c]) * invStd
			// dx = scale·dy − scale·mean(dy) − scale·x̂·mean(dy·x̂), with
			// x̂ expanded so that the loop is one multiply-add per value.
			a := scale * op.allDyXhat[c] / n * invStd
			op.gradS[c], op.gradA[c] = float32(scale), float32(a)
			op.gradK[c] = float32(-scale*op.allDy[c]/n + a*mean)
		}
		for b := range batch {
			gradXRows(op.out, op.grad, x, imageChannels(b, lo, hi, channels, cells), op.gradS[lo:hi], op.gradA[lo:hi], op.gradK[lo:hi])
		}
	})
	if op.which == 0 {
		return dense4(op.out, xs...), nil
	}
	return dense4(op.out, gs...), nil
}
