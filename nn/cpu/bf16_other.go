//go:build !amd64

package cpu

// roundPixelsBF16 rounds the channels of each pixel in pix from src into
// dst.
func roundPixelsBF16(dst []uint16, src []float32, pix []int32, channels int) {
	roundPixelsBF16Go(dst, src, pix, channels)
}
