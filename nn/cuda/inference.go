package cuda

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/flipzero/flipzero/nn"
)

// cublasWorkspace is cuBLAS's workspace, given to it up front so that it
// never allocates while a CUDA graph is being captured (Hopper wants 32 MiB).
const cublasWorkspace = 32 << 20

// Inference evaluates one network on the GPU with its own stream, handles
// and buffers. It is not safe for concurrent use: one per goroutine.
type Inference struct {
	d        *Device
	tf32     bool
	fp16     bool // the float16 path may run
	maxBatch int
	planes   int
	h, w     int
	cells    int
	actions  int
	filters  int
	policyCh int // policy filters
	heads    int // policy + value filters
	hidden   int

	stream, dnn, blas uintptr
	blasWS            uintptr
	relu              uintptr // activation descriptor

	stem   devConv
	blocks [][2]devConv
	head   devConv
	fc     [3]devDense // policy (dense head only), value hidden, value output
	// pools is each block's global pooling layer, nil in blocks without.
	pools []*devDense
	// The convolutional policy head, where the network has one: the
	// output convolution (weights (planes, policy filters) for the cuDNN
	// path's batched SGEMM, policyOutW (policy filters, planes) for the
	// SGEMM path's), the global layer (nil without actions off the
	// board) and each action's index into their logits (int32s).
	policyOut    *devConv
	policyOutW   uintptr
	policyGlobal *devDense
	policyIndex  uintptr

	// Device activations, each sized for maxBatch; inT is the input
	// transposed to NHWC for the NHWC path.
	in, inT, x, y, t, headOut, hid, vout, logits, wdl uintptr
	// Scratch of global pooling and the convolutional policy head: pooled
	// means and maxima, the pooling biases, the policy planes, the global
	// policy logits.
	pooled, gbias, pOut, pGlob  uintptr
	hostIn, hostLogits, hostWDL []float32

	// The SGEMM path, for batches up to gemmMax: weights laid out for
	// im2row's rows and the heads' (cell, channel) output.
	gemmMax      int
	rows         uintptr
	stemW, headW uintptr
	blockW       [][2]uintptr
	policyW, v1W uintptr
	// only, when set, restricts plans to one path (tests compare each).
	only path
	// arch is layersShape of the network, which Reload must keep.
	arch string

	plans  map[int]*plan
	allocs []uintptr
	closed bool

	// ws is cuDNN's workspace, shared by the plans: a plan that needs more
	// gets a new one, twice as large at least, and the old one stays for
	// the graphs that use it.
	ws, wsBytes uintptr
}

// path is how a plan computes the convolutions.
type path int

const (
	anyPath path = iota
	cudnnPath
	gemmPath
	// nhwcPath computes the stem and the tower with cuDNN on NHWC
	// tensors, the layout its tensor-core kernels read without
	// transposing, and the heads as the SGEMM path does, on the same
	// (position·cell, channel) rows.
	nhwcPath
	// halfPath is nhwcPath with the stem's input and the tower's
	// activations and weights in float16 (sums in float32), for an
	// inference that may compute in float16.
	halfPath
)

func (p path) String() string {
	return [...]string{"any", "cudnn", "sgemm", "cudnn-nhwc", "cudnn-nhwc-fp16"}[p]
}

type devConv struct {
	kernel, in, out int
	w, b            uintptr
	wDesc, bDesc    uintptr
	// The NHWC path's copy of the weights, laid out (out, ky, kx, in),
	// and its filter and bias descriptors (stem and tower only).
	nhwcW, nhwcWDesc, nhwcBDesc uintptr
	// The float16 path's weights (NHWC) and bias, and their descriptors
	// (stem and tower, where the inference may compute in float16).
	halfW, halfB, halfWDesc, halfBDesc uintptr
}

type devDense struct {
	in, out int
	w, b    uintptr
	bDesc   uintptr // (1, out, 1, 1), broadcast over the batch
}

// plan is everything that depends on the batch size: tensor descriptors,
// convolution algorithms and their workspace, the captured graph.
type plan struct {
	n                             int
	path                          path
	settled                       bool // path chosen, graph captured or capture failed
	inDesc, actDesc, headDesc     uintptr
	logitDesc, hidDesc, voutDesc  uintptr
	stemConv, towerConv, headConv convChoice
	// The NHWC path's descriptors and algorithms; nhwcErr says why that
	// path cannot run at this batch size, where it cannot.
	inNHWC, actNHWC     uintptr
	nhwcStem, nhwcTower convChoice
	nhwcErr             error
	// The float16 path's, likewise.
	inHalf, actHalf     uintptr
	halfStem, halfTower convChoice
	halfErr             error
	ws                  uintptr
	wsBytes             uintptr
	graph, exec         uintptr
	captureErr          error
}

// convChoice is one convolution's descriptor and algorithm at a batch size.
type convChoice struct {
	desc uintptr
	algo int32
}

