package othello

import (
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/flipzero/flipzero/env"
)

// minimaxMargin is the plain minimax value, without pruning, of s for
// the player to move, through the game contract only.
func minimaxMargin(s *State) int {
	if s.Terminal() {
		black, white := s.FinalScore()
		if s.ToMove() == 1 {
			return white - black
		}
		return black - white
	}
	best := -Squares - 1
	for _, a := range s.LegalActions(nil) {
		child := *s
		child.Apply(a)
		best = max(best, -minimaxMargin(&child))
	}
	return best
}

// endgamePositions plays random games of g until at most empties squares
// are empty.
func endgamePositions(g env.Game, n, empties int, seed uint64) []*State {
	rng := rand.New(rand.NewPCG(seed, 17))
	var out []*State
	for len(out) < n {
		s := g.NewState().(*State)
		for !s.Terminal() && bits.OnesCount64(^(s.own|s.opp)) > empties {
			legal := s.LegalActions(nil)
			s.Apply(legal[rng.IntN(len(legal))])
		}
		out = append(out, s)
	}
	return out
}

func TestSolveExact(t *testing.T) {
	tests := []struct {
		game      env.Game
		empties   int
		positions int
	}{
		{Othello(), 9, 40},
		{Reversi(), 8, 20},
		{Single(), 7, 40},
	}
	for _, tt := range tests {
		for i, s := range endgamePositions(tt.game, tt.positions, tt.empties, uint64(tt.empties)) {
			before := *s
			got, want := s.SolveExact(), minimaxMargin(s)
			if got != want {
				t.Fatalf("%s position %d: SolveExact %d, minimax %d, in\n%v", tt.game.Name(), i, got, want, s)
			}
			if *s != before {
				t.Fatalf("%s position %d: SolveExact changed the position", tt.game.Name(), i)
			}
		}
	}
}

// TestSolvedIsTheMarginsSign: the null-window search's winner is the
// exact margin's, ties included (reversi's to White), and it leaves the
// position as it was.
func TestSolvedIsTheMarginsSign(t *testing.T) {
	tests := []struct {
		game      env.Game
		empties   int
		positions int
	}{
		{Othello(), 10, 60},
		{Reversi(), 9, 40},
		{Single(), 8, 40},
	}
	for _, tt := range tests {
		outcomes := map[env.Player]int{}
		for i, s := range endgamePositions(tt.game, tt.positions, tt.empties, uint64(tt.empties)+1) {
			margin := s.SolveExact()
			want := env.NoPlayer
			switch {
			case margin > 0:
				want = s.toMove
			case margin < 0:
				want = s.toMove.Other()
			case s.variant != variantOthello:
				want = 1
			}
			before := *s
			got, ok := s.Solved(tt.empties)
			if !ok || got != want {
				t.Fatalf("%s position %d: Solved %v (%v), want %v from the margin %d, in\n%v", tt.game.Name(), i, got, ok, want, margin, s)
			}
			if *s != before {
				t.Fatalf("%s position %d: Solved changed the position", tt.game.Name(), i)
			}
			if _, ok := s.Solved(tt.empties - 1); ok {
				t.Fatalf("%s position %d: solved with more empty squares than the limit", tt.game.Name(), i)
			}
			outcomes[got]++
		}
		if len(outcomes) < 2 {
			t.Errorf("%s: every position had the same winner %v: the test tells nothing", tt.game.Name(), outcomes)
		}
	}
}

func TestSolveFinished(t *testing.T) {
	// The 9-move wipeout: White, to move, has lost 0-64.
	s, err := env.Play(Othello(), "d3;c3;b3;d2;e1;d6;d7;e3;f4")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.(*State).SolveExact(); got != -64 {
		t.Errorf("SolveExact after a wipeout = %d, want -64", got)
	}
}
