//go:build !openblas

package nn

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// BLAS names the matrix-multiply library this build uses.
const BLAS = "gonum (pure Go)"

// BLASNote qualifies speed figures of this build.
const BLASNote = "gonum skips the work of zero entries and about half of the activations after a ReLU are zero, so the network can beat the dense peak"

// Gonum multiplies on several goroutines once a product spans 4 or more
// 64×64 blocks; sgemm hands it tiles of at most 64×192 so that each call
// stays on the calling goroutine (self-play runs one evaluator per core)
// and allocates nothing.
const (
	tileRows = 64
	tileCols = 192
)

// sgemm computes C = A×B for row-major A (m×k), B (k×n), C (m×n).
func sgemm(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	impl := gonum.Implementation{}
	for i := 0; i < m; i += tileRows {
		mi := min(tileRows, m-i)
		for j := 0; j < n; j += tileCols {
			nj := min(tileCols, n-j)
			impl.Sgemm(blas.NoTrans, blas.NoTrans, mi, nj, k, 1, a[i*lda:], lda, b[j:], ldb, 0, c[i*ldc+j:], ldc)
		}
	}
}
