package yinsh

import "github.com/flipzero/flipzero/env"

// The policy's planes (env.PolicyMap): each decision at the cell of the
// point it starts from, one plane per kind — a ring placed, a ring moved
// along each of the 6 headings by each distance from 1 to 9, the longest
// line's (54 planes, the from-point × direction × distance factoring of
// the 1,848 moves), a
// row removed from its lower end along each of the 3 headings it can
// run, a ring removed — and the pass from the whole board.
const (
	planePlace   = 0
	planeMove    = 1                         // + heading·maxDistance + distance − 1
	planeRow     = planeMove + 6*maxDistance // + heading, 0..2
	planeRing    = planeRow + 3
	PolicyPlanes = planeRing + 1
	// maxDistance is the farthest a ring moves: across the 10 points of
	// the longest lines.
	maxDistance = 9
)

// policyCells is each action's plane and cell; the pass's plane is -1.
var policyCells = func() (t [ActionCount][2]int16) {
	for pt := 0; pt < Points; pt++ {
		t[actPlace+pt] = [2]int16{planePlace, int16(cellOf[pt])}
		t[actRing+pt] = [2]int16{planeRing, int16(cellOf[pt])}
		for h := 0; h < 6; h++ {
			for i := 0; i < int(geo.rayLen[pt][h]); i++ {
				m := geo.moveID[pt][geo.ray[pt][h][i]]
				t[actMove+int(m)] = [2]int16{int16(planeMove + h*maxDistance + i), int16(cellOf[pt])}
			}
		}
	}
	for w := 0; w < Windows; w++ {
		low, high := geo.windowEnds[w][0], geo.windowEnds[w][1]
		for h := 0; h < 3; h++ {
			if geo.rayLen[low][h] >= 4 && geo.ray[low][h][3] == high {
				t[actRow+w] = [2]int16{int16(planeRow + h), int16(cellOf[low])}
			}
		}
	}
	t[actPass] = [2]int16{-1, -1}
	return t
}()

func (Game) PolicyPlanes() int { return PolicyPlanes }

func (Game) PolicyCell(a int) (plane, cell int, ok bool) {
	if a < 0 || a >= ActionCount || policyCells[a][0] < 0 {
		return 0, 0, false
	}
	return int(policyCells[a][0]), int(policyCells[a][1]), true
}

var _ env.PolicyMap = Game{}
