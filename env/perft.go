package env

// Perfter is implemented by states that count perft faster than the
// generic walk, e.g. by counting the last ply from a move mask.
type Perfter interface {
	Perft(depth int) uint64
}

// Perft counts the leaves of the game tree below s at the given depth. Each
// decision is one ply (a pass too), and a finished game counts as one leaf
// at every deeper depth.
func Perft(s State, depth int) uint64 {
	if p, ok := s.(Perfter); ok {
		return p.Perft(depth)
	}
	g := s.Game()
	// One scratch state and action buffer per level: the walk allocates
	// nothing after this.
	states := make([]State, depth+1)
	buffers := make([][]int, depth+1)
	for i := range states {
		states[i] = g.NewState()
		buffers[i] = make([]int, 0, g.ActionSpace())
	}
	states[depth].CopyFrom(s)
	return perftWalk(states, buffers, depth)
}

func perftWalk(states []State, buffers [][]int, depth int) uint64 {
	s := states[depth]
	if depth == 0 || s.Terminal() {
		return 1
	}
	legal := s.LegalActions(buffers[depth])
	if depth == 1 {
		return uint64(len(legal))
	}
	child := states[depth-1]
	var n uint64
	for _, a := range legal {
		child.CopyFrom(s)
		child.Apply(a)
		n += perftWalk(states, buffers, depth-1)
	}
	return n
}
