package mcts

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/flipzero/flipzero/env"
)

// Batcher runs the searches of many trees in lockstep in one goroutine and
// gathers their leaves into batches for one Evaluate call each. A Batcher
// owns its evaluator and buffers: run one per goroutine (self-play runs
// one per core), with trees no other Batcher is searching.
type Batcher struct {
	eval   Evaluator
	size   int
	states []env.State
	owners []*Tree
	slots  []int
	priors []float32
	values []float32
}

// NewBatcher returns a Batcher whose Evaluate calls hold at most batchSize
// positions.
func NewBatcher(eval Evaluator, batchSize int) (*Batcher, error) {
	if batchSize < 1 {
		return nil, fmt.Errorf("mcts: batch size %d, want at least 1", batchSize)
	}
	return &Batcher{eval: eval, size: batchSize}, nil
}

// Search runs every trees[i] until playouts[i] simulations have finished
// below its root, counting those kept from earlier searches of the same
// root (tree reuse): a tree that already has them costs nothing. A Gumbel
// tree counts only this search's simulations (see gumbel.go). Each round
// gathers leaves from the trees in turn, up to the tree's LeavesPerTree,
// until the batch is full; the next round starts with the tree after the
// last one served, so every tree progresses. The roots must not be over.
//
// On an error the trees are left as they were before the unfinished
// round, ready to search again.
func (b *Batcher) Search(ctx context.Context, trees []*Tree, playouts []int) error {
	if len(trees) != len(playouts) {
		return fmt.Errorf("mcts: %d trees but %d playout targets", len(trees), len(playouts))
	}
	if len(trees) == 0 {
		return nil
	}
	actions := trees[0].game.ActionSpace()
	for i, t := range trees {
		if t.root.Terminal() {
			return fmt.Errorf("mcts: tree %d: the game is over", i)
		}
		if t.game.ActionSpace() != actions {
			return fmt.Errorf("mcts: tree %d plays %s, tree 0 %s: one batch needs one action space", i, t.game.Name(), trees[0].game.Name())
		}
		if t.pending != 0 {
			return fmt.Errorf("mcts: tree %d is already being searched", i)
		}
	}
	for i, t := range trees {
		t.beginSearch(playouts[i])
	}
	if need := b.size * actions; len(b.priors) < need {
		b.priors = make([]float32, need)
		b.values = make([]float32, b.size)
	}
	next := 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b.states, b.owners, b.slots = b.states[:0], b.owners[:0], b.slots[:0]
		scanned := 0
		for ; scanned < len(trees) && len(b.states) < b.size; scanned++ {
			i := (next + scanned) % len(trees)
			if err := b.gather(trees[i], playouts[i]); err != nil {
				for _, t := range b.owners {
					t.abandon()
				}
				return fmt.Errorf("mcts: tree %d: %w", i, err)
			}
		}
		next = (next + scanned) % len(trees)
		if len(b.states) == 0 {
			// Every tree was scanned and none needs an evaluation: each
			// reached its target (terminal leaves resolve at once).
			return nil
		}
		if err := b.evaluate(actions); err != nil {
			for _, t := range b.owners {
				t.abandon()
			}
			return err
		}
	}
}

// gather takes leaves from t until the batch is full, t has LeavesPerTree
// waiting, t's simulations reach target, or a descent collides with a
// waiting leaf.
func (b *Batcher) gather(t *Tree, target int) error {
	for len(b.states) < b.size && t.pending < t.cfg.LeavesPerTree {
		root := t.nodes[0].status
		switch {
		case root == awaiting:
			return nil
		case root.open() && t.progress() >= target:
			return nil
		case root == unexpanded && target <= 0:
			return nil
		}
		switch t.descend() {
		case leafWaiting:
			slot := t.pending - 1
			b.states = append(b.states, t.leaves[slot].state)
			b.owners = append(b.owners, t)
			b.slots = append(b.slots, slot)
		case leafCollided:
			return nil
		case leafFailed:
			t.abandon()
			return t.err
		}
	}
	return nil
}

// evaluate scores the gathered leaves and hands each its evaluation.
func (b *Batcher) evaluate(actions int) error {
	n := len(b.states)
	priors, values := b.priors[:n*actions], b.values[:n]
	if err := b.eval.Evaluate(b.states, priors, values); err != nil {
		return fmt.Errorf("mcts: evaluating %d positions: %w", n, err)
	}
	var err error
	for j, t := range b.owners {
		v := values[j]
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			err = errors.Join(err, fmt.Errorf("mcts: the evaluator gave value %v for position %d of the batch", v, j))
			continue
		}
		v = min(max(v, -1), 1)
		if e := t.finish(b.slots[j], priors[j*actions:(j+1)*actions], v); e != nil {
			err = errors.Join(err, e)
		}
	}
	if err != nil {
		return err
	}
	for _, t := range b.owners {
		t.pending = 0
	}
	return nil
}

// Search runs playouts simulations below t's root (counting those kept by
// tree reuse) with one evaluator, in batches of the tree's LeavesPerTree:
// the simple form for one game, as in analysis and matches.
func (t *Tree) Search(ctx context.Context, eval Evaluator, playouts int) error {
	if t.single == nil {
		b, err := NewBatcher(eval, t.cfg.LeavesPerTree)
		if err != nil {
			return err
		}
		t.single = &singleSearch{batcher: b}
		t.single.trees[0] = t
	}
	t.single.batcher.eval = eval
	t.single.playouts[0] = playouts
	return t.single.batcher.Search(ctx, t.single.trees[:], t.single.playouts[:])
}

// singleSearch is the Batcher a tree keeps for its own searches, so that
// searching move after move allocates nothing.
type singleSearch struct {
	batcher  *Batcher
	trees    [1]*Tree
	playouts [1]int
}
