package records

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/othello"
)

// fixedEvaluator answers every position with priors from rank, which
// orders the legal moves (a lower rank, a higher prior; equal ranks give
// equal priors), and a constant value.
type fixedEvaluator struct {
	rank  func(s env.State, a int) int
	value float32
	seen  int
}

func (e *fixedEvaluator) Evaluate(states []env.State, priors, values []float32) error {
	actions := len(priors) / len(states)
	clear(priors)
	for i, s := range states {
		for _, a := range s.LegalActions(nil) {
			priors[i*actions+a] = 1 / float32(1+e.rank(s, a))
		}
		values[i] = e.value
	}
	e.seen += len(states)
	return nil
}

// playedMoves maps each decision of the games to the move played there.
func playedMoves(g env.Game, games []Game) map[string]int {
	played := map[string]int{}
	for i := range games {
		s := g.NewState()
		for _, a := range games[i].actions {
			played[s.String()] = int(a)
			s.Apply(int(a))
		}
	}
	return played
}

// TestMeasure measures evaluators whose answers are known: one that
// always ranks the move played first, second or fourth, one whose priors
// are all equal (agreeing with one move in as many as there are), and a
// value that is always 0 or always right.
func TestMeasure(t *testing.T) {
	g := othello.Othello()
	var lines []string
	for seed := range uint64(12) {
		moves, final := randomGame(t, g, 100+seed, 200)
		lines = append(lines, line(moves, env.ResultName(final), "othello"))
	}
	set := loadLines(t, g, lines...)
	// One game for the evaluators that know the move played: the games
	// share positions (the start, at least) where they differ in it.
	one := set.Games[:1]
	played := playedMoves(g, one)
	// The mean of min(1, k/legal) over the decisions, what an even policy
	// scores, and of the squared results, what a value of 0 scores.
	var positions, even1, even3, squared float64
	for i := range set.Games {
		s := g.NewState()
		game := &set.Games[i]
		for _, a := range game.actions {
			if legal := len(s.LegalActions(nil)); legal > 1 {
				positions++
				even1 += 1 / float64(legal)
				even3 += min(1, 3/float64(legal))
				r := float64(game.result[s.ToMove()])
				squared += r * r
			}
			s.Apply(int(a))
		}
	}
	playedAt := func(place int) func(s env.State, a int) int {
		return func(s env.State, a int) int {
			if a == played[s.String()] {
				return place
			}
			// The others rank apart from each other and from the
			// played move: by action, past the played move's place.
			if a < place {
				return a
			}
			return a + 100
		}
	}
	eval := &fixedEvaluator{rank: func(env.State, int) int { return 0 }}
	a, err := Measure(context.Background(), eval, g, set.Games, MeasureOptions{Batch: 7, Seed: 1, Resamples: 200})
	if err != nil {
		t.Fatal(err)
	}
	if a.Positions != int(positions) || eval.seen != a.Positions || a.Games != len(set.Games) {
		t.Fatalf("%d positions of %d games, %d evaluated; want %v of %d", a.Positions, a.Games, eval.seen, positions, len(set.Games))
	}
	near(t, "even priors' top-1", a.Top1, even1/positions)
	near(t, "even priors' top-3", a.Top3, even3/positions)
	if a.Top1.Low == a.Top1.High {
		t.Errorf("top-1's interval over %d games is the point %v", a.Games, a.Top1.Low)
	}
	if a.ValueMSE == nil {
		t.Fatal("no value error")
	}
	near(t, "value error of a value of 0", *a.ValueMSE, squared/positions)
	if math.Abs(a.ConstantMSE-squared/positions) > 1e-9 {
		t.Errorf("constant error %v, want %v", a.ConstantMSE, squared/positions)
	}

	// A value always right has no error.
	right := &rightValue{fixedEvaluator{rank: playedAt(0)}, one[0].result}
	a, err = Measure(context.Background(), right, g, one, MeasureOptions{Seed: 1, Resamples: 50})
	if err != nil || a.ValueMSE == nil || a.ValueMSE.Value != 0 {
		t.Fatalf("a value always right: %+v, error %v", a, err)
	}

	// Ranked first, second or fourth: in the top three, or not.
	for _, place := range []int{0, 1, 3} {
		eval := &fixedEvaluator{rank: playedAt(place)}
		a, err := Measure(context.Background(), eval, g, one, MeasureOptions{Batch: 5, Seed: 1, Resamples: 50})
		if err != nil {
			t.Fatal(err)
		}
		// A position of fewer legal moves than the place ranks the
		// played move higher: count them as the measure does.
		var top1, top3, n float64
		for i := range one {
			s := g.NewState()
			for _, a := range one[i].actions {
				if legal := s.LegalActions(nil); len(legal) > 1 {
					above := 0
					for _, b := range legal {
						if b != int(a) && playedAt(place)(s, b) < place {
							above++
						}
					}
					n++
					if above < 1 {
						top1++
					}
					if above < 3 {
						top3++
					}
				}
				s.Apply(int(a))
			}
		}
		if place == 0 && (top1 != n || top3 != n) {
			t.Fatalf("the test's count: ranked first, %v and %v of %v in the top 1 and 3", top1, top3, n)
		}
		near(t, fmt.Sprintf("top-1 ranked at %d", place), a.Top1, top1/n)
		near(t, fmt.Sprintf("top-3 ranked at %d", place), a.Top3, top3/n)
	}
}

