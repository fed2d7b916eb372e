package tictactoe

import (
	"slices"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/envtest"
)

func TestConformance(t *testing.T) {
	envtest.Run(t, Game{}, envtest.Options{})
}

func perft(s *State, depth int) int {
	if depth == 0 || s.Terminal() {
		return 1
	}
	var buf [Cells]int
	n := 0
	for _, a := range s.LegalActions(buf[:0]) {
		child := *s
		child.Apply(a)
		n += perft(&child, depth-1)
	}
	return n
}

func TestPerft(t *testing.T) {
	// Finished games count as leaves at every deeper depth. Games end at
	// ply 5: 1,440; 6: 5,328; 7: 47,952; 8: 72,576; 9: 127,872 (the known
	// counts), so depth 6 is (15120-1440)*4 + 1440, and so on.
	want := []int{9, 72, 504, 3024, 15120, 56160, 154944, 255168, 255168}
	for d, w := range want {
		if got := perft(&State{}, d+1); got != w {
			t.Errorf("perft(%d) = %d, want %d", d+1, got, w)
		}
	}
}

func TestResults(t *testing.T) {
	tests := []struct {
		moves  string
		over   bool
		winner env.Player
	}{
		{"a1;b1;a2;b2;a3", true, 0},
		{"a1;b1;a2;b2;c3;b3", true, 1},
		{"a1;b2;c3;a3", false, env.NoPlayer},
		{"a1;a2;a3;b2;b1;c1;b3;c3;c2", true, env.NoPlayer},
		{"a3;a1;b2;b1;c1", true, 0}, // anti-diagonal a3-b2-c1
	}
	for _, tt := range tests {
		s, err := env.Play(Game{}, tt.moves)
		if err != nil {
			t.Fatalf("%s: %v", tt.moves, err)
		}
		if s.Terminal() != tt.over {
			t.Errorf("%s: terminal %v, want %v", tt.moves, s.Terminal(), tt.over)
		}
		if tt.over && s.Winner() != tt.winner {
			t.Errorf("%s: winner %d, want %d", tt.moves, s.Winner(), tt.winner)
		}
	}
}

func TestPlayRejects(t *testing.T) {
	for _, seq := range []string{"a1;a1", "d1", "a1;b1;a2;b2;a3;c3", "a4"} {
		if _, err := env.Play(Game{}, seq); err == nil {
			t.Errorf("%q: want an error", seq)
		}
	}
}

func TestSolver(t *testing.T) {
	sv := NewSolver()
	if len(sv.values) != 5478 {
		t.Errorf("solver saw %d positions, want 5478", len(sv.values))
	}
	if v := sv.Value(&State{}); v != 0 {
		t.Errorf("start value %d, want 0 (a draw)", v)
	}
	// After a corner a1 and the adjacent edge reply b1, black wins.
	s, _ := env.Play(Game{}, "a1;b1")
	if v := sv.Value(s.(*State)); v != 1 {
		t.Errorf("value after a1;b1 = %d, want 1", v)
	}
	// Black to move can win at once on a3.
	s, _ = env.Play(Game{}, "a1;b1;a2;b2")
	best := sv.BestActions(s.(*State), nil)
	if !slices.Contains(best, 6) {
		t.Errorf("best actions %v do not include a3", best)
	}
	// The perfect player never loses against random play from either side.
	positions := envtest.RandomPositions(Game{}, 500, 9)
	for _, p := range positions {
		st := p.(*State)
		if st.Terminal() {
			continue
		}
		v := sv.Value(st)
		var buf [Cells]int
		for _, a := range sv.BestActions(st, buf[:0]) {
			child := *st
			child.Apply(a)
			if -sv.Value(&child) != v {
				t.Fatalf("best action changes the value")
			}
		}
	}
}

func TestString(t *testing.T) {
	s, _ := env.Play(Game{}, "a1;c3")
	want := "3  . . O\n2  . . .\n1  X . .\n   a b c\n"
	if got := s.String(); got != want {
		t.Errorf("board:\n%s\nwant\n%s", got, want)
	}
	if !strings.Contains(s.String(), "a b c") {
		t.Error("no coordinates")
	}
}
