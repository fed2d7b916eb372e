//go:build amd64

package cpu

import "golang.org/x/sys/cpu"

//go:noescape
func rangePixelsAVX512(src *float32, pix *int32, n int, channels int) (lo, hi float32)

//go:noescape
func quantPixelsAVX512(dst *uint8, src *float32, pix *int32, n int, channels int, inv float32, zp int32)

//go:noescape
func rangePixelsAVX2(src *float32, pix *int32, n int, channels int) (lo, hi float32)

//go:noescape
func quantPixelsAVX2(dst *uint8, src *float32, pix *int32, n int, channels int, inv float32, zp int32)

// pixelLoops is which assembly the pixel loops of int8 inference run in.
type pixelLoops int

const (
	pixelsGo pixelLoops = iota
	pixelsAVX2
	pixelsAVX512
)

// pixelAsm says which assembly can run the pixel loops of int8 inference
// over n pixels of channels, the largest index last, whose values lie in
// src (and bytes in dst, if not nil): AVX-512 over channels in sixteens,
// AVX2 over channels in eights, else none.
func pixelAsm(dst []uint8, src []float32, pix []int32, channels int) pixelLoops {
	n := len(pix)
	loops := pixelsGo
	switch {
	case n == 0:
	case channels%16 == 0 && cpu.X86.HasAVX512F:
		loops = pixelsAVX512
	case channels%8 == 0 && cpu.X86.HasAVX2:
		loops = pixelsAVX2
	}
	if loops == pixelsGo {
		return loops
	}
	// The indices ascend: the first and the last bound every pixel.
	end := (int(pix[n-1]) + 1) * channels
	if pix[0] < 0 || end > len(src) || (dst != nil && end > len(dst)) {
		panic("nn: int8 quantization past its buffers")
	}
	return loops
}

// rangePixels is the least and the largest of the channels of the
// pixels in pix, and 0.
func rangePixels(src []float32, pix []int32, channels int) (lo, hi float32) {
	switch pixelAsm(nil, src, pix, channels) {
	case pixelsAVX512:
		return rangePixelsAVX512(&src[0], &pix[0], len(pix), channels)
	case pixelsAVX2:
		return rangePixelsAVX2(&src[0], &pix[0], len(pix), channels)
	}
	return rangePixelsGo(src, pix, channels)
}

// quantPixels writes the channels of the pixels in pix × inv, rounded to
// nearest even, + zp, held to 0..255, into dst.
func quantPixels(dst []uint8, src []float32, pix []int32, channels int, inv float32, zp int32) {
	switch pixelAsm(dst, src, pix, channels) {
	case pixelsAVX512:
		quantPixelsAVX512(&dst[0], &src[0], &pix[0], len(pix), channels, inv, zp)
	case pixelsAVX2:
		quantPixelsAVX2(&dst[0], &src[0], &pix[0], len(pix), channels, inv, zp)
	default:
		quantPixelsGo(dst, src, pix, channels, inv, zp)
	}
}
