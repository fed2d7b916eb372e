package cuda

import (
	"fmt"
	"math"
	"unsafe"
)

// enqueueGemm computes the convolutions as im2row and one SGEMM each, on
// activations laid out (position·cell, channel), with the bias, the skip
// connection and the ReLU in one elementwise kernel after.
func (inf *Inference) enqueueGemm(p *plan) error {
	d := inf.d
	n := p.n
	h, w := inf.shape()
	rows := n * inf.cells
	if err := d.cu("cuMemcpyHtoDAsync", d.drv.cuMemcpyHtoDAsync(inf.in, unsafe.Pointer(&inf.hostIn[0]), uintptr(n*inf.planes*inf.cells*4), inf.stream)); err != nil {
		return err
	}
	conv := func(c *devConv, weights uintptr, src uintptr, nchw bool, dst, skip uintptr) error {
		a := im2rowFor(n, c.in, h, w, c.kernel, nchw)
		if err := inf.launch(d.im2row, a.total, src, inf.rows, a.total, a.channels, a.height, a.width, a.kernel, a.cells, a.strideN, a.strideC, a.strideP); err != nil {
			return fmt.Errorf("im2row %d→%d: %w", c.in, c.out, err)
		}
		k := c.kernel * c.kernel * c.in
		if err := inf.sgemm(weights, denseGemm(k, c.out, rows, k, 0), inf.rows, dst); err != nil {
			return err
		}
		return inf.biasAct(dst, c.b, skip, rows*c.out, c.out, true)
	}
	if err := conv(&inf.stem, inf.stemW, inf.in, true, inf.x, 0); err != nil {
		return err
	}
	x, y := inf.x, inf.y
	for i := range inf.blocks {
		if err := conv(&inf.blocks[i][0], inf.blockW[i][0], x, false, inf.t, 0); err != nil {
			return err
		}
		if l := inf.pools[i]; l != nil {
			if err := inf.gpool(l, inf.t, n, rowsLayout(inf.filters, inf.cells)); err != nil {
				return err
			}
		}
		if err := conv(&inf.blocks[i][1], inf.blockW[i][1], inf.t, false, y, x); err != nil {
			return err
		}
		x, y = y, x
	}
	return inf.rowsHeads(p, x)
}

// rowsHeads queues the heads of the SGEMM and NHWC paths on the tower's
// output x, laid out (position·cell, channel), and the copies of the
// results.
func (inf *Inference) rowsHeads(p *plan, x uintptr) error {
	n := p.n
	rows := n * inf.cells
	// The 1×1 heads need no im2row: the activations are their rows.
	if err := inf.sgemm(inf.headW, denseGemm(inf.filters, inf.heads, rows, inf.filters, 0), x, inf.headOut); err != nil {
		return err
	}
	if err := inf.biasAct(inf.headOut, inf.head.b, 0, rows*inf.heads, inf.heads, true); err != nil {
		return err
	}
	flat := inf.cells * inf.heads
	if inf.policyOut != nil {
		if err := inf.convPolicy(n, rowsLayout(inf.heads, inf.cells), false); err != nil {
			return err
		}
	} else {
		if err := inf.sgemm(inf.policyW, denseGemm(flat, inf.actions, n, flat, 0), inf.headOut, inf.logits); err != nil {
			return err
		}
		if err := inf.biasAct(inf.logits, inf.fc[0].b, 0, n*inf.actions, inf.actions, false); err != nil {
			return err
		}
	}
	if err := inf.sgemm(inf.v1W, denseGemm(flat, inf.hidden, n, flat, 0), inf.headOut, inf.hid); err != nil {
		return err
	}
	if err := inf.biasAct(inf.hid, inf.fc[1].b, 0, n*inf.hidden, inf.hidden, true); err != nil {
		return err
	}
	if err := inf.sgemm(inf.fc[2].w, denseGemm(inf.hidden, 3, n, inf.hidden, 0), inf.hid, inf.vout); err != nil {
		return err
	}
	if err := inf.biasAct(inf.vout, inf.fc[2].b, 0, n*3, 3, false); err != nil {
		return err
	}
	return inf.finish(p)
}

// finish queues the win/draw/loss softmax and the copies of the results.
func (inf *Inference) finish(p *plan) error {
	d := inf.d
	one, zero := float32(1), float32(0)
	if err := d.dnnErr("cudnnSoftmaxForward", d.dnn.cudnnSoftmaxForward(inf.dnn, cudnnSoftmaxAccurate, cudnnSoftmaxModeInst, &one, p.voutDesc, inf.vout, &zero, p.voutDesc, inf.wdl)); err != nil {
		return err
	}
	if err := d.cu("cuMemcpyDtoHAsync", d.drv.cuMemcpyDtoHAsync(unsafe.Pointer(&inf.hostLogits[0]), inf.logits, uintptr(p.n*inf.actions*4), inf.stream)); err != nil {
		return err
	}
	return d.cu("cuMemcpyDtoHAsync", d.drv.cuMemcpyDtoHAsync(unsafe.Pointer(&inf.hostWDL[0]), inf.wdl, uintptr(p.n*3*4), inf.stream))
}

// sgemm is y = x · W for the rows g describes (no bias).
func (inf *Inference) sgemm(weights uintptr, g gemm, x, y uintptr) error {
	d := inf.d
	one, zero := float32(1), float32(0)
	return d.blasErr(fmt.Sprintf("cublasSgemm %d×%d×%d", g.m, g.n, g.k),
		d.blas.cublasSgemm(inf.blas, cublasOpN, cublasOpN, int32(g.m), int32(g.n), int32(g.k), &one, weights, int32(g.lda),
			x+uintptr(g.offB*4), int32(g.ldb), &zero, y, int32(g.ldc)))
}

func (inf *Inference) biasAct(y, bias, skip uintptr, total, channels int, relu bool) error {
	r := uint32(0)
	if relu {
		r = 1
	}
	if err := inf.launch(inf.d.biasact, uint32(total), y, bias, skip, uint32(total), uint32(channels), r); err != nil {
		return fmt.Errorf("biasact over %d channels: %w", channels, err)
	}
	return nil
}

// launchBlock is the threads per block of the elementwise kernels.
const launchBlock = 256

// launch runs kernel f with one thread for each of total elements on the
// inference's stream.
func (inf *Inference) launch(f uintptr, total uint32, args ...any) error {
	return inf.d.launch(inf.stream, f, total, args...)
}

// launch runs kernel f with one thread for each of total elements. Its
// arguments are device pointers (uintptr), uint32s and float32s, in the
// kernel's order.
func (d *Device) launch(stream uintptr, f uintptr, total uint32, args ...any) error {
	vals := make([]uint64, len(args))
	ptrs := make([]unsafe.Pointer, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case uintptr:
			vals[i] = uint64(v)
		case uint32:
			vals[i] = uint64(v) // little-endian: the kernel reads the low half
		case float32:
			vals[i] = uint64(math.Float32bits(v))
		default:
			return fmt.Errorf("kernel argument %d is %T", i, a)
		}
		ptrs[i] = unsafe.Pointer(&vals[i])
	}
	grid := (total + launchBlock - 1) / launchBlock
	if grid == 0 {
		return nil
	}
	return d.cu("cuLaunchKernel", d.drv.cuLaunchKernel(f, grid, 1, 1, launchBlock, 1, 1, 0, stream, &ptrs[0], nil))
}
