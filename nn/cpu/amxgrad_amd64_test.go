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
			x := randomRow(rng, c.batch*c.in*sh.cells())
			dy := randomRow(rng, c.batch*c.out*sh.cells())
			got := make([]float32, c.out*c.in*9)
			a.run(sh, c.in, c.out, c.batch, c.workers, x, dy, got)
			want, scale := weightGradRef(sh, 3, c.in, c.out, c.batch, x, dy, func(v float32) float64 { return float64(fromBF16(toBF16(v))) })
			for j := range got {
				if d := math.Abs(float64(got[j]) - want[j]); d > 1e-5*scale[j]+1e-6 {
					o, ci, pos := j/(c.in*9), j/9%c.in, j%9
					t.Fatalf("output %d, input %d, offset %d: %g, want %g (sum of |terms| %g)", o, ci, pos, got[j], want[j], scale[j])
				}
			}
		})
	}
}

// TestRoundingLayouts: the training convolutions' AVX-512 roundings (the
// weight gradient's operands, a convolution's input) write what moving
// and rounding one value at a time writes, and nothing else: boards narrower
// and wider than sixteen, planes apart by more than a board, pixels at odd
// and even indices, words between them left as they were.
func TestRoundingLayouts(t *testing.T) {
	if !hasBF16Stores() {
		t.Skip("this CPU lacks AVX-512 BF16 and BW")
	}
	rng := rand.New(rand.NewPCG(4, 2))
	for _, c := range []struct{ h, w, planes int }{{8, 8, 3}, {11, 11, 2}, {3, 19, 2}, {2, 16, 1}, {5, 33, 2}, {1, 1, 4}} {
		t.Run(fmt.Sprintf("grid%dx%dx%d", c.planes, c.h, c.w), func(t *testing.T) {
			dstRow, dstPlane := c.w+3, (c.h+1)*(c.w+3)+5
			src := randomRow(rng, c.planes*c.h*c.w)
			got, want := sentinels(c.planes*dstPlane), sentinels(c.planes*dstPlane)
			roundGridBF16(got, src, c.planes, c.h, c.w, dstPlane, dstRow)
			roundGridBF16Go(want, src, c.planes, c.h, c.w, dstPlane, dstRow)
			sameWords(t, got, want)
		})
	}
	for _, c := range []struct{ h, w, channels int }{{8, 8, 64}, {11, 11, 32}, {3, 5, 16}, {1, 1, 48}} {
		t.Run(fmt.Sprintf("pairs%dx%d/%d", c.h, c.w, c.channels), func(t *testing.T) {
			g := newDirectGeom(directArch{}, shape{height: c.h, width: c.w}, 3)
			pix := g.pix[c.h*c.w : 2*c.h*c.w] // the second position: indices neither 0 nor even only
			src := randomRow(rng, c.channels*len(pix))
			size := (int(pix[len(pix)-1])/2 + 2) * 2 * c.channels
			got, want := sentinels(size), sentinels(size)
			roundPairsBF16(got, src, pix, c.channels)
			roundPairsBF16Go(want, src, pix, c.channels)
			sameWords(t, got, want)
		})
	}
	for _, c := range []struct{ h, w, channels int }{{8, 8, 64}, {11, 11, 32}, {3, 5, 16}, {1, 1, 48}} {
		t.Run(fmt.Sprintf("planes%dx%d/%d", c.h, c.w, c.channels), func(t *testing.T) {
			g := newDirectGeom(directArch{}, shape{height: c.h, width: c.w}, 3)
			pix := g.pix[c.h*c.w : 2*c.h*c.w]
			src := randomRow(rng, c.channels*len(pix))
			size := g.pixels(3) * c.channels
			got, want := sentinels(size), sentinels(size)
			if !planesToPixelsBF16(got, src, pix, c.channels) {
				t.Fatal("not done on a CPU with AVX-512 BF16 and BW")
			}
			padded := make([]float32, size)
			toPixels(padded, src, pix, c.channels)
			roundPixelsBF16(want, padded, pix, c.channels)
			sameWords(t, got, want)
		})
	}
}

// sentinels is n words that no rounding of randomRow's values makes.
func sentinels(n int) []uint16 {
	s := make([]uint16, n)
	for i := range s {
		s[i] = 0x7fc1 // a NaN
	}
	return s
}

func sameWords(t *testing.T, got, want []uint16) {
	t.Helper()
	written := 0
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("word %d: %#04x, want %#04x", i, got[i], want[i])
		}
		if want[i] != 0x7fc1 {
			written++
		}
	}
	if written == 0 {
		t.Fatal("nothing written")
	}
}
