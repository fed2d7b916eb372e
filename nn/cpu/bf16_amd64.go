//go:build amd64

package cpu

import "golang.org/x/sys/cpu"

//go:noescape
func bf16Pixels(dst *uint16, src *float32, pix *int32, n int, channels int)

// roundPixelsBF16 rounds the channels of each pixel in pix (ascending
// indices) from src into dst, with AVX-512 BF16's conversion where the CPU
// has it and the channels come in sixteens.
func roundPixelsBF16(dst []uint16, src []float32, pix []int32, channels int) {
	n := len(pix)
	if n == 0 || channels%16 != 0 || !cpu.X86.HasAVX512BF16 || !cpu.X86.HasAVX512F {
		roundPixelsBF16Go(dst, src, pix, channels)
		return
	}
	// The indices ascend: the first and the last bound every pixel.
	if pix[0] < 0 || (int(pix[n-1])+1)*channels > min(len(dst), len(src)) {
		panic("nn: bfloat16 rounding past its buffers")
	}
	bf16Pixels(&dst[0], &src[0], &pix[0], n, channels)
}

//go:noescape
func bf16Grid(dst *uint16, src *float32, planes, h, w, dstPlane, dstRow int)

//go:noescape
func bf16Pairs(dst *uint16, src *float32, pix *int32, n, channels int, lanes *[16]int32)

// hasBF16Stores says whether the CPU converts to bfloat16 sixteen at a
// time and stores words under a mask (AVX-512 BF16 and BW). Its
// conversion rounds as toBF16 does, except that values below float32's
// normal range (about 1.2e-38) become zero, nothing a gradient misses.
func hasBF16Stores() bool {
	return cpu.X86.HasAVX512F && cpu.X86.HasAVX512BF16 && cpu.X86.HasAVX512BW
}

// roundGridBF16 rounds planes of h rows of w values, consecutive in src,
// into dst: row r of plane q from dst[q·dstPlane + r·dstRow].
func roundGridBF16(dst []uint16, src []float32, planes, h, w, dstPlane, dstRow int) {
	if planes <= 0 || h <= 0 || w <= 0 {
		return
	}
	if !hasBF16Stores() {
		roundGridBF16Go(dst, src, planes, h, w, dstPlane, dstRow)
		return
	}
	if len(src) < planes*h*w || (planes-1)*dstPlane+(h-1)*dstRow+w > len(dst) {
		panic("nn: bfloat16 rounding past its buffers")
	}
	bf16Grid(&dst[0], &src[0], planes, h, w, dstPlane, dstRow)
}

// roundPairsBF16 rounds the channels of each pixel i (planes of len(pix)
// in src) into dst in pixel pairs: pixel p's channel o at
// dst[(p>>1)·2·channels + 2·o + p&1]. The indices in pix ascend.
func roundPairsBF16(dst []uint16, src []float32, pix []int32, channels int) {
	n := len(pix)
	if n == 0 || channels == 0 {
		return
	}
	if channels%16 != 0 || !hasBF16Stores() {
		roundPairsBF16Go(dst, src, pix, channels)
		return
	}
	last := int(pix[n-1])
	if pix[0] < 0 || len(src) < channels*n || (last>>1)*2*channels+2*channels > len(dst) {
		panic("nn: bfloat16 rounding past its buffers")
	}
	lanes := gatherLanes(n)
	bf16Pairs(&dst[0], &src[0], &pix[0], n, channels, &lanes)
}

//go:noescape
func bf16FromPlanes(dst *uint16, src *float32, pix *int32, n, channels int, lanes *[16]int32)

// planesToPixelsBF16 rounds one image's planes (channels × len(pix)) into
// the pixels of dst at pix: dst[p·channels + o], a transpose and a
// rounding in one pass. It says false, writing nothing, where the CPU
// lacks the instructions or the channels do not come in sixteens; the
// caller moves the pixels and rounds them apart then. The indices in pix
// ascend.
func planesToPixelsBF16(dst []uint16, src []float32, pix []int32, channels int) bool {
	n := len(pix)
	if n == 0 || channels%16 != 0 || !hasBF16Stores() {
		return false
	}
	if pix[0] < 0 || len(src) < channels*n || (int(pix[n-1])+1)*channels > len(dst) {
		panic("nn: bfloat16 rounding past its buffers")
	}
	lanes := gatherLanes(n)
	bf16FromPlanes(&dst[0], &src[0], &pix[0], n, channels, &lanes)
	return true
}

// gatherLanes is the offsets of 16 channels' planes of n values, for the
// gathers that read a pixel's channels.
func gatherLanes(n int) [16]int32 {
	var lanes [16]int32
	for o := range lanes {
		lanes[o] = int32(o * n)
	}
	return lanes
}
