package selfplay

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/solitaire"
	"github.com/flipzero/flipzero/mcts"
)

// pessimist is the uniform evaluator with every position valued near the
// worst result, so that any game that may resign does so at once.
type pessimist struct{}

func (pessimist) Evaluate(states []env.State, priors, values []float32) error {
	if err := (mcts.Uniform{}).Evaluate(states, priors, values); err != nil {
		return err
	}
	for i := range values {
		values[i] = -0.99
	}
	return nil
}

// TestSolitaireSamples plays the solitaire, every decision a full search,
// and replays each game: the samples are exactly its decisions (never a
// chance node, where nobody decides), each with the game's final
// normalised score as its outcome; the record gives the score; and a
// value that would make a two-player game resign does not end a
// one-player game.
func TestSolitaireSamples(t *testing.T) {
	for _, g := range []solitaire.Game{solitaire.Default(), solitaire.DefaultSum()} {
		t.Run(g.Name(), func(t *testing.T) {
			settings := DefaultSettings()
			settings.Games, settings.Concurrent, settings.BatchSize, settings.Workers = 6, 3, 4, 2
			settings.ResignThreshold, settings.ResignMoves, settings.NoResignFraction = -0.5, 1, 0
			search := DefaultSearch()
			search.Full, search.Fast, search.FullFraction = 8, 8, 1
			var records []GameRecord
			_, err := PlayGames(context.Background(), g, search, settings, 5,
				func() (mcts.Evaluator, error) { return pessimist{}, nil },
				func(r GameRecord) { records = append(records, r) })
			if err != nil {
				t.Fatal(err)
			}
			if len(records) != settings.Games {
				t.Fatalf("%d records, want %d", len(records), settings.Games)
			}
			planes, h, w := g.EncodedShape()
			reveals, scores := 0, map[float64]bool{}
			for i, r := range records {
				if r.Resigned {
					t.Fatalf("game %d was resigned", i)
				}
				// The decisions met in the game, by their encoding.
				var decisions [][]float32
				s := g.NewState()
				for _, a := range r.Actions {
					if !s.IsLegal(a) {
						t.Fatalf("game %d: %s is not legal", i, g.FormatAction(a))
					}
					if env.IsChance(s) {
						reveals++
					} else if len(s.LegalActions(nil)) > 1 {
						enc := make([]float32, planes*h*w)
						s.Encode(enc)
						decisions = append(decisions, enc)
					}
					s.Apply(a)
				}
				if !s.Terminal() {
					t.Fatalf("game %d does not end where its record does", i)
				}
				score := s.(env.Scorer).Score()
				scores[score] = true
				if r.Score != score || r.Result != fmt.Sprintf("score %g", score) {
					t.Errorf("game %d: record says score %v, %q; the moves give %v", i, r.Score, r.Result, score)
				}
				if len(r.Samples) != len(decisions) {
					t.Fatalf("game %d: %d samples for %d decisions", i, len(r.Samples), len(decisions))
				}
				want := env.Value(s, 0)
				for k, smp := range r.Samples {
					if !slices.Equal(smp.Planes, decisions[k]) {
						t.Fatalf("game %d sample %d is not the game's decision %d", i, k, k)
					}
					for _, a := range smp.Legal {
						if int(a) >= solitaire.Reveal {
							t.Fatalf("game %d sample %d has the reveal %s as a choice", i, k, g.FormatAction(int(a)))
						}
					}
					if smp.Outcome != want {
						t.Fatalf("game %d sample %d: outcome %v, want the normalised score %v", i, k, smp.Outcome, want)
					}
					if err := smp.Validate(g); err != nil {
						t.Fatalf("game %d sample %d: %v", i, k, err)
					}
				}
			}
			if reveals == 0 {
				t.Error("no token was turned up in any game")
			}
			t.Logf("%d games, %d reveals, scores %v", len(records), reveals, scores)
		})
	}
}