// NewInference copies the network to the GPU for batches of up to
// maxBatch positions.
func (d *Device) NewInference(l nn.Layers, maxBatch int) (inf *Inference, err error) {
	if maxBatch < 1 || maxBatch > maxBatchLimit {
		return nil, fmt.Errorf("cuda inference: batch size %d, want 1..%d", maxBatch, maxBatchLimit)
	}
	if err := checkLayers(l); err != nil {
		return nil, fmt.Errorf("cuda inference: %w", err)
	}
	if err := d.acquire(); err != nil {
		return nil, err
	}
	d.mu.Lock()
	tf32, fp16 := d.tf32, d.fp16
	d.mu.Unlock()
	unbind, err := d.bindThread()
	if err != nil {
		d.release()
		return nil, err
	}
	defer unbind()
	heads := mergeHeads(l.PolicyConv, l.ValueConv)
	inf = &Inference{
		d: d, tf32: tf32, fp16: fp16, maxBatch: maxBatch,
		planes: l.Planes, h: l.Height, w: l.Width, cells: l.Height * l.Width, actions: l.Actions,
		filters: l.Stem.Out, policyCh: l.PolicyConv.Out, heads: heads.Out, hidden: l.ValueFC1.Out,
		plans: map[int]*plan{},
	}
	defer func() {
		if err != nil {
			inf.free()
			d.release()
			inf = nil
		}
	}()
	if err := inf.setup(l, heads); err != nil {
		return nil, err
	}
	return inf, nil
}

func (inf *Inference) setup(l nn.Layers, heads nn.ConvLayer) error {
	d := inf.d
	if err := d.cu("cuStreamCreate", d.drv.cuStreamCreate(&inf.stream, cuStreamNonBlocking)); err != nil {
		return err
	}
	if err := d.dnnErr("cudnnCreate", d.dnn.cudnnCreate(&inf.dnn)); err != nil {
		return err
	}
	if err := d.dnnErr("cudnnSetStream", d.dnn.cudnnSetStream(inf.dnn, inf.stream)); err != nil {
		return err
	}
	if err := d.blasErr("cublasCreate", d.blas.cublasCreate(&inf.blas)); err != nil {
		return err
	}
	if err := d.blasErr("cublasSetStream", d.blas.cublasSetStream(inf.blas, inf.stream)); err != nil {
		return err
	}
	ws, err := inf.alloc(cublasWorkspace / 4)
	if err != nil {
		return err
	}
	inf.blasWS = ws
	if err := d.blasErr("cublasSetWorkspace", d.blas.cublasSetWorkspace(inf.blas, ws, cublasWorkspace)); err != nil {
		return err
	}
	math := int32(cublasDefaultMath)
	if inf.tf32 {
		math = cublasTF32TensorOpMath
	}
	if err := d.blasErr("cublasSetMathMode", d.blas.cublasSetMathMode(inf.blas, math)); err != nil {
		return err
	}
	if err := d.dnnErr("cudnnCreateActivationDescriptor", d.dnn.cudnnCreateActivationDescriptor(&inf.relu)); err != nil {
		return err
	}
	if err := d.dnnErr("cudnnSetActivationDescriptor", d.dnn.cudnnSetActivationDescriptor(inf.relu, cudnnActivationReLU, cudnnNotPropagateNaN, 0)); err != nil {
		return err
	}

	if inf.stem, err = inf.newConv(l.Stem); err != nil {
		return err
	}
	if err := inf.newConvNHWC(&inf.stem); err != nil {
		return err
	}
	if err := inf.newConvHalf(&inf.stem, halfPlanes(inf.planes)); err != nil {
		return err
	}
	for _, b := range l.Blocks {
		var pair [2]devConv
		for i := range pair {
			if pair[i], err = inf.newConv(b[i]); err != nil {
				return err
			}
			if err := inf.newConvNHWC(&pair[i]); err != nil {
				return err
			}
			if err := inf.newConvHalf(&pair[i], pair[i].in); err != nil {
				return err
			}
		}
		inf.blocks = append(inf.blocks, pair)
	}
	if inf.head, err = inf.newConv(heads); err != nil {
		return err
	}
	for i, dl := range []nn.DenseLayer{l.PolicyFC, l.ValueFC1, l.ValueFC2} {
		if i == 0 && l.PolicyOut != nil {
			continue
		}
		if inf.fc[i], err = inf.newDense(dl); err != nil {
			return err
		}
	}
	if err := inf.setupExtras(l); err != nil {
		return err
	}

	inf.gemmMax = min(inf.maxBatch, gemmMaxBatch)
	if err := inf.setupGemm(l, heads); err != nil {
		return err
	}
	inf.arch = layersShape(l)
	if err := inf.load(l); err != nil {
		return err
	}

	n := inf.maxBatch
	for _, b := range []struct {
		p    *uintptr
		size int
	}{
		{&inf.in, n * inf.planes * inf.cells},
		// The NHWC input in float32, or the float16 path's, padded.
		{&inf.inT, max(n*inf.planes*inf.cells, (n*halfPlanes(inf.planes)*inf.cells+1)/2)},
		{&inf.x, n * inf.filters * inf.cells},
		{&inf.y, n * inf.filters * inf.cells},
		{&inf.t, n * inf.filters * inf.cells},
		{&inf.headOut, n * inf.heads * inf.cells},
		{&inf.hid, n * inf.hidden},
		{&inf.vout, n * 3},
		{&inf.logits, n * inf.actions},
		{&inf.wdl, n * 3},
	} {
		if *b.p, err = inf.alloc(b.size); err != nil {
			return err
		}
	}
	if err := inf.allocExtras(); err != nil {
		return err
	}
	if inf.hostIn, err = d.pinned(n * inf.planes * inf.cells); err != nil {
		return err
	}
	if inf.hostLogits, err = d.pinned(n * inf.actions); err != nil {
		return err
	}
	inf.hostWDL, err = d.pinned(n * 3)
	return err
}

