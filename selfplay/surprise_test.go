package selfplay

import (
	"math"
	"testing"

	"github.com/flipzero/flipzero/data"
	"github.com/flipzero/flipzero/mcts"
)

func TestPolicySurprise(t *testing.T) {
	for _, tc := range []struct {
		name   string
		priors []float32 // of actions 0, 1, ...
		policy []float32
		want   float64
	}{
		{"the search agrees", []float32{0.25, 0.75}, []float32{0.25, 0.75}, 0},
		{"all on one of two even moves", []float32{0.5, 0.5}, []float32{1, 0}, math.Log(2)},
		{"half on a move of prior 0.1", []float32{0.9, 0.1}, []float32{0.5, 0.5}, 0.5*math.Log(0.5/0.9) + 0.5*math.Log(0.5/0.1)},
		{"a move of prior zero", []float32{1, 0}, []float32{0.5, 0.5}, 0.5*math.Log(0.5) + 0.5*math.Log(0.5/surprisePriorFloor)},
	} {
		r := mcts.Result{Policy: tc.policy}
		for a, p := range tc.priors {
			r.Children = append(r.Children, mcts.Child{Action: a, Prior: p})
		}
		if got := policySurprise(&r); math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("%s: surprise %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSurpriseWeight(t *testing.T) {
	for _, tc := range []struct {
		surprise, mean, f float64
		want              float32
	}{
		{surprise: 0.2, mean: 0.2, f: 0.5, want: 1},    // an average sample
		{surprise: 0, mean: 0.2, f: 0.5, want: 0.5},    // no surprise: the even half
		{surprise: 0.6, mean: 0.2, f: 0.5, want: 2},    // three times the mean
		{surprise: 0.6, mean: 0.2, f: 1, want: 3},      // all by surprise
		{surprise: 0.6, mean: 0.2, f: 0.25, want: 1.5}, // a quarter by surprise
		{surprise: 1000, mean: 1, f: 0.5, want: data.MaxWeight},
	} {
		if got := surpriseWeight(tc.surprise, tc.mean, tc.f); math.Abs(float64(got-tc.want)) > 1e-6 {
			t.Errorf("surpriseWeight(%v, %v, %v) = %v, want %v", tc.surprise, tc.mean, tc.f, got, tc.want)
		}
	}
}

// TestPolicySurpriseWeighting plays the same games (one worker, one seed:
// the weights change the training, not the play) with and without policy
// surprise weighting, in Gumbel mode with the uniform evaluator, whose
// prior the search keeps as it is. Without it every sample weighs 1; with
// it each game's weights add up to its number of samples, and each is
// 1 − f plus f times its surprise over the game's mean, the surprise
// recomputed here from the sample's own policy target against the
// uniform prior.
func TestPolicySurpriseWeighting(t *testing.T) {
	const f = 0.5
	games := func(weight float64) []GameRecord {
		search := DefaultSearch()
		search.Mode, search.GumbelConsidered = mcts.Gumbel, 4
		return sameGames(t, search, 5, func(s *Settings) { s.PolicySurpriseWeight = weight })
	}
	plain, weighted := games(0), games(f)
	if len(plain) == 0 || len(weighted) != len(plain) {
		t.Fatalf("%d and %d games: the same games were not played", len(plain), len(weighted))
	}
	varied := 0
	for g := range plain {
		a, b := plain[g].Samples, weighted[g].Samples
		if len(a) == 0 || len(b) != len(a) {
			t.Fatalf("game %d: %d and %d samples", g, len(a), len(b))
		}
		surprise, mean := make([]float64, len(b)), 0.0
		for i, s := range b {
			for _, p := range s.Policy {
				if p > 0 {
					surprise[i] += float64(p) * math.Log(float64(p)*float64(len(s.Legal)))
				}
			}
			mean += surprise[i] / float64(len(b))
		}
		sum := 0.0
		for i := range b {
			if a[i].Weight != 1 {
				t.Errorf("game %d sample %d weighs %v without surprise weighting, want 1", g, i, a[i].Weight)
			}
			if a[i].Outcome != b[i].Outcome || a[i].Policy[0] != b[i].Policy[0] {
				t.Fatalf("game %d sample %d: targets differ, the same games were not played", g, i)
			}
			want := 1.0
			if mean > 0 {
				want = 1 - f + f*surprise[i]/mean
			}
			if math.Abs(float64(b[i].Weight)-want) > 1e-4 {
				t.Errorf("game %d sample %d weighs %v, want %v (surprise %v, game's mean %v)", g, i, b[i].Weight, want, surprise[i], mean)
			}
			if b[i].Weight != 1 {
				varied++
			}
			sum += float64(b[i].Weight)
		}
		if math.Abs(sum-float64(len(b))) > 1e-4 {
			t.Errorf("game %d: weights add up to %v, want its %d samples", g, sum, len(b))
		}
	}
	if varied == 0 {
		t.Error("every sample weighs 1 with surprise weighting: no sample surprised the search")
	}
}
