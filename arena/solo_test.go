package arena

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/mcts"
	"github.com/flipzero/flipzero/player"
)

// uniformSearch is a PUCT search over the uniform evaluator: it has no
// random numbers, so the same position always gets the same move.
func uniformSearch(label string, playouts int) player.Player {
	return &player.SearchPlayer{Label: label, Playouts: playouts, Config: mcts.DefaultConfig(),
		NewEvaluator: func(env.Game, int, uint64) (mcts.Evaluator, error) { return mcts.Uniform{}, nil }}
}

// checkDeals replays every game of a one-player match: each is legal,
// ends with the score recorded, and met at every chance node the outcome
// its deal fixed — the same deal for every player.
func checkDeals(t *testing.T, g env.Game, r SoloResult, seed uint64) {
	t.Helper()
	for _, rec := range r.Games {
		deal := env.NewDeal(g, DealSeed(seed, rec.Deal))
		s := g.NewState()
		for i, text := range rec.Moves {
			a, err := env.ParseLegal(s, text)
			if err != nil {
				t.Fatalf("%s deal %d move %d: %v", rec.Name, rec.Deal, i+1, err)
			}
			if env.IsChance(s) {
				if want, _ := deal.Outcome(s); a != want {
					t.Fatalf("%s deal %d move %d: %s turned up where the deal has %s", rec.Name, rec.Deal, i+1, text, g.FormatAction(want))
				}
			}
			s.Apply(a)
		}
		if !s.Terminal() || env.ResultName(s) != rec.Outcome || s.(env.Scorer).Score() != rec.Score ||
			r.Scores[rec.Player][rec.Deal] != rec.Score {
			t.Fatalf("%s deal %d: recorded %s (%v), the moves give %s", rec.Name, rec.Deal, rec.Outcome, rec.Score, env.ResultName(s))
		}
	}
}

