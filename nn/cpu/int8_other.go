//go:build !amd64

package cpu

func maxPixels(src []float32, pix []int32, channels int) float32 {
	return maxPixelsGo(src, pix, channels)
}

func quantPixels(dst []uint8, src []float32, pix []int32, channels int, inv float32) {
	quantPixelsGo(dst, src, pix, channels, inv)
}
