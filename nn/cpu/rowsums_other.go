//go:build !amd64

package cpu

// Batch norm's row loops: the scalar ones of rowsums.go.

func sum64(v []float32) float64                              { return sum64Go(v) }
func squares64(v []float32, mean float64) float64            { return squares64Go(v, mean) }
func sumDot64(g, x []float32) (sum, dot float64)             { return sumDot64Go(g, x) }
func maskSumDot64(dst, g, y, x []float32) (float64, float64) { return maskSumDot64Go(dst, g, y, x) }

func affineRow(dst, x, skip []float32, scale, shift float32, kind int) {
	affineRowGo(dst, x, skip, scale, shift, kind)
}

func gradXRow(dst, g, x []float32, s, a, k float32) { gradXRowGo(dst, g, x, s, a, k) }

func toPixels(dst, src []float32, pix []int32, channels int) { toPixelsGo(dst, src, pix, channels, 0) }

func fromPixels(dst, src []float32, channels, cells int) { fromPixelsGo(dst, src, channels, cells, 0) }
