package player

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/envtest"
)

// minimax is the plain search alpha-beta must agree with, written the
// other way round: the value for root, maximized where root decides and
// minimized elsewhere, with no pruning.
func minimax(s env.State, depth int, root env.Player) float64 {
	best := math.Inf(1)
	if s.ToMove() == root {
		best = math.Inf(-1)
	}
	for _, a := range s.LegalActions(nil) {
		c := s.Clone()
		c.Apply(a)
		var v float64
		switch {
		case c.Terminal():
			v = float64(env.Value(c, root)) * (winScore + float64(depth-1))
		case depth == 1:
			v = c.(Heuristic).Heuristic(root)
		default:
			v = minimax(c, depth-1, root)
		}
		if s.ToMove() == root {
			best = max(best, v)
		} else {
			best = min(best, v)
		}
	}
	return best
}

func TestAlphaBetaAgreesWithMinimax(t *testing.T) {
	tests := []struct {
		game      string
		depths    []int
		positions int
	}{
		{"othello", []int{1, 2, 3, 4}, 25},
		// YINSH's removals give the same player several decisions in a
		// row: the positions include them.
		{"yinsh-blitz", []int{1, 2}, 40},
		{"yinsh", []int{1, 2}, 20},
	}
	for _, tc := range tests {
		t.Run(tc.game, func(t *testing.T) {
			g := game(t, tc.game)
			rng := rand.New(rand.NewPCG(1, 2))
			checked := 0
			for _, s := range envtest.RandomPositions(g, tc.positions, 3) {
				if s.Terminal() {
					continue
				}
				for _, depth := range tc.depths {
					ab := NewAlphaBeta(g, depth)
					a, err := ab.Best(context.Background(), s, rng)
					if err != nil {
						t.Fatal(err)
					}
					want := minimax(s, depth, s.ToMove())
					c := s.Clone()
					c.Apply(a)
					var got float64
					switch {
					case c.Terminal():
						got = float64(env.Value(c, s.ToMove())) * (winScore + float64(depth-1))
					case depth == 1:
						got = c.(Heuristic).Heuristic(s.ToMove())
					default:
						got = minimax(c, depth-1, s.ToMove())
					}
					if got != want {
						t.Fatalf("depth %d: alpha-beta chose %s worth %v, minimax finds %v in\n%v", depth, g.FormatAction(a), got, want, s)
					}
					checked++
				}
			}
			if checked == 0 {
				t.Fatal("no position checked")
			}
		})
	}
}

func TestAlphaBetaErrors(t *testing.T) {
	ab := NewAlphaBeta(game(t, "tictactoe"), 2)
	rng := rand.New(rand.NewPCG(1, 1))
	if _, err := ab.Best(context.Background(), game(t, "tictactoe").NewState(), rng); err == nil {
		t.Error("alpha-beta searched a game without a heuristic")
	}
	// A random game played to its end.
	s := game(t, "othello").NewState()
	for !s.Terminal() {
		legal := s.LegalActions(nil)
		s.Apply(legal[rng.IntN(len(legal))])
	}
	if _, err := NewAlphaBeta(game(t, "othello"), 2).Best(context.Background(), s, rng); err == nil {
		t.Error("alpha-beta searched a finished game")
	}
}

func TestAlphaBetaAllocatesNothing(t *testing.T) {
	for _, name := range []string{"othello", "yinsh"} {
		g := game(t, name)
		ab := NewAlphaBeta(g, 2)
		rng := rand.New(rand.NewPCG(1, 1))
		s := envtest.RandomPositions(g, 30, 5)[20]
		if s.Terminal() {
			t.Fatal("pick another position")
		}
		ctx := context.Background()
		allocs := testing.AllocsPerRun(5, func() {
			if _, err := ab.Best(ctx, s, rng); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per search", name, allocs)
		}
	}
}

func BenchmarkAlphaBeta(b *testing.B) {
	for _, tc := range []struct {
		game  string
		depth int
	}{{"othello", 4}, {"yinsh", 2}, {"yinsh-blitz", 3}} {
		b.Run(tc.game, func(b *testing.B) {
			g := game(b, tc.game)
			positions := envtest.RandomPositions(g, 64, 9)
			var live []env.State
			for _, s := range positions {
				if !s.Terminal() {
					live = append(live, s)
				}
			}
			ab := NewAlphaBeta(g, tc.depth)
			rng := rand.New(rand.NewPCG(1, 1))
			ctx := context.Background()
			nodes := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := ab.Best(ctx, live[i%len(live)], rng); err != nil {
					b.Fatal(err)
				}
				nodes += ab.Nodes
			}
			b.ReportMetric(float64(nodes)/b.Elapsed().Seconds(), "nodes/s")
			b.ReportMetric(float64(tc.depth), "depth")
		})
	}
}
