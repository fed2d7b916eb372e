package records

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/env/tictactoe"
)

// loadLines loads record lines of g from a file of the test's own.
func loadLines(t testing.TB, g env.Game, lines ...string) *Set {
	t.Helper()
	path := writeFile(t, t.TempDir(), "games.txt", []byte(strings.Join(lines, "\n")+"\n"))
	set, err := Load(context.Background(), g, []string{path}, Options{Unfinished: true})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestPositions checks every sample of a few games against the game
// replayed by hand: the position from the mover's view, the legal moves,
// the smoothed policy on the move played, the result and the final
// board for the mover; forced moves (an Othello pass) and games without
// a result give none.
func TestPositions(t *testing.T) {
	for _, c := range []struct {
		name      string
		game      env.Game
		seeds     []uint64
		smoothing float64
	}{
		{"tictactoe", tictactoe.Game{}, []uint64{1, 2, 3}, 0.1},
		{"othello", othello.Othello(), []uint64{11, 12}, 0.2},
		{"othello unsmoothed", othello.Othello(), []uint64{13}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := c.game
			var lines []string
			type decision struct {
				state  env.State
				played int
				result float32
				final  env.State
			}
			var want []decision
			for _, seed := range c.seeds {
				moves, final := randomGame(t, g, seed, 500)
				lines = append(lines, line(moves, env.ResultName(final), g.Name()))
				s := g.NewState()
				for _, m := range moves {
					a, _ := g.ParseAction(m)
					if len(s.LegalActions(nil)) > 1 {
						want = append(want, decision{s.Clone(), a, env.Value(final, s.ToMove()), final})
					}
					s.Apply(a)
				}
			}
			// A game without a result gives no sample.
			unfinished, _ := randomGame(t, g, 99, 4)
			lines = append(lines, line(unfinished, "unfinished", g.Name()))
			set := loadLines(t, g, lines...)
			p, err := NewPositions(g, set.Games, c.smoothing)
			if err != nil {
				t.Fatal(err)
			}
			if p.Len() != len(want) {
				t.Fatalf("%d samples, want the %d decisions", p.Len(), len(want))
			}
			planes, h, w := g.EncodedShape()
			encoded := make([]float32, planes*h*w)
			cells := make([]float32, h*w)
			for i, d := range want {
				s := p.At(i)
				if err := s.Validate(g); err != nil {
					t.Fatalf("sample %d: %v", i, err)
				}
				d.state.Encode(encoded)
				if !slices.Equal(s.Planes, encoded) {
					t.Fatalf("sample %d: planes are not the position's", i)
				}
				legal := d.state.LegalActions(nil)
				sum := float32(0)
				for k, a := range s.Legal {
					if int(a) != legal[k] {
						t.Fatalf("sample %d: legal %v, want %v", i, s.Legal, legal)
					}
					target := float32(c.smoothing) / float32(len(legal)-1)
					if int(a) == d.played {
						target = 1 - float32(c.smoothing)
					}
					if math.Abs(float64(s.Policy[k]-target)) > 1e-6 {
						t.Fatalf("sample %d: policy %v on %s, want %v", i, s.Policy[k], g.FormatAction(int(a)), target)
					}
					sum += s.Policy[k]
				}
				if math.Abs(float64(sum-1)) > 1e-5 {
					t.Fatalf("sample %d: policy sums to %v", i, sum)
				}
				if s.Outcome != d.result || s.Weight != 1 {
					t.Fatalf("sample %d: outcome %v weight %v, want %v and 1", i, s.Outcome, s.Weight, d.result)
				}
				o := d.final.(env.Ownership)
				o.Ownership(d.state.ToMove(), cells)
				for k := range cells {
					if float32(s.Ownership[k]) != cells[k] {
						t.Fatalf("sample %d: cell %d owned %d by the mover, want %v", i, k, s.Ownership[k], cells[k])
					}
				}
				if s.Margin != o.ScoreMargin(d.state.ToMove()) {
					t.Fatalf("sample %d: margin %v, want %v", i, s.Margin, o.ScoreMargin(d.state.ToMove()))
				}
			}
			// Sample draws among them.
			rng := rand.New(rand.NewPCG(1, 2))
			for range 20 {
				if err := p.Sample(rng).Validate(g); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func TestPositionsRefuses(t *testing.T) {
	g := tictactoe.Game{}
	set := loadLines(t, g, line([]string{"a1", "b2"}, "unfinished", "tictactoe"))
	if _, err := NewPositions(g, set.Games, 0.1); err == nil {
		t.Error("positions from games without a result: no error")
	}
	for _, s := range []float64{-0.1, 1, math.NaN()} {
		if _, err := NewPositions(g, nil, s); err == nil {
			t.Errorf("smoothing %v: no error", s)
		}
	}
}

// TestPositionsAllocate: drawing a sample allocates nothing, as a
// training batch draws hundreds a step.
func TestPositionsAllocate(t *testing.T) {
	g := othello.Othello()
	moves, final := randomGame(t, g, 21, 200)
	set := loadLines(t, g, line(moves, env.ResultName(final), "othello"))
	p, err := NewPositions(g, set.Games, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	p.Sample(rng)
	if n := testing.AllocsPerRun(100, func() { p.Sample(rng) }); n > 0 {
		t.Errorf("%v allocations a sample", n)
	}
}
