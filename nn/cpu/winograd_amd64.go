//go:build amd64

package cpu

import "golang.org/x/sys/cpu"

// The transforms of winograd_amd64.s, 8 channels at a time in AVX2's
// registers (winogradInputGo and winogradOutputGo say what they compute;
// offsets here are in bytes, scratch holds 36 vectors of 8).

//go:noescape
func winogradInputAVX2(dst, src, scratch *float32, srcRow, dstXi, channels int)

//go:noescape
func winogradGradAVX2(dst, src, scratch *float32, srcRow, dstXi, channels int)

//go:noescape
func winogradOutputAVX2(dst *float32, offs *int64, src, scratch *float32, srcXi, channels int, skip *float32, relu int)

//go:noescape
func transpose8AVX2(dst, src *float32, srcStride, dstStride, blockRows, blockCols int)

// winogradKernels says whether the CPU runs the transforms' kernels.
func winogradKernels() bool { return cpu.X86.HasAVX2 && cpu.X86.HasFMA }

// winogradInput transforms one tile's inputs (winogradInputGo); channels
// is a multiple of 8.
func winogradInput(dst, src, scratch []float32, srcRow, dstXi, channels int) {
	if !winogradKernels() {
		winogradInputGo(dst, src, srcRow, dstXi, channels)
		return
	}
	if 35*dstXi+channels > len(dst) || 5*srcRow+6*channels > len(src) || len(scratch) < 36*8 || channels%8 != 0 {
		panic("nn: Winograd input transform past its buffers")
	}
	winogradInputAVX2(&dst[0], &src[0], &scratch[0], srcRow*4, dstXi*4, channels)
}

// winogradOutput transforms one tile's products into its outputs
// (winogradOutputGo); channels is a multiple of 8.
func winogradOutput(dst []float32, offs []int64, src, scratch []float32, srcXi, channels int, skip []float32, relu bool) {
	if !winogradKernels() {
		winogradOutputGo(dst, offs, src, srcXi, channels, skip, relu)
		return
	}
	top := int64(-1)
	for _, o := range offs[:16] {
		top = max(top, o)
	}
	if int(top)+channels > len(dst) || (skip != nil && int(top)+channels > len(skip)) || 35*srcXi+channels > len(src) || len(scratch) < 36*8 || channels%8 != 0 {
		panic("nn: Winograd output transform past its buffers")
	}
	var sp *float32
	if skip != nil {
		sp = &skip[0]
	}
	r := 0
	if relu {
		r = 1
	}
	winogradOutputAVX2(&dst[0], &offs[0], &src[0], &scratch[0], srcXi*4, channels, sp, r)
}

// winogradGrad transforms one tile's output gradients (winogradGradGo);
// channels is a multiple of 8.
func winogradGrad(dst, src, scratch []float32, srcRow, dstXi, channels int) {
	if !winogradKernels() {
		winogradGradGo(dst, src, srcRow, dstXi, channels)
		return
	}
	if 35*dstXi+channels > len(dst) || 3*srcRow+4*channels > len(src) || len(scratch) < 36*8 || channels%8 != 0 {
		panic("nn: Winograd gradient transform past its buffers")
	}
	winogradGradAVX2(&dst[0], &src[0], &scratch[0], srcRow*4, dstXi*4, channels)
}

// transposeBlocks writes the whole 8×8 blocks of src (rows, cols) to dst
// as (cols, rows) and returns how many rows and columns they cover (none
// without AVX2).
func transposeBlocks(dst, src []float32, rows, cols int) (r8, c8 int) {
	r8, c8 = rows&^7, cols&^7
	if !winogradKernels() || r8 == 0 || c8 == 0 {
		return 0, 0
	}
	if rows*cols > min(len(src), len(dst)) {
		panic("nn: transpose past its buffers")
	}
	transpose8AVX2(&dst[0], &src[0], cols*4, rows*4, r8/8, c8/8)
	return r8, c8
}
