package env_test

import (
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/env/tictactoe"
)

func TestPlay(t *testing.T) {
	g := tictactoe.Game{}
	tests := []struct {
		seq, wantErr string
		plies        int
	}{
		{"", "", 0},
		{"  ", "", 0},
		{"a1; b2 ;c3", "", 3},
		{"a1;a1", `move 2: move "a1" is not legal here`, 0},
		{"a1;;b2", "move 2: bad tic-tac-toe move", 0},
		{"a1;b1;a2;b2;a3;c3", "move 6: move \"c3\": the game is over", 0},
	}
	for _, tt := range tests {
		s, err := env.Play(g, tt.seq)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: error %v, want %q", tt.seq, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.seq, err)
			continue
		}
		if marks := s.(*tictactoe.State).Marks(0) | s.(*tictactoe.State).Marks(1); bitsSet(marks) != tt.plies {
			t.Errorf("%q: %d marks on the board, want %d", tt.seq, bitsSet(marks), tt.plies)
		}
	}
}

func bitsSet(x uint16) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

func TestValueAndResultName(t *testing.T) {
	s, _ := env.Play(tictactoe.Game{}, "a1;b1;a2;b2;a3")
	if env.Value(s, 0) != 1 || env.Value(s, 1) != -1 || env.ResultName(s) != "black" {
		t.Errorf("black's line: values %v/%v, result %s", env.Value(s, 0), env.Value(s, 1), env.ResultName(s))
	}
	s, _ = env.Play(tictactoe.Game{}, "a1;a2;a3;b2;b1;c1;b3;c3;c2")
	if env.Value(s, 0) != 0 || env.ResultName(s) != "draw" {
		t.Errorf("draw: value %v, result %s", env.Value(s, 0), env.ResultName(s))
	}
}

// TestPerft checks env.Perft's generic walk (tic-tac-toe has no Perfter)
// and its use of a game's own Perfter (Othello's) against a plain
// recursion through the interface.
func TestPerft(t *testing.T) {
	for _, start := range []env.State{tictactoe.Game{}.NewState(), othello.Othello().NewState()} {
		for depth := 1; depth <= 5; depth++ {
			if got, want := env.Perft(start, depth), plainPerft(start, depth); got != want {
				t.Errorf("%s depth %d: Perft %d, plain recursion %d", start.Game().Name(), depth, got, want)
			}
		}
	}
}

func plainPerft(s env.State, depth int) uint64 {
	if depth == 0 || s.Terminal() {
		return 1
	}
	var n uint64
	for _, a := range s.LegalActions(nil) {
		c := s.Clone()
		c.Apply(a)
		n += plainPerft(c, depth-1)
	}
	return n
}
