package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// The transforms as matrices (Lavin and Gray's F(4×4, 3×3)): the
// factored code must compute exactly these products.
var (
	testBT = [6][6]float64{
		{4, 0, -5, 0, 1, 0},
		{0, -4, -4, 1, 1, 0},
		{0, 4, -4, -1, 1, 0},
		{0, -2, -1, 2, 1, 0},
		{0, 2, -1, -2, 1, 0},
		{0, 4, 0, -5, 0, 1},
	}
	testAT = [4][6]float64{
		{1, 1, 1, 1, 1, 0},
		{0, 1, -1, 2, -2, 0},
		{0, 1, 1, 4, 4, 0},
		{0, 1, -1, 8, -8, 1},
	}
)

// TestWinogradTransforms: the input and output transforms, in Go and
// where the CPU runs them in assembly, are B^T d B and A^T m A computed
// from the matrices in float64, for each of several channel blocks, at
// the strides a chunk lays them out with; an output whose offset is −1
// is not stored.
func TestWinogradTransforms(t *testing.T) {
	const channels, srcRow, dstXi = 24, 7 * 24, 5 * 24
	rng := rand.New(rand.NewPCG(3, 4))
	src := randomRow(rng, 5*srcRow+6*channels)
	want := make([]float64, 36*dstXi)
	for c := range channels {
		var d, bd [6][6]float64
		for i := range 6 {
			for j := range 6 {
				d[i][j] = float64(src[i*srcRow+j*channels+c])
			}
		}
		for i := range 6 {
			for j := range 6 {
				for k := range 6 {
					bd[i][j] += testBT[i][k] * d[k][j]
				}
			}
		}
		for i := range 6 {
			for j := range 6 {
				s := 0.0
				for k := range 6 {
					s += bd[i][k] * testBT[j][k]
				}
				want[(i*6+j)*dstXi+c] = s
			}
		}
	}
	scratch := make([]float32, 36*8)
	for _, impl := range []struct {
		name string
		in   func(dst, src []float32)
	}{
		{"go", func(dst, src []float32) { winogradInputGo(dst, src, srcRow, dstXi, channels) }},
		{"dispatched", func(dst, src []float32) { winogradInput(dst, src, scratch, srcRow, dstXi, channels) }},
	} {
		got := make([]float32, 36*dstXi)
		impl.in(got, src)
		for xi := range 36 {
			for c := range channels {
				i := xi*dstXi + c
				if d := math.Abs(float64(got[i]) - want[i]); !(d <= 1e-5*(1+math.Abs(want[i]))) {
					t.Fatalf("%s input transform: value %d, channel %d: %g, want %g", impl.name, xi, c, got[i], want[i])
				}
			}
		}
	}

	const srcXi, cells = 3 * 24, 20
	m := randomRow(rng, 35*srcXi+channels)
	offs := make([]int64, 16)
	for k := range offs {
		offs[k] = int64(k * channels)
		if k%5 == 3 {
			offs[k] = -1
		}
	}
	wantOut := make([]float64, cells*channels)
	for c := range channels {
		var am [4][6]float64
		for r := range 4 {
			for j := range 6 {
				for i := range 6 {
					am[r][j] += testAT[r][i] * float64(m[(i*6+j)*srcXi+c])
				}
			}
		}
		for r := range 4 {
			for k := range 4 {
				s := 0.0
				for j := range 6 {
					s += am[r][j] * testAT[k][j]
				}
				wantOut[(r*4+k)*channels+c] = s
			}
		}
	}
	for _, impl := range []struct {
		name string
		out  func(dst []float32)
	}{
		{"go", func(dst []float32) { winogradOutputGo(dst, offs, m, srcXi, channels, nil, false) }},
		{"dispatched", func(dst []float32) { winogradOutput(dst, offs, m, scratch, srcXi, channels, nil, false) }},
	} {
		got := make([]float32, cells*channels)
		for i := range got {
			got[i] = float32(math.NaN())
		}
		impl.out(got)
		for k := range cells {
			for c := range channels {
				v := got[k*channels+c]
				switch {
				case k < 16 && offs[k] >= 0:
					w := wantOut[k*channels+c]
					if d := math.Abs(float64(v) - w); !(d <= 1e-5*(1+math.Abs(w))) {
						t.Fatalf("%s output transform: output %d, channel %d: %g, want %g", impl.name, k, c, v, w)
					}
				case !math.IsNaN(float64(v)):
					t.Fatalf("%s output transform: stored %g at pixel %d, channel %d, which no output maps to", impl.name, v, k, c)
				}
			}
		}
	}
}

