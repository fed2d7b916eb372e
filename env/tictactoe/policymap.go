package tictactoe

import "github.com/flipzero/flipzero/env"

// The policy's planes (env.PolicyMap): a mark at its cell, in one plane.

func (Game) PolicyPlanes() int { return 1 }

func (Game) PolicyCell(a int) (plane, cell int, ok bool) {
	if a < 0 || a >= Cells {
		return 0, 0, false
	}
	return 0, a, true
}

var _ env.PolicyMap = Game{}
