//go:build !amd64

package cpu

// Batch norm's row loops: the scalar ones of rowsums.go.

func sum64(v []float32, r rows, out []float64)                 { sumRowsGo(v, r, out) }
func squares64(v []float32, r rows, mean, out []float64)       { squareRowsGo(v, r, mean, out) }
func sumDot64(g, x []float32, r rows, sum, dot []float64)      { sumDotRowsGo(g, x, r, sum, dot) }
func gradXRows(dst, g, x []float32, r rows, s, a, k []float32) { gradXRowsGo(dst, g, x, r, s, a, k) }

func maskSumDot64(dst, g, y, x []float32, r rows, sum, dot []float64) {
	maskSumDotRowsGo(dst, g, y, x, r, sum, dot)
}

func affineRows(dst, x, skip []float32, r rows, scale, shift []float32, kind int) {
	affineRowsGo(dst, x, skip, r, scale, shift, kind)
}

func toPixels(dst, src []float32, pix []int32, channels int) { toPixelsGo(dst, src, pix, channels, 0) }

func fromPixels(dst, src []float32, channels, cells int) { fromPixelsGo(dst, src, channels, cells, 0) }
