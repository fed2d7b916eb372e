package othello

import "math/bits"

// Perft counts the leaves of the game tree at the given depth: a pass is
// a ply, a finished game is one leaf at every deeper depth. The last ply
// is counted from the move mask, not played.
func (s *State) Perft(depth int) uint64 {
	if depth <= 0 {
		return 1
	}
	if s.variant == variantSingle {
		return perftSingle(s.own, s.opp, depth)
	}
	return perftFull(s.own, s.opp, depth)
}

func perftFull(own, opp uint64, depth int) uint64 {
	moves := moveMask(own, opp)
	if moves == 0 {
		// One leaf at depth 1 whether the mover passes or the game is over.
		if depth == 1 || moveMask(opp, own) == 0 {
			return 1
		}
		return perftFull(opp, own, depth-1)
	}
	if depth == 1 {
		return uint64(bits.OnesCount64(moves))
	}
	var n uint64
	for m := moves; m != 0; m &= m - 1 {
		sq := bits.TrailingZeros64(m)
		f := flips(sq, own, opp)
		n += perftFull(opp&^f, own|f|1<<sq, depth-1)
	}
	return n
}

func perftSingle(own, opp uint64, depth int) uint64 {
	dm := directionMasks(own, opp)
	if depth == 1 {
		n := 0
		for _, m := range dm {
			n += bits.OnesCount64(m)
		}
		return uint64(max(n, 1))
	}
	var n uint64
	playable := false
	for d, moves := range dm {
		for m := moves; m != 0; m &= m - 1 {
			playable = true
			sq := bits.TrailingZeros64(m)
			f := flipsDir(sq, d, own, opp)
			n += perftSingle(opp&^f, own|f|1<<sq, depth-1)
		}
	}
	if playable {
		return n
	}
	// The moves of reversi-single are on the same squares as the full
	// game's, so the full move mask says whether the opponent can move.
	if moveMask(opp, own) == 0 {
		return 1
	}
	return perftSingle(opp, own, depth-1)
}
