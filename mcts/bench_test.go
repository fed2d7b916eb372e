package mcts

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
)

// BenchmarkSearch measures simulations per second of one tree with the
// uniform evaluator from each game's start: the search's own cost, the
// engine's Apply and LegalActions included; PUCT and Gumbel.
func BenchmarkSearch(b *testing.B) {
	for _, mode := range []Mode{PUCT, Gumbel} {
		for _, name := range []string{"tictactoe", "othello", "yinsh-blitz", "reversi-solitaire"} {
			b.Run(mode.String()+"/"+name, func(b *testing.B) {
				g, err := games.ByName(name)
				if err != nil {
					b.Skip(err)
				}
				cfg := DefaultConfig()
				cfg.Mode = mode
				benchSearch(b, cfg, g.NewState(), 10000)
			})
		}
	}
}

func benchSearch(b *testing.B, cfg Config, start env.State, playouts int) {
	tree, err := NewTree(cfg, start)
	if err != nil {
		b.Fatal(err)
	}
	batcher, _ := NewBatcher(Uniform{}, tree.Config().LeavesPerTree)
	trees, targets := []*Tree{tree}, []int{playouts}
	search := func() {
		if err := tree.Reset(start); err != nil {
			b.Fatal(err)
		}
		if err := batcher.Search(context.Background(), trees, targets); err != nil {
			b.Fatal(err)
		}
	}
	search() // warm-up: the arena grows to its size once
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		search()
	}
	b.ReportMetric(float64(b.N)*float64(playouts)/b.Elapsed().Seconds(), "sims/s")
	b.ReportMetric(float64(tree.Nodes())/float64(playouts), "nodes/sim")
}

// BenchmarkBatcher measures the self-play shape: 64 othello games searched
// in lockstep with batches of 32, one leaf per tree per batch, with PUCT
// and Gumbel.
func BenchmarkBatcher(b *testing.B) {
	for _, mode := range []Mode{PUCT, Gumbel} {
		b.Run(mode.String(), func(b *testing.B) { benchBatcher(b, mode) })
	}
}

func benchBatcher(b *testing.B, mode Mode) {
	g, err := games.ByName("othello")
	if err != nil {
		b.Skip(err)
	}
	const games, playouts = 64, 800
	cfg := DefaultConfig()
	cfg.Mode = mode
	cfg.LeavesPerTree = 1
	start := g.NewState()
	trees := make([]*Tree, games)
	targets := make([]int, games)
	for i := range trees {
		if trees[i], err = NewTree(cfg, start); err != nil {
			b.Fatal(err)
		}
		targets[i] = playouts
	}
	batcher, _ := NewBatcher(Uniform{}, 32)
	search := func() {
		for _, t := range trees {
			if err := t.Reset(start); err != nil {
				b.Fatal(err)
			}
		}
		if err := batcher.Search(context.Background(), trees, targets); err != nil {
			b.Fatal(err)
		}
	}
	search()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		search()
	}
	b.ReportMetric(float64(b.N)*games*playouts/b.Elapsed().Seconds(), "sims/s")
}

// BenchmarkRolloutSolitaire measures pure MCTS on the solitaire, the
// issue's mcts:N baseline: 1,000 simulations from the start, each leaf
// valued by one random game with the hidden faces drawn by their chances.
func BenchmarkRolloutSolitaire(b *testing.B) {
	g, err := games.ByName("reversi-solitaire")
	if err != nil {
		b.Fatal(err)
	}
	const playouts = 1000
	tree, err := NewTree(RolloutConfig(), g.NewState())
	if err != nil {
		b.Fatal(err)
	}
	eval, err := NewRollout(1, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		b.Fatal(err)
	}
	start := g.NewState()
	b.ReportAllocs()
	for b.Loop() {
		if err := tree.Reset(start); err != nil {
			b.Fatal(err)
		}
		if err := tree.Search(context.Background(), eval, playouts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*playouts/b.Elapsed().Seconds(), "sims/s")
}
