package yinsh

import "github.com/flipzero/flipzero/env"

// The encoding: Planes planes of 11×11 cells, cell (row−1)*11 + column
// with column 0..10 for A..K, seen from the player to decide ("own" is
// that player):
//
//	0  own rings
//	1  opponent's rings
//	2  own markers
//	3  opponent's markers
//	4  the 85 points of the board (1), the 36 cells off it (0)
//	5  all 1 when a ring is to be placed
//	6  all 1 when a ring is to be moved (or a pass made)
//	7  all 1 when a row is to be removed
//	8  all 1 when a ring is to be removed
//	9  all 1 when the decider made the ring move being cleared up, so the
//	   opponent moves next; 0 when the decider moves next
//	10 own rings removed / 3, on every cell
//	11 opponent's rings removed / 3, on every cell
//	12 markers in the supply / 51, on every cell
const (
	Planes    = 13
	GridSize  = 11
	planeSize = GridSize * GridSize
)

// cellOf is the cell of each point in a plane.
var cellOf = func() (c [Points]int) {
	for p := range c {
		c[p] = (int(geo.row[p])-1)*GridSize + int(geo.col[p])
	}
	return c
}()

func (Game) EncodedShape() (int, int, int) { return Planes, GridSize, GridSize }

// Encode writes the position into dst (Planes*11*11 values).
func (s *State) Encode(dst []float32) {
	dst = dst[:Planes*planeSize]
	clear(dst[:5*planeSize])
	own, opp := s.toMove, s.toMove.Other()
	for p := 0; p < Points; p++ {
		c := cellOf[p]
		switch {
		case s.rings[own].has(p):
			dst[c] = 1
		case s.rings[opp].has(p):
			dst[planeSize+c] = 1
		case s.markers[own].has(p):
			dst[2*planeSize+c] = 1
		case s.markers[opp].has(p):
			dst[3*planeSize+c] = 1
		}
		dst[4*planeSize+c] = 1
	}
	var phasePlane [4]float32
	if s.phase < phaseOver {
		phasePlane[s.phase] = 1
	}
	var moverPlane float32
	if (s.phase == phaseRemoveRow || s.phase == phaseRemoveRing) && s.toMove == s.mover {
		moverPlane = 1
	}
	constants := [Planes - 5]float32{
		phasePlane[0], phasePlane[1], phasePlane[2], phasePlane[3],
		moverPlane,
		float32(s.removed[own]) / 3,
		float32(s.removed[opp]) / 3,
		float32(s.supply) / Markers,
	}
	for i, v := range constants {
		plane := dst[(5+i)*planeSize : (6+i)*planeSize]
		for c := range plane {
			plane[c] = v
		}
	}
}

// Ownership writes, on each point's cell, 1 where player p has a ring or
// a marker, −1 where the other player has, 0 on an empty point and off
// the board.
func (s *State) Ownership(p env.Player, dst []float32) {
	dst = dst[:planeSize]
	clear(dst)
	q := p.Other()
	for pt := 0; pt < Points; pt++ {
		switch {
		case s.rings[p].has(pt) || s.markers[p].has(pt):
			dst[cellOf[pt]] = 1
		case s.rings[q].has(pt) || s.markers[q].has(pt):
			dst[cellOf[pt]] = -1
		}
	}
}

// ScoreMargin is the difference in rings removed, p's less the other
// player's, over the rings that win.
func (s *State) ScoreMargin(p env.Player) float32 {
	return float32(int(s.removed[p])-int(s.removed[p.Other()])) / float32(s.ringsToWin())
}

var _ env.Ownership = (*State)(nil)
