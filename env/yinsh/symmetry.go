package yinsh

import "github.com/flipzero/flipzero/env"

// The 12 symmetries of the hexagonal board about F6: rotations by
// multiples of 60° ("rot60" … "rot300"), and the mirror that swaps the
// column and row-number directions (A5 ↔ E1) followed by each rotation.

// symmetryTables are the point, cell and action maps of the 12
// symmetries, computed once.
type symmetryTables struct {
	point [12][Points]int
	syms  []env.Symmetry
}

var symTables = newSymmetryTables()

// transformAxial applies symmetry k to axial coordinates about the centre.
func transformAxial(k, q, r int) (int, int) {
	if k >= 6 {
		q, r = r, q
	}
	for i := 0; i < k%6; i++ {
		// A 60° turn: the headings (1,0) → (1,1) → (0,1) → (−1,0) → …
		q, r = q-r, q
	}
	return q, r
}

func newSymmetryTables() *symmetryTables {
	t := &symmetryTables{}
	names := [12]string{"identity", "rot60", "rot120", "rot180", "rot240", "rot300",
		"mirror", "mirror-rot60", "mirror-rot120", "mirror-rot180", "mirror-rot240", "mirror-rot300"}
	for k := 0; k < 12; k++ {
		for p := 0; p < Points; p++ {
			q, r := transformAxial(k, int(geo.col[p])-5, int(geo.row[p])-6)
			t.point[k][p] = geo.pointAt(q+5, r+6)
			if t.point[k][p] < 0 {
				panic("yinsh: a symmetry leaves the board")
			}
		}
		cell := make([]int, planeSize)
		for c := range cell {
			cell[c] = c
		}
		// The six missing corners stay among themselves; the other cells
		// off the hexagon are left in place, they are 0 on every board plane.
		for x := 0; x < GridSize; x++ {
			for y := 0; y < GridSize; y++ {
				q, r := x-5, y+1-6
				if max(abs(q), abs(r), abs(q-r)) > 5 {
					continue
				}
				tq, tr := transformAxial(k, q, r)
				cell[y*GridSize+x] = (tr+5)*GridSize + tq + 5
			}
		}
		action := make([]int, ActionCount)
		pt := &t.point[k]
		for p := 0; p < Points; p++ {
			action[actPlace+p] = actPlace + pt[p]
			action[actRing+p] = actRing + pt[p]
		}
		for m := 0; m < ringMoves; m++ {
			action[actMove+m] = actMove + int(geo.moveID[pt[geo.moveFrom[m]]][pt[geo.moveTo[m]]])
		}
		for w := 0; w < Windows; w++ {
			a, b := pt[geo.windowEnds[w][0]], pt[geo.windowEnds[w][1]]
			action[actRow+w] = actRow + int(geo.windowID[min(a, b)][max(a, b)])
		}
		action[actPass] = actPass
		t.syms = append(t.syms, env.Symmetry{Name: names[k], Cell: cell, Action: action})
	}
	return t
}

func (Game) Symmetries() []env.Symmetry { return symTables.syms }

// Transformed returns a copy of the position under symmetry i.
func (s *State) Transformed(i int) env.State {
	t := *s
	pt := &symTables.point[i]
	for p := 0; p < 2; p++ {
		t.rings[p], t.markers[p] = bitboard{}, bitboard{}
		s.rings[p].forEach(func(q int) { t.rings[p].set(pt[q]) })
		s.markers[p].forEach(func(q int) { t.markers[p].set(pt[q]) })
	}
	return &t
}
