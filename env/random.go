package env

import "math/rand/v2"

// RandomPositions plays random games from the start and returns n
// positions met along the way, about one ply in four (chance outcomes
// drawn by their probabilities); withEnds keeps each
// game's final position too. The same seed gives the same positions.
func RandomPositions(g Game, n int, seed uint64, withEnds bool) []State {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	random := NewRandom(g, rng)
	var out []State
	for len(out) < n {
		s := g.NewState()
		for len(out) < n {
			if s.Terminal() {
				if withEnds {
					out = append(out, s.Clone())
				}
				break
			}
			if rng.IntN(4) == 0 {
				out = append(out, s.Clone())
			}
			s.Apply(random.Action(s))
		}
	}
	return out
}
