package cpu

import (
	"fmt"
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

// rowLengths cover the assembly's sixteen-value loop, its eight-value
// step, the scalar tail and every mix of them.
var rowLengths = []int{0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 23, 24, 25, 63, 64, 121}

// rowSets are the ways a channel's rows are laid out for a row length w:
// one row; rows back to back; rows with gaps between them (other
// channels' values), from past the slice's start.
func rowSets(w int) []rows {
	return []rows{
		{first: 0, count: 1, width: w, stride: w},
		{first: 0, count: 4, width: w, stride: w},
		{first: 3, count: 3, width: w, stride: w + 5},
		{first: w + 2, count: 5, width: w, stride: 2*w + 9},
	}
}

// inRows tells whether index i is in one of r's rows.
func inRows(r rows, i int) bool {
	for b := range r.count {
		if at := r.first + b*r.stride; i >= at && i < at+r.width {
			return true
		}
	}
	return false
}

// TestRowSums checks the unrolled sums over a channel's rows against
// one-value-at-a-time sums for lengths around the unrolling's.
func TestRowSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, w := range rowLengths {
		for _, r := range rowSets(w) {
			g, x := randomRow(rng, r.end()+3), randomRow(rng, r.end()+3)
			var sum, sq, gs, gx float64
			for i := range x {
				if !inRows(r, i) {
					continue
				}
				sum += float64(x[i])
				d := float64(x[i]) - 0.25
				sq += d * d
				gs += float64(g[i])
				gx += float64(g[i]) * float64(x[i])
			}
			near := func(what string, got, want float64) {
				if math.Abs(got-want) > 1e-12*max(1, math.Abs(want)) {
					t.Errorf("rows %+v: %s %g, want %g", r, what, got, want)
				}
			}
			near("sum64", sum64(x, r), sum)
			near("squares64", squares64(x, r, 0.25), sq)
			s, d := sumDot64(g, x, r)
			near("sumDot64 sum", s, gs)
			near("sumDot64 dot", d, gx)
		}
	}
}

// TestRowWrites checks the rows batch norm writes (its output, its
// gradient through the ReLU, its input gradient) against the scalar
// loops, and that nothing is written outside the rows, between them or
// past the last: the assembly's bulk and the scalar tail must meet
// exactly, and each row start where the last ended plus the stride.
func TestRowWrites(t *testing.T) {
	if ok, why := rowAssembly(); !ok {
		t.Skip(why + ": the row loops are the scalar ones this test would check them against")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	const guard = 9
	for _, w := range rowLengths {
		for _, r := range rowSets(w) {
			size := r.end() + guard
			x, skip, g, y := randomRow(rng, size), randomRow(rng, size), randomRow(rng, size), randomRow(rng, size)
			buf, want := make([]float32, size), make([]float32, size)
			fill := func() {
				for j := range buf {
					buf[j], want[j] = 7, 7
				}
			}
			check := func(what string, tol float64) {
				t.Helper()
				for j := range buf {
					if !inRows(r, j) && buf[j] != 7 {
						t.Fatalf("rows %+v, %s: wrote %g outside the rows at %d", r, what, buf[j], j)
					}
					if math.Abs(float64(buf[j]-want[j])) > tol*max(1, math.Abs(float64(want[j]))) {
						t.Fatalf("rows %+v, %s: value %d is %g, want %g", r, what, j, buf[j], want[j])
					}
				}
			}
			for _, kind := range []int{affinePlain, affineRelu, affineSkipRelu} {
				fill()
				affineRows(buf[:r.end()], x, skip, r, 1.7, -0.3, kind)
				affineRowsGo(want, x, skip, r, 1.7, -0.3, kind)
				// One rounding apart: the assembly fuses the multiply-add.
				check(fmt.Sprintf("affine kind %d", kind), 1e-6)
			}
			fill()
			gradXRows(buf[:r.end()], g, x, r, 0.8, 0.45, -0.2)
			gradXRowsGo(want, g, x, r, 0.8, 0.45, -0.2)
			check("input gradient", 1e-6)

			fill()
			sum, dot := maskSumDot64(buf[:r.end()], g, y, x, r)
			wantSum, wantDot := maskSumDotRowsGo(want, g, y, x, r)
			check("masked gradient", 0)
			if math.Abs(sum-wantSum) > 1e-12*max(1, math.Abs(wantSum)) || math.Abs(dot-wantDot) > 1e-12*max(1, math.Abs(wantDot)) {
				t.Errorf("rows %+v: masked sums %g and %g, want %g and %g", r, sum, dot, wantSum, wantDot)
			}
		}
	}
}

// TestRowsOutsideSlice: rows that reach past a slice are refused before
// anything is read or written.
func TestRowsOutsideSlice(t *testing.T) {
	r := rows{first: 2, count: 3, width: 8, stride: 10}
	short := make([]float32, r.end()-1)
	full := make([]float32, r.end())
	for what, f := range map[string]func(){
		"sum":      func() { sum64(short, r) },
		"masked":   func() { maskSumDot64(full, full, short, full, r) },
		"affine":   func() { affineRows(full, short, nil, r, 1, 0, affinePlain) },
		"skip":     func() { affineRows(full, full, short, r, 1, 0, affineSkipRelu) },
		"gradient": func() { gradXRows(short, full, full, r, 1, 0, 0) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: rows to %d in a slice of %d were taken", what, r.end(), len(short))
				}
			}()
			f()
		}()
	}
}

// TestReluMask: the gradient passes where y > 0 only, −0 and negatives
// included among the others, in the scalar loop and the assembly.
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
	// The same rows three times over, so that the assembly's loops see
	// every case (and the scalar tail some).
	y3, g3 := append(append(y[:len(y):len(y)], y...), y...), append(append(g[:len(g):len(g)], g...), g...)
	dst = make([]float32, len(g3))
	maskSumDot64(dst, g3, y3, g3, rows{count: 1, width: len(dst), stride: len(dst)})
	for i := range dst {
		if dst[i] != want[i%len(want)] {
			t.Errorf("masked sums: y %g, gradient %g: passed %g, want %g", y3[i], g3[i], dst[i], want[i%len(want)])
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
			dst := make([]float32, geom.pixels(2)*channels)
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
