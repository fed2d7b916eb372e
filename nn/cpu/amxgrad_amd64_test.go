package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestAMXWeightGrad: the weight gradient on AMX is, to float32's rounding
// of its sums, the gradient of the inputs and output gradients rounded to
// bfloat16 — on Othello's grid and YINSH's, with batches whose pixels end
// inside a block, on one core and several, and again after the shapes
// change under the same buffers.
func TestAMXWeightGrad(t *testing.T) {
	if !amxReady() {
		t.Skip("this CPU has no AMX")
	}
	cases := []struct{ height, width, in, out, batch, workers int }{
		{8, 8, 32, 32, 1, 1},
		{8, 8, 64, 64, 3, 2},
		{8, 8, 64, 32, 128, 2},
		{11, 11, 64, 64, 5, 2},
		{11, 11, 32, 96, 2, 3},
		{8, 8, 64, 64, 7, 1},
	}
	var a amxWeightGrad
	for i, c := range cases {
		t.Run(fmt.Sprintf("%dx%d/%dto%d/batch%d/workers%d", c.height, c.width, c.in, c.out, c.batch, c.workers), func(t *testing.T) {
			sh := shape{height: c.height, width: c.width}
			rng := rand.New(rand.NewPCG(uint64(i), 9))
			x := make([]float32, c.batch*c.in*sh.cells())
			dy := make([]float32, c.batch*c.out*sh.cells())
			for j := range x {
				x[j] = float32(rng.NormFloat64())
			}
			for j := range dy {
				dy[j] = float32(rng.NormFloat64())
			}
			got := make([]float32, c.out*c.in*9)
			a.run(sh, c.in, c.out, c.batch, c.workers, x, dy, got)
			want, scale := weightGradBF16(sh, c.in, c.out, c.batch, x, dy)
			for j := range got {
				if d := math.Abs(float64(got[j]) - want[j]); d > 1e-5*scale[j]+1e-6 {
					o, ci, pos := j/(c.in*9), j/9%c.in, j%9
					t.Fatalf("output %d, input %d, offset %d: %g, want %g (sum of |terms| %g)", o, ci, pos, got[j], want[j], scale[j])
				}
			}
		})
	}
}

// weightGradBF16 is the weight gradient (out, in, 3, 3) of a same-padded
// 3×3 convolution, its inputs and output gradients rounded to bfloat16
// and the products summed in float64, with the sum of the products'
// magnitudes for each weight.
func weightGradBF16(sh shape, in, out, batch int, x, dy []float32) (dw, scale []float64) {
	h, w, cells := sh.height, sh.width, sh.cells()
	dw, scale = make([]float64, out*in*9), make([]float64, out*in*9)
	round := func(v float32) float64 { return float64(fromBF16(toBF16(v))) }
	for b := 0; b < batch; b++ {
		for o := 0; o < out; o++ {
			for c := 0; c < in; c++ {
				for pos := 0; pos < 9; pos++ {
					ky, kx := pos/3-1, pos%3-1
					s, m := 0.0, 0.0
					for y := 0; y < h; y++ {
						for xx := 0; xx < w; xx++ {
							sy, sx := y+ky, xx+kx
							if sy < 0 || sy >= h || sx < 0 || sx >= w {
								continue
							}
							p := round(dy[(b*out+o)*cells+y*w+xx]) * round(x[(b*in+c)*cells+sy*w+sx])
							s, m = s+p, m+math.Abs(p)
						}
					}
					dw[(o*in+c)*9+pos] += s
					scale[(o*in+c)*9+pos] += m
				}
			}
		}
	}
	return dw, scale
}