// setupGemm allocates the weights of the SGEMM path, laid out for
// im2row's rows and the heads' (cell, channel) output, and its im2row
// buffer.
func (inf *Inference) setupGemm(l nn.Layers, heads nn.ConvLayer) (err error) {
	widest := max(inf.filters, inf.planes)
	if inf.rows, err = inf.alloc(inf.gemmMax * inf.cells * 9 * widest); err != nil {
		return err
	}
	if inf.stemW, err = inf.alloc(len(l.Stem.Weights)); err != nil {
		return err
	}
	for _, b := range l.Blocks {
		var pair [2]uintptr
		for i := range pair {
			if pair[i], err = inf.alloc(len(b[i].Weights)); err != nil {
				return err
			}
		}
		inf.blockW = append(inf.blockW, pair)
	}
	if inf.headW, err = inf.alloc(len(heads.Weights)); err != nil {
		return err
	}
	if l.PolicyOut != nil {
		if inf.policyOutW, err = inf.alloc(len(l.PolicyOut.Weights)); err != nil {
			return err
		}
	} else if inf.policyW, err = inf.alloc(inf.cells * inf.heads * l.PolicyFC.Out); err != nil {
		return err
	}
	inf.v1W, err = inf.alloc(inf.cells * inf.heads * l.ValueFC1.Out)
	return err
}

// load copies the network's arrays into the device memory set up for
// them: each layer's own, and the SGEMM path's rearranged copies.
func (inf *Inference) load(l nn.Layers) error {
	heads := mergeHeads(l.PolicyConv, l.ValueConv)
	type array struct {
		dst  uintptr
		data []float32
	}
	conv := func(c devConv, src nn.ConvLayer) []array { return []array{{c.w, src.Weights}, {c.b, src.Bias}} }
	dense := func(d *devDense, src nn.DenseLayer) []array { return []array{{d.w, src.Weights}, {d.b, src.Bias}} }
	arrays := append(conv(inf.stem, l.Stem), conv(inf.head, heads)...)
	arrays = append(arrays, array{inf.stemW, rowWeights(l.Stem)}, array{inf.headW, rowWeights(heads)},
		array{inf.stem.nhwcW, nhwcWeights(l.Stem)},
		array{inf.v1W, headWeights(l.ValueFC1, inf.cells, inf.heads, l.PolicyConv.Out, l.ValueConv.Out)})
	for i, b := range l.Blocks {
		for k := range b {
			arrays = append(arrays, conv(inf.blocks[i][k], b[k])...)
			arrays = append(arrays, array{inf.blockW[i][k], rowWeights(b[k])}, array{inf.blocks[i][k].nhwcW, nhwcWeights(b[k])})
		}
		if i < len(l.GlobalPool) && l.GlobalPool[i] != nil {
			arrays = append(arrays, dense(inf.pools[i], *l.GlobalPool[i])...)
		}
	}
	if l.PolicyOut != nil {
		arrays = append(arrays, conv(*inf.policyOut, *l.PolicyOut)...)
		arrays = append(arrays, array{inf.policyOutW, rowWeights(*l.PolicyOut)})
		if l.PolicyGlobal != nil {
			arrays = append(arrays, dense(inf.policyGlobal, *l.PolicyGlobal)...)
		}
	} else {
		arrays = append(arrays, dense(&inf.fc[0], l.PolicyFC)...)
		arrays = append(arrays, array{inf.policyW, headWeights(l.PolicyFC, inf.cells, inf.heads, 0, l.PolicyConv.Out)})
	}
	arrays = append(arrays, dense(&inf.fc[1], l.ValueFC1)...)
	arrays = append(arrays, dense(&inf.fc[2], l.ValueFC2)...)
	for _, a := range arrays {
		if err := inf.d.upload(a.dst, a.data); err != nil {
			return err
		}
	}
	if err := inf.loadHalf(l); err != nil {
		return err
	}
	if l.PolicyOut != nil {
		return inf.d.uploadInt32(inf.policyIndex, l.PolicyIndex)
	}
	return nil
}

// layersShape is what of a network must stay the same for Reload: the
// architecture and the size of every array.
func layersShape(l nn.Layers) string {
	sizes := fmt.Sprint(l.Planes, l.Height, l.Width, l.Actions, l.ValueOutputs, len(l.Blocks), len(l.PolicyIndex))
	conv := func(c nn.ConvLayer) { sizes += fmt.Sprint(" c", c.Kernel, c.In, c.Out, len(c.Weights), len(c.Bias)) }
	dense := func(d *nn.DenseLayer) {
		if d == nil {
			sizes += " -"
			return
		}
		sizes += fmt.Sprint(" d", d.In, d.Out, len(d.Weights), len(d.Bias))
	}
	conv(l.Stem)
	for i, b := range l.Blocks {
		conv(b[0])
		conv(b[1])
		if i < len(l.GlobalPool) {
			dense(l.GlobalPool[i])
		}
	}
	conv(l.PolicyConv)
	conv(l.ValueConv)
	if l.PolicyOut != nil {
		conv(*l.PolicyOut)
		dense(l.PolicyGlobal)
	} else {
		dense(&l.PolicyFC)
	}
	dense(&l.ValueFC1)
	dense(&l.ValueFC2)
	return sizes
}

