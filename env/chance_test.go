package env_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/env/solitaire"
	"github.com/flipzero/flipzero/env/tictactoe"
)

func TestNormalizedScore(t *testing.T) {
	tests := []struct {
		score, best float64
		want        float32
	}{
		{0, 24, -1}, {24, 24, 1}, {12, 24, 0}, {6, 24, -0.5}, {30, 24, 1}, {-3, 24, -1}, {5, 0, 0},
	}
	for _, tt := range tests {
		if got := env.NormalizedScore(tt.score, tt.best); got != tt.want {
			t.Errorf("NormalizedScore(%v, %v) = %v, want %v", tt.score, tt.best, got, tt.want)
		}
	}
}

func TestSampleOutcome(t *testing.T) {
	outcomes := []env.Outcome{{Action: 3, Prob: 0.25}, {Action: 5, Prob: 0.5}, {Action: 9, Prob: 0.25}}
	tests := []struct {
		u    float64
		want int
	}{
		{0, 3}, {0.2499, 3}, {0.25, 5}, {0.7499, 5}, {0.75, 9}, {0.9999999, 9}, {1.5, 9},
	}
	for _, tt := range tests {
		if got := env.SampleOutcome(outcomes, tt.u); got != tt.want {
			t.Errorf("u = %v: outcome %d, want %d", tt.u, got, tt.want)
		}
	}
}

func TestCheckOutcomes(t *testing.T) {
	tests := []struct {
		outcomes []env.Outcome
		ok       bool
	}{
		{[]env.Outcome{{1, 0.5}, {2, 0.5}}, true},
		{[]env.Outcome{{1, 1}}, true},
		{nil, false},
		{[]env.Outcome{{1, 0.5}, {2, 0.4}}, false},
		{[]env.Outcome{{2, 0.5}, {1, 0.5}}, false},
		{[]env.Outcome{{1, 0}, {2, 1}}, false},
		{[]env.Outcome{{1, 1.5}, {2, -0.5}}, false},
	}
	for _, tt := range tests {
		if err := env.CheckOutcomes(tt.outcomes); (err == nil) != tt.ok {
			t.Errorf("%v: error %v, want ok %v", tt.outcomes, err, tt.ok)
		}
	}
}

// TestRandomDrawsAsBefore checks that random play of a game without
// chance draws the same actions as the plain legal[rng.IntN(n)] it
// replaced, so that seeds kept elsewhere still mean the same games.
func TestRandomDrawsAsBefore(t *testing.T) {
	g := othello.Othello()
	r := env.NewRandom(g, rand.New(rand.NewPCG(5, 6)))
	plain := rand.New(rand.NewPCG(5, 6))
	a, b := g.NewState(), g.NewState()
	buf := make([]int, 0, g.ActionSpace())
	for plies := 0; !a.Terminal(); plies++ {
		x := r.Action(a)
		legal := b.LegalActions(buf)
		y := legal[plain.IntN(len(legal))]
		if x != y {
			t.Fatalf("ply %d: %s, want %s", plies, g.FormatAction(x), g.FormatAction(y))
		}
		a.Apply(x)
		b.Apply(y)
	}
}

func TestTwoPlayerGamesUnchanged(t *testing.T) {
	if env.Players(tictactoe.Game{}) != 2 || env.IsChance(tictactoe.Game{}.NewState()) {
		t.Error("tic-tac-toe is not a two-player game without chance")
	}
	s, err := env.Play(tictactoe.Game{}, "a1;b1;a2;b2;a3")
	if err != nil {
		t.Fatal(err)
	}
	if env.Value(s, 0) != 1 || env.Value(s, 1) != -1 || env.ResultName(s) != s.Game().PlayerName(0) {
		t.Errorf("values %v %v, result %q", env.Value(s, 0), env.Value(s, 1), env.ResultName(s))
	}
}

// undealt is the solitaire without its Dealer, for NewDeal's fallback.
type undealt struct{ env.Game }

// dealGame plays one random game of g, answering its chance nodes from
// deal, and returns the outcomes dealt in order.
func dealGame(t *testing.T, g env.Game, deal env.Deal, seed uint64) []int {
	t.Helper()
	r := env.NewRandom(g, rand.New(rand.NewPCG(seed, 1)))
	var dealt []int
	s := g.NewState()
	for !s.Terminal() {
		if !env.IsChance(s) {
			if _, ok := deal.Outcome(s); ok {
				t.Fatal("a deal answers a decision node")
			}
			s.Apply(r.Action(s))
			continue
		}
		a, ok := deal.Outcome(s)
		if !ok || !s.IsLegal(a) {
			t.Fatalf("dealt %d (%v), not a legal outcome", a, ok)
		}
		dealt = append(dealt, a)
		s.Apply(a)
	}
	return dealt
}

// TestNewDeal: a game's own deal and the fallback both answer every
// chance node with a legal outcome, the same seed and the same play
// meeting the same outcomes, another seed other ones.
func TestNewDeal(t *testing.T) {
	for _, g := range []env.Game{solitaire.Default(), undealt{solitaire.Default()}} {
		differs := false
		for seed := uint64(0); seed < 20; seed++ {
			a := dealGame(t, g, env.NewDeal(g, seed), seed)
			b := dealGame(t, g, env.NewDeal(g, seed), seed)
			c := dealGame(t, g, env.NewDeal(g, seed+100), seed)
			if !slices.Equal(a, b) {
				t.Fatalf("%T seed %d: one play, one seed, two deals: %v and %v", g, seed, a, b)
			}
			differs = differs || !slices.Equal(a, c)
		}
		if !differs {
			t.Errorf("%T: twenty seeds deal as their neighbours do", g)
		}
	}
	if _, ok := env.NewDeal(tictactoe.Game{}, 1).Outcome(tictactoe.Game{}.NewState()); ok {
		t.Error("the deal of a game without chance answers a decision")
	}
}
