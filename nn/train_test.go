package nn

import "testing"

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
