package yinsh

import (
	"testing"

	"github.com/flipzero/flipzero/env"
)

const (
	placements = "P C4;P G4;P H8;P G6;P J7;P C2;P F4;P I10;P C7;P E2"
	midgame    = placements + ";M C4 E4;M E2 E1;M H8 G8;M E1 D1;M F4 D2;M C2 C5;M J7 H5;M G4 I4;M C7 I7;M I4 I6;" +
		"M I7 G7;M I6 I8;M G7 F6;M I8 J8;M H5 F3;M J8 J6;M E4 D4;M J6 I5;M G8 K8;M I5 G3"
)

func play(t testing.TB, g env.Game, moves string) *State {
	t.Helper()
	s, err := env.Play(g, moves)
	if err != nil {
		t.Fatal(err)
	}
	return s.(*State)
}

// TestPerftRulesDoc checks the counts published in the rules document.
func TestPerftRulesDoc(t *testing.T) {
	tests := []struct {
		name  string
		moves string
		want  []uint64
	}{
		{"start", "", []uint64{85, 7140, 592620}},
		{"placed", placements, []uint64{88, 6078, 481840}},
		{"midgame", midgame, []uint64{39, 1588, 58564}},
	}
	for _, tt := range tests {
		s := play(t, Full(), tt.moves)
		for d, want := range tt.want {
			if got := s.Perft(d + 1); got != want {
				t.Errorf("%s: perft(%d) = %d, want %d", tt.name, d+1, got, want)
			}
		}
	}
}

// walk counts perft the slow way, through the env.State interface: every
// leaf is listed by LegalActions and every inner node played with Apply on
// a clone, so it shares nothing with Perft's ray walk and counting.
func walk(s env.State, depth int, buf [][]int) uint64 {
	if depth == 0 || s.Terminal() {
		return 1
	}
	legal := s.LegalActions(buf[depth])
	if depth == 1 {
		return uint64(len(legal))
	}
	var n uint64
	for _, a := range legal {
		child := s.Clone()
		child.Apply(a)
		n += walk(child, depth-1, buf)
	}
	return n
}

// TestPerftDeep checks the midgame position at depths 4 and 5 with both
// counters; depth 5 is the count the issue gives.
func TestPerftDeep(t *testing.T) {
	s := play(t, Full(), midgame)
	tests := []struct {
		depth int
		want  uint64
	}{
		{4, 2158351},
		{5, 76794638},
	}
	buf := make([][]int, 6)
	for i := range buf {
		buf[i] = make([]int, 0, ActionCount)
	}
	for _, tt := range tests {
		if got := s.Perft(tt.depth); got != tt.want {
			t.Errorf("Perft(%d) = %d, want %d", tt.depth, got, tt.want)
		}
		if got := walk(s, tt.depth, buf); got != tt.want {
			t.Errorf("walk(%d) = %d, want %d", tt.depth, got, tt.want)
		}
	}
}
