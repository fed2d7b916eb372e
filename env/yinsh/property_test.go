package yinsh

import (
	"math/rand/v2"
	"testing"

	"github.com/flipzero/flipzero/env"
)

// TestRandomGames plays random games in both variants and checks the
// invariants of the rules after every decision.
func TestRandomGames(t *testing.T) {
	for _, g := range []env.Game{Full(), Blitz()} {
		t.Run(g.Name(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, uint64(len(g.Name()))))
			buf := make([]int, 0, ActionCount)
			ends := map[string]int{}
			for game := 0; game < 1000; game++ {
				s := g.NewState().(*State)
				plies := 0
				for ; !s.Terminal(); plies++ {
					if plies > 1000 {
						t.Fatalf("game %d still running after %d plies:\n%v", game, plies, s)
					}
					checkInvariants(t, s)
					legal := s.LegalActions(buf)
					if n := s.countActions(); n != len(legal) {
						t.Fatalf("countActions %d, LegalActions %d in\n%v", n, len(legal), s)
					}
					s.Apply(legal[rng.IntN(len(legal))])
				}
				checkInvariants(t, s)
				switch {
				case s.winner != env.NoPlayer && int(s.removed[s.winner]) == g.(Game).RingsToWin():
					ends["rings"]++
				case s.supply == 0:
					ends["markers ran out"]++
				default:
					ends["no moves"]++
				}
			}
			t.Logf("games ended by: %v", ends)
		})
	}
}

func checkInvariants(t *testing.T, s *State) {
	t.Helper()
	if n := s.MarkersOnBoard(White) + s.MarkersOnBoard(Black) + s.Supply(); n != Markers {
		t.Fatalf("markers on board + supply = %d, want %d:\n%v", n, Markers, s)
	}
	if !s.markers[White].and(s.markers[Black]).empty() || !s.occupied().andNot(allPoints).empty() ||
		!s.rings[White].or(s.rings[Black]).and(s.markers[White].or(s.markers[Black])).empty() {
		t.Fatalf("two pieces on one point:\n%v", s)
	}
	if s.placed == 2*RingsEach {
		for _, p := range []env.Player{White, Black} {
			if n := s.RingsOnBoard(p) + s.Removed(p); n != RingsEach {
				t.Fatalf("player %d: rings on board + removed = %d, want %d:\n%v", p, n, RingsEach, s)
			}
		}
	}
	if s.phase == phaseMove && (s.HasRow(White) || s.HasRow(Black)) {
		t.Fatalf("a row is left on the board with a player to move:\n%v", s)
	}
}
