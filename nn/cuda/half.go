package cuda

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/flipzero/flipzero/nn"
)

// The float16 path (halfPath): the NHWC path with the stem's input, the
// tower's activations and its weights in float16, which the tensor cores
// multiply at twice TF32's rate, summing in float32. The input is
// converted and transposed on the GPU, the tower's output converted back
// to float32 for the heads, which are the SGEMM path's. Only an inference
// made while the device allows float16 (SetFP16) has it.

// toHalf rounds v to the nearest float16, ties to even: ±Inf beyond the
// largest (65504), subnormal below 2⁻¹⁴, NaN kept a NaN.
func toHalf(v float32) uint16 {
	b := math.Float32bits(v)
	sign := uint16(b>>16) & 0x8000
	mant := b & 0x7fffff
	exp := int(b>>23&0xff) - 127 + 15 // float16's biased exponent
	switch {
	case b&0x7fffffff >= 0x7f800000: // Inf or NaN
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp >= 31:
		return sign | 0x7c00
	case exp <= 0: // subnormal, or zero
		if exp < -10 {
			return sign // below half the smallest subnormal
		}
		return sign | roundShift(mant|0x800000, uint(14-exp))
	}
	// A carry out of the mantissa raises the exponent, to Inf at the top.
	return sign | (uint16(exp)<<10 + roundShift(mant, 13))
}

// roundShift is m >> shift rounded to nearest, ties to even.
func roundShift(m uint32, shift uint) uint16 {
	h := m >> shift
	rest, half := m&(1<<shift-1), uint32(1)<<(shift-1)
	if rest > half || rest == half && h&1 == 1 {
		h++
	}
	return uint16(h)
}

// halfPlanes is how many input planes the float16 path's stem reads:
// the encoding's, padded with zero planes to a multiple of 8, which
// cuDNN's float16 tensor-core kernels want.
func halfPlanes(planes int) int { return (planes + 7) / 8 * 8 }

// padInputs gives a convolution's NHWC weights (out, ky, kx, in) zero
// weights for the inputs from in to padded.
func padInputs(w []float32, in, padded int) []float32 {
	if padded == in {
		return w
	}
	p := make([]float32, len(w)/in*padded)
	for k := 0; k < len(w)/in; k++ {
		copy(p[k*padded:], w[k*in:(k+1)*in])
	}
	return p
}

// halves rounds each value to float16, padded to an even count so that
// the device's float32-sized copies carry them.
func halves(v []float32) []float32 {
	if len(v) == 0 {
		return nil
	}
	h := make([]uint16, len(v)+len(v)%2)
	for i, x := range v {
		h[i] = toHalf(x)
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&h[0])), len(h)/2)
}

// newConvHalf allocates c's float16 weights and bias (loadHalf fills
// them) for in inputs (its own, or the stem's padded planes) and makes
// their NHWC descriptors, where the inference may compute in float16.
func (inf *Inference) newConvHalf(c *devConv, in int) (err error) {
	if !inf.fp16 {
		return nil
	}
	d := inf.d
	if c.halfW, err = inf.alloc((c.out*in*c.kernel*c.kernel + 1) / 2); err != nil {
		return err
	}
	if c.halfB, err = inf.alloc((c.out + 1) / 2); err != nil {
		return err
	}
	if err = d.dnnErr("cudnnCreateFilterDescriptor", d.dnn.cudnnCreateFilterDescriptor(&c.halfWDesc)); err != nil {
		return err
	}
	if err = d.dnnErr(fmt.Sprintf("cudnnSetFilter4dDescriptor float16 NHWC %d×%d×%d×%d", c.out, c.in, c.kernel, c.kernel),
		d.dnn.cudnnSetFilter4dDescriptor(c.halfWDesc, cudnnDataHalf, cudnnTensorNHWC, int32(c.out), int32(in), int32(c.kernel), int32(c.kernel))); err != nil {
		return err
	}
	c.halfBDesc, err = inf.tensorDescOf(cudnnTensorNHWC, cudnnDataHalf, 1, c.out, 1, 1)
	return err
}

// loadHalf copies the stem's and the tower's weights and biases, rounded
// to float16 and laid out NHWC, where the inference may compute in
// float16.
func (inf *Inference) loadHalf(l nn.Layers) error {
	if !inf.fp16 {
		return nil
	}
	load := func(c devConv, src nn.ConvLayer, in int) error {
		if err := inf.d.upload(c.halfW, halves(padInputs(nhwcWeights(src), src.In, in))); err != nil {
			return err
		}
		return inf.d.upload(c.halfB, halves(src.Bias))
	}
	if err := load(inf.stem, l.Stem, halfPlanes(l.Stem.In)); err != nil {
		return err
	}
	for i, b := range l.Blocks {
		for k := range b {
			if err := load(inf.blocks[i][k], b[k], b[k].In); err != nil {
				return err
			}
		}
	}
	return nil
}

