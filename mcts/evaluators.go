package mcts

import (
	"fmt"
	"math/rand/v2"

	"github.com/flipzero/flipzero/env"
)

// Uniform is the evaluator that knows nothing: a uniform prior and value 0.
// It measures the search's own speed.
type Uniform struct{}

// Evaluate fills every prior with 1 (the search renormalizes over the
// legal actions) and every value with 0.
func (Uniform) Evaluate(states []env.State, priors, values []float32) error {
	for i := range priors {
		priors[i] = 1
	}
	for i := range values {
		values[i] = 0
	}
	return nil
}

// maxRolloutPlies bounds one random playout, so that a game that never
// ends is an error rather than a hang.
const maxRolloutPlies = 1 << 20

// Rollout is classic pure MCTS's evaluator: a uniform prior and, as value,
// the mean result of random playouts to the end of the game. Its strength
// as a player grows with the search's playouts. The playouts draw chance
// outcomes by their probabilities, and a one-player game's result is its
// normalised score (env.Value).
type Rollout struct {
	playouts int
	rng      *rand.Rand
	scratch  env.State
	random   *env.Random
}

// NewRollout returns a Rollout evaluator that plays playoutsPerLeaf random
// games from each position, with moves drawn from rng.
func NewRollout(playoutsPerLeaf int, rng *rand.Rand) (*Rollout, error) {
	if playoutsPerLeaf < 1 {
		return nil, fmt.Errorf("mcts: rollout evaluator with %d playouts per leaf, want at least 1", playoutsPerLeaf)
	}
	return &Rollout{playouts: playoutsPerLeaf, rng: rng}, nil
}

// Evaluate plays the random games.
func (r *Rollout) Evaluate(states []env.State, priors, values []float32) error {
	for i := range priors {
		priors[i] = 1
	}
	for i, s := range states {
		v, err := r.value(s)
		if err != nil {
			return err
		}
		values[i] = v
	}
	return nil
}

// value is the mean result of the random games from s for its mover.
func (r *Rollout) value(s env.State) (float32, error) {
	g := s.Game()
	if r.scratch == nil || r.scratch.Game().Name() != g.Name() {
		r.scratch = g.NewState()
		r.random = env.NewRandom(g, r.rng)
	}
	mover := s.ToMove()
	sum := float32(0)
	for k := 0; k < r.playouts; k++ {
		r.scratch.CopyFrom(s)
		for plies := 0; !r.scratch.Terminal(); plies++ {
			if plies == maxRolloutPlies {
				return 0, fmt.Errorf("mcts: a random %s game ran past %d plies", g.Name(), maxRolloutPlies)
			}
			r.scratch.Apply(r.random.Action(r.scratch))
		}
		sum += env.Value(r.scratch, mover)
	}
	return sum / float32(r.playouts), nil
}