// TestWinogradConv: a training convolution by Winograd on each float32
// kernel set this CPU runs is the convolution summed in float64, to
// within F(4×4, 3×3)'s rounding of the sum of its terms' magnitudes —
// boards that fill their tiles and boards that do not, channels that
// fill no block of the kernels, batches that end inside a chunk, one
// core and several; every output written.
func TestWinogradConv(t *testing.T) {
	cases := []struct{ height, width, in, out, batch, workers int }{
		{8, 8, 64, 64, 16, 1},
		{8, 8, 64, 64, 19, 2},
		{11, 11, 64, 64, 9, 2},
		{11, 11, 16, 40, 3, 1},
		{5, 7, 8, 8, 5, 3},
		{3, 3, 24, 8, 2, 2},
		{1, 1, 8, 16, 4, 1},
	}
	forEachFloat32Set(t, func(t *testing.T, arch directArch) {
		arch.winograd = true
		for i, c := range cases {
			name := fmt.Sprintf("%dx%d/%dto%d/batch%d/workers%d", c.height, c.width, c.in, c.out, c.batch, c.workers)
			t.Run(name, func(t *testing.T) {
				sh := shape{height: c.height, width: c.width}
				rng := rand.New(rand.NewPCG(uint64(i), 5))
				x := randomRow(rng, c.batch*c.in*sh.cells())
				w := randomRow(rng, c.out*c.in*9)
				g := convGeom{name: "conv", kernel: 3, in: c.in, out: c.out, height: c.height, width: c.width}
				var dt directTrain
				got := make([]float32, c.batch*c.out*sh.cells())
				for pass := range 2 { // again under the same buffers
					for j := range got {
						got[j] = float32(math.NaN())
					}
					dt.run(arch, sh, 3, c.in, c.out, c.batch, c.workers, x, got, func(dst []float32) { g.packWeights(w, dst, false) })
					if dt.wino == nil {
						t.Fatal("the convolution did not run by Winograd")
					}
					want, scale := convRef(sh, c.in, c.out, c.batch, x, w)
					for j := range got {
						if d := math.Abs(float64(got[j]) - want[j]); !(d <= 2e-5*scale[j]+1e-6) {
							t.Fatalf("pass %d, image %d, output %d, cell %d: %g, want %g (sum of |terms| %g)", pass, j/(c.out*sh.cells()), j/sh.cells()%c.out, j%sh.cells(), got[j], want[j], scale[j])
						}
					}
				}
			})
		}
	})
}