// planHalf makes the float16 path's descriptors at p's batch size and
// picks its convolutions' algorithms, summing in float32 where cuDNN
// runs that and in float16 where it runs only that, returning the
// workspace they need.
func (inf *Inference) planHalf(p *plan) (ws uintptr, err error) {
	h, w := inf.shape()
	if p.inHalf, err = inf.tensorDescOf(cudnnTensorNHWC, cudnnDataHalf, p.n, halfPlanes(inf.planes), h, w); err != nil {
		return 0, err
	}
	if p.actHalf, err = inf.tensorDescOf(cudnnTensorNHWC, cudnnDataHalf, p.n, inf.filters, h, w); err != nil {
		return 0, err
	}
	var first error
	for _, compute := range []int32{cudnnDataFloat, cudnnDataHalf} {
		ws, err = inf.chooseHalf(p, compute)
		if err == nil {
			return ws, nil
		}
		if first == nil {
			first = err
		}
	}
	return 0, first
}

// chooseHalf picks the float16 path's algorithms with sums in compute,
// leaving no descriptor behind when cuDNN has none.
func (inf *Inference) chooseHalf(p *plan, compute int32) (ws uintptr, err error) {
	d := inf.d
	defer func() {
		if err == nil {
			return
		}
		for _, ch := range []*convChoice{&p.halfStem, &p.halfTower} {
			if ch.desc != 0 {
				d.dnn.cudnnDestroyConvolutionDescriptor(ch.desc)
				*ch = convChoice{}
			}
		}
	}()
	return inf.chooseStemTower(&p.halfStem, &p.halfTower, func(c *devConv) uintptr { return c.halfWDesc }, p.inHalf, p.actHalf, compute, true)
}

// enqueueHalf queues a batch through the float16 path: the input copied,
// converted and transposed to NHWC float16, the stem and the tower in
// cuDNN, the tower's output converted back for the heads.
func (inf *Inference) enqueueHalf(p *plan) error {
	d := inf.d
	n := p.n
	if err := d.cu("cuMemcpyHtoDAsync", d.drv.cuMemcpyHtoDAsync(inf.in, unsafe.Pointer(&inf.hostIn[0]), uintptr(n*inf.planes*inf.cells*4), inf.stream)); err != nil {
		return err
	}
	padded := halfPlanes(inf.planes)
	total := uint32(n * inf.cells * padded)
	if err := inf.launch(d.toHalf, total, inf.in, inf.inT, total, uint32(inf.planes), uint32(padded), uint32(inf.cells)); err != nil {
		return fmt.Errorf("input to float16: %w", err)
	}
	conv := func(c *devConv, ch convChoice, xDesc, x, y, skip uintptr) error {
		return inf.fusedConv(p, c, c.halfWDesc, c.halfW, c.halfBDesc, c.halfB, ch, xDesc, x, p.actHalf, y, skip)
	}
	if err := conv(&inf.stem, p.halfStem, p.inHalf, inf.inT, inf.x, 0); err != nil {
		return err
	}
	x, err := inf.tower(inf.x, func(c *devConv, x, y, skip uintptr) error {
		return conv(c, p.halfTower, p.actHalf, x, y, skip)
	}, func(l *devDense, x uintptr) error {
		return inf.gpoolHalf(l, x, n)
	})
	if err != nil {
		return err
	}
	total = uint32(n * inf.cells * inf.filters)
	if err := inf.launch(d.toFloat, total, x, inf.t, total); err != nil {
		return fmt.Errorf("tower output to float32: %w", err)
	}
	return inf.rowsHeads(p, inf.t)
}

// gpoolHalf is gpool on the float16 path's activations: each channel's
// mean and maximum, through the dense layer in float32, added to every
// cell.
func (inf *Inference) gpoolHalf(l *devDense, x uintptr, count int) error {
	d, c := inf.d, l.out
	if err := inf.launch(d.poolHalf, uint32(count*c), x, inf.pooled, uint32(count*c), uint32(c), uint32(inf.cells)); err != nil {
		return fmt.Errorf("pooling %d float16 channels: %w", c, err)
	}
	if err := inf.sgemm(l.w, denseGemm(2*c, l.out, count, 2*c, 0), inf.pooled, inf.gbias); err != nil {
		return err
	}
	if err := inf.biasAct(inf.gbias, l.b, 0, count*l.out, l.out, false); err != nil {
		return err
	}
	total := uint32(count * inf.cells * c)
	if err := inf.launch(d.chanBiasHalf, total, x, inf.gbias, total, uint32(c), uint32(inf.cells)); err != nil {
		return fmt.Errorf("global pooling bias, float16: %w", err)
	}
	return nil
}

// refusal is why path c cannot run p's batch, where it is known.
func (p *plan) refusal(c path) error {
	switch c {
	case nhwcPath:
		return p.nhwcErr
	case halfPath:
		return p.halfErr
	}
	return nil
}