// TestSoloSamePlayerTwice: a deterministic player listed twice plays every
// deal the same way both times, which it can only do when both meet the
// same faces: the paired difference is exactly 0 on every deal.
func TestSoloSamePlayerTwice(t *testing.T) {
	g := game(t, "reversi-solitaire")
	const deals, seed = 12, 7
	r, err := RunSolo(context.Background(), g, []player.Player{uniformSearch("u1", 24), uniformSearch("u2", 24)},
		SoloOptions{Deals: deals, Workers: 2, PerWorker: 3, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	checkDeals(t, g, r, seed)
	if len(r.Games) != 2*deals {
		t.Fatalf("%d games, want %d", len(r.Games), 2*deals)
	}
	for k := 0; k < deals; k++ {
		a, b := r.Games[k], r.Games[deals+k]
		if a.Deal != k || b.Deal != k || strings.Join(a.Moves, ";") != strings.Join(b.Moves, ";") {
			t.Fatalf("deal %d played two ways:\n%s\n%s", k, a.Line(), b.Line())
		}
	}
	d := r.Difference(0, 1)
	if d.N != deals || d.Mean != 0 || d.Min != 0 || d.Max != 0 || d.Low != 0 || d.High != 0 {
		t.Errorf("paired difference %+v, want exactly 0 over %d deals", d, deals)
	}
	if v := r.Versus(0, 1); v.Draws != deals {
		t.Errorf("deal by deal %+v, want %d draws", v, deals)
	}
	// Other deals, other games: the seed reaches the deals.
	other, err := RunSolo(context.Background(), g, []player.Player{uniformSearch("u1", 24)}, SoloOptions{Deals: deals, Workers: 1, Seed: seed + 1})
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for k := 0; k < deals; k++ {
		if strings.Join(other.Games[k].Moves, ";") == strings.Join(r.Games[k].Moves, ";") {
			same++
		}
	}
	if same == deals {
		t.Error("another seed deals the same faces")
	}
}

// TestSoloStrength: greedy, random and a rollout search on the same deals,
// with the statistics each gets: means inside the score's range and
// inside their intervals, the search clearly ahead of greedy deal by deal.
func TestSoloStrength(t *testing.T) {
	g := game(t, "reversi-solitaire")
	const deals, seed = 40, 3
	players := []player.Player{named(t, "greedy"), named(t, "random"), named(t, "mcts:40")}
	finished := 0
	r, err := RunSolo(context.Background(), g, players, SoloOptions{Deals: deals, Seed: seed, Progress: func(n int) { finished = n }})
	if err != nil {
		t.Fatal(err)
	}
	checkDeals(t, g, r, seed)
	if finished != 3*deals {
		t.Errorf("progress reached %d games, want %d", finished, 3*deals)
	}
	max := g.NewState().(env.Scorer).MaxScore()
	for i, name := range r.Players {
		s := r.Stats(i)
		t.Logf("%s: mean %.2f [%.2f, %.2f], min %v, max %v", name, s.Mean, s.Low, s.High, s.Min, s.Max)
		if s.N != deals || !(s.Mean >= 0 && s.Mean <= max) || !(s.Low < s.Mean && s.Mean < s.High) || s.Min < 0 || s.Max > max {
			t.Errorf("%s: %+v, want %d deals with a mean in [0, %v] inside its interval", name, s, deals, max)
		}
	}
	d := r.Difference(2, 0)
	t.Logf("mcts:40 - greedy: %.2f [%.2f, %.2f], %+v", d.Mean, d.Low, d.High, r.Versus(2, 0))
	if !(d.Low > 0) || r.Versus(2, 0).Wins <= r.Versus(2, 0).Losses {
		t.Errorf("mcts:40 − greedy: %+v, %+v: want the search clearly ahead", d, r.Versus(2, 0))
	}
	if got := r.Stats(2).Mean - r.Stats(0).Mean; math.Abs(got-d.Mean) > 1e-9 {
		t.Errorf("the mean of the differences %v is not the difference of the means %v", d.Mean, got)
	}
}

func TestScoreStats(t *testing.T) {
	nan := math.NaN()
	for _, tt := range []struct {
		values               []float64
		n                    int
		mean, low, high, sdv float64
	}{
		// t(3) at 97.5% is 3.1824: 2.5 ± 3.1824·1.2910/2.
		{[]float64{1, 2, 3, 4}, 4, 2.5, 0.4457, 4.5543, 1.2910},
		{[]float64{5, nan, 5, 5}, 3, 5, 5, 5, 0},
		{[]float64{7}, 1, 7, nan, nan, nan},
	} {
		s := statsOf(tt.values)
		near := func(a, b float64) bool { return math.IsNaN(a) && math.IsNaN(b) || math.Abs(a-b) < 1e-3 }
		if s.N != tt.n || !near(s.Mean, tt.mean) || !near(s.Low, tt.low) || !near(s.High, tt.high) || !near(s.SD, tt.sdv) {
			t.Errorf("statsOf(%v) = %+v, want n %d mean %v [%v, %v] sd %v", tt.values, s, tt.n, tt.mean, tt.low, tt.high, tt.sdv)
		}
	}
}

// TestSoloRefusals: each arena refuses the other kind of game, and bad
// options are errors, not panics.
func TestSoloRefusals(t *testing.T) {
	ctx := context.Background()
	solo, duel := game(t, "reversi-solitaire"), game(t, "othello")
	if _, err := RunArena(ctx, solo, named(t, "random"), named(t, "greedy"), ArenaOptions{Games: 2}); err == nil || !strings.Contains(err.Error(), "one-player") {
		t.Errorf("a two-player match of the solitaire: %v", err)
	}
	for _, tt := range []struct {
		g       env.Game
		players []player.Player
		deals   int
		want    string
	}{
		{duel, []player.Player{named(t, "random")}, 2, "not a one-player game"},
		{solo, nil, 2, "no players"},
		{solo, []player.Player{named(t, "random")}, 0, "0 deals"},
		{solo, []player.Player{named(t, "random")}, MaxDeals + 1, "want 1 to"},
		{solo, []player.Player{named(t, "alphabeta:2")}, 2, "evaluation"},
	} {
		if _, err := RunSolo(ctx, tt.g, tt.players, SoloOptions{Deals: tt.deals}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s with %d players, %d deals: %v, want an error saying %q", tt.g.Name(), len(tt.players), tt.deals, err, tt.want)
		}
	}
}

// A one-player match stopped midway says how far it got in one line.
func TestSoloStoppedSaysHowFar(t *testing.T) {
	g := game(t, "reversi-solitaire")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, err := RunSolo(ctx, g, []player.Player{named(t, "random"), named(t, "greedy")}, SoloOptions{
		Deals: 30, Workers: 2, PerWorker: 2, Seed: 3,
		OnGame: func(SoloGame) error {
			cancel()
			return nil
		},
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	n := 0
	for _, rec := range r.Games {
		if rec.Outcome != "unfinished" {
			n++
		}
	}
	if want := fmt.Sprintf("arena: stopped after %d of 60 games: context canceled", n); n == 0 || err.Error() != want {
		t.Errorf("%d games finished, error %q; want some and the one line %q", n, err, want)
	}
}
