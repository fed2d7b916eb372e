package othello

import "github.com/flipzero/flipzero/env"

// The policy's planes (env.PolicyMap): a disc placed on a square at that
// square, in one plane; in the single-line variant one plane per
// direction of the line flipped; the pass from the whole board.

func (g Game) PolicyPlanes() int {
	if g.variant == variantSingle {
		return 8
	}
	return 1
}

func (g Game) PolicyCell(a int) (plane, cell int, ok bool) {
	if a < 0 || a >= g.ActionSpace()-1 {
		return 0, 0, false
	}
	if g.variant == variantSingle {
		return a % 8, a / 8, true
	}
	return 0, a, true
}

var _ env.PolicyMap = Game{}
