package solitaire

// Square s is bit s of a board: s = 8*row + column, row 0 being row "1"
// (the top) and column 0 column "a", as in the othello package.

const (
	colA = uint64(0x0101010101010101)
	colH = colA << 7
)

// The eight directions; the first four are the orthogonal ones, whose
// neighbours a placement turns up.
const (
	dirN = iota
	dirE
	dirS
	dirW
	dirNE
	dirSE
	dirSW
	dirNW
	numDirs
)

// shift moves every square of b one step in direction d; squares that
// would leave the board vanish instead of wrapping to the next row.
func shift(b uint64, d int) uint64 {
	switch d {
	case dirN:
		return b >> 8
	case dirE:
		return b << 1 &^ colA
	case dirS:
		return b << 8
	case dirW:
		return b >> 1 &^ colH
	case dirNE:
		return b >> 7 &^ colA
	case dirSE:
		return b << 9 &^ colA
	case dirSW:
		return b << 7 &^ colH
	default:
		return b >> 9 &^ colH
	}
}

// orthogonal is the squares next to those of b horizontally or vertically.
func orthogonal(b uint64) uint64 {
	return shift(b, dirN) | shift(b, dirE) | shift(b, dirS) | shift(b, dirW)
}

// notEdge masks out columns a and h: a disc or token there cannot be the
// middle of a horizontal or diagonal line, and masking them stops shifts
// from wrapping round from one row to the next.
const notEdge = ^(colA | colH)

// lineUp returns the squares reached by stepping by sh (towards higher
// bits) from own discs over a line of opp discs, or over one capturable
// token, and one step further.
func lineUp(own, opp, capturable uint64, sh uint) uint64 {
	t := opp & (own << sh)
	t |= opp & (t << sh)
	t |= opp & (t << sh)
	t |= opp & (t << sh)
	t |= opp & (t << sh)
	t |= opp & (t << sh)
	return t<<sh | (capturable&(own<<sh))<<sh
}

// lineDown is lineUp towards lower bits.
func lineDown(own, opp, capturable uint64, sh uint) uint64 {
	t := opp & (own >> sh)
	t |= opp & (t >> sh)
	t |= opp & (t >> sh)
	t |= opp & (t >> sh)
	t |= opp & (t >> sh)
	t |= opp & (t >> sh)
	return t>>sh | (capturable&(own>>sh))>>sh
}

// placements returns the squares of empty where a disc of the colour own
// is legal: it outflanks a line of opp discs, or captures a single token
// of capturable (face-up, the other colour) lying between it and an own
// disc.
func placements(own, opp, capturable, empty uint64) uint64 {
	io, ic := opp&notEdge, capturable&notEdge
	m := lineUp(own, io, ic, 1) | lineDown(own, io, ic, 1) |
		lineUp(own, opp, capturable, 8) | lineDown(own, opp, capturable, 8) |
		lineUp(own, io, ic, 7) | lineDown(own, io, ic, 7) |
		lineUp(own, io, ic, 9) | lineDown(own, io, ic, 9)
	return m & empty
}

// flips returns the opp discs a disc of own placed on square bit
// outflanks, in every direction.
func flips(bit, own, opp uint64) uint64 {
	var f uint64
	for d := 0; d < numDirs; d++ {
		var line uint64
		x := shift(bit, d)
		for x&opp != 0 {
			line |= x
			x = shift(x, d)
		}
		if x&own != 0 {
			f |= line
		}
	}
	return f
}

// captures returns the tokens of capturable a disc of own placed on
// square bit takes: single tokens with an own disc right behind them.
func captures(bit, own, capturable uint64) uint64 {
	var c uint64
	for d := 0; d < numDirs; d++ {
		x := shift(bit, d) & capturable
		if x != 0 && shift(x, d)&own != 0 {
			c |= x
		}
	}
	return c
}
