package yinsh

import "math/bits"

// Points is the number of intersections on the board.
const Points = 85

// Points are numbered 0..84 by column letter, then row number: A2 is 0,
// A5 is 3, B1 is 4, …, K10 is 84. So a lower index always sorts first in
// the notation's "letter, then number" order, and every forward heading
// (0,1), (1,0), (1,1) goes to higher indices.

// bitboard is a set of points: bit p of word p/64.
type bitboard [2]uint64

func (b bitboard) has(p int) bool         { return b[p>>6]>>(uint(p)&63)&1 != 0 }
func (b *bitboard) set(p int)             { b[p>>6] |= 1 << (uint(p) & 63) }
func (b *bitboard) clear(p int)           { b[p>>6] &^= 1 << (uint(p) & 63) }
func (b bitboard) or(o bitboard) bitboard { return bitboard{b[0] | o[0], b[1] | o[1]} }
func (b bitboard) and(o bitboard) bitboard {
	return bitboard{b[0] & o[0], b[1] & o[1]}
}
func (b bitboard) andNot(o bitboard) bitboard {
	return bitboard{b[0] &^ o[0], b[1] &^ o[1]}
}
func (b bitboard) count() int  { return bits.OnesCount64(b[0]) + bits.OnesCount64(b[1]) }
func (b bitboard) empty() bool { return b[0]|b[1] == 0 }
func (b bitboard) covers(m bitboard) bool {
	return b[0]&m[0] == m[0] && b[1]&m[1] == m[1]
}

// forEach calls f for each point of b in increasing order.
func (b bitboard) forEach(f func(p int)) {
	for w := 0; w < 2; w++ {
		for x := b[w]; x != 0; x &= x - 1 {
			f(w<<6 | bits.TrailingZeros64(x))
		}
	}
}

// allPoints is the set of the 85 points.
var allPoints = func() bitboard {
	var b bitboard
	for p := 0; p < Points; p++ {
		b.set(p)
	}
	return b
}()

// Headings are the six directions of lines, as steps in (column, row):
// the first three go to higher point indices, heading h+3 is the reverse
// of heading h.
var headings = [6][2]int{{0, 1}, {1, 0}, {1, 1}, {0, -1}, {-1, 0}, {-1, -1}}

// geometry holds the read-only tables of the board, computed once.
type geometry struct {
	// col and row of each point: column 0..10 for A..K, row 1..11.
	col, row [Points]int8
	// at maps (column, row) to a point index, -1 off the board.
	at [11][12]int8
	// ray lists the points from p in heading h, nearest first.
	ray    [Points][6][10]int8
	rayLen [Points][6]int8

	// Ring moves: every ordered pair of distinct points on a line, numbered
	// by from, then to.
	moveFrom, moveTo [ringMoves]int8
	moveID           [Points][Points]int16 // -1 where not on a line
	between          [ringMoves]bitboard   // points strictly between from and to
	// The moves from one point are numbered moveBase[from] onwards; the
	// target ray[p][h][i] is move moveBase[p] + rayOffset[p][h][i]. Fewer
	// than 64 moves leave each point, so a uint64 holds a ring's moves.
	moveBase  [Points]int16
	rayOffset [Points][6][10]uint8
	// rayMask is the set of points of ray[p][h]; rayMoves their move bits,
	// the moves along an empty ray.
	rayMask  [Points][6]bitboard
	rayMoves [Points][6]uint64

	// Windows of 5 consecutive points on a line, numbered by their first
	// (lowest) point, then heading.
	window        [Windows]bitboard
	windowEnds    [Windows][2]int8
	windowID      [Points][Points]int16 // by end points, lower first; -1 if none
	windowsAt     [Points][15]int16     // windows containing each point
	windowsAtSize [Points]int8
}

const (
	// ringMoves is the number of (from, to) pairs of distinct points that
	// share a line.
	ringMoves = 1848
	// Windows is the number of 5-point windows on lines.
	Windows = 123
)

