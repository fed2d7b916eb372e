package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestDirectWeightGrad: the weight gradient on each float32 kernel set
// this CPU runs is the gradient summed in float64, to float32's rounding
// of its sums — for 3×3 and 1×1 convolutions, channel counts that fill no
// tile or block (the AVX-512 tiles are 6 rows × 64 channels, the AVX2
// ones 4 × 24, the NEON ones 5 × 16) and that end in each number of
// channel groups, batches that end inside a group of images, one core
// and several, and again after the shapes change under the same buffers.
func TestDirectWeightGrad(t *testing.T) {
	cases := []struct{ height, width, kernel, in, out, batch, workers int }{
		{8, 8, 3, 64, 64, 16, 1},
		{8, 8, 3, 64, 64, 19, 2},
		{8, 8, 3, 5, 7, 3, 1},
		{8, 8, 3, 6, 11, 4, 2},
		{8, 8, 3, 3, 70, 9, 3},
		{11, 11, 3, 64, 32, 6, 2},
		{11, 11, 3, 17, 130, 2, 1},
		{8, 8, 1, 64, 2, 10, 2},
		{8, 8, 1, 64, 33, 4, 1},
		{11, 11, 1, 3, 1, 5, 2},
	}
	forEachFloat32Set(t, func(t *testing.T, arch directArch) {
		var d directWeightGrad
		for i, c := range cases {
			name := fmt.Sprintf("%dx%d/k%d/%dto%d/batch%d/workers%d", c.height, c.width, c.kernel, c.in, c.out, c.batch, c.workers)
			t.Run(name, func(t *testing.T) {
				g := convGeom{name: "conv", kernel: c.kernel, in: c.in, out: c.out, height: c.height, width: c.width}
				rng := rand.New(rand.NewPCG(uint64(i), 11))
				x := randomRow(rng, c.batch*c.in*g.cells())
				dy := randomRow(rng, c.batch*c.out*g.cells())
				cols := scratch(nil, g.k()*g.groupImages()*g.cells(), c.workers)
				got := make([]float32, c.out*g.k())
				for j := range got {
					got[j] = float32(math.NaN()) // every weight must be written
				}
				d.run(arch, g, c.batch, c.workers, x, dy, got, cols)
				want, scale := weightGradRef(shape{height: c.height, width: c.width}, c.kernel, c.in, c.out, c.batch, x, dy, func(v float32) float64 { return float64(v) })
				kk := c.kernel * c.kernel
				for j := range got {
					if d := math.Abs(float64(got[j]) - want[j]); !(d <= 1e-5*scale[j]+1e-6) {
						t.Fatalf("output %d, input %d, offset %d: %g, want %g (sum of |terms| %g)", j/(c.in*kk), j/kk%c.in, j%kk, got[j], want[j], scale[j])
					}
				}
			})
		}
	})
}

// weightGradRef is the weight gradient (out, in, kernel, kernel) of a
// same-padded convolution, each input and output gradient passed
// through round and the products summed in float64, with the sum of the
// products' magnitudes for each weight.
func weightGradRef(sh shape, kernel, in, out, batch int, x, dy []float32, round func(float32) float64) (dw, scale []float64) {
	h, w, cells, kk, pad := sh.height, sh.width, sh.cells(), kernel*kernel, kernel/2
	dw, scale = make([]float64, out*in*kk), make([]float64, out*in*kk)
	for b := 0; b < batch; b++ {
		for o := 0; o < out; o++ {
			for c := 0; c < in; c++ {
				for pos := 0; pos < kk; pos++ {
					ky, kx := pos/kernel-pad, pos%kernel-pad
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
					dw[(o*in+c)*kk+pos] += s
					scale[(o*in+c)*kk+pos] += m
				}
			}
		}
	}
	return dw, scale
}
