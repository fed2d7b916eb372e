package mcts

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/flipzero/flipzero/env"
)

// Child is what the search knows about one legal action at the root.
type Child struct {
	Action int
	Visits int
	// Prior is the prior the search used, noise included.
	Prior float32
	// Value is the mean value of the action for the root's mover; NaN when
	// it has no visit.
	Value float32
	// Proof is the action's result when the solver proved it.
	Proof Proof
}

// Result is the outcome of searching the root.
type Result struct {
	// Mover is the player to move at the root.
	Mover env.Player
	// Children lists the root's legal actions in increasing order.
	Children []Child
	// Policy is the policy target over the game's whole action space: the
	// visit distribution over the legal actions, after pruning of forced
	// playouts when they were used. It sums to 1 once there are playouts.
	// A Gumbel search's is the improved policy instead (see Gumbel).
	Policy []float32
	// Value is the root's mean value for the mover.
	Value float32
	// Best is the action with the most visits (ties: the higher prior);
	// a Gumbel search's is the sequential-halving winner. With the solver
	// a proven win comes first, and a proven loss last.
	Best int
	// Playouts is the sum of the children's visits.
	Playouts int
	// Chance says the root is a chance node: the children are its
	// outcomes, their Prior the outcomes' probabilities. Nobody chooses
	// there; Choose draws an outcome by its probability.
	Chance bool
	// Gumbel says the search was Gumbel's: Policy is the improved policy
	// softmax(logits + σ(completed Q)) and Best the sequential-halving
	// winner, already a sample when the search had noise, which Choose
	// then returns whatever the temperature.
	Gumbel bool
}

// Result fills r (reusing its slices) with the root's statistics. A
// chance root needs no search: its outcomes are listed even before one,
// so that Choose can draw from them.
func (t *Tree) Result(r *Result) {
	if t.hasChance && t.pending == 0 && t.nodes[0].status == unexpanded && env.IsChance(t.root) {
		// A game whose chance node has no outcomes fails here as it
		// fails the search; the result then lists no children.
		_ = t.expandChance(0, t.root)
	}
	root := &t.nodes[0]
	r.Mover = t.root.ToMove()
	sign := 1.0
	if r.Mover == 1 {
		sign = -1
	}
	r.Value = 0
	if root.visits > 0 {
		r.Value = float32(sign * float64(root.valueSum) / float64(root.visits))
	}
	r.Children = r.Children[:0]
	r.Policy = append(r.Policy[:0], make([]float32, t.game.ActionSpace())...)
	r.Best, r.Playouts = -1, 0
	r.Chance = root.status == chance
	r.Gumbel = t.gumbel != nil
	if !root.status.open() {
		return
	}
	bestVisits, bestPrior := -1, float32(-1)
	for _, c := range t.nodes[root.first : root.first+int32(root.children)] {
		v := float32(math.NaN())
		if c.visits > 0 {
			v = float32(sign * float64(c.valueSum) / float64(c.visits))
		}
		proof := Unproven
		if t.solve && c.status == terminal {
			proof = proofFor(c.player, r.Mover)
		}
		r.Children = append(r.Children, Child{Action: int(c.action), Visits: int(c.visits), Prior: c.prior, Value: v, Proof: proof})
		r.Playouts += int(c.visits)
		if int(c.visits) > bestVisits || int(c.visits) == bestVisits && c.prior > bestPrior {
			r.Best, bestVisits, bestPrior = int(c.action), int(c.visits), c.prior
		}
	}
	if t.solve {
		defer r.applyProofs()
	}
	if t.gumbel != nil {
		t.gumbelResult(r)
		return
	}
	if r.Playouts == 0 {
		return
	}
	if t.forcedPlayouts() && !r.Chance {
		t.prunedTarget(r)
		return
	}
	for _, c := range r.Children {
		r.Policy[c.Action] = float32(c.Visits) / float32(r.Playouts)
	}
}

// prunedTarget writes the policy target without the visits that forced
// playouts gave (KataGo): every child but the best loses up to its forced
// share √(k·P·N) as long as its PUCT score stays below the best child's,
// and a child left with a single visit or none is dropped.
func (t *Tree) prunedTarget(r *Result) {
	n := float64(r.Playouts)
	sqrtN := math.Sqrt(n)
	cpuct := t.cfg.CPUCT
	var best Child
	for _, c := range r.Children {
		if c.Action == r.Best {
			best = c
		}
	}
	bestScore := float64(best.Value) + cpuct*float64(best.Prior)*sqrtN/(1+float64(best.Visits))
	total := 0.0
	for _, c := range r.Children {
		kept := float64(c.Visits)
		if c.Action != r.Best && c.Visits > 0 {
			forced := math.Sqrt(t.cfg.ForcedPlayoutsK * float64(c.Prior) * n)
			kept = max(kept-forced, 0)
			// The fewest visits at which the child still scores below the
			// best: Q + cpuct·P·√N/(1+n) < bestScore.
			if gap := bestScore - float64(c.Value); gap > 0 {
				kept = max(kept, cpuct*float64(c.Prior)*sqrtN/gap-1)
			} else {
				kept = float64(c.Visits)
			}
			kept = min(kept, float64(c.Visits))
			if kept <= 1 {
				kept = 0
			}
		}
		r.Policy[c.Action] = float32(kept)
		total += kept
	}
	for _, c := range r.Children {
		r.Policy[c.Action] = float32(float64(r.Policy[c.Action]) / total)
	}
}

