package mcts

import (
	"fmt"
	"math"
)

// Config holds the search's constants. The zero value is not useful; start
// from DefaultConfig and change what you need.
type Config struct {
	// CPUCT weighs the prior against the mean value in AlphaZero's
	// selection rule Q + CPUCT·P·√N/(1+n). Default 1.25, KataGo's and
	// lc0's order of magnitude for a trained prior.
	CPUCT float64 `yaml:"cpuct"`
	// FPUReduction is how much worse than its parent an unvisited child
	// is assumed to be (first-play urgency, as in KataGo and lc0): its Q is
	// the parent's mean value minus FPUReduction·√(prior mass of the
	// visited children). Default 0.2, as KataGo.
	FPUReduction float64 `yaml:"fpu_reduction"`
	// RootFPUReduction is FPUReduction at the root, where exploring every
	// move matters more. Default 0: the noisy root tries every move.
	RootFPUReduction float64 `yaml:"fpu_reduction_root"`
	// DirichletAlphaTotal is the Dirichlet concentration summed over the
	// root's legal actions: each action gets alpha = DirichletAlphaTotal /
	// (number of legal actions), so the noise has the same overall shape
	// whatever the game's branching (KataGo's scaling). Default 10.
	DirichletAlphaTotal float64 `yaml:"dirichlet_alpha_total"`
	// DirichletWeight is the fraction of the root prior replaced by noise.
	// Default 0.25, AlphaZero's.
	DirichletWeight float64 `yaml:"noise_weight"`
	// LeavesPerTree is how many leaves one tree may have waiting for the
	// evaluator at once; virtual loss spreads them over different paths. Default 4: enough
	// to fill a batch from few trees without searching far off the best line.
	LeavesPerTree int `yaml:"leaves_per_tree"`
	// VirtualLoss is how many lost visits each waiting path counts as
	// while its evaluation is outstanding. Default 1.
	VirtualLoss float64 `yaml:"virtual_loss"`
	// ForcedPlayouts turns on KataGo's forced playouts at the root (every
	// child gets at least √(ForcedPlayoutsK·P·N) visits) and the matching
	// pruning of the policy target. They apply only in searches with root
	// noise, the full searches whose visits become training targets. Default off;
	// the shipped configs turn it on.
	ForcedPlayouts bool `yaml:"forced_playouts"`
	// ForcedPlayoutsK is KataGo's k. Default 2, KataGo's.
	ForcedPlayoutsK float64 `yaml:"forced_playouts_k"`
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
			return fmt.Errorf("%s: %v, want a finite number ≥ 0", name, v)
		}
		return nil
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"cpuct", c.CPUCT}, {"fpu_reduction", c.FPUReduction}, {"fpu_reduction_root", c.RootFPUReduction},
		{"dirichlet_alpha_total", c.DirichletAlphaTotal}, {"noise_weight", c.DirichletWeight},
		{"virtual_loss", c.VirtualLoss}, {"forced_playouts_k", c.ForcedPlayoutsK},
	} {
		if err := finite(f.name, f.v); err != nil {
			return err
		}
	}
	if c.DirichletWeight > 1 {
		return fmt.Errorf("noise_weight: %v, want at most 1", c.DirichletWeight)
	}
	if c.DirichletWeight > 0 && c.DirichletAlphaTotal == 0 {
		return fmt.Errorf("dirichlet_alpha_total: %v, must be positive when noise_weight is", c.DirichletAlphaTotal)
	}
	if c.LeavesPerTree < 1 || c.LeavesPerTree > maxLeavesPerTree {
		return fmt.Errorf("leaves_per_tree: %d, want 1..%d", c.LeavesPerTree, maxLeavesPerTree)
	}
	return nil
}
