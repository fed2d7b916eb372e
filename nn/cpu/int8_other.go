//go:build !amd64

package cpu

func rangePixels(src []float32, pix []int32, channels int) (lo, hi float32) {
	return rangePixelsGo(src, pix, channels)
}

func quantPixels(dst []uint8, src []float32, pix []int32, channels int, inv float32, zp int32) {
	quantPixelsGo(dst, src, pix, channels, inv, zp)
}
