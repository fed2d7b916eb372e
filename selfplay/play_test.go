package selfplay

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/mcts"
)

// countingUniform is the uniform evaluator counting the positions it
// scores.
type countingUniform struct{ n *atomic.Int64 }

func (c countingUniform) Evaluate(states []env.State, priors, values []float32) error {
	c.n.Add(int64(len(states)))
	return mcts.Uniform{}.Evaluate(states, priors, values)
}

// TestEveryWorkerGetsGames: a generation with fewer games than one
// worker's concurrent games still gives every worker some to play.
func TestEveryWorkerGetsGames(t *testing.T) {
	for _, tc := range []struct{ workers, games, concurrent int }{
		{4, 8, 64}, {3, 7, 64}, {2, 128, 64}, {8, 8, 1}, {5, 3, 64},
	} {
		search := DefaultSearch()
		search.Full, search.Fast = 8, 4
		settings := DefaultSettings()
		settings.Workers, settings.Games, settings.Concurrent, settings.BatchSize = tc.workers, tc.games, tc.concurrent, 4
		var mu sync.Mutex
		var counts []*atomic.Int64
		played := 0
		_, err := PlayGames(context.Background(), tictactoe.Game{}, search, settings, 1, func() (mcts.Evaluator, error) {
			mu.Lock()
			defer mu.Unlock()
			n := new(atomic.Int64)
			counts = append(counts, n)
			return countingUniform{n}, nil
		}, func(GameRecord) { played++ })
		if err != nil {
			t.Fatal(err)
		}
		if played != tc.games {
			t.Errorf("%+v: %d games played", tc, played)
		}
		busy := 0
		for _, n := range counts {
			if n.Load() > 0 {
				busy++
			}
		}
		if want := min(tc.workers, tc.games); busy != want || len(counts) != want {
			t.Errorf("%+v: %d of %d workers evaluated positions, want %d", tc, busy, len(counts), want)
		}
	}
}

func TestSettingsValidateNamesKeys(t *testing.T) {
	for _, tc := range []struct {
		change func(*Settings, *Search)
		key    string
	}{
		{func(s *Settings, _ *Search) { s.Games = 0 }, "games_per_generation"},
		{func(s *Settings, _ *Search) { s.BatchSize = 5000 }, "batch_size"},
		{func(s *Settings, _ *Search) { s.Start = -1 }, "temperature"},
		{func(s *Settings, _ *Search) { s.ResignThreshold = 0.5 }, "resign_threshold"},
		{func(_ *Settings, q *Search) { q.Fast = q.Full + 1 }, "playouts_fast"},
		{func(_ *Settings, q *Search) { q.DirichletWeight = 2 }, "noise_weight"},
		{func(_ *Settings, q *Search) { q.CPUCT = 0 }, "cpuct"},
		{func(s *Settings, _ *Search) { s.SearchValueWeight = 1.5 }, "search_value_weight"},
		{func(s *Settings, _ *Search) { s.PolicySurpriseWeight = -0.5 }, "policy_surprise_weight"},
		{func(s *Settings, _ *Search) { s.ForkFraction = 1.5 }, "fork_fraction"},
		{func(s *Settings, _ *Search) { s.EvalCache = 1000 }, "eval_cache"},
		{func(s *Settings, _ *Search) { s.EvalCache = -1 }, "eval_cache"},
		{func(s *Settings, _ *Search) { s.EvalCache = 2 * maxEvalCache }, "eval_cache"},
	} {
		s, q := DefaultSettings(), DefaultSearch()
		tc.change(&s, &q)
		err := s.Validate()
		if err == nil {
			err = q.Validate()
		}
		if err == nil || err.Error()[:len(tc.key)] != tc.key {
			t.Errorf("error %v, want one starting with %s", err, tc.key)
		}
	}
	if err := DefaultSettings().Validate(); err != nil {
		t.Error(err)
	}
	if err := DefaultSearch().Validate(); err != nil {
		t.Error(err)
	}
}