// Reload copies the weights of another network of the same architecture
// into the inference, keeping the plans it has made for its batch sizes
// (algorithms found, graphs captured), which read the weights where they
// were: the next network of a run costs a copy, not a new inference.
func (inf *Inference) Reload(f *nn.Folded) error { return inf.ReloadLayers(f.Layers()) }

// ReloadLayers is Reload from plain arrays.
func (inf *Inference) ReloadLayers(l nn.Layers) error {
	if inf.closed {
		return errors.New("cuda reload: inference closed")
	}
	if err := checkLayers(l); err != nil {
		return fmt.Errorf("cuda reload: %w", err)
	}
	if layersShape(l) != inf.arch {
		return fmt.Errorf("cuda reload: %w", ErrOtherArchitecture)
	}
	unbind, err := inf.d.bindThread()
	if err != nil {
		return err
	}
	defer unbind()
	if err := inf.d.cu("cuStreamSynchronize", inf.d.drv.cuStreamSynchronize(inf.stream)); err != nil {
		return err
	}
	return inf.load(l)
}

// ErrOtherArchitecture refuses to reload an inference with a network of
// another architecture.
var ErrOtherArchitecture = errors.New("the network's architecture differs from the inference's")

func (inf *Inference) alloc(n int) (uintptr, error) {
	p, err := inf.d.alloc(n)
	if err != nil {
		return 0, err
	}
	inf.allocs = append(inf.allocs, p)
	return p, nil
}

// newConv allocates a convolution's weights and biases and makes its
// descriptors; load fills them.
func (inf *Inference) newConv(c nn.ConvLayer) (dc devConv, err error) {
	d := inf.d
	dc = devConv{kernel: c.Kernel, in: c.In, out: c.Out}
	if dc.w, err = inf.alloc(len(c.Weights)); err != nil {
		return dc, err
	}
	if dc.b, err = inf.alloc(len(c.Bias)); err != nil {
		return dc, err
	}
	if err = d.dnnErr("cudnnCreateFilterDescriptor", d.dnn.cudnnCreateFilterDescriptor(&dc.wDesc)); err != nil {
		return dc, err
	}
	if err = d.dnnErr(fmt.Sprintf("cudnnSetFilter4dDescriptor %d×%d×%d×%d", c.Out, c.In, c.Kernel, c.Kernel),
		d.dnn.cudnnSetFilter4dDescriptor(dc.wDesc, cudnnDataFloat, cudnnTensorNCHW, int32(c.Out), int32(c.In), int32(c.Kernel), int32(c.Kernel))); err != nil {
		return dc, err
	}
	dc.bDesc, err = inf.tensorDesc(1, c.Out, 1, 1)
	return dc, err
}

// newDense allocates a dense layer's weights and biases and makes its
// bias descriptor; load fills them.
func (inf *Inference) newDense(l nn.DenseLayer) (dd devDense, err error) {
	dd = devDense{in: l.In, out: l.Out}
	if dd.w, err = inf.alloc(len(l.Weights)); err != nil {
		return dd, err
	}
	if dd.b, err = inf.alloc(len(l.Bias)); err != nil {
		return dd, err
	}
	dd.bDesc, err = inf.tensorDesc(1, l.Out, 1, 1)
	return dd, err
}

// tensorDesc makes a packed NCHW float32 descriptor. Descriptors are
// destroyed with the inference, whether made for it or for a plan.
func (inf *Inference) tensorDesc(n, c, h, w int) (uintptr, error) {
	return inf.tensorDescIn(cudnnTensorNCHW, n, c, h, w)
}

// tensorDescIn makes a packed float32 descriptor in the given format
// (cudnnTensorNCHW or cudnnTensorNHWC).
func (inf *Inference) tensorDescIn(format int32, n, c, h, w int) (uintptr, error) {
	return inf.tensorDescOf(format, cudnnDataFloat, n, c, h, w)
}

// tensorDescOf makes a packed descriptor of the given format and data
// type.
func (inf *Inference) tensorDescOf(format, dtype int32, n, c, h, w int) (uintptr, error) {
	d := inf.d
	var desc uintptr
	if err := d.dnnErr("cudnnCreateTensorDescriptor", d.dnn.cudnnCreateTensorDescriptor(&desc)); err != nil {
		return 0, err
	}
	if err := d.dnnErr(fmt.Sprintf("cudnnSetTensor4dDescriptor %d×%d×%d×%d format %d type %d", n, c, h, w, format, dtype),
		d.dnn.cudnnSetTensor4dDescriptor(desc, format, dtype, int32(n), int32(c), int32(h), int32(w))); err != nil {
		d.dnn.cudnnDestroyTensorDescriptor(desc)
		return 0, err
	}
	return desc, nil
}

// MaxBatch is the largest batch Forward takes.
func (inf *Inference) MaxBatch() int { return inf.maxBatch }