// rightValue is a fixedEvaluator whose value is the game's result.
type rightValue struct {
	fixedEvaluator
	result [2]float32
}

func (e *rightValue) Evaluate(states []env.State, priors, values []float32) error {
	if err := e.fixedEvaluator.Evaluate(states, priors, values); err != nil {
		return err
	}
	for i, s := range states {
		values[i] = e.result[s.ToMove()]
	}
	return nil
}

// near checks an estimate's value and that its interval holds it.
func near(t *testing.T, what string, e Estimate, want float64) {
	t.Helper()
	if math.Abs(e.Value-want) > 1e-9 {
		t.Errorf("%s: %v, want %v", what, e.Value, want)
	}
	if !(e.Low <= e.Value && e.Value <= e.High) {
		t.Errorf("%s: interval [%v, %v] leaves out %v", what, e.Low, e.High, e.Value)
	}
}

// TestMeasureSubset: MaxPositions measures exactly that many, the same
// ones for the same seed, other ones for another.
func TestMeasureSubset(t *testing.T) {
	g := othello.Othello()
	var lines []string
	for seed := range uint64(20) {
		moves, final := randomGame(t, g, 200+seed, 200)
		lines = append(lines, line(moves, env.ResultName(final), "othello"))
	}
	set := loadLines(t, g, lines...)
	rng := rand.New(rand.NewPCG(5, 6))
	scores := map[string]int{}
	eval := &fixedEvaluator{rank: func(s env.State, a int) int {
		key := s.String() + g.FormatAction(a)
		if _, ok := scores[key]; !ok {
			scores[key] = rng.IntN(5)
		}
		return scores[key]
	}}
	measure := func(seed uint64) Agreement {
		a, err := Measure(context.Background(), eval, g, set.Games, MeasureOptions{MaxPositions: 100, Seed: seed, Resamples: 100})
		if err != nil {
			t.Fatal(err)
		}
		if a.Positions != 100 {
			t.Fatalf("%d positions measured, want 100", a.Positions)
		}
		return a
	}
	first, again, other := measure(1), measure(1), measure(2)
	if !reflect.DeepEqual(first, again) {
		t.Errorf("the same seed measured %+v, then %+v", first, again)
	}
	if first.Top1 == other.Top1 && first.Top3 == other.Top3 {
		t.Errorf("seeds 1 and 2 measured the same positions' figures %+v", first.Top1)
	}
}

func TestTopK(t *testing.T) {
	priors := []float32{0.4, 0.2, 0.2, 0.1, 0.1, 0}
	legal := []int{0, 1, 2, 3, 4}
	cases := []struct {
		played, k int
		want      float64
	}{
		{0, 1, 1},
		{1, 1, 0},
		{1, 2, 0.5}, // tied with action 2 for second place
		{1, 3, 1},
		{3, 3, 0},
		{3, 4, 0.5},
		{4, 5, 1},
	}
	for _, c := range cases {
		if got := topK(priors, legal, c.played, c.k); got != c.want {
			t.Errorf("action %d in the top %d: %v, want %v", c.played, c.k, got, c.want)
		}
	}
}

func TestMeasureNothing(t *testing.T) {
	if _, err := Measure(context.Background(), &fixedEvaluator{}, othello.Othello(), nil, MeasureOptions{}); err == nil {
		t.Error("measured no positions without an error")
	}
}
