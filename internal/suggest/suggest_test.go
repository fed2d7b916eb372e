package suggest

import "testing"

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"cpuct", "cpuct", 0},
		{"cpucct", "cpuct", 1}, // an insertion
		{"cpct", "cpuct", 1},   // a deletion
		{"cpubt", "cpuct", 1},  // a substitution
		{"cpcut", "cpuct", 1},  // a swap of neighbours
		{"kitten", "sitting", 3},
		{"ca", "abc", 3}, // the restricted swap: no edit of a swapped pair
		{"grëedy", "greedy", 1},
	}
	for _, tt := range tests {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := Distance(tt.b, tt.a); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (it is symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestNearest(t *testing.T) {
	keys := []string{"cpuct", "mode", "solver", "noise_weight", "fpu_reduction", "fpu_reduction_root"}
	tests := []struct {
		name   string
		want   string
		wantOK bool
	}{
		{"cpucct", "cpuct", true},
		{"CPUCT", "cpuct", true},   // case does not count
		{"mod", "mode", true},      // one edit in a short name
		{"slover", "solver", true}, // a swap
		{"noise_wieght", "noise_weight", true},
		{"fpu_reductio", "fpu_reduction", true}, // the nearest of two
		{"md", "", false},                       // two edits in a short name is too many
		{"temperature", "", false},
		{"cpuct", "", false}, // the name itself is not a suggestion
	}
	for _, tt := range tests {
		got, ok := Nearest(tt.name, keys)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("Nearest(%q) = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.wantOK)
		}
	}
}
