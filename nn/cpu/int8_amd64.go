//go:build amd64

package cpu

import "golang.org/x/sys/cpu"

//go:noescape
func rangePixelsAVX512(src *float32, pix *int32, n int, channels int) (lo, hi float32)

//go:noescape
func quantPixelsAVX512(dst *uint8, src *float32, pix *int32, n int, channels int, inv float32, zp int32)

// pixelsAVX512 says whether the pixel loops of int8 inference can run in
// AVX-512 over n pixels of channels in sixteens, the largest index last,
// whose values lie in src (and bytes in dst, if not nil).
func pixelsAVX512(dst []uint8, src []float32, pix []int32, channels int) bool {
	n := len(pix)
	if n == 0 || channels%16 != 0 || !cpu.X86.HasAVX512F {
		return false
	}
	// The indices ascend: the first and the last bound every pixel.
	end := (int(pix[n-1]) + 1) * channels
	if pix[0] < 0 || end > len(src) || (dst != nil && end > len(dst)) {
		panic("nn: int8 quantization past its buffers")
	}
	return true
}

// rangePixels is the least and the largest of the channels of the
// pixels in pix, and 0.
func rangePixels(src []float32, pix []int32, channels int) (lo, hi float32) {
	if !pixelsAVX512(nil, src, pix, channels) {
		return rangePixelsGo(src, pix, channels)
	}
	return rangePixelsAVX512(&src[0], &pix[0], len(pix), channels)
}

// quantPixels writes the channels of the pixels in pix × inv, rounded to
// nearest even, + zp, held to 0..255, into dst.
func quantPixels(dst []uint8, src []float32, pix []int32, channels int, inv float32, zp int32) {
	if !pixelsAVX512(dst, src, pix, channels) {
		quantPixelsGo(dst, src, pix, channels, inv, zp)
		return
	}
	quantPixelsAVX512(&dst[0], &src[0], &pix[0], len(pix), channels, inv, zp)
}
