package selfplay

import (
	"context"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/mcts"
)

// whiteLoses is the uniform evaluator that finds every position won for
// Black, so that White resigns.
type whiteLoses struct{}

func (whiteLoses) Evaluate(states []env.State, priors, values []float32) error {
	if err := (mcts.Uniform{}).Evaluate(states, priors, values); err != nil {
		return err
	}
	for i, s := range states {
		values[i] = 0.99
		if s.ToMove() == 1 {
			values[i] = -0.99
		}
	}
	return nil
}

// TestSamplesCarryTheFinalOwnership: every sample of a game played to its
// end carries the final position's ownership and margin from its mover's
// point of view; a resigned game, which has no final position, carries
// none.
func TestSamplesCarryTheFinalOwnership(t *testing.T) {
	g := othello.Othello()
	for _, tc := range []struct {
		name   string
		eval   mcts.Evaluator
		resign float64
	}{
		{"played out", mcts.Uniform{}, -1},
		{"resigned", whiteLoses{}, -0.9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			search := DefaultSearch()
			search.Full, search.Fast, search.FullFraction = 4, 4, 1
			settings := DefaultSettings()
			settings.Games, settings.Concurrent, settings.BatchSize, settings.Workers = 6, 6, 6, 1
			settings.ResignThreshold, settings.ResignMoves, settings.NoResignFraction = tc.resign, 1, 0
			games, samples := 0, 0
			owned := make([]float32, 64)
			_, err := PlayGames(context.Background(), g, search, settings, 5,
				func() (mcts.Evaluator, error) { return tc.eval, nil },
				func(r GameRecord) {
					games++
					final := g.NewState()
					for _, a := range r.Actions {
						final.Apply(a)
					}
					// Each sample's mover: the player at each decision
					// with more than one legal move (the others are
					// played without a search).
					s := g.NewState()
					movers := []env.Player{}
					for _, a := range r.Actions {
						if len(s.LegalActions(nil)) > 1 {
							movers = append(movers, s.ToMove())
						}
						s.Apply(a)
					}
					if r.Resigned != (tc.resign > -1) {
						t.Fatalf("resigned %v in the %s games", r.Resigned, tc.name)
					}
					for i, smp := range r.Samples {
						samples++
						if r.Resigned {
							if smp.HasOwnership() || smp.Margin != 0 {
								t.Fatalf("sample %d of a resigned game has auxiliary targets", i)
							}
							continue
						}
						mover := movers[i]
						final.(env.Ownership).Ownership(mover, owned)
						for c, o := range owned {
							if smp.Ownership[c] != int8(o) {
								t.Fatalf("sample %d: cell %d's ownership %d, the final position's for the mover %v", i, c, smp.Ownership[c], o)
							}
						}
						if m := final.(env.Ownership).ScoreMargin(mover); smp.Margin != m {
							t.Fatalf("sample %d: margin %v, want %v", i, smp.Margin, m)
						}
					}
				})
			if err != nil {
				t.Fatal(err)
			}
			if games != 6 || samples == 0 {
				t.Fatalf("%d games, %d samples", games, samples)
			}
		})
	}
}