// Forward runs the network on count encoded positions (count × planes ×
// height × width values) and returns the policy logits (count × actions)
// and win/draw/loss probabilities (count × 3), in buffers that stay valid
// until the next call.
func (inf *Inference) Forward(inputs []float32, count int) (logits, wdl []float32, err error) {
	if inf.closed {
		return nil, nil, errors.New("cuda forward: inference closed")
	}
	size := inf.planes * inf.cells
	if count < 1 || count > inf.maxBatch {
		return nil, nil, fmt.Errorf("cuda forward: %d positions, want 1..%d", count, inf.maxBatch)
	}
	if len(inputs) != count*size {
		return nil, nil, fmt.Errorf("cuda forward: %d input values, want %d", len(inputs), count*size)
	}
	unbind, err := inf.d.bindThread()
	if err != nil {
		return nil, nil, err
	}
	defer unbind()
	n := bucket(count, inf.maxBatch)
	p := inf.plans[n]
	if p == nil {
		if p, err = inf.newPlan(n); err != nil {
			return nil, nil, err
		}
		inf.plans[n] = p
	}
	copy(inf.hostIn, inputs)
	if err := inf.run(p); err != nil {
		return nil, nil, err
	}
	return inf.hostLogits[:count*inf.actions], inf.hostWDL[:count*3], nil
}

// run computes one batch through the plan's graph. A plan's first call
// runs each path eagerly, which also warms cuDNN and cuBLAS up, then
// captures each path as a graph and keeps the faster one.
func (inf *Inference) run(p *plan) error {
	d := inf.d
	switch {
	case p.exec != 0:
		if err := d.cu("cuGraphLaunch", d.drv.cuGraphLaunch(p.exec, inf.stream)); err != nil {
			return err
		}
	case p.settled: // no graph: run eagerly
		if err := inf.enqueue(p); err != nil {
			return err
		}
	default:
		return inf.settle(p)
	}
	return d.cu("cuStreamSynchronize", d.drv.cuStreamSynchronize(inf.stream))
}

// settle chooses the plan's path on its first call, leaving that call's
// results in the output buffers.
func (inf *Inference) settle(p *plan) error {
	d := inf.d
	var paths []path
	for _, c := range []path{cudnnPath, nhwcPath, halfPath, gemmPath} {
		if (inf.only == anyPath || inf.only == c) && inf.canRun(p, c) {
			paths = append(paths, c)
		}
	}
	if len(paths) == 0 {
		if err := p.refusal(inf.only); err != nil {
			return fmt.Errorf("cuda forward: batch %d with the %v path: %w", p.n, inf.only, err)
		}
		return fmt.Errorf("cuda forward: no way to compute batch %d with the %v path", p.n, inf.only)
	}
	sync := func() error { return d.cu("cuStreamSynchronize", d.drv.cuStreamSynchronize(inf.stream)) }
	// Each path runs once eagerly. One that cuDNN refuses as it is queued
	// (an NHWC algorithm that Find timed but the fused call will not run)
	// drops out while another remains; the last path run leaves its
	// results in the output buffers.
	ran := paths[:0]
	var refused error
	for _, c := range paths {
		p.path = c
		if err := inf.enqueue(p); err != nil {
			refused = err
			switch c {
			case nhwcPath:
				p.nhwcErr = err
			case halfPath:
				p.halfErr = err
			}
			continue
		}
		if err := sync(); err != nil {
			return err
		}
		ran = append(ran, c)
	}
	if len(ran) == 0 {
		return refused
	}
	if last := ran[len(ran)-1]; p.path != last {
		p.path = last
		if err := inf.enqueue(p); err != nil {
			return err
		}
		if err := sync(); err != nil {
			return err
		}
	}
	paths = ran
	best, bestTime := -1, time.Duration(0)
	execs := make([]uintptr, len(paths))
	graphs := make([]uintptr, len(paths))
	drop := func(keep int) {
		for i := range paths {
			if i != keep && execs[i] != 0 {
				d.drv.cuGraphExecDestroy(execs[i])
				d.drv.cuGraphDestroy(graphs[i])
			}
		}
	}
	fail := func(err error) error { // the next call starts over
		drop(-1)
		p.exec, p.graph = 0, 0
		return err
	}
	for i, c := range paths {
		p.path = c
		if p.captureErr = inf.capture(p); p.captureErr != nil {
			continue
		}
		execs[i], graphs[i] = p.exec, p.graph
		const warm, timed = 2, 5
		var start time.Time
		for k := range warm + timed {
			if k == warm {
				if err := sync(); err != nil {
					return fail(err)
				}
				start = time.Now()
			}
			if err := d.cu("cuGraphLaunch", d.drv.cuGraphLaunch(p.exec, inf.stream)); err != nil {
				return fail(err)
			}
		}
		if err := sync(); err != nil {
			return fail(err)
		}
		if took := time.Since(start); best < 0 || took < bestTime {
			best, bestTime = i, took
		}
	}
	p.settled = true
	drop(best)
	p.exec, p.graph = 0, 0
	if best < 0 { // no graph: the last eager run's results stand
		return nil
	}
	p.path, p.exec, p.graph, p.captureErr = paths[best], execs[best], graphs[best], nil
	if err := d.cu("cuGraphLaunch", d.drv.cuGraphLaunch(p.exec, inf.stream)); err != nil {
		return err
	}
	return sync()
}

