package yinsh

import (
	"math/rand/v2"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/envtest"
)

// BenchmarkPerft counts the midgame position of the rules document to
// depth 5 (76,794,638 leaves).
func BenchmarkPerft(b *testing.B) {
	s := play(b, Full(), midgame)
	var leaves uint64
	for b.Loop() {
		leaves += s.Perft(5)
	}
	b.ReportMetric(float64(leaves)/b.Elapsed().Seconds(), "leaves/s")
}

// BenchmarkPlayout plays random games from the start to the end.
func BenchmarkPlayout(b *testing.B) {
	for _, g := range []Game{Full().(Game), Blitz().(Game)} {
		b.Run(g.Name(), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			buf := make([]int, 0, ActionCount)
			start := g.Start()
			var s State
			plies := 0
			for b.Loop() {
				s = *start
				for !s.Terminal() {
					legal := s.LegalActions(buf)
					s.Apply(legal[rng.IntN(len(legal))])
					plies++
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "games/s")
			b.ReportMetric(float64(plies)/float64(b.N), "plies/game")
		})
	}
}

// BenchmarkEncode encodes positions met in random games.
func BenchmarkEncode(b *testing.B) {
	positions := envtest.RandomPositions(Full(), 256, 1)
	dst := make([]float32, Planes*planeSize)
	n := 0
	for b.Loop() {
		positions[n%len(positions)].Encode(dst)
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "positions/s")
}

// BenchmarkLegalActions lists the moves of the midgame position.
func BenchmarkLegalActions(b *testing.B) {
	s := play(b, Full(), midgame)
	buf := make([]int, 0, ActionCount)
	for b.Loop() {
		buf = s.LegalActions(buf)
	}
}

// BenchmarkApply copies the midgame position and plays one of its moves.
func BenchmarkApply(b *testing.B) {
	s := play(b, Full(), midgame)
	legal := s.LegalActions(make([]int, 0, ActionCount))
	var child env.State = &State{}
	i := 0
	for b.Loop() {
		child.CopyFrom(s)
		child.Apply(legal[i%len(legal)])
		i++
	}
}

// TestNoAllocations checks that the hot paths allocate nothing.
func TestNoAllocations(t *testing.T) {
	s := play(t, Full(), midgame)
	buf := make([]int, 0, ActionCount)
	dst := make([]float32, Planes*planeSize)
	legal := s.LegalActions(make([]int, 0, ActionCount))
	var child State
	tests := []struct {
		name string
		f    func()
	}{
		{"LegalActions", func() { buf = s.LegalActions(buf) }},
		{"CopyFrom+Apply", func() { child.CopyFrom(s); child.Apply(legal[len(legal)/2]) }},
		{"Encode", func() { s.Encode(dst) }},
		{"Perft", func() { s.Perft(3) }},
		{"IsLegal", func() { s.IsLegal(legal[0]) }},
	}
	for _, tt := range tests {
		if n := testing.AllocsPerRun(20, tt.f); n != 0 {
			t.Errorf("%s: %v allocations per call", tt.name, n)
		}
	}
}
