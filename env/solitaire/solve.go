package solitaire

import "math"

// SolveExact returns the expected final score of s under best play:
// expectimax, the best placement at a decision and the mean over the
// faces, weighted by their chances, at a chance node. It walks the whole
// tree, so it suits only positions with a few tokens and empty squares
// left; the tests use it as the oracle for the search.
func SolveExact(s *State) float64 {
	v, _ := SolveExactWithin(s, math.MaxInt)
	return v
}

// SolveExactWithin is SolveExact that gives up, returning false, once it
// has visited more than nodes positions.
func SolveExactWithin(s *State, nodes int) (float64, bool) {
	budget := nodes
	v := solve(s, &budget)
	return v, budget >= 0
}

func solve(s *State, budget *int) float64 {
	*budget--
	if *budget < 0 {
		return 0
	}
	if s.Terminal() {
		return s.Score()
	}
	var buf [Reveal + maxKinds]int
	legal := s.LegalActions(buf[:0])
	if s.IsChance() {
		total := 0.0
		for _, a := range legal {
			child := *s
			child.Apply(a)
			total += float64(s.hidden[a-Reveal]) * solve(&child, budget)
		}
		return total / float64(s.hiddenTotal)
	}
	best := 0.0
	for _, a := range legal {
		child := *s
		child.Apply(a)
		best = max(best, solve(&child, budget))
	}
	return best
}
