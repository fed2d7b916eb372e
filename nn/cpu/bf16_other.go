//go:build !amd64

package cpu

// roundPixelsBF16 rounds the channels of each pixel in pix from src into
// dst.
func roundPixelsBF16(dst []uint16, src []float32, pix []int32, channels int) {
	roundPixelsBF16Go(dst, src, pix, channels)
}

// roundGridBF16 rounds planes of h rows of w values, consecutive in src,
// into dst: row r of plane q from dst[q·dstPlane + r·dstRow].
func roundGridBF16(dst []uint16, src []float32, planes, h, w, dstPlane, dstRow int) {
	roundGridBF16Go(dst, src, planes, h, w, dstPlane, dstRow)
}

// roundPairsBF16 rounds the channels of each pixel i (planes of len(pix)
// in src) into dst in pixel pairs: pixel p's channel o at
// dst[(p>>1)·2·channels + 2·o + p&1].
func roundPairsBF16(dst []uint16, src []float32, pix []int32, channels int) {
	roundPairsBF16Go(dst, src, pix, channels)
}

// planesToPixelsBF16 says false: the caller moves the pixels and rounds
// them apart.
func planesToPixelsBF16([]uint16, []float32, []int32, int) bool { return false }