// Choose picks an action from the policy target with visit-count
// temperature: probability ∝ Policy^(1/temperature). Temperature 0 (or a
// nil rng) takes Best, and so does a Gumbel result, whose Best is already
// a sample when the search had noise, and a result with a proven win. A
// proven loss is never drawn (Best is taken when nothing else has a
// share). At a chance root it draws an outcome by its probability
// whatever the temperature; a nil rng takes Best.
func (r *Result) Choose(temperature float64, rng *rand.Rand) int {
	if r.Chance && rng != nil && len(r.Children) > 0 {
		u := rng.Float64()
		for _, c := range r.Children {
			u -= float64(c.Prior)
			if u < 0 {
				return c.Action
			}
		}
		return r.Children[len(r.Children)-1].Action
	}
	if temperature <= 0 || rng == nil || r.Playouts == 0 || r.Gumbel {
		return r.Best
	}
	share := func(c Child) float64 {
		if c.Proof == ProvenLoss {
			return 0
		}
		return float64(r.Policy[c.Action])
	}
	maxP := 0.0
	for _, c := range r.Children {
		if c.Proof == ProvenWin {
			return r.Best
		}
		maxP = max(maxP, share(c))
	}
	if maxP == 0 {
		return r.Best
	}
	// Scaled by the largest share so that a small temperature does not
	// overflow the powers.
	total := 0.0
	for _, c := range r.Children {
		if p := share(c); p > 0 {
			total += math.Pow(p/maxP, 1/temperature)
		}
	}
	x := rng.Float64() * total
	for _, c := range r.Children {
		if p := share(c); p > 0 {
			x -= math.Pow(p/maxP, 1/temperature)
			if x < 0 {
				return c.Action
			}
		}
	}
	return r.Best
}

// Temperature is a move-choice temperature that decays with the game's
// ply from Start towards End, halving the gap every HalfLife plies (the
// schedule KataGo uses). HalfLife 0 keeps Start throughout.
type Temperature struct {
	// Start is the first move's temperature (default 0.8: varied openings
	// without throwing the game away).
	Start float64 `yaml:"temperature"`
	// End is where it decays to (default 0.2: later moves mostly the best,
	// still not always the same game).
	End float64 `yaml:"final_temperature"`
	// HalfLife in plies (default 12, about a sixth of an Othello game).
	HalfLife float64 `yaml:"temperature_half_life"`
}

// At is the temperature for the move at ply (0 for the first move).
func (s Temperature) At(ply int) float64 {
	if s.HalfLife <= 0 {
		return s.Start
	}
	return s.End + (s.Start-s.End)*math.Pow(0.5, float64(ply)/s.HalfLife)
}

// PlayoutCap is KataGo's playout cap randomization: a fraction of the
// moves get a full search (with root noise, recorded as training targets),
// the others a fast search (no noise, not recorded) that only keeps the
// game going.
type PlayoutCap struct {
	// Full is the playouts of a full search, whose visits become the
	// training target.
	Full int `yaml:"playouts_full"`
	// Fast is the playouts of a fast search: enough to play a decent move.
	Fast int `yaml:"playouts_fast"`
	// FullFraction of the moves get a full search (KataGo: 0.25).
	FullFraction float64 `yaml:"full_search_fraction"`
}

// Validate names the first setting out of range by its key.
func (p PlayoutCap) Validate() error {
	switch {
	case p.Full < 1 || p.Full > 1_000_000:
		return fmt.Errorf("playouts_full: %d, must be 1..1000000", p.Full)
	case p.Fast < 1 || p.Fast > p.Full:
		return fmt.Errorf("playouts_fast: %d, must be 1..playouts_full", p.Fast)
	case !(p.FullFraction > 0 && p.FullFraction <= 1):
		return fmt.Errorf("full_search_fraction: %v, must be in (0, 1]", p.FullFraction)
	}
	return nil
}

// Validate names the first setting out of range by its key.
func (s Temperature) Validate() error {
	switch {
	case !(s.Start >= 0 && s.Start <= 10):
		return fmt.Errorf("temperature: %v, must be in [0, 10]", s.Start)
	case !(s.End >= 0 && s.End <= 10):
		return fmt.Errorf("final_temperature: %v, must be in [0, 10]", s.End)
	case !(s.HalfLife >= 0 && s.HalfLife <= 1000):
		return fmt.Errorf("temperature_half_life: %v, must be in [0, 1000] plies", s.HalfLife)
	}
	return nil
}

// Draw decides the next move's search: its playouts and whether it is a
// full one.
func (p PlayoutCap) Draw(rng *rand.Rand) (playouts int, full bool) {
	if rng.Float64() < p.FullFraction {
		return p.Full, true
	}
	return p.Fast, false
}
