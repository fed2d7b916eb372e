package cpu

import (
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// naiveGemm is C = alpha·op(A)×op(B) + beta·C in float64.
func naiveGemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			sum := 0.0
			for p := 0; p < k; p++ {
				ai, bi := i*lda+p, p*ldb+j
				if transA {
					ai = p*lda + i
				}
				if transB {
					bi = j*ldb + p
				}
				av, bv := a[ai], b[bi]
				sum += float64(av) * float64(bv)
			}
			c[i*ldc+j] = float32(float64(alpha)*sum + float64(beta)*float64(c[i*ldc+j]))
		}
	}
}

func TestGemmTransposes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	random := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(rng.NormFloat64())
		}
		return s
	}
	impls := map[string]func(bool, bool, int, int, int, float32, []float32, int, []float32, int, float32, []float32, int){
		BLASInfo(): gemm,
		"gonum":    gonumGemm,
	}
	// Sizes past gonum's tiles, with padded leading dimensions.
	for _, sz := range [][3]int{{1, 1, 1}, {3, 5, 7}, {70, 200, 33}, {130, 9, 260}} {
		m, n, k := sz[0], sz[1], sz[2]
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				rowsA, colsA := m, k
				if tA {
					rowsA, colsA = k, m
				}
				rowsB, colsB := k, n
				if tB {
					rowsB, colsB = n, k
				}
				lda, ldb, ldc := colsA+2, colsB+1, n+3
				a, b, c0 := random(rowsA*lda), random(rowsB*ldb), random(m*ldc)
				want := append([]float32(nil), c0...)
				naiveGemm(tA, tB, m, n, k, 0.5, a, lda, b, ldb, 2, want, ldc)
				for name, f := range impls {
					got := append([]float32(nil), c0...)
					f(tA, tB, m, n, k, 0.5, a, lda, b, ldb, 2, got, ldc)
					for i := range got {
						if d := math.Abs(float64(got[i] - want[i])); d > 1e-3*(1+math.Abs(float64(want[i]))) {
							t.Fatalf("%s, %d×%d×%d, transA %v, transB %v: C[%d] = %g, want %g", name, m, n, k, tA, tB, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

func TestGemmAllocatesNothing(t *testing.T) {
	skipAllocTestUnderRace(t)
	a, b, c := make([]float32, 64*576), make([]float32, 576*64), make([]float32, 64*64)
	allocs := testing.AllocsPerRun(20, func() {
		gemm(false, true, 64, 64, 576, 1, a, 576, b, 576, 1, c, 64)
	})
	if allocs != 0 {
		t.Errorf("gemm allocates %v times per call on %s", allocs, BLASInfo())
	}
}

// TestBLASChoice checks the library FLIPZERO_BLAS asks for is the one in
// use: CI runs the package both ways.
func TestBLASChoice(t *testing.T) {
	info := BLASInfo()
	t.Logf("BLAS: %s", info)
	switch os.Getenv("FLIPZERO_BLAS") {
	case "gonum":
		if !strings.HasPrefix(info, "gonum") {
			t.Errorf("FLIPZERO_BLAS=gonum, BLASInfo() = %q", info)
		}
	case "openblas":
		if !strings.HasPrefix(info, "OpenBLAS") {
			t.Errorf("FLIPZERO_BLAS=openblas, BLASInfo() = %q", info)
		}
		if strings.Contains(info, "OpenBLAS took") {
			t.Errorf("OpenBLAS ignored flipzero's kernel choice: %q", info)
		}
	}
}

func TestOpenBLASMissing(t *testing.T) {
	_, err := loadOpenBLAS("libopenblas-flipzero-missing.so.0")
	if err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("loading a missing library: error %v, want one saying it is not found", err)
	}
}

// skipAllocTestUnderRace skips a test of allocations where they are not
// the code's: purego keeps its call blocks in a sync.Pool, which drops
// entries at random under the race detector.
func skipAllocTestUnderRace(t *testing.T) {
	if raceEnabled && theBLAS().open != nil {
		t.Skip("purego's sync.Pool allocates at random under the race detector")
	}
}
