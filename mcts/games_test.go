package mcts

import (
	"context"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/env/yinsh"
)

// othelloEndgames plays random othello games and keeps, from each, one
// position with at most maxEmpty empty squares where the mover has a
// winning move and at least one move that does not win, so that the
// choice matters. For each it returns which actions win.
func othelloEndgames(n, maxEmpty int, seed uint64) ([]*othello.State, []map[int]bool) {
	rng := rand.New(rand.NewPCG(seed, 99))
	g := othello.Othello()
	buf := make([]int, 0, g.ActionSpace())
	var positions []*othello.State
	var winning []map[int]bool
	for len(positions) < n {
		s := g.NewState().(*othello.State)
		// Stop at a random number of empty squares, 3..maxEmpty.
		stopAt := 3 + rng.IntN(maxEmpty-2)
		for !s.Terminal() {
			black, white := s.Boards()
			if 64-bits.OnesCount64(black|white) <= stopAt {
				break
			}
			legal := s.LegalActions(buf)
			s.Apply(legal[rng.IntN(len(legal))])
		}
		if s.Terminal() || s.SolveExact() <= 0 {
			continue
		}
		wins := map[int]bool{}
		for _, a := range s.LegalActions(buf) {
			child := *s
			child.Apply(a)
			margin := child.SolveExact()
			if child.ToMove() != s.ToMove() {
				margin = -margin
			}
			wins[a] = margin > 0
		}
		choiceMatters := false
		for _, w := range wins {
			choiceMatters = choiceMatters || !w
		}
		if choiceMatters {
			positions = append(positions, s)
			winning = append(winning, wins)
		}
	}
	return positions, winning
}

// In othello endgames of at most 8 empty squares where a winning move
// exists, pure MCTS with at most 10,000 playouts finds one in at least 95%
// of 200 positions.
func TestOthelloEndgames(t *testing.T) {
	n := 200
	if testing.Short() {
		n = 40
	}
	positions, winning := othelloEndgames(n, 8, 1)
	eval := newRollout(t, 5)
	var r Result
	found := 0
	for i, s := range positions {
		tree := newTree(t, RolloutConfig(), s)
		if err := tree.Search(context.Background(), eval, 10000); err != nil {
			t.Fatal(err)
		}
		tree.Result(&r)
		if winning[i][r.Best] {
			found++
		} else {
			t.Logf("missed the win in\n%vchose %s", s, s.Game().FormatAction(r.Best))
		}
	}
	if found*100 < 95*n {
		t.Errorf("found a winning move in %d of %d positions, want at least 95%%", found, n)
	}
	t.Logf("found a winning move in %d of %d positions", found, n)
}

// winsAlone reports whether the player to move in s can win by decisions
// of their own alone, before the opponent decides: in YINSH a move that
// completes a row is followed by the same player removing the row and
// then a ring, which in blitz ends the game.
func winsAlone(s env.State, mover env.Player, buf []int) bool {
	if s.Terminal() {
		return s.Winner() == mover
	}
	if s.ToMove() != mover {
		return false
	}
	for _, a := range s.LegalActions(buf[:0:0]) {
		child := s.Clone()
		child.Apply(a)
		if winsAlone(child, mover, buf) {
			return true
		}
	}
	return false
}

// yinshRowChances plays random yinsh-blitz games and keeps positions in
// which the mover can complete a row (and so win) but not with every move.
func yinshRowChances(n int, seed uint64) []env.State {
	rng := rand.New(rand.NewPCG(seed, 17))
	g := yinsh.Blitz()
	buf := make([]int, 0, g.ActionSpace())
	var out []env.State
	for len(out) < n {
		s := g.NewState()
		for !s.Terminal() && len(out) < n {
			legal := s.LegalActions(buf)
			winners := 0
			for _, a := range legal {
				child := s.Clone()
				child.Apply(a)
				if winsAlone(child, s.ToMove(), nil) {
					winners++
				}
			}
			if winners > 0 && winners < len(legal) {
				out = append(out, s.Clone())
				break // one position per game, for variety
			}
			s.Apply(legal[rng.IntN(len(legal))])
		}
	}
	return out
}

// In yinsh-blitz positions where the mover can complete a row, pure MCTS
// with 2,000 playouts takes a winning move. The win takes the mover three
// decisions in a row (the move, the row, the ring): the values must keep
// their sign through them.
func TestYinshBlitzCompletesRow(t *testing.T) {
	n := 30
	if testing.Short() {
		n = 8
	}
	positions := yinshRowChances(n, 3)
	eval := newRollout(t, 4)
	var r Result
	for _, s := range positions {
		tree := newTree(t, RolloutConfig(), s)
		if err := tree.Search(context.Background(), eval, 2000); err != nil {
			t.Fatal(err)
		}
		tree.Result(&r)
		child := s.Clone()
		child.Apply(r.Best)
		if !winsAlone(child, s.ToMove(), nil) {
			t.Errorf("chose %s, which does not complete a row, in\n%v", s.Game().FormatAction(r.Best), s)
		}
		if r.Value < 0.9 {
			t.Errorf("root value %.3f for a won position, want near 1", r.Value)
		}
	}
}
