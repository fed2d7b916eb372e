package selfplay

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/mcts"
)

// encodingUniform is what a GPU's evaluator asks of the CPU — every
// position encoded into the input tensor — with uniform answers.
type encodingUniform struct {
	input []float32
	size  int // values per position
	n     *atomic.Int64
}

func (e encodingUniform) Evaluate(states []env.State, priors, values []float32) error {
	e.n.Add(int64(len(states)))
	for i, s := range states {
		s.Encode(e.input[i*e.size : (i+1)*e.size])
	}
	return mcts.Uniform{}.Evaluate(states, priors, values)
}

// BenchmarkFeed measures the CPU side of self-play per network
// evaluation on one core: search, moves, encoding, the games' records —
// the rate at which one core can feed a GPU.
func BenchmarkFeed(b *testing.B) {
	for _, name := range []string{"othello", "yinsh-blitz"} {
		b.Run(name, func(b *testing.B) {
			g, err := games.ByName(name)
			if err != nil {
				b.Fatal(err)
			}
			search := DefaultSearch()
			settings := DefaultSettings()
			settings.Workers, settings.Games = 1, 64
			var n atomic.Int64
			planes, h, w := g.EncodedShape()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_, err := PlayGames(context.Background(), g, search, settings, uint64(i), func() (mcts.Evaluator, error) {
					return encodingUniform{input: make([]float32, settings.BatchSize*planes*h*w), size: planes * h * w, n: &n}, nil
				}, func(GameRecord) {})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n.Load())/b.Elapsed().Seconds(), "evals/s")
		})
	}
}
