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
