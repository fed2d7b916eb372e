package selfplay

import (
	"context"
	"math"
	"testing"

	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/mcts"
)

// In Gumbel mode self-play records the completed-Q policy as the target:
// every legal move has some mass, where visit counts over the 2 moves
// considered would leave the others at 0.
func TestGumbelSelfPlayRecordsImprovedPolicy(t *testing.T) {
	search := DefaultSearch()
	search.Mode, search.GumbelConsidered = mcts.Gumbel, 2
	search.Full, search.Fast, search.FullFraction = 8, 4, 1
	settings := DefaultSettings()
	settings.Games, settings.Concurrent, settings.BatchSize, settings.Workers = 4, 2, 4, 1
	samples := 0
	_, err := PlayGames(context.Background(), tictactoe.Game{}, search, settings, 3,
		func() (mcts.Evaluator, error) { return mcts.Uniform{}, nil },
		func(r GameRecord) {
			for _, s := range r.Samples {
				sum := 0.0
				for i, p := range s.Policy {
					if !(p > 0) {
						t.Errorf("legal move %d has policy %v: not the completed-Q target", s.Legal[i], p)
					}
					sum += float64(p)
				}
				if math.Abs(sum-1) > 1e-5 {
					t.Errorf("policy sums to %v", sum)
				}
				samples++
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	if samples == 0 {
		t.Fatal("no samples recorded")
	}
}
