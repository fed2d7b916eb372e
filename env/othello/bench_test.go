package othello

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/envtest"
)

// BenchmarkPerft counts perft from the start; the figure to read is
// leaves/s.
func BenchmarkPerft(b *testing.B) {
	benches := []struct {
		name  string
		game  env.Game
		depth int
	}{
		{"othello/depth11", Othello(), 11},
		{"reversi-single/depth10", Single(), 10},
	}
	for _, bb := range benches {
		b.Run(bb.name, func(b *testing.B) {
			s := bb.game.NewState().(*State)
			var leaves uint64
			for b.Loop() {
				leaves += s.Perft(bb.depth)
			}
			b.ReportMetric(float64(leaves)/b.Elapsed().Seconds(), "leaves/s")
		})
	}
}

// BenchmarkPlayout plays random games from the start through the game
// contract's methods; one op is one game.
func BenchmarkPlayout(b *testing.B) {
	for _, g := range []env.Game{Othello(), Single()} {
		b.Run(g.Name(), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			buf := make([]int, 0, g.ActionSpace())
			start := NewState(g.(Game))
			var s State
			plies := 0
			for b.Loop() {
				s = start
				for !s.Terminal() {
					legal := s.LegalActions(buf)
					s.Apply(legal[rng.IntN(len(legal))])
					plies++
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "playouts/s")
			b.ReportMetric(float64(plies)/float64(b.N), "plies/game")
		})
	}
}

// BenchmarkEncode encodes positions of random games; one op is one
// position.
func BenchmarkEncode(b *testing.B) {
	positions := envtest.RandomPositions(Othello(), 256, 3)
	dst := make([]float32, planes*Squares)
	i := 0
	for b.Loop() {
		positions[i%len(positions)].Encode(dst)
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "encodings/s")
}

// BenchmarkLegalApply lists the legal actions of a position and applies
// each to a copy; one op is one position.
func BenchmarkLegalApply(b *testing.B) {
	for _, g := range []env.Game{Othello(), Single()} {
		b.Run(g.Name(), func(b *testing.B) {
			positions := envtest.RandomPositions(g, 256, 4)
			buf := make([]int, 0, g.ActionSpace())
			i := 0
			for b.Loop() {
				s := positions[i%len(positions)].(*State)
				for _, a := range s.LegalActions(buf) {
					c := *s
					c.Apply(a)
				}
				i++
			}
		})
	}
}

// BenchmarkSolve solves positions with 12 empty squares for their
// margin, and with 12 and 14 for their winner; one op is one position.
func BenchmarkSolve(b *testing.B) {
	for _, g := range []env.Game{Othello(), Single()} {
		b.Run(g.Name()+"/12-empties", func(b *testing.B) {
			positions := endgamePositions(g, 32, 12, 5)
			i := 0
			for b.Loop() {
				positions[i%len(positions)].SolveExact()
				i++
			}
		})
		// The winner alone, as the search's exact endgame asks.
		for _, empties := range []int{12, 14} {
			b.Run(fmt.Sprintf("%s/winner-%d-empties", g.Name(), empties), func(b *testing.B) {
				positions := endgamePositions(g, 32, empties, 5)
				i := 0
				for b.Loop() {
					positions[i%len(positions)].Solved(empties)
					i++
				}
			})
		}
	}
}