// sameGames plays eight tic-tac-toe games on one worker with the uniform
// evaluator, every move a full search of 16 playouts and no resignation:
// with the same search and seed, settings that change only the targets
// (change) play the same games.
func sameGames(t *testing.T, search Search, seed uint64, change func(*Settings)) []GameRecord {
	t.Helper()
	search.Full, search.Fast, search.FullFraction = 16, 16, 1
	settings := DefaultSettings()
	settings.Games, settings.Concurrent, settings.BatchSize, settings.Workers = 8, 8, 8, 1
	settings.ResignThreshold = -1
	change(&settings)
	var out []GameRecord
	_, err := PlayGames(context.Background(), tictactoe.Game{}, search, settings, seed,
		func() (mcts.Evaluator, error) { return mcts.Uniform{}, nil },
		func(r GameRecord) { out = append(out, r) })
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSearchValueWeightMixesTargets plays the same games (one worker, one
// seed: the weight changes the targets, not the play) with the value
// target the outcome alone, the search's value alone, and half of each:
// the outcome is a game result, the search's value is not always one,
// and half of each is their mean, sample by sample.
func TestSearchValueWeightMixesTargets(t *testing.T) {
	targets := func(weight float64) []float32 {
		var out []float32
		for _, r := range sameGames(t, DefaultSearch(), 3, func(s *Settings) { s.SearchValueWeight = weight }) {
			for _, s := range r.Samples {
				out = append(out, s.Outcome)
			}
		}
		return out
	}
	outcome, value, half := targets(0), targets(1), targets(0.5)
	if len(outcome) == 0 || len(value) != len(outcome) || len(half) != len(outcome) {
		t.Fatalf("%d, %d and %d samples: the same games were not played", len(outcome), len(value), len(half))
	}
	fractional := 0
	for i := range outcome {
		if o := outcome[i]; o != -1 && o != 0 && o != 1 {
			t.Fatalf("sample %d: target %v with weight 0, want a game result", i, o)
		}
		if v := value[i]; v < -1 || v > 1 {
			t.Fatalf("sample %d: target %v with weight 1, outside [-1, 1]", i, v)
		} else if v != -1 && v != 0 && v != 1 {
			fractional++
		}
		if want := (outcome[i] + value[i]) / 2; math.Abs(float64(half[i]-want)) > 1e-6 {
			t.Errorf("sample %d: target %v with weight 0.5, want %v, the mean of %v and %v", i, half[i], want, outcome[i], value[i])
		}
	}
	if fractional == 0 {
		t.Errorf("all %d targets with weight 1 are game results: the search's value was not used", len(value))
	}
}

// halfCached answers every other position it is given from a "cache",
// as an nn.BatchEvaluator with one reports it, and counts the rest.
type halfCached struct {
	mcts.Uniform
	hits, lookups, scored *atomic.Int64
}

func (h halfCached) Evaluate(states []env.State, priors, values []float32) error {
	h.hits.Add(int64(len(states) / 2))
	h.lookups.Add(int64(len(states)))
	h.scored.Add(int64(len(states) - len(states)/2))
	return h.Uniform.Evaluate(states, priors, values)
}

func (h halfCached) CacheStats() (int64, int64) { return h.hits.Load(), h.lookups.Load() }

// TestStatsCountCacheHitsApart: the positions an evaluator's cache
// answers are counted as cached, not as the network's evaluations.
func TestStatsCountCacheHitsApart(t *testing.T) {
	var hits, lookups, scored atomic.Int64
	settings := DefaultSettings()
	settings.Games, settings.Workers, settings.Concurrent, settings.BatchSize = 4, 1, 4, 3
	search := DefaultSearch()
	search.Full, search.Fast, search.FullFraction = 8, 8, 1
	stats, err := PlayGames(context.Background(), tictactoe.Game{}, search, settings, 1, func() (mcts.Evaluator, error) {
		return halfCached{hits: &hits, lookups: &lookups, scored: &scored}, nil
	}, func(GameRecord) {})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Cached != hits.Load() || stats.Evaluations != scored.Load() || stats.Cached == 0 {
		t.Errorf("stats: %d evaluations, %d cached; the evaluator scored %d and its cache answered %d",
			stats.Evaluations, stats.Cached, scored.Load(), hits.Load())
	}
}