// TestWinogradInputGrad: the input gradient's convolution (the kernel
// flipped, in and out swapped) by Winograd and on the direct kernels are
// both the float64 convolution, to their rounding.
func TestWinogradInputGrad(t *testing.T) {
	const height, width, in, out, batch = 11, 11, 32, 48, 5
	forEachFloat32Set(t, func(t *testing.T, arch directArch) {
		sh := shape{height: height, width: width}
		rng := rand.New(rand.NewPCG(8, 9))
		dy := randomRow(rng, batch*out*sh.cells())
		w := randomRow(rng, out*in*9)
		flipped := make([]float32, len(w)) // (in, out, 3, 3)
		for o := range out {
			for c := range in {
				for k := range 9 {
					flipped[(c*out+o)*9+8-k] = w[(o*in+c)*9+k]
				}
			}
		}
		want, scale := convRef(sh, out, in, batch, dy, flipped)
		g := convGeom{name: "conv", kernel: 3, in: in, out: out, height: height, width: width}
		pack := func(dst []float32) { g.packWeights(w, dst, true) }
		for _, winograd := range []bool{false, true} {
			arch.winograd = winograd
			var dt directTrain
			got := make([]float32, batch*in*sh.cells())
			dt.run(arch, sh, 3, out, in, batch, 2, dy, got, pack)
			if (dt.wino != nil) != winograd {
				t.Fatalf("Winograd %v: the convolution ran by Winograd %v", winograd, dt.wino != nil)
			}
			for j := range got {
				if d := math.Abs(float64(got[j]) - want[j]); !(d <= 2e-5*scale[j]+1e-6) {
					t.Fatalf("Winograd %v: value %d: %g, want %g (sum of |terms| %g)", winograd, j, got[j], want[j], scale[j])
				}
			}
		}
	})
}

// convRef is a same-padded 3×3 convolution (out, in, 3, 3) of x summed
// in float64, with the sum of its terms' magnitudes for each output.
func convRef(sh shape, in, out, batch int, x, w []float32) (y, scale []float64) {
	h, wd, cells := sh.height, sh.width, sh.cells()
	y, scale = make([]float64, batch*out*cells), make([]float64, batch*out*cells)
	for b := range batch {
		for o := range out {
			for p := range cells {
				py, px := p/wd, p%wd
				s, m := 0.0, 0.0
				for c := range in {
					for k := range 9 {
						sy, sx := py+k/3-1, px+k%3-1
						if sy < 0 || sy >= h || sx < 0 || sx >= wd {
							continue
						}
						t := float64(w[(o*in+c)*9+k]) * float64(x[(b*in+c)*cells+sy*wd+sx])
						s, m = s+t, m+math.Abs(t)
					}
				}
				y[(b*out+o)*cells+p], scale[(b*out+o)*cells+p] = s, m
			}
		}
	}
	return y, scale
}

// TestWinogradGradTransform: the output gradients' transform, in Go and
// where the CPU runs it in assembly, is A dy A^T computed from the
// matrix in float64.
func TestWinogradGradTransform(t *testing.T) {
	const channels, srcRow, dstXi = 16, 9 * 16, 3 * 16
	rng := rand.New(rand.NewPCG(6, 7))
	src := randomRow(rng, 3*srcRow+4*channels)
	want := make([]float64, 36*dstXi)
	for c := range channels {
		var ad [6][4]float64 // A dy
		for i := range 6 {
			for j := range 4 {
				for r := range 4 {
					ad[i][j] += testAT[r][i] * float64(src[r*srcRow+j*channels+c])
				}
			}
		}
		for i := range 6 {
			for j := range 6 {
				s := 0.0
				for k := range 4 {
					s += ad[i][k] * testAT[k][j]
				}
				want[(i*6+j)*dstXi+c] = s
			}
		}
	}
	scratch := make([]float32, 36*8)
	for _, impl := range []struct {
		name string
		run  func(dst []float32)
	}{
		{"go", func(dst []float32) { winogradGradGo(dst, src, srcRow, dstXi, channels) }},
		{"dispatched", func(dst []float32) { winogradGrad(dst, src, scratch, srcRow, dstXi, channels) }},
	} {
		got := make([]float32, 36*dstXi)
		impl.run(got)
		for xi := range 36 {
			for c := range channels {
				i := xi*dstXi + c
				if d := math.Abs(float64(got[i]) - want[i]); !(d <= 1e-5*(1+math.Abs(want[i]))) {
					t.Fatalf("%s gradient transform: value %d, channel %d: %g, want %g", impl.name, xi, c, got[i], want[i])
				}
			}
		}
	}
}

