//go:build openblas

package nn

/*
#cgo LDFLAGS: -lopenblas
void openblas_set_num_threads(int);
*/
import "C"

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/netlib/blas/netlib"
	G "gorgonia.org/gorgonia"
)

// BLAS names the matrix-multiply library this build uses.
const BLAS = "OpenBLAS (1 thread per call)"

// BLASNote qualifies speed figures of this build.
const BLASNote = ""

func init() {
	// Self-play runs one evaluator per core; OpenBLAS's own threads would
	// fight them for the same cores.
	C.openblas_set_num_threads(1)
	G.Use(netlib.Implementation{})
}

// sgemm computes C = A×B for row-major A (m×k), B (k×n), C (m×n).
func sgemm(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	netlib.Implementation{}.Sgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, lda, b, ldb, 0, c, ldc)
}
