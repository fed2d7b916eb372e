//go:build !amd64

package cpu

// The global pooling's loops: the scalar ones of poolrows.go.

func poolRows(act []float32, pix []int32, n, channels int, sum, most []float32) {
	poolRowsGo(act, pix, n, channels, sum, most)
}

func addRows(act []float32, pix []int32, channels int, bias []float32) {
	addRowsGo(act, pix, channels, bias)
}