// TestWinogradWeightGrad: the weight gradient by Winograd on each
// float32 kernel set this CPU runs is the gradient summed in float64, to
// within F(4×4, 3×3)'s rounding of the sum of its terms' magnitudes —
// boards that fill their tiles and boards that do not, channels that
// fill no block of the kernels, batches that end inside a chunk, one
// core and several, and again after the shapes change under the same
// buffers.
func TestWinogradWeightGrad(t *testing.T) {
	cases := []struct{ height, width, in, out, batch, workers int }{
		{8, 8, 64, 64, 16, 1},
		{8, 8, 64, 64, 19, 2},
		{11, 11, 64, 64, 9, 2},
		{11, 11, 16, 40, 3, 1},
		{5, 7, 8, 8, 5, 3},
		{3, 3, 24, 8, 2, 2},
	}
	forEachFloat32Set(t, func(t *testing.T, arch directArch) {
		var d winogradWeightGrad
		for i, c := range cases {
			name := fmt.Sprintf("%dx%d/%dto%d/batch%d/workers%d", c.height, c.width, c.in, c.out, c.batch, c.workers)
			t.Run(name, func(t *testing.T) {
				sh := shape{height: c.height, width: c.width}
				rng := rand.New(rand.NewPCG(uint64(i), 13))
				x := randomRow(rng, c.batch*c.in*sh.cells())
				dy := randomRow(rng, c.batch*c.out*sh.cells())
				got := make([]float32, c.out*c.in*9)
				for j := range got {
					got[j] = float32(math.NaN())
				}
				d.run(arch, sh, c.in, c.out, c.batch, c.workers, x, dy, got)
				want, scale := weightGradRef(sh, 3, c.in, c.out, c.batch, x, dy, func(v float32) float64 { return float64(v) })
				for j := range got {
					if d := math.Abs(float64(got[j]) - want[j]); !(d <= 5e-5*scale[j]+1e-6) {
						t.Fatalf("output %d, input %d, offset %d: %g, want %g (sum of |terms| %g)", j/(c.in*9), j/9%c.in, j%9, got[j], want[j], scale[j])
					}
				}
			})
		}
	})
}

// TestTranspose: every value lands where its row and column swap, for
// shapes with and without whole 8×8 blocks.
func TestTranspose(t *testing.T) {
	for _, c := range []struct{ rows, cols int }{{8, 8}, {63, 64}, {64, 24}, {9, 17}, {5, 3}, {16, 8}} {
		src := make([]float32, c.rows*c.cols)
		for i := range src {
			src[i] = float32(i)
		}
		dst := make([]float32, len(src))
		for i := range dst {
			dst[i] = -1
		}
		transpose(dst, src, c.rows, c.cols)
		for r := range c.rows {
			for k := range c.cols {
				if got := dst[k*c.rows+r]; got != src[r*c.cols+k] {
					t.Fatalf("%d×%d: row %d, column %d: %g, want %g", c.rows, c.cols, r, k, got, src[r*c.cols+k])
				}
			}
		}
	}
}

// TestWinogradTraining: trainers take Winograd on AVX2's and AVX-512's
// float32 sets and the Winograd sets by default, never on bfloat16, on
// none when FLIPZERO_WINOGRAD=off — and only where the CPU runs the
// transforms.
func TestWinogradTraining(t *testing.T) {
	runs := winogradKernels()
	for _, c := range []struct {
		env  string
		arch directArch
		want bool
	}{
		{"", archAVX2, runs},
		{"", archAVX2Winograd, runs},
		{"", archAVX512, runs},
		{"", archAVX512BF16, false},
		{"on", archAVX512, runs},
		{"off", archAVX512, false},
		{"on", archAMXBF16, false},
		{"off", archAVX2, false},
		{"off", archAVX2Winograd, false},
	} {
		t.Setenv("FLIPZERO_WINOGRAD", c.env)
		if got := winogradTraining(c.arch); got != c.want {
			t.Errorf("FLIPZERO_WINOGRAD=%q, %s: %v, want %v", c.env, c.arch.name, got, c.want)
		}
	}
}
