//go:build !(((linux || freebsd || netbsd) && !android) || windows)

package cpu

import "errors"

const openBLASName = "libopenblas"

// openBLAS is not loaded on this system: the network runs on gonum.
type openBLAS struct{}

func loadOpenBLAS(string) (*openBLAS, error) {
	return nil, errors.New("OpenBLAS is loaded only on Linux, the BSDs and Windows")
}

func (o *openBLAS) describe() string { return "" }

func (o *openBLAS) sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gonumGemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}
