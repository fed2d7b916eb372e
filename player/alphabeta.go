package player

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/flipzero/flipzero/env"
)

// AlphaBeta is a fixed-depth alpha-beta search (negamax) over a game's
// Heuristic. Depth counts decisions: a YINSH row or ring removal and a
// pass are plies like any move, and when the same player decides twice in
// a row the value is not negated between them. Its buffers are made once,
// so a search allocates nothing; one AlphaBeta serves one goroutine.
type AlphaBeta struct {
	depth   int
	states  []env.State
	buffers [][]int
	// Nodes counts the positions visited by the last Best.
	Nodes int
}

// NewAlphaBeta returns a search of g to depth decisions (at least 1).
func NewAlphaBeta(g env.Game, depth int) *AlphaBeta {
	depth = max(depth, 1)
	ab := &AlphaBeta{depth: depth, states: make([]env.State, depth+1), buffers: make([][]int, depth+1)}
	for i := range ab.states {
		ab.states[i] = g.NewState()
		ab.buffers[i] = make([]int, 0, g.ActionSpace())
	}
	return ab
}

// Best returns the best action at s, which must not be over and must have
// a Heuristic. Among equally good actions it takes one at random.
func (ab *AlphaBeta) Best(ctx context.Context, s env.State, rng *rand.Rand) (int, error) {
	if s.Terminal() {
		return 0, fmt.Errorf("alpha-beta: the game is over")
	}
	if _, ok := s.(Heuristic); !ok {
		return 0, fmt.Errorf("alpha-beta: %s has no hand-written evaluation", s.Game().Name())
	}
	ab.Nodes = 0
	root := ab.states[0]
	root.CopyFrom(s)
	legal := root.LegalActions(ab.buffers[0])
	// A random order makes the first of equally valued actions, which the
	// strict comparison keeps, a random one.
	rng.Shuffle(len(legal), func(i, j int) { legal[i], legal[j] = legal[j], legal[i] })
	best, alpha := legal[0], math.Inf(-1)
	for _, a := range legal {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		v := ab.child(0, a, ab.depth-1, alpha, math.Inf(1))
		if v > alpha {
			best, alpha = a, v
		}
	}
	return best, nil
}

// child is the value, for the mover at ply, of playing a there, searched
// depth more plies.
func (ab *AlphaBeta) child(ply, a, depth int, alpha, beta float64) float64 {
	s, c := ab.states[ply], ab.states[ply+1]
	c.CopyFrom(s)
	c.Apply(a)
	ab.Nodes++
	me := s.ToMove()
	if c.Terminal() {
		// A sooner win is better, a later loss less bad.
		return float64(env.Value(c, me)) * (winScore + float64(depth))
	}
	if c.ToMove() == me {
		return ab.value(ply+1, depth, alpha, beta)
	}
	return -ab.value(ply+1, depth, -beta, -alpha)
}

// value is the negamax value of states[ply] for its mover.
func (ab *AlphaBeta) value(ply, depth int, alpha, beta float64) float64 {
	s := ab.states[ply]
	if depth == 0 {
		return s.(Heuristic).Heuristic(s.ToMove())
	}
	best := math.Inf(-1)
	for _, a := range s.LegalActions(ab.buffers[ply]) {
		v := ab.child(ply, a, depth-1, alpha, beta)
		best = max(best, v)
		alpha = max(alpha, v)
		if alpha >= beta {
			break
		}
	}
	return best
}
