package mcts

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/env/solitaire"
	"github.com/flipzero/flipzero/env/tictactoe"
)

// Several games played to the end in lockstep by one Batcher, the way
// self-play drives the search: playout cap randomization, noise and
// forced playouts in the full searches, temperature, tree reuse.
func TestSelfPlayFlow(t *testing.T) {
	tests := []struct {
		name  string
		game  env.Game
		games int
		cap   PlayoutCap
	}{
		{"tictactoe", tictactoe.Game{}, 6, PlayoutCap{Full: 200, Fast: 30, FullFraction: 0.5}},
		{"othello", othello.Othello(), 4, PlayoutCap{Full: 300, Fast: 50, FullFraction: 0.25}},
		// Chance roots go through the same calls: Choose draws the
		// outcome by its probability.
		{"reversi-solitaire", solitaire.Default(), 4, PlayoutCap{Full: 200, Fast: 30, FullFraction: 0.5}},
	}
	for _, tt := range tests {
		cfg := DefaultConfig()
		cfg.ForcedPlayouts = true
		rng := rand.New(rand.NewPCG(21, 22))
		eval, _ := NewRollout(1, rand.New(rand.NewPCG(23, 24)))
		b, _ := NewBatcher(eval, 8)
		schedule := Temperature{Start: 1, End: 0.2, HalfLife: 5}
		trees := make([]*Tree, tt.games)
		plies := make([]int, tt.games)
		for i := range trees {
			trees[i] = newTree(t, cfg, tt.game.NewState())
		}
		full := make([]bool, tt.games)
		targets := make([]int, tt.games)
		var r Result
		fullSearches := 0
		for len(trees) > 0 {
			for i, tree := range trees {
				targets[i], full[i] = tt.cap.Draw(rng)
				if full[i] {
					tree.SetNoise(rng)
				}
			}
			if err := b.Search(context.Background(), trees, targets[:len(trees)]); err != nil {
				t.Fatal(err)
			}
			var running []*Tree
			for i, tree := range trees {
				tree.Result(&r)
				if r.Playouts < targets[i] {
					t.Fatalf("%s: %d playouts, want at least %d", tt.name, r.Playouts, targets[i])
				}
				if full[i] {
					fullSearches++
					sum := float32(0)
					for _, p := range r.Policy {
						sum += p
					}
					if math.Abs(float64(sum)-1) > 1e-4 {
						t.Fatalf("%s: policy target sums to %v", tt.name, sum)
					}
					if r.Value < -1 || r.Value > 1 {
						t.Fatalf("%s: root value %v", tt.name, r.Value)
					}
				}
				a := r.Choose(schedule.At(plies[i]), rng)
				if !tree.Root().IsLegal(a) {
					t.Fatalf("%s: chose illegal %s", tt.name, tt.game.FormatAction(a))
				}
				if err := tree.Advance(a); err != nil {
					t.Fatal(err)
				}
				plies[i]++
				if reach := countReachable(tree, 0); reach != tree.Nodes() {
					t.Fatalf("%s: %d nodes reachable, arena holds %d", tt.name, reach, tree.Nodes())
				}
				if !tree.Root().Terminal() {
					running = append(running, tree)
				}
			}
			trees = running
		}
		if fullSearches == 0 {
			t.Errorf("%s: no full search happened", tt.name)
		}
	}
}
