package cpu

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	G "gorgonia.org/gorgonia"
)

// The matrix-multiply library is chosen once per process, on first use:
// OpenBLAS (libopenblas.so.0, or libopenblas.dll on Windows, loaded at
// run time without cgo) where it is installed, gonum's pure-Go BLAS
// otherwise. FLIPZERO_BLAS=gonum forces the pure-Go library;
// FLIPZERO_BLAS=openblas makes a missing OpenBLAS an explained fallback
// rather than a silent one.
//
// The choice is process-wide state because the library is: a shared
// library loads once, OpenBLAS reads its kernel choice from the
// environment in its constructor, and Gorgonia's BLAS is a package
// variable of Gorgonia's. Loading lazily (not in init) keeps programs
// that import nn but never multiply from loading a C library.
var theBLAS = sync.OnceValue(chooseBLAS)

// blasLib is the chosen library.
type blasLib struct {
	// info says which library runs and why, for people.
	info string
	// open is non-nil when OpenBLAS runs.
	open *openBLAS
}

func chooseBLAS() *blasLib {
	lib := &blasLib{}
	switch want := strings.ToLower(strings.TrimSpace(os.Getenv("FLIPZERO_BLAS"))); want {
	case "gonum":
		lib.info = "gonum (pure Go): FLIPZERO_BLAS=gonum"
	case "", "auto", "openblas":
		o, err := loadOpenBLAS(openBLASName)
		if err != nil {
			lib.info = "gonum (pure Go): " + err.Error()
			if want == "openblas" {
				lib.info += " (FLIPZERO_BLAS=openblas)"
			}
			break
		}
		lib.open = o
		lib.info = o.describe()
		// Gorgonia (and its tensor package) multiply through this
		// interface; gonum's implementation serves every routine the
		// network does not spend its time in.
		G.Use(gorgoniaBLAS{o: o})
	default:
		lib.info = fmt.Sprintf("gonum (pure Go): FLIPZERO_BLAS=%q, want gonum, openblas or auto", want)
	}
	return lib
}

// BLASInfo names the matrix-multiply library in use and why it was
// chosen, e.g. "OpenBLAS 0.3.21 (Haswell kernels, chosen by flipzero:
// AVX2+FMA)" or "gonum (pure Go): libopenblas.so.0 not found".
func BLASInfo() string { return theBLAS().info }

// SpeedNote qualifies inference figures compared with the matrix
// multiply's peak, or is empty.
func SpeedNote() string {
	if _, ok := directDefault(); ok {
		return "the direct convolution multiplies each input where it lies, with nothing gathered or packed first, so it can beat the matrix multiply's peak"
	}
	if theBLAS().open != nil {
		return ""
	}
	return "gonum skips the work of zero entries and about half of the activations after a ReLU are zero, so the network can beat the dense peak"
}

// gorgoniaBLAS is what Gorgonia multiplies with when OpenBLAS is loaded:
// gonum's routines with the float32 matrix multiply replaced.
type gorgoniaBLAS struct {
	gonum.Implementation
	o *openBLAS
}

func (g gorgoniaBLAS) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if tA == blas.ConjTrans {
		tA = blas.Trans
	}
	if tB == blas.ConjTrans {
		tB = blas.Trans
	}
	g.o.sgemm(tA == blas.Trans, tB == blas.Trans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// sgemm computes C = A×B for row-major A (m×k), B (k×n), C (m×n).
func sgemm(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	gemm(false, false, m, n, k, 1, a, lda, b, ldb, 0, c, ldc)
}

// gemm computes C = alpha·op(A)×op(B) + beta·C for row-major matrices,
// op(X) being X or, when its flag is set, Xᵀ; op(A) is m×k and op(B) k×n.
// It runs on the calling goroutine.
func gemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if o := theBLAS().open; o != nil {
		o.sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	gonumGemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Gonum multiplies on several goroutines once a product spans 4 or more
// 64×64 blocks; gonumGemm hands it tiles of at most 64×192 so that each
// call stays on the calling goroutine (self-play runs one evaluator per
// core, training splits its work itself) and allocates nothing.
const (
	tileRows = 64
	tileCols = 192
)

func gonumGemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	impl := gonum.Implementation{}
	tA, tB := blas.NoTrans, blas.NoTrans
	if transA {
		tA = blas.Trans
	}
	if transB {
		tB = blas.Trans
	}
	for i := 0; i < m; i += tileRows {
		mi := min(tileRows, m-i)
		// Row i of op(A) starts at a[i·lda], or at column i of stored Aᵀ.
		var ai []float32
		if transA {
			ai = a[i:]
		} else {
			ai = a[i*lda:]
		}
		for j := 0; j < n; j += tileCols {
			nj := min(tileCols, n-j)
			var bj []float32
			if transB {
				bj = b[j*ldb:]
			} else {
				bj = b[j:]
			}
			impl.Sgemm(tA, tB, mi, nj, k, alpha, ai, lda, bj, ldb, beta, c[i*ldc+j:], ldc)
		}
	}
}
