package othello

import (
	"math/bits"

	"github.com/flipzero/flipzero/env"
)

// SolveExact returns the final disc margin (the player to move's discs
// minus the opponent's, by WOF counting: empty squares go to the winner)
// that the player to move gets under perfect play by both sides. It
// searches the whole tree below s with alpha-beta, so it is meant for
// positions with at most about 12 empty squares. A margin of 0 is a tie,
// which the variant's rules score (White wins it in reversi).
func (s *State) SolveExact() int {
	if s.variant == variantSingle {
		return solveSingle(s.own, s.opp, -Squares, Squares)
	}
	return solveFull(s.own, s.opp, -Squares, Squares)
}

// Solved is the winner under perfect play when at most limit squares are
// empty (env.Endgame): the search's exact endgame. Only the margin's sign
// matters, so it searches the null window around a tie, which cuts far
// more of the tree than finding the margin does.
func (s *State) Solved(limit int) (env.Player, bool) {
	if bits.OnesCount64(^(s.own | s.opp)) > limit {
		return env.NoPlayer, false
	}
	margin := s.marginSign()
	switch {
	case margin > 0:
		return s.toMove, true
	case margin < 0:
		return s.toMove.Other(), true
	case s.variant == variantOthello:
		return env.NoPlayer, true
	}
	return 1, true // reversi's tie goes to White
}

// marginSign is a number with the sign of SolveExact's margin: the
// fail-soft search of the window (−1, 1) returns 0 exactly for a tie, at
// least 1 for a win and at most −1 for a loss.
func (s *State) marginSign() int {
	if s.variant == variantSingle {
		return solveSingle(s.own, s.opp, -1, 1)
	}
	return solveFull(s.own, s.opp, -1, 1)
}

// finalMargin is the WOF margin of a finished game for the player with
// discs own.
func finalMargin(own, opp uint64) int {
	margin := bits.OnesCount64(own) - bits.OnesCount64(opp)
	empty := bits.OnesCount64(^(own | opp))
	switch {
	case margin > 0:
		return margin + empty
	case margin < 0:
		return margin - empty
	}
	return 0
}

// orderFromEmpties is the number of empty squares from which the solver
// sorts the moves, fewest replies first; nearer the end the sorting costs
// more than it saves.
const orderFromEmpties = 7

// nearEmpties is the number of empty squares from which down the solver
// tries each empty square's flips rather than first finding the moves:
// near the end there are few squares to try, and the moves' sixteen fills
// cost more than trying them.
const nearEmpties = 6

// solveFull is negamax with alpha-beta for reversi and othello.
func solveFull(own, opp uint64, alpha, beta int) int {
	if empty := ^(own | opp); bits.OnesCount64(empty) <= nearEmpties {
		return solveNear(own, opp, empty, alpha, beta)
	}
	moves := moveMask(own, opp)
	if moves == 0 {
		if moveMask(opp, own) == 0 {
			return finalMargin(own, opp)
		}
		return -solveFull(opp, own, -beta, -alpha)
	}
	var order [Squares]uint8
	n := 0
	if bits.OnesCount64(^(own | opp)) >= orderFromEmpties {
		// Fastest-first: try the moves that leave the opponent the fewest
		// replies first, by insertion sort on the reply count.
		var replies [Squares]int
		for m := moves; m != 0; m &= m - 1 {
			sq := bits.TrailingZeros64(m)
			f := flips(sq, own, opp)
			r := bits.OnesCount64(moveMask(opp&^f, own|f|1<<sq))
			k := n
			for k > 0 && replies[k-1] > r {
				replies[k], order[k] = replies[k-1], order[k-1]
				k--
			}
			replies[k], order[k] = r, uint8(sq)
			n++
		}
	} else {
		for m := moves; m != 0; m &= m - 1 {
			order[n] = uint8(bits.TrailingZeros64(m))
			n++
		}
	}
	best := -Squares - 1
	for _, sq := range order[:n] {
		f := flips(int(sq), own, opp)
		v := -solveFull(opp&^f, own|f|1<<sq, -beta, -alpha)
		if v > best {
			best = v
			if v > alpha {
				alpha = v
				if alpha >= beta {
					break
				}
			}
		}
	}
	return best
}

// solveNear is solveFull for a few empty squares, empty: each square's
// flips say whether it is a move.
func solveNear(own, opp, empty uint64, alpha, beta int) int {
	best, moved := -Squares-1, false
	for m := empty; m != 0; m &= m - 1 {
		sq := bits.TrailingZeros64(m)
		f := flips(sq, own, opp)
		if f == 0 {
			continue
		}
		moved = true
		v := -solveNear(opp&^f, own|f|1<<sq, empty&^(1<<sq), -beta, -alpha)
		if v > best {
			best = v
			if v > alpha {
				alpha = v
				if alpha >= beta {
					break
				}
			}
		}
	}
	if moved {
		return best
	}
	for m := empty; m != 0; m &= m - 1 {
		if flips(bits.TrailingZeros64(m), opp, own) != 0 {
			return -solveNear(opp, own, empty, -beta, -alpha)
		}
	}
	return finalMargin(own, opp)
}

// solveSingle is negamax with alpha-beta for reversi-single.
func solveSingle(own, opp uint64, alpha, beta int) int {
	dm := directionMasks(own, opp)
	// Moves as 8*square + direction, in the order to try them.
	var order [SinglePass]uint16
	var replies [SinglePass]int8
	sortMoves := bits.OnesCount64(^(own | opp)) >= orderFromEmpties
	n := 0
	for d, moves := range dm {
		for m := moves; m != 0; m &= m - 1 {
			sq := bits.TrailingZeros64(m)
			move := uint16(sq*numDirs + d)
			if !sortMoves {
				order[n] = move
				n++
				continue
			}
			// Fastest-first, as in solveFull; the full game's move count
			// stands in for the opponent's replies (they are on the same
			// squares).
			f := flipsDir(sq, d, own, opp)
			r := int8(bits.OnesCount64(moveMask(opp&^f, own|f|1<<sq)))
			k := n
			for k > 0 && replies[k-1] > r {
				replies[k], order[k] = replies[k-1], order[k-1]
				k--
			}
			replies[k], order[k] = r, move
			n++
		}
	}
	if n == 0 {
		if moveMask(opp, own) == 0 {
			return finalMargin(own, opp)
		}
		return -solveSingle(opp, own, -beta, -alpha)
	}
	best := -Squares - 1
	for _, move := range order[:n] {
		sq := int(move / numDirs)
		f := flipsDir(sq, int(move%numDirs), own, opp)
		v := -solveSingle(opp&^f, own|f|1<<sq, -beta, -alpha)
		if v > best {
			best = v
			if v > alpha {
				alpha = v
				if alpha >= beta {
					break
				}
			}
		}
	}
	return best
}
