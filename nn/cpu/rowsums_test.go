package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

func randomRow(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// TestRowSums checks the unrolled sums against one-value-at-a-time sums
// for lengths around the unrolling's.
func TestRowSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 3, 4, 5, 8, 63, 64, 121} {
		g, x := randomRow(rng, n), randomRow(rng, n+3)
		var sum, sq, gs, gx float64
		for i := range n {
			sum += float64(x[i])
			d := float64(x[i]) - 0.25
			sq += d * d
			gs += float64(g[i])
			gx += float64(g[i]) * float64(x[i])
		}
		near := func(what string, got, want float64) {
			if math.Abs(got-want) > 1e-12*max(1, math.Abs(want)) {
				t.Errorf("n %d: %s %g, want %g", n, what, got, want)
			}
		}
		near("sum64", sum64(x[:n]), sum)
		near("squares64", squares64(x[:n], 0.25), sq)
		s, d := sumDot64(g, x)
		near("sumDot64 sum", s, gs)
		near("sumDot64 dot", d, gx)
	}
}

// TestReluMask: the gradient passes where y > 0 only, −0 and negatives
// included among the others.
func TestReluMask(t *testing.T) {
	y := []float32{0, float32(math.Copysign(0, -1)), 1e-45, -1e-45, 2.5, -3, math.MaxFloat32, float32(math.Inf(1)), 0.5}
	g := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}
	want := []float32{0, 0, 3, 0, 5, 0, 7, 8, 9}
	dst := make([]float32, len(g))
	reluMask(dst, g, y)
	for i := range want {
		if dst[i] != want[i] {
			t.Errorf("y %g, gradient %g: passed %g, want %g", y[i], g[i], dst[i], want[i])
		}
	}
}

// TestPixels moves images of 3, 8 and 19 channels into padded pixels and
// compact pixels back into planes, against the index formulas.
func TestPixels(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	sh := shape{height: 5, width: 7}
	geom := newDirectGeom(archAVX512, sh, 2)
	cells := sh.cells()
	for _, channels := range []int{3, 8, 19} {
		for b := range 2 {
			pix := geom.pix[b*cells : (b+1)*cells]
			src := randomRow(rng, channels*cells)
			dst := make([]float32, 2*geom.padCells*channels)
			toPixels(dst, src, pix, channels)
			written := 0
			for _, v := range dst {
				if v != 0 {
					written++
				}
			}
			if written != channels*cells {
				t.Fatalf("%d channels, image %d: %d values written, want %d (the border stays zero)", channels, b, written, channels*cells)
			}
			for c := range channels {
				for i, q := range pix {
					at := int(q)*channels + c
					if dst[at] != src[c*cells+i] {
						t.Fatalf("%d channels, image %d: channel %d of cell %d went wrong", channels, b, c, i)
					}
				}
			}
			rows := randomRow(rng, cells*channels)
			planes := make([]float32, channels*cells)
			fromPixels(planes, rows, channels, cells)
			for c := range channels {
				for i := range cells {
					if planes[c*cells+i] != rows[i*channels+c] {
						t.Fatalf("%d channels: plane %d, cell %d is %g, want %g", channels, c, i, planes[c*cells+i], rows[i*channels+c])
					}
				}
			}
		}
	}
}
