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
