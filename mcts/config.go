package mcts

import (
	"fmt"
	"math"
)

// Config holds the search's constants. The zero value is not useful; start
// from DefaultConfig and change what you need.
type Config struct {
	// CPUCT weighs the prior against the mean value in AlphaZero's
	// selection rule Q + CPUCT·P·√N/(1+n).
	CPUCT float64
	// FPUReduction is how much worse than its parent an unvisited child
	// is assumed to be (first-play urgency, as in KataGo and lc0): its Q is
	// the parent's mean value minus FPUReduction·√(prior mass of the
	// visited children).
	FPUReduction float64
	// RootFPUReduction is FPUReduction at the root, where exploring every
	// move matters more.
	RootFPUReduction float64
	// DirichletAlphaTotal is the Dirichlet concentration summed over the
	// root's legal actions: each action gets alpha = DirichletAlphaTotal /
	// (number of legal actions), so the noise has the same overall shape
	// whatever the game's branching (KataGo's scaling).
	DirichletAlphaTotal float64
	// DirichletWeight is the fraction of the root prior replaced by noise.
	DirichletWeight float64
	// LeavesPerTree is how many leaves one tree may have waiting for the
	// evaluator at once; virtual loss spreads them over different paths.
	LeavesPerTree int
	// VirtualLoss is how many lost visits each waiting path counts as
	// while its evaluation is outstanding.
	VirtualLoss float64
	// ForcedPlayouts turns on KataGo's forced playouts at the root (every
	// child gets at least √(ForcedPlayoutsK·P·N) visits) and the matching
	// pruning of the policy target. They apply only in searches with root
	// noise, the full searches whose visits become training targets.
	ForcedPlayouts  bool
	ForcedPlayoutsK float64
}

// DefaultConfig returns settings that suit play and self-play of every
// registered game.
func DefaultConfig() Config {
	return Config{
		CPUCT:               1.25,
		FPUReduction:        0.2,
		RootFPUReduction:    0,
		DirichletAlphaTotal: 10,
		DirichletWeight:     0.25,
		LeavesPerTree:       4,
		VirtualLoss:         1,
		ForcedPlayouts:      false,
		ForcedPlayoutsK:     2,
	}
}

// RolloutConfig is DefaultConfig for pure MCTS, the search with the
// Rollout (or Uniform) evaluator: with uniform priors the exploration term
// is spread thin over every legal action, so CPUCT is larger and unvisited
// children are not assumed worse than their parent. With it, 2,000
// playouts never lose tic-tac-toe against the perfect player.
func RolloutConfig() Config {
	c := DefaultConfig()
	c.CPUCT = 4
	c.FPUReduction = 0
	c.RootFPUReduction = 0
	return c
}

// maxLeavesPerTree keeps a node's in-flight count within its uint16.
const maxLeavesPerTree = 4096

// Validate reports the first setting that makes no sense.
func (c Config) Validate() error {
	finite := func(name string, v float64) error {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("mcts config: %s = %v, want a finite number ≥ 0", name, v)
		}
		return nil
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"CPUCT", c.CPUCT}, {"FPUReduction", c.FPUReduction}, {"RootFPUReduction", c.RootFPUReduction},
		{"DirichletAlphaTotal", c.DirichletAlphaTotal}, {"DirichletWeight", c.DirichletWeight},
		{"VirtualLoss", c.VirtualLoss}, {"ForcedPlayoutsK", c.ForcedPlayoutsK},
	} {
		if err := finite(f.name, f.v); err != nil {
			return err
		}
	}
	if c.DirichletWeight > 1 {
		return fmt.Errorf("mcts config: DirichletWeight = %v, want at most 1", c.DirichletWeight)
	}
	if c.DirichletWeight > 0 && c.DirichletAlphaTotal == 0 {
		return fmt.Errorf("mcts config: DirichletAlphaTotal must be positive when DirichletWeight is")
	}
	if c.LeavesPerTree < 1 || c.LeavesPerTree > maxLeavesPerTree {
		return fmt.Errorf("mcts config: LeavesPerTree = %d, want 1..%d", c.LeavesPerTree, maxLeavesPerTree)
	}
	return nil
}
