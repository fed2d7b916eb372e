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
	k := c.Kernel
	w := make([]float32, len(c.Weights))
	for o := 0; o < c.Out; o++ {
		for i := 0; i < c.In; i++ {
			for ky := 0; ky < k; ky++ {
				for kx := 0; kx < k; kx++ {
					w[((o*k+ky)*k+kx)*c.In+i] = c.Weights[((o*c.In+i)*k+ky)*k+kx]
				}
			}
		}
	}
	return w
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
	var bytes uintptr
	p.nhwcStem, bytes, err = inf.chooseConv(&inf.stem, inf.stem.nhwcWDesc, p.inNHWC, p.actNHWC, cudnnDataFloat, false)
	if err != nil {
		return 0, err
	}
	ws = bytes
	if len(inf.blocks) > 0 {
		b := &inf.blocks[0][0]
		if p.nhwcTower, bytes, err = inf.chooseConv(b, b.nhwcWDesc, p.actNHWC, p.actNHWC, cudnnDataFloat, false); err != nil {
			return 0, err
		}
		ws = max(ws, bytes)
	}
	return ws, nil
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
	x, y := inf.x, inf.y
	for i := range inf.blocks {
		b := &inf.blocks[i]
		if err := conv(&b[0], p.nhwcTower, p.actNHWC, x, inf.t, 0); err != nil {
			return err
		}
		if l := inf.pools[i]; l != nil {
			if err := inf.gpool(l, inf.t, n, rowsLayout(inf.filters, inf.cells)); err != nil {
				return err
			}
		}
		if err := conv(&b[1], p.nhwcTower, p.actNHWC, inf.t, y, x); err != nil {
			return err
		}
		x, y = y, x
	}
	return inf.rowsHeads(p, x)
}
