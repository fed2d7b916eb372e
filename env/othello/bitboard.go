package othello

import "math/bits"

// Square s is bit s of a board: s = 8*row + column, row 0 being row "1"
// (the top) and column 0 being "a". So a1 is bit 0 and h8 bit 63.

// Directions, in the order of the single-line notation.
const (
	dirN = iota
	dirNE
	dirE
	dirSE
	dirS
	dirSW
	dirW
	dirNW
	numDirs
)

// dirNames is the notation of the directions; n is towards row 1.
var dirNames = [numDirs]string{"n", "ne", "e", "se", "s", "sw", "w", "nw"}

// dirSteps are the row and column steps of each direction.
var dirSteps = [numDirs][2]int{
	dirN: {-1, 0}, dirNE: {-1, 1}, dirE: {0, 1}, dirSE: {1, 1},
	dirS: {1, 0}, dirSW: {1, -1}, dirW: {0, -1}, dirNW: {-1, -1},
}

// notEdgeColumns masks out columns a and h: a disc there cannot be
// outflanked horizontally or diagonally, and masking them stops shifts
// from wrapping round from one row to the next.
const notEdgeColumns = 0x7E7E7E7E7E7E7E7E

// rays[s][d] holds the squares from s (excluded) to the edge in
// direction d. Read-only after init.
var rays = buildRays()

func buildRays() (r [64][numDirs]uint64) {
	for s := 0; s < 64; s++ {
		for d, step := range dirSteps {
			row, col := s/8+step[0], s%8+step[1]
			for row >= 0 && row < 8 && col >= 0 && col < 8 {
				r[s][d] |= 1 << (8*row + col)
				row, col = row+step[0], col+step[1]
			}
		}
	}
	return r
}

// fillUp returns the squares reached by stepping by shift (towards higher
// bits) from own discs over an unbroken line of at least one disc of
// through and one step further: the candidate moves in that direction.
func fillUp(own, through uint64, shift uint) uint64 {
	t := through & (own << shift)
	t |= through & (t << shift)
	t |= through & (t << shift)
	t |= through & (t << shift)
	t |= through & (t << shift)
	t |= through & (t << shift)
	return t << shift
}

// fillDown is fillUp towards lower bits.
func fillDown(own, through uint64, shift uint) uint64 {
	t := through & (own >> shift)
	t |= through & (t >> shift)
	t |= through & (t >> shift)
	t |= through & (t >> shift)
	t |= through & (t >> shift)
	t |= through & (t >> shift)
	return t >> shift
}

// moveMask returns the empty squares where the player with discs own may
// play against opp's discs.
func moveMask(own, opp uint64) uint64 {
	inner := opp & notEdgeColumns
	m := fillUp(own, inner, 1) | fillDown(own, inner, 1) |
		fillUp(own, opp, 8) | fillDown(own, opp, 8) |
		fillUp(own, inner, 7) | fillDown(own, inner, 7) |
		fillUp(own, inner, 9) | fillDown(own, inner, 9)
	return m &^ (own | opp)
}

// directionMasks returns, per direction, the empty squares where a move
// outflanks in that direction: the moves of the single-line variant.
func directionMasks(own, opp uint64) (m [numDirs]uint64) {
	inner := opp & notEdgeColumns
	empty := ^(own | opp)
	// A move at s outflanks towards d when the fill from own discs in the
	// opposite direction reaches s.
	m[dirN] = fillUp(own, opp, 8) & empty
	m[dirS] = fillDown(own, opp, 8) & empty
	m[dirE] = fillDown(own, inner, 1) & empty
	m[dirW] = fillUp(own, inner, 1) & empty
	m[dirNE] = fillUp(own, inner, 7) & empty
	m[dirSW] = fillDown(own, inner, 7) & empty
	m[dirNW] = fillUp(own, inner, 9) & empty
	m[dirSE] = fillDown(own, inner, 9) & empty
	return m
}

// flipsUp returns the opponent discs outflanked along ray, a ray towards
// higher bits: those before the first square that is not the opponent's,
// if that square is the mover's.
func flipsUp(ray, own, opp uint64) uint64 {
	blockers := ray &^ opp
	first := blockers & -blockers
	outflank := first & own
	// All ones when outflank is set, zero otherwise.
	keep := uint64(int64(-outflank) >> 63)
	return (outflank - 1) & ray & keep
}

// flipsDown is flipsUp for a ray towards lower bits.
func flipsDown(ray, own, opp uint64) uint64 {
	// Bit 0 keeps the blockers non-empty; it counts only if it is on the
	// ray, which the mask with ray below checks.
	blockers := ray&^opp | 1
	first := uint64(1) << (bits.Len64(blockers) - 1)
	outflank := first & own & ray
	return ray & -(outflank << 1)
}

// flipsDir returns the discs a move at s flips in direction d.
func flipsDir(s, d int, own, opp uint64) uint64 {
	ray := rays[s][d]
	switch d {
	case dirE, dirSE, dirS, dirSW:
		return flipsUp(ray, own, opp)
	default:
		return flipsDown(ray, own, opp)
	}
}

// flips returns the discs a move at s flips in every direction.
func flips(s int, own, opp uint64) uint64 {
	r := &rays[s]
	return flipsUp(r[dirE], own, opp) | flipsUp(r[dirSE], own, opp) |
		flipsUp(r[dirS], own, opp) | flipsUp(r[dirSW], own, opp) |
		flipsDown(r[dirW], own, opp) | flipsDown(r[dirNW], own, opp) |
		flipsDown(r[dirN], own, opp) | flipsDown(r[dirNE], own, opp)
}
