package player

import (
	"context"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/envtest"
)

// TestGreedySolitaire: in the solitaire greedy plays a placement that
// captures the most tokens (under sum scoring, the most points) at once,
// and breaks ties by its seed, not always the same way.
func TestGreedySolitaire(t *testing.T) {
	for _, name := range []string{"reversi-solitaire", "reversi-solitaire-sum"} {
		g := game(t, name)
		greedy := player(t, "greedy")
		var seats []Seat
		for seed := uint64(0); seed < 8; seed++ {
			seat, err := greedy.Seat(g, 1, seed)
			if err != nil {
				t.Fatal(err)
			}
			defer seat.Close()
			seats = append(seats, seat)
		}
		capturing, tied := 0, 0
		child := g.NewState()
		for _, s := range envtest.RandomPositions(g, 400, 7) {
			if s.Terminal() || env.IsChance(s) {
				continue
			}
			before := s.(env.Scorer).Score()
			best := 0.0
			gains := map[int]float64{}
			for _, a := range s.LegalActions(nil) {
				child.CopyFrom(s)
				child.Apply(a)
				gains[a] = child.(env.Scorer).Score() - before
				best = max(best, gains[a])
			}
			if best > 0 {
				capturing++
			}
			chosen := map[int]bool{}
			for _, seat := range seats {
				out := []int{-1}
				if err := seat.Moves(context.Background(), []int{0}, []env.State{s}, out); err != nil {
					t.Fatal(err)
				}
				if gain, ok := gains[out[0]]; !ok || gain != best {
					t.Fatalf("%s: greedy played %s, gaining %v where %v was to be had, in\n%v",
						name, g.FormatAction(out[0]), gain, best, s)
				}
				chosen[out[0]] = true
			}
			if len(chosen) > 1 {
				tied++
			}
		}
		if capturing < 20 || tied == 0 {
			t.Errorf("%s: %d positions with a capture, %d ties broken two ways: too few to test", name, capturing, tied)
		}
	}
}
