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
	switch s.phase {
	case phasePlace:
		free := allPoints.andNot(s.rings[0].or(s.rings[1]))
		for w := 0; w < 2; w++ {
			for x := free[w]; x != 0; x &= x - 1 {
				child := *s
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
				child := *s
				child.removeRow(w)
				n += child.Perft(depth - 1)
			}
		}
	case phaseRemoveRing:
		for w := 0; w < 2; w++ {
			for x := s.rings[s.toMove][w]; x != 0; x &= x - 1 {
				child := *s
				child.removeRing(w<<6 | bits.TrailingZeros64(x))
				n += child.Perft(depth - 1)
			}
		}
	}
	return n
}

// perftMoves walks the rays of each ring as targets does, building the
// mask of jumped points on the way instead of looking it up.
func (s *State) perftMoves(depth int) uint64 {
	var n uint64
	rings := s.rings[0].or(s.rings[1])
	markers := s.markers[0].or(s.markers[1])
	moved := false
	for w := 0; w < 2; w++ {
		for x := s.rings[s.toMove][w]; x != 0; x &= x - 1 {
			from := w<<6 | bits.TrailingZeros64(x)
			for h := 0; h < 6; h++ {
				ray := &geo.ray[from][h]
				var path bitboard
				jumped := false
				for i := int8(0); i < geo.rayLen[from][h]; i++ {
					q := int(ray[i])
					if rings.has(q) {
						break
					}
					if markers.has(q) {
						jumped = true
						path.set(q)
						continue
					}
					child := *s
					child.move(from, q, path)
					n += child.Perft(depth - 1)
					moved = true
					if jumped {
						break
					}
				}
			}
		}
	}
	if !moved {
		child := *s
		child.pass()
		n += child.Perft(depth - 1)
	}
	return n
}
