//go:build !amd64

package cpu

// Batch norm's row loops: the scalar ones of rowsums.go.

func sum64(v []float32, r rows) float64                   { return sumRowsGo(v, r) }
func squares64(v []float32, r rows, mean float64) float64 { return squareRowsGo(v, r, mean) }
func sumDot64(g, x []float32, r rows) (sum, dot float64)  { return sumDotRowsGo(g, x, r) }

func maskSumDot64(dst, g, y, x []float32, r rows) (float64, float64) {
	return maskSumDotRowsGo(dst, g, y, x, r)
}

func affineRows(dst, x, skip []float32, r rows, scale, shift float32, kind int) {
	affineRowsGo(dst, x, skip, r, scale, shift, kind)
}

func gradXRows(dst, g, x []float32, r rows, s, a, k float32) { gradXRowsGo(dst, g, x, r, s, a, k) }

func toPixels(dst, src []float32, pix []int32, channels int) { toPixelsGo(dst, src, pix, channels, 0) }

func fromPixels(dst, src []float32, channels, cells int) { fromPixelsGo(dst, src, channels, cells, 0) }
