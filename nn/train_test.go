package nn

import (
	"math"
	"testing"
)

func TestWDLTarget(t *testing.T) {
	for _, tt := range []struct {
		z               float32
		win, draw, loss float32
	}{
		{1, 1, 0, 0},
		{0, 0, 1, 0},
		{-1, 0, 0, 1},
		{0.5, 0.5, 0.5, 0},
		{-0.25, 0, 0.75, 0.25},
		{0.875, 0.875, 0.125, 0},
		{1.5, 1, 0, 0}, // out of range: held at the nearest end
		{-3, 0, 0, 1},
	} {
		w, d, l := WDLTarget(tt.z)
		if w != tt.win || d != tt.draw || l != tt.loss {
			t.Errorf("WDLTarget(%v) = %v, %v, %v, want %v, %v, %v", tt.z, w, d, l, tt.win, tt.draw, tt.loss)
		}
		if tt.z >= -1 && tt.z <= 1 && w-l != tt.z {
			t.Errorf("WDLTarget(%v): win − loss = %v, not the outcome", tt.z, w-l)
		}
	}
}

// TestSoftPolicyTarget: each row of the target raised to the power ¼
// and renormalised, zeros kept, an all-zero row left all zero; a sharp
// target comes out flatter, a uniform one unchanged.
func TestSoftPolicyTarget(t *testing.T) {
	for _, tt := range []struct {
		name   string
		policy []float32
	}{
		{"sharp", []float32{0.81, 0.01, 0, 0.18}},
		{"uniform", []float32{0.25, 0.25, 0.25, 0.25}},
		{"one move", []float32{0, 0, 1, 0}},
		{"nothing", []float32{0, 0, 0, 0}},
		{"two rows", []float32{0.5, 0.5, 0, 0, 0.9, 0, 0.1, 0}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			const actions = 4
			soft := make([]float32, len(tt.policy))
			for i := range soft {
				soft[i] = -1 // every value must be written
			}
			SoftPolicyTarget(soft, tt.policy, actions, nil)
			weighted := make([]float32, len(tt.policy))
			SoftPolicyTarget(weighted, tt.policy, actions, func(row int) float64 { return float64(row) + 0.5 })
			for i := range weighted {
				if want := soft[i]*float32(i/actions) + soft[i]*0.5; math.Abs(float64(weighted[i]-want)) > 1e-6 {
					t.Errorf("value %d weighted %g, want %g", i, weighted[i], want)
				}
			}
			for lo := 0; lo < len(tt.policy); lo += actions {
				row, got := tt.policy[lo:lo+actions], soft[lo:lo+actions]
				sum := 0.0
				for _, p := range row {
					sum += math.Pow(float64(p), 0.25)
				}
				for a, p := range row {
					want := 0.0
					if p > 0 {
						want = math.Pow(float64(p), 0.25) / sum
					}
					if math.Abs(float64(got[a])-want) > 1e-6 {
						t.Errorf("row %d action %d: %g from %g, want %g", lo/actions, a, got[a], p, want)
					}
				}
				// Flatter: the largest share shrinks, the smallest non-zero grows.
				hi, gotHi := 0, float32(0)
				for a, p := range row {
					if p > row[hi] {
						hi = a
					}
					gotHi = max(gotHi, got[a])
				}
				if sum > 0 && gotHi > row[hi]+1e-6 {
					t.Errorf("row %d: largest share %g from %g, not flatter", lo/actions, gotHi, row[hi])
				}
			}
		})
	}
}