// capture records the plan's work as a CUDA graph: one launch replaces
// a score of kernel launches and copies, which dominate small batches.
// A failure leaves the plan running eagerly.
func (inf *Inference) capture(p *plan) error {
	d := inf.d
	if err := d.cu("cuStreamBeginCapture", d.drv.cuStreamBeginCapture(inf.stream, cuStreamCaptureModeThreadLo)); err != nil {
		return err
	}
	qerr := inf.enqueue(p)
	var graph uintptr
	eerr := d.cu("cuStreamEndCapture", d.drv.cuStreamEndCapture(inf.stream, &graph))
	if qerr != nil || eerr != nil {
		if graph != 0 {
			d.drv.cuGraphDestroy(graph)
		}
		return errors.Join(qerr, eerr)
	}
	var exec uintptr
	if err := d.cu("cuGraphInstantiateWithFlags", d.drv.cuGraphInstantiateWithFlags(&exec, graph, 0)); err != nil {
		d.drv.cuGraphDestroy(graph)
		return err
	}
	p.graph, p.exec = graph, exec
	return nil
}

// enqueue queues a batch of p.n positions on the stream: the input copy,
// the computation at the top of nn/layers.go, the output copies.
func (inf *Inference) enqueue(p *plan) error {
	switch p.path {
	case gemmPath:
		return inf.enqueueGemm(p)
	case nhwcPath:
		return inf.enqueueNHWC(p)
	case halfPath:
		return inf.enqueueHalf(p)
	}
	return inf.enqueueDNN(p)
}

// enqueueDNN computes the convolutions with cuDNN on NCHW tensors.
func (inf *Inference) enqueueDNN(p *plan) error {
	d := inf.d
	n := p.n
	if err := d.cu("cuMemcpyHtoDAsync", d.drv.cuMemcpyHtoDAsync(inf.in, unsafe.Pointer(&inf.hostIn[0]), uintptr(n*inf.planes*inf.cells*4), inf.stream)); err != nil {
		return err
	}
	if err := inf.conv(p, &inf.stem, p.stemConv, p.inDesc, inf.in, p.actDesc, inf.x, 0); err != nil {
		return err
	}
	x, y := inf.x, inf.y
	for i := range inf.blocks {
		b := &inf.blocks[i]
		if err := inf.conv(p, &b[0], p.towerConv, p.actDesc, x, p.actDesc, inf.t, 0); err != nil {
			return err
		}
		if l := inf.pools[i]; l != nil {
			if err := inf.gpool(l, inf.t, n, nchwLayout(inf.filters, inf.cells)); err != nil {
				return err
			}
		}
		if err := inf.conv(p, &b[1], p.towerConv, p.actDesc, inf.t, p.actDesc, y, x); err != nil {
			return err
		}
		x, y = y, x
	}
	if err := inf.conv(p, &inf.head, p.headConv, p.actDesc, x, p.headDesc, inf.headOut, 0); err != nil {
		return err
	}
	stride := inf.heads * inf.cells
	if inf.policyOut != nil {
		if err := inf.convPolicy(n, nchwLayout(inf.heads, inf.cells), true); err != nil {
			return err
		}
	} else if err := inf.dense(&inf.fc[0], denseGemm(inf.policyCh*inf.cells, inf.actions, n, stride, 0), inf.headOut, p.logitDesc, inf.logits); err != nil {
		return err
	}
	if err := inf.dense(&inf.fc[1], denseGemm((inf.heads-inf.policyCh)*inf.cells, inf.hidden, n, stride, inf.policyCh*inf.cells), inf.headOut, p.hidDesc, inf.hid); err != nil {
		return err
	}
	one, zero := float32(1), float32(0)
	if err := d.dnnErr("cudnnActivationForward", d.dnn.cudnnActivationForward(inf.dnn, inf.relu, &one, p.hidDesc, inf.hid, &zero, p.hidDesc, inf.hid)); err != nil {
		return err
	}
	if err := inf.dense(&inf.fc[2], denseGemm(inf.hidden, 3, n, inf.hidden, 0), inf.hid, p.voutDesc, inf.vout); err != nil {
		return err
	}
	return inf.finish(p)
}

// conv is y = relu(conv(x) + bias [+ skip]) on NCHW tensors.
func (inf *Inference) conv(p *plan, c *devConv, ch convChoice, xDesc, x, yDesc, y, skip uintptr) error {
	return inf.fusedConv(p, c, c.wDesc, c.w, c.bDesc, c.b, ch, xDesc, x, yDesc, y, skip)
}

// fusedConv is y = relu(conv(x) + bias [+ skip]), one cuDNN call, with
// c's weights as wDesc describes them at w and its bias at b.
func (inf *Inference) fusedConv(p *plan, c *devConv, wDesc, w, bDesc, b uintptr, ch convChoice, xDesc, x, yDesc, y, skip uintptr) error {
	d := inf.d
	one, alpha2 := float32(1), float32(0)
	z := y
	if skip != 0 {
		alpha2, z = 1, skip
	}
	return d.dnnErr(fmt.Sprintf("cudnnConvolutionBiasActivationForward %d→%d k%d batch %d", c.in, c.out, c.kernel, p.n),
		d.dnn.cudnnConvolutionBiasActivationForward(inf.dnn, &one, xDesc, x, wDesc, w, ch.desc, ch.algo, p.ws, p.wsBytes,
			&alpha2, yDesc, z, bDesc, b, inf.relu, yDesc, y))
}

