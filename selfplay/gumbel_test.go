package selfplay

import (
	"context"
	"fmt"
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

// With gumbel_temperature a move's Gumbel noise follows the temperature
// schedule: at temperature 0 throughout, every game is the one the
// search prefers without noise; without it the noise varies the games.
func TestGumbelTemperatureScalesNoise(t *testing.T) {
	for _, scaled := range []bool{false, true} {
		search := DefaultSearch()
		search.Mode = mcts.Gumbel
		search.Full, search.Fast, search.FullFraction = 16, 16, 1
		settings := DefaultSettings()
		settings.Games, settings.Concurrent, settings.BatchSize, settings.Workers = 12, 4, 4, 1
		settings.Temperature = mcts.Temperature{Start: 0, End: 0}
		settings.GumbelTemperature = scaled
		games := map[string]bool{}
		_, err := PlayGames(context.Background(), tictactoe.Game{}, search, settings, 3,
			func() (mcts.Evaluator, error) { return mcts.Uniform{}, nil },
			func(r GameRecord) { games[fmt.Sprint(r.Actions)] = true })
		if err != nil {
			t.Fatal(err)
		}
		if scaled && len(games) != 1 {
			t.Errorf("gumbel_temperature at temperature 0: %d different games, want 1", len(games))
		}
		if !scaled && len(games) < 2 {
			t.Errorf("the paper's noise: %d different games in 12, want several", len(games))
		}
	}
}

func TestGumbelNoiseScaleFollowsSchedule(t *testing.T) {
	s := DefaultSettings()
	s.Temperature = mcts.Temperature{Start: 0.8, End: 0.2, HalfLife: 10}
	for _, ply := range []int{0, 10, 40} {
		if got := s.gumbelNoiseScale(ply); got != 1 {
			t.Errorf("off: ply %d scale %v, want 1", ply, got)
		}
	}
	s.GumbelTemperature = true
	for _, ply := range []int{0, 10, 40} {
		if got, want := s.gumbelNoiseScale(ply), s.Temperature.At(ply); got != want {
			t.Errorf("on: ply %d scale %v, want the temperature %v", ply, got, want)
		}
	}
}
