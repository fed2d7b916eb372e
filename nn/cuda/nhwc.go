package cuda

import (
	"fmt"
	"unsafe"

	"github.com/flipzero/flipzero/nn"
)

// The NHWC path: the stem and the tower as cuDNN convolutions on NHWC
// tensors, whose tensor-core kernels (TF32) read that layout as it is,
// where on NCHW tensors cuDNN transposes around them. Its activations
// are the SGEMM path's rows, (position·cell, channel), so that the
// global pooling and the heads are the SGEMM path's. A plan times it
// beside the others and keeps the fastest.

// nhwcWeights lays a convolution's (out, in, ky, kx) weights out as
// cuDNN's NHWC filters read them: (out, ky, kx, in).
func nhwcWeights(c nn.ConvLayer) []float32 {
	return permuteWeights(c, func(o, i, ky, kx int) int { return ((o*c.Kernel+ky)*c.Kernel+kx)*c.In + i })
}

// newConvNHWC allocates c's NHWC weights (load fills them) and makes
// their filter descriptor and an NHWC descriptor of its bias.
func (inf *Inference) newConvNHWC(c *devConv) (err error) {
	d := inf.d
	if c.nhwcW, err = inf.alloc(c.out * c.in * c.kernel * c.kernel); err != nil {
		return err
	}
	if err = d.dnnErr("cudnnCreateFilterDescriptor", d.dnn.cudnnCreateFilterDescriptor(&c.nhwcWDesc)); err != nil {
		return err
	}
	if err = d.dnnErr(fmt.Sprintf("cudnnSetFilter4dDescriptor NHWC %d×%d×%d×%d", c.out, c.in, c.kernel, c.kernel),
		d.dnn.cudnnSetFilter4dDescriptor(c.nhwcWDesc, cudnnDataFloat, cudnnTensorNHWC, int32(c.out), int32(c.in), int32(c.kernel), int32(c.kernel))); err != nil {
		return err
	}
	c.nhwcBDesc, err = inf.tensorDescIn(cudnnTensorNHWC, 1, c.out, 1, 1)
	return err
}

// planNHWC makes the NHWC path's descriptors at p's batch size and picks
// its convolutions' algorithms, returning the workspace they need.
func (inf *Inference) planNHWC(p *plan) (ws uintptr, err error) {
	h, w := inf.shape()
	if p.inNHWC, err = inf.tensorDescIn(cudnnTensorNHWC, p.n, inf.planes, h, w); err != nil {
		return 0, err
	}
	if p.actNHWC, err = inf.tensorDescIn(cudnnTensorNHWC, p.n, inf.filters, h, w); err != nil {
		return 0, err
	}
	return inf.chooseStemTower(&p.nhwcStem, &p.nhwcTower, func(c *devConv) uintptr { return c.nhwcWDesc }, p.inNHWC, p.actNHWC, cudnnDataFloat, false)
}

// chooseStemTower picks the algorithms of an NHWC path's stem and tower
// convolutions (their weights as wDesc describes them, the input and
// activations as in and act do, sums in compute, float16 tensors where
// half), and returns the workspace they need.
func (inf *Inference) chooseStemTower(stem, tower *convChoice, wDesc func(*devConv) uintptr, in, act uintptr, compute int32, half bool) (ws uintptr, err error) {
	*stem, ws, err = inf.chooseConv(&inf.stem, wDesc(&inf.stem), in, act, compute, half)
	if err != nil || len(inf.blocks) == 0 {
		return ws, err
	}
	b := &inf.blocks[0][0]
	var bytes uintptr
	*tower, bytes, err = inf.chooseConv(b, wDesc(b), act, act, compute, half)
	return max(ws, bytes), err
}

// tower queues an NHWC path's residual tower on x (stem output), each
// convolution by conv with the tower's algorithm, each block's global
// pooling by pool, and returns the buffer holding its output.
func (inf *Inference) tower(x uintptr, conv func(c *devConv, x, y, skip uintptr) error, pool func(l *devDense, x uintptr) error) (uintptr, error) {
	y := inf.y
	if x == inf.y {
		y = inf.x
	}
	for i := range inf.blocks {
		b := &inf.blocks[i]
		if err := conv(&b[0], x, inf.t, 0); err != nil {
			return 0, err
		}
		if l := inf.pools[i]; l != nil {
			if err := pool(l, inf.t); err != nil {
				return 0, err
			}
		}
		if err := conv(&b[1], inf.t, y, x); err != nil {
			return 0, err
		}
		x, y = y, x
	}
	return x, nil
}

// canRun says whether path c can compute p's batch.
func (inf *Inference) canRun(p *plan, c path) bool {
	switch c {
	case gemmPath:
		return p.n <= inf.gemmMax
	case nhwcPath:
		return p.nhwcErr == nil
	case halfPath:
		return inf.fp16 && p.halfErr == nil
	}
	return true
}

// enqueueNHWC queues a batch through the NHWC path: the input copied
// and transposed to NHWC, the stem and the tower in cuDNN, the heads as
// the SGEMM path computes them.
func (inf *Inference) enqueueNHWC(p *plan) error {
	d := inf.d
	n := p.n
	if err := d.cu("cuMemcpyHtoDAsync", d.drv.cuMemcpyHtoDAsync(inf.in, unsafe.Pointer(&inf.hostIn[0]), uintptr(n*inf.planes*inf.cells*4), inf.stream)); err != nil {
		return err
	}
	one, zero := float32(1), float32(0)
	if err := d.dnnErr("cudnnTransformTensor NCHW→NHWC", d.dnn.cudnnTransformTensor(inf.dnn, &one, p.inDesc, inf.in, &zero, p.inNHWC, inf.inT)); err != nil {
		return err
	}
	conv := func(c *devConv, ch convChoice, xDesc, x, y, skip uintptr) error {
		return inf.fusedConv(p, c, c.nhwcWDesc, c.nhwcW, c.nhwcBDesc, c.b, ch, xDesc, x, p.actNHWC, y, skip)
	}
	if err := conv(&inf.stem, p.nhwcStem, p.inNHWC, inf.inT, inf.x, 0); err != nil {
		return err
	}
	x, err := inf.tower(inf.x, func(c *devConv, x, y, skip uintptr) error {
		return conv(c, p.nhwcTower, p.actNHWC, x, y, skip)
	}, func(l *devDense, x uintptr) error {
		return inf.gpool(l, x, n, rowsLayout(inf.filters, inf.cells))
	})
	if err != nil {
		return err
	}
	return inf.rowsHeads(p, x)
}