// dense is y = x · W + b for the rows g describes.
func (inf *Inference) dense(l *devDense, g gemm, x, yDesc, y uintptr) error {
	d := inf.d
	one, zero := float32(1), float32(0)
	if err := d.blasErr(fmt.Sprintf("cublasSgemm %d×%d×%d", g.m, g.n, g.k),
		d.blas.cublasSgemm(inf.blas, cublasOpN, cublasOpN, int32(g.m), int32(g.n), int32(g.k), &one, l.w, int32(g.lda),
			x+uintptr(g.offB*4), int32(g.ldb), &zero, y, int32(g.ldc))); err != nil {
		return err
	}
	return d.dnnErr("cudnnAddTensor", d.dnn.cudnnAddTensor(inf.dnn, &one, l.bDesc, l.b, &one, yDesc, y))
}

// newPlan makes the descriptors of batch n and picks each convolution's
// fastest algorithm by timing them (cudnnFind).
func (inf *Inference) newPlan(n int) (p *plan, err error) {
	p = &plan{n: n}
	defer func() {
		if err != nil {
			inf.freePlan(p)
			p = nil
		}
	}()
	descs := []struct {
		p          *uintptr
		c, h, w, n int
	}{
		{&p.inDesc, inf.planes, 0, 0, n},
		{&p.actDesc, inf.filters, 0, 0, n},
		{&p.headDesc, inf.heads, 0, 0, n},
		{&p.logitDesc, inf.actions, 1, 1, n},
		{&p.hidDesc, inf.hidden, 1, 1, n},
		{&p.voutDesc, 3, 1, 1, n},
	}
	h, w := inf.shape()
	for _, dd := range descs {
		hh, ww := dd.h, dd.w
		if hh == 0 {
			hh, ww = h, w
		}
		if *dd.p, err = inf.tensorDesc(dd.n, dd.c, hh, ww); err != nil {
			return p, err
		}
	}
	var ws uintptr
	choose := func(c *devConv, xDesc, yDesc uintptr) (convChoice, error) {
		ch, bytes, err := inf.chooseConv(c, c.wDesc, xDesc, yDesc, cudnnDataFloat, false)
		ws = max(ws, bytes)
		return ch, err
	}
	if p.stemConv, err = choose(&inf.stem, p.inDesc, p.actDesc); err != nil {
		return p, err
	}
	if len(inf.blocks) > 0 {
		if p.towerConv, err = choose(&inf.blocks[0][0], p.actDesc, p.actDesc); err != nil {
			return p, err
		}
	}
	if p.headConv, err = choose(&inf.head, p.actDesc, p.headDesc); err != nil {
		return p, err
	}
	// A cuDNN without NHWC kernels for these shapes leaves the other
	// paths.
	if bytes, err := inf.planNHWC(p); err != nil {
		p.nhwcErr = err
	} else {
		ws = max(ws, bytes)
	}
	if inf.fp16 {
		if bytes, err := inf.planHalf(p); err != nil {
			p.halfErr = err
		} else {
			ws = max(ws, bytes)
		}
	}
	if ws > inf.wsBytes {
		size := max(ws, 2*inf.wsBytes)
		m, err := inf.alloc(int((size + 3) / 4))
		if err != nil {
			return p, err
		}
		inf.ws, inf.wsBytes = m, size
	}
	p.ws, p.wsBytes = inf.ws, inf.wsBytes
	return p, nil
}

func (inf *Inference) shape() (int, int) { return inf.h, inf.w }

// chooseConv makes c's convolution descriptor at one batch size, its
// sums in compute (cudnnDataFloat, or cudnnDataHalf), and picks the
// fastest algorithm cuDNN measures that keeps the arithmetic in the
// chosen precision: plain float32 FMA unless TF32 is allowed; tensor
// cores for float16 tensors (half).
func (inf *Inference) chooseConv(c *devConv, wDesc, xDesc, yDesc uintptr, compute int32, half bool) (ch convChoice, ws uintptr, err error) {
	d := inf.d
	if err := d.dnnErr("cudnnCreateConvolutionDescriptor", d.dnn.cudnnCreateConvolutionDescriptor(&ch.desc)); err != nil {
		return ch, 0, err
	}
	pad := int32(c.kernel / 2)
	if err := d.dnnErr("cudnnSetConvolution2dDescriptor", d.dnn.cudnnSetConvolution2dDescriptor(ch.desc, pad, pad, 1, 1, 1, 1, cudnnCrossCorrelation, compute)); err != nil {
		return ch, 0, err
	}
	math := int32(cudnnFMAMath)
	switch {
	case half:
		math = cudnnTensorOpMath
	case inf.tf32:
		math = cudnnDefaultMath
	}
	if err := d.dnnErr("cudnnSetConvolutionMathType", d.dnn.cudnnSetConvolutionMathType(ch.desc, math)); err != nil {
		return ch, 0, err
	}
	var perf [cudnnFwdAlgoCount]convFwdPerf
	var got int32
	if err := d.dnnErr(fmt.Sprintf("cudnnFindConvolutionForwardAlgorithm %d→%d k%d", c.in, c.out, c.kernel),
		d.dnn.cudnnFindConvolutionForwardAlgorithm(inf.dnn, xDesc, wDesc, ch.desc, yDesc, int32(len(perf)), &got, &perf[0])); err != nil {
		return ch, 0, err
	}
	pick := pickAlgo(perf[:got], inf.tf32 || half)
	if pick < 0 {
		return ch, 0, fmt.Errorf("cudnn: no forward algorithm for convolution %d→%d k%d", c.in, c.out, c.kernel)
	}
	ch.algo = perf[pick].Algo
	if inf.tf32 || half {
		math = perf[pick].MathType
	}
	if err := d.dnnErr("cudnnSetConvolutionMathType", d.dnn.cudnnSetConvolutionMathType(ch.desc, math)); err != nil {
		return ch, 0, err
	}
	if err := d.dnnErr("cudnnGetConvolutionForwardWorkspaceSize", d.dnn.cudnnGetConvolutionForwardWorkspaceSize(inf.dnn, xDesc, wDesc, ch.desc, yDesc, ch.algo, &ws)); err != nil {
		return ch, 0, err
	}
	return ch, ws, nil
}

