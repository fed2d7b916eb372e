package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestPoolRows checks the pooling's sums, maxima and added bias against
// one value at a time, over rows given by index and rows in order, for
// channels the assembly takes (eights) and others, and that the bias
// lands on the rows named and nowhere else.
func TestPoolRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, channels := range []int{8, 64, 12, 3} {
		for _, indexed := range []bool{true, false} {
			t.Run(fmt.Sprintf("%d/indexed=%v", channels, indexed), func(t *testing.T) {
				const rows, n = 40, 13
				act := randomRow(rng, rows*channels)
				var pix []int32
				if indexed {
					for _, r := range rng.Perm(rows)[:n] {
						pix = append(pix, int32(r))
					}
				}
				sum, most := randomRow(rng, channels), randomRow(rng, channels)
				wantSum, wantMost := append([]float32(nil), sum...), append([]float32(nil), most...)
				for i := range n {
					r := i
					if indexed {
						r = int(pix[i])
					}
					for ch := range channels {
						v := act[r*channels+ch]
						wantSum[ch] += v
						wantMost[ch] = max(wantMost[ch], v)
					}
				}
				poolRows(act, pix, n, channels, sum, most)
				for ch := range channels {
					if math.Abs(float64(sum[ch]-wantSum[ch])) > 1e-5 || most[ch] != wantMost[ch] {
						t.Fatalf("channel %d: sum %g and most %g, want %g and %g", ch, sum[ch], most[ch], wantSum[ch], wantMost[ch])
					}
				}
				if !indexed {
					return
				}
				bias := randomRow(rng, channels)
				want := append([]float32(nil), act...)
				for _, r := range pix {
					for ch := range channels {
						want[int(r)*channels+ch] += bias[ch]
					}
				}
				addRows(act, pix, channels, bias)
				for i := range act {
					if act[i] != want[i] {
						t.Fatalf("value %d (row %d): %g after the bias, want %g", i, i/channels, act[i], want[i])
					}
				}
			})
		}
	}
}

// TestPoolRowsOutside: a row past the activations is refused before
// anything is read or written.
func TestPoolRowsOutside(t *testing.T) {
	act := make([]float32, 4*8)
	for what, f := range map[string]func(){
		"pool index":  func() { poolRows(act, []int32{0, 4}, 2, 8, make([]float32, 8), make([]float32, 8)) },
		"pool order":  func() { poolRows(act, nil, 5, 8, make([]float32, 8), make([]float32, 8)) },
		"bias index":  func() { addRows(act, []int32{-1}, 8, make([]float32, 8)) },
		"few indices": func() { poolRows(act, []int32{0}, 2, 8, make([]float32, 8), make([]float32, 8)) },
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