var geo = newGeometry()

func onBoard(col, row int) bool {
	q, r := col-5, row-6
	if max(abs(q), abs(r), abs(q-r)) > 5 {
		return false
	}
	// The six corners of the hexagon are not points.
	corner := max(abs(q), abs(r), abs(q-r)) == 5 && (abs(q) == 5 || q == 0) && (abs(r) == 5 || r == 0) && (abs(q-r) == 5 || q == r)
	return !corner
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func newGeometry() *geometry {
	g := &geometry{}
	for c := range g.at {
		for r := range g.at[c] {
			g.at[c][r] = -1
		}
	}
	n := 0
	for c := 0; c < 11; c++ {
		for r := 1; r <= 11; r++ {
			if onBoard(c, r) {
				g.col[n], g.row[n] = int8(c), int8(r)
				g.at[c][r] = int8(n)
				n++
			}
		}
	}
	if n != Points {
		panic("yinsh: board has the wrong number of points")
	}
	for p := 0; p < Points; p++ {
		for h, d := range headings {
			c, r := int(g.col[p]), int(g.row[p])
			for {
				c, r = c+d[0], r+d[1]
				q := g.pointAt(c, r)
				if q < 0 {
					break
				}
				g.ray[p][h][g.rayLen[p][h]] = int8(q)
				g.rayLen[p][h]++
			}
		}
	}
	for from := range g.moveID {
		for to := range g.moveID[from] {
			g.moveID[from][to] = -1
			g.windowID[from][to] = -1
		}
	}
	m := 0
	for from := 0; from < Points; from++ {
		var targets bitboard
		var betweenOf [Points]bitboard
		for h := 0; h < 6; h++ {
			var path bitboard
			for i := 0; i < int(g.rayLen[from][h]); i++ {
				to := int(g.ray[from][h][i])
				targets.set(to)
				betweenOf[to] = path
				path.set(to)
			}
		}
		g.moveBase[from] = int16(m)
		targets.forEach(func(to int) {
			g.moveFrom[m], g.moveTo[m] = int8(from), int8(to)
			g.moveID[from][to] = int16(m)
			g.between[m] = betweenOf[to]
			m++
		})
	}
	if m != ringMoves {
		panic("yinsh: wrong number of ring moves")
	}
	for p := 0; p < Points; p++ {
		for h := 0; h < 6; h++ {
			for i := 0; i < int(g.rayLen[p][h]); i++ {
				off := int(g.moveID[p][g.ray[p][h][i]]) - int(g.moveBase[p])
				if off >= 64 {
					panic("yinsh: 64 or more moves from one point")
				}
				g.rayOffset[p][h][i] = uint8(off)
				q := int(g.ray[p][h][i])
				g.rayMask[p][h].set(q)
				g.rayMoves[p][h] |= 1 << off
			}
		}
	}
	w := 0
	for p := 0; p < Points; p++ {
		for h := 0; h < 3; h++ {
			if g.rayLen[p][h] < 4 {
				continue
			}
			var mask bitboard
			mask.set(p)
			for i := 0; i < 4; i++ {
				mask.set(int(g.ray[p][h][i]))
			}
			end := int(g.ray[p][h][3])
			g.window[w] = mask
			g.windowEnds[w] = [2]int8{int8(p), int8(end)}
			g.windowID[p][end] = int16(w)
			mask.forEach(func(q int) {
				g.windowsAt[q][g.windowsAtSize[q]] = int16(w)
				g.windowsAtSize[q]++
			})
			w++
		}
	}
	if w != Windows {
		panic("yinsh: wrong number of windows")
	}
	return g
}

// pointAt returns the point at (column, row), or -1 off the board.
func (g *geometry) pointAt(col, row int) int {
	if col < 0 || col > 10 || row < 1 || row > 11 {
		return -1
	}
	return int(g.at[col][row])
}