// pickAlgo is the index of the fastest successful result (cuDNN sorts
// them by time), preferring, unless tf32 is allowed, one measured with
// plain float32 FMA math.
func pickAlgo(perf []convFwdPerf, tf32 bool) int {
	first := -1
	for i, p := range perf {
		if p.Status != cudaSuccess {
			continue
		}
		if tf32 || p.MathType == cudnnFMAMath {
			return i
		}
		if first < 0 {
			first = i
		}
	}
	return first
}

// Close frees the inference's GPU memory and handles.
func (inf *Inference) Close() error {
	if inf.closed {
		return nil
	}
	unbind, err := inf.d.bindThread()
	if err != nil {
		return err
	}
	defer unbind()
	inf.free()
	inf.d.release()
	return nil
}

func (inf *Inference) freePlan(p *plan) {
	d := inf.d
	if p.exec != 0 {
		d.drv.cuGraphExecDestroy(p.exec)
	}
	if p.graph != 0 {
		d.drv.cuGraphDestroy(p.graph)
	}
	for _, t := range []uintptr{p.inDesc, p.actDesc, p.headDesc, p.logitDesc, p.hidDesc, p.voutDesc, p.inNHWC, p.actNHWC, p.inHalf, p.actHalf} {
		if t != 0 {
			d.dnn.cudnnDestroyTensorDescriptor(t)
		}
	}
	for _, c := range []uintptr{p.stemConv.desc, p.towerConv.desc, p.headConv.desc, p.nhwcStem.desc, p.nhwcTower.desc, p.halfStem.desc, p.halfTower.desc} {
		if c != 0 {
			d.dnn.cudnnDestroyConvolutionDescriptor(c)
		}
	}
}

// free releases everything made so far; it serves a half-built inference
// too. The caller has bound the context to the thread.
func (inf *Inference) free() {
	d := inf.d
	inf.closed = true
	if inf.stream != 0 {
		d.drv.cuStreamSynchronize(inf.stream)
	}
	for _, p := range inf.plans {
		inf.freePlan(p)
	}
	inf.plans = nil
	convs := []devConv{inf.stem, inf.head}
	for _, b := range inf.blocks {
		convs = append(convs, b[0], b[1])
	}
	if inf.policyOut != nil {
		convs = append(convs, *inf.policyOut)
	}
	for _, c := range convs {
		for _, f := range []uintptr{c.wDesc, c.nhwcWDesc, c.halfWDesc} {
			if f != 0 {
				d.dnn.cudnnDestroyFilterDescriptor(f)
			}
		}
		for _, b := range []uintptr{c.bDesc, c.nhwcBDesc, c.halfBDesc} {
			if b != 0 {
				d.dnn.cudnnDestroyTensorDescriptor(b)
			}
		}
	}
	dense := append([]*devDense{&inf.fc[0], &inf.fc[1], &inf.fc[2], inf.policyGlobal}, inf.pools...)
	for _, f := range dense {
		if f != nil && f.bDesc != 0 {
			d.dnn.cudnnDestroyTensorDescriptor(f.bDesc)
		}
	}
	if inf.relu != 0 {
		d.dnn.cudnnDestroyActivationDescriptor(inf.relu)
	}
	for _, p := range inf.allocs {
		d.drv.cuMemFree(p)
	}
	inf.allocs = nil
	for _, s := range [][]float32{inf.hostIn, inf.hostLogits, inf.hostWDL} {
		d.freePinned(s)
	}
	inf.hostIn, inf.hostLogits, inf.hostWDL = nil, nil, nil
	if inf.blas != 0 {
		d.blas.cublasDestroy(inf.blas)
	}
	if inf.dnn != 0 {
		d.dnn.cudnnDestroy(inf.dnn)
	}
	if inf.stream != 0 {
		d.drv.cuStreamDestroy(inf.stream)
	}
	inf.blas, inf.dnn, inf.stream = 0, 0, 0
}
