package yinsh

import "math/bits"

// Perft counts the leaves of the game tree below s at the given depth, one
// ply per decision, a finished game counting as one leaf. It walks value
// copies of the state and counts the last ply without playing it.
func (s *State) Perft(depth int) uint64 {
	if depth <= 0 || s.phase == phaseOver {
		return 1
	}
	if depth == 1 {
		return uint64(s.countActions())
	}
	var n uint64
	var child State
	switch s.phase {
	case phasePlace:
		free := allPoints.andNot(s.rings[0].or(s.rings[1]))
		for w := 0; w < 2; w++ {
			for x := free[w]; x != 0; x &= x - 1 {
				child = *s
				child.place(w<<6 | bits.TrailingZeros64(x))
				n += child.Perft(depth - 1)
			}
		}
	case phaseMove:
		n = s.perftMoves(depth)
	case phaseRemoveRow:
		m := s.markers[s.toMove]
		for w := range geo.window {
			if m.covers(geo.window[w]) {
				child = *s
				child.removeRow(w)
				n += child.Perft(depth - 1)
			}
		}
	case phaseRemoveRing:
		for w := 0; w < 2; w++ {
			for x := s.rings[s.toMove][w]; x != 0; x &= x - 1 {
				child = *s
				child.removeRing(w<<6 | bits.TrailingZeros64(x))
				n += child.Perft(depth - 1)
			}
		}
	}
	return n
}

// perftMoves plays each ring move on a copy of s.
func (s *State) perftMoves(depth int) uint64 {
	var n uint64
	var child State
	rings, markers := s.rings[0].or(s.rings[1]), s.markers[0].or(s.markers[1])
	moved := false
	for w := 0; w < 2; w++ {
		for x := s.rings[s.toMove][w]; x != 0; x &= x - 1 {
			from := w<<6 | bits.TrailingZeros64(x)
			base := int(geo.moveBase[from])
			for set := moveSet(from, rings, markers); set != 0; set &= set - 1 {
				m := base + bits.TrailingZeros64(set)
				child = *s
				child.move(from, int(geo.moveTo[m]), geo.between[m])
				n += child.Perft(depth - 1)
				moved = true
			}
		}
	}
	if !moved {
		child = *s
		child.pass()
		n += child.Perft(depth - 1)
	}
	return n
}
