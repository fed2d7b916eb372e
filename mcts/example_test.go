package mcts_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/mcts"
)

// Searching one position with pure MCTS and reading the result.
func ExampleTree_Search() {
	g := tictactoe.Game{}
	s, _ := env.Play(g, "a1;b1;a2;b2") // black to move can complete a1-a2-a3
	eval, _ := mcts.NewRollout(1, rand.New(rand.NewPCG(1, 2)))
	tree, _ := mcts.NewTree(mcts.RolloutConfig(), s)
	if err := tree.Search(context.Background(), eval, 1000); err != nil {
		fmt.Println(err)
		return
	}
	var r mcts.Result
	tree.Result(&r)
	fmt.Println(g.FormatAction(r.Best), r.Playouts)
	// Output: a3 1000
}

// Self-play drives many games through one Batcher: each move draws a full
// or fast search, full ones get root noise, the move is chosen with a
// temperature, and the tree is reused for the next move.
func ExampleBatcher_Search() {
	g := tictactoe.Game{}
	rng := rand.New(rand.NewPCG(3, 4))
	eval, _ := mcts.NewRollout(1, rand.New(rand.NewPCG(5, 6)))
	batcher, _ := mcts.NewBatcher(eval, 16)
	playoutCap := mcts.PlayoutCap{Full: 400, Fast: 50, FullFraction: 0.25}
	temperature := mcts.Temperature{Start: 1, End: 0.1, HalfLife: 2}

	trees := make([]*mcts.Tree, 8)
	for i := range trees {
		trees[i], _ = mcts.NewTree(mcts.DefaultConfig(), g.NewState())
	}
	playouts := make([]int, len(trees))
	full := make([]bool, len(trees))
	var r mcts.Result
	recorded, ply := 0, 0
	for len(trees) > 0 {
		for i, t := range trees {
			playouts[i], full[i] = playoutCap.Draw(rng)
			if full[i] {
				t.SetNoise(rng)
			}
		}
		if err := batcher.Search(context.Background(), trees, playouts[:len(trees)]); err != nil {
			fmt.Println(err)
			return
		}
		running := trees[:0]
		for i, t := range trees {
			t.Result(&r)
			if full[i] {
				recorded++ // r.Policy and r.Value become a training sample
			}
			if err := t.Advance(r.Choose(temperature.At(ply), rng)); err != nil {
				fmt.Println(err)
				return
			}
			if !t.Root().Terminal() {
				running = append(running, t)
			}
		}
		trees = running
		ply++
	}
	fmt.Println(recorded > 0)
	// Output: true
}
