package othello

import (
	"math/bits"

	"github.com/flipzero/flipzero/env"
)

// corners are the four squares that can never be flipped.
const corners = 1<<0 | 1<<7 | 1<<56 | 1<<63

// Heuristic is a hand-written evaluation of the position for player p,
// the one the greedy and alpha-beta baselines use: mobility (the number
// of squares each side could play) weighs most in the middle game, corners
// are stable, and discs break ties. Larger is better for p; 0 is even.
func (s *State) Heuristic(p env.Player) float64 {
	mine, theirs := s.own, s.opp
	if s.toMove != p {
		mine, theirs = theirs, mine
	}
	mobility := bits.OnesCount64(moveMask(mine, theirs)) - bits.OnesCount64(moveMask(theirs, mine))
	cornerDiff := bits.OnesCount64(mine&corners) - bits.OnesCount64(theirs&corners)
	discs := bits.OnesCount64(mine) - bits.OnesCount64(theirs)
	return 10*float64(cornerDiff) + 2*float64(mobility) + float64(discs)
}
