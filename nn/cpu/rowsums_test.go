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

// inRows tells which of r's rows index i is in, or −1.
func inRows(r rows, i int) int {
	for b := range r.count {
		if at := r.first + b*r.stride; i >= at && i < at+r.width {
			return b
		}
	}
	return -1
}

// perRowValues returns n values, a different one for each row.
func perRowValues[T float32 | float64](n int, first, step T) []T {
	v := make([]T, n)
	for i := range v {
		v[i] = first + T(i)*step
	}
	return v
}

// TestRowSums checks the unrolled sums over each row against
// one-value-at-a-time sums for lengths around the unrolling's, each row's
// added to what its float64 held.
func TestRowSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, w := range rowLengths {
		for _, r := range rowSets(w) {
			g, x := randomRow(rng, r.end()+3), randomRow(rng, r.end()+3)
			mean := perRowValues(r.count, 0.25, -0.5)
			held := perRowValues(r.count, 10.0, 3)
			sum, sq, gs, gx := append([]float64(nil), held...), append([]float64(nil), held...), append([]float64(nil), held...), append([]float64(nil), held...)
			for i := range x {
				b := inRows(r, i)
				if b < 0 {
					continue
				}
				sum[b] += float64(x[i])
				d := float64(x[i]) - mean[b]
				sq[b] += d * d
				gs[b] += float64(g[i])
				gx[b] += float64(g[i]) * float64(x[i])
			}
			near := func(what string, got, want []float64) {
				t.Helper()
				for b := range want {
					if math.Abs(got[b]-want[b]) > 1e-12*max(1, math.Abs(want[b])) {
						t.Errorf("rows %+v: %s of row %d %g, want %g", r, what, b, got[b], want[b])
					}
				}
			}
			out, dot := append([]float64(nil), held...), append([]float64(nil), held...)
			sum64(x, r, out)
			near("sum64", out, sum)
			copy(out, held)
			squares64(x, r, mean, out)
			near("squares64", out, sq)
			copy(out, held)
			sumDot64(g, x, r, out, dot)
			near("sumDot64 sum", out, gs)
			near("sumDot64 dot", dot, gx)
		}
	}
}

// TestRowWrites checks the rows batch norm writes (its output, its
// gradient through the ReLU, its input gradient), each row with its own
// parameters, against the scalar loops, and that nothing is written
// outside the rows, between them or past the last: the assembly's bulk
// and the scalar tail must meet exactly, and each row start where the
// last ended plus the stride.
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
			scale, shift := perRowValues[float32](r.count, 1.7, 0.3), perRowValues[float32](r.count, -0.3, 0.2)
			fill := func() {
				for j := range buf {
					buf[j], want[j] = 7, 7
				}
			}
			check := func(what string, tol float64) {
				t.Helper()
				for j := range buf {
					if inRows(r, j) < 0 && buf[j] != 7 {
						t.Fatalf("rows %+v, %s: wrote %g outside the rows at %d", r, what, buf[j], j)
					}
					if math.Abs(float64(buf[j]-want[j])) > tol*max(1, math.Abs(float64(want[j]))) {
						t.Fatalf("rows %+v, %s: value %d is %g, want %g", r, what, j, buf[j], want[j])
					}
				}
			}
			for _, kind := range []int{affinePlain, affineRelu, affineSkipRelu} {
				fill()
				affineRows(buf[:r.end()], x, skip, r, scale, shift, kind)
				affineRowsGo(want, x, skip, r, scale, shift, kind)
				// One rounding apart: the assembly fuses the multiply-add.
				check(fmt.Sprintf("affine kind %d", kind), 1e-6)
			}
			fill()
			gs, ga, gk := perRowValues[float32](r.count, 0.8, 0.1), perRowValues[float32](r.count, 0.45, -0.2), perRowValues[float32](r.count, -0.2, 0.3)
			gradXRows(buf[:r.end()], g, x, r, gs, ga, gk)
			gradXRowsGo(want, g, x, r, gs, ga, gk)
			check("input gradient", 1e-6)

			fill()
			sum, dot := perRowValues(r.count, 1.0, 1), perRowValues(r.count, -1.0, 2)
			wantSum, wantDot := append([]float64(nil), sum...), append([]float64(nil), dot...)
			maskSumDot64(buf[:r.end()], g, y, x, r, sum, dot)
			maskSumDotRowsGo(want, g, y, x, r, wantSum, wantDot)
			check("masked gradient", 0)
			for b := range sum {
				if math.Abs(sum[b]-wantSum[b]) > 1e-12*max(1, math.Abs(wantSum[b])) || math.Abs(dot[b]-wantDot[b]) > 1e-12*max(1, math.Abs(wantDot[b])) {
					t.Errorf("rows %+v: row %d's masked sums %g and %g, want %g and %g", r, b, sum[b], dot[b], wantSum[b], wantDot[b])
				}
			}
		}
	}
}

// TestRowsOutsideSlice: rows that reach past a slice, or rows without a
// place for each one's own values, are refused before anything is read
// or written.
func TestRowsOutsideSlice(t *testing.T) {
	r := rows{first: 2, count: 3, width: 8, stride: 10}
	short, full := make([]float32, r.end()-1), make([]float32, r.end())
	each, fewer := make([]float32, 3), make([]float32, 2)
	sums, fewerSums := make([]float64, 3), make([]float64, 2)
	for what, f := range map[string]func(){
		"sum":            func() { sum64(short, r, sums) },
		"sums":           func() { sum64(full, r, fewerSums) },
		"means":          func() { squares64(full, r, fewerSums, sums) },
		"masked":         func() { maskSumDot64(full, full, short, full, r, sums, sums) },
		"masked sums":    func() { maskSumDot64(full, full, full, full, r, sums, fewerSums) },
		"affine":         func() { affineRows(full, short, nil, r, each, each, affinePlain) },
		"affine shifts":  func() { affineRows(full, full, nil, r, each, fewer, affinePlain) },
		"skip":           func() { affineRows(full, full, short, r, each, each, affineSkipRelu) },
		"gradient":       func() { gradXRows(short, full, full, r, each, each, each) },
		"gradient terms": func() { gradXRows(full, full, full, r, each, each, fewer) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: taken", what)
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
	maskSumDot64(dst, g3, y3, g3, rows{count: 1, width: len(dst), stride: len(dst)}, make([]float64, 1), make([]float64, 1))
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
