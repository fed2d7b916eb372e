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
	// PolicyTemperature flattens (above 1) or sharpens (below 1) the
	// network's prior before the search uses it: each legal action's
	// prior is raised to the power 1/PolicyTemperature and renormalised,
	// the policy logits divided by it. A network trained on sharp search
	// targets can be surer of its first choice than its search should
	// be; lc0 plays with its policy softmax temperature above 1 for that
	// reason. Default 1: the prior as the network gives it.
	PolicyTemperature float64 `yaml:"policy_temperature"`
	// ForcedPlayouts turns on KataGo's forced playouts at the root (every
	// child gets at least √(ForcedPlayoutsK·P·N) visits) and the matching
	// pruning of the policy target. They apply only in searches with root
	// noise, the full searches whose visits become training targets. Default off;
	// the shipped configs turn it on.
	ForcedPlayouts bool `yaml:"forced_playouts"`
	// ForcedPlayoutsK is KataGo's k. Default 2, KataGo's.
	ForcedPlayoutsK float64 `yaml:"forced_playouts_k"`

	// Mode is the search, puct (AlphaZero) or gumbel (Gumbel AlphaZero,
	// see gumbel.go). Default puct, which the shipped runs were trained
	// with; gumbel improves the policy at any budget, where PUCT's visit
	// counts at a few dozen playouts teach little. The settings above but
	// LeavesPerTree and VirtualLoss are PUCT's; the Gumbel ones below are
	// Gumbel's.
	Mode Mode `yaml:"mode"`
	// GumbelConsidered is how many root actions sequential halving starts
	// with (m): the legal actions with the highest prior logit plus
	// Gumbel noise. Default 16, the paper's and mctx's: enough to cover
	// the plausible moves, few enough that 40 playouts give each a few.
	// Fewer are considered when fewer are legal or the budget is smaller.
	GumbelConsidered int `yaml:"gumbel_considered"`
	// GumbelCVisit and GumbelCScale scale the completed Q-values, rescaled
	// to [0, 1] at each node, into logits: σ(q) = (GumbelCVisit +
	// max visits)·GumbelCScale·q. mctx's defaults, 50 and 0.1: since q is
	// rescaled by each node's own minimum and maximum it spans [0, 1]
	// even when the values barely differ, and the paper's scale of 1
	// (with values normalized over the whole tree) would make the target
	// close to one-hot on noise. Defaults 50 and 0.1.
	GumbelCVisit float64 `yaml:"gumbel_c_visit"`
	GumbelCScale float64 `yaml:"gumbel_c_scale"`
	// GumbelPUCTBelowRoot selects below the root by PUCT (CPUCT, FPU,
	// virtual loss) instead of the paper's deterministic completed-Q
	// rule. The deterministic rule trusts the prior: an unvisited action
	// is valued at the prior-weighted mean of the visited ones, so with a
	// uniform prior (pure MCTS, an untrained network) a refutation the
	// first visits missed may never be tried. Default off, the paper's
	// rule.
	GumbelPUCTBelowRoot bool `yaml:"gumbel_puct_below_root"`

	// Solver proves results in the tree (MCTS-Solver, Winands et al.
	// 2008; lc0's terminal propagation): a position whose mover has a
	// move to a won position is won, one whose moves all lose is lost,
	// and a proven position is from then on a terminal leaf, its exact
	// result backed up at no evaluation. The search then plays a proven
	// win at the root and never a proven loss while it has another move,
	// and selection values a proven child at its exact result rather
	// than its mean. It pays in games decided by short tactics: in YINSH
	// a ring move that makes a row is a win three decisions deep, which
	// a network's value only approximates. Two-player games without
	// chance only; elsewhere it does nothing. Default off.
	Solver bool `yaml:"solver"`
	// EndgameSolve, with the solver on, solves exactly the positions the
	// search reaches within this many moves of the end by the game's own
	// measure (Othello: empty squares; env.Endgame), instead of asking
	// the network: a solved position is proven, its exact result backed
	// up at no evaluation. Default 0: none. Each solve searches the
	// whole endgame, so the limit is kept where a solve costs less than
	// an evaluation (Othello: about 10).
	EndgameSolve int `yaml:"endgame_solve"`
}

// Mode chooses the search algorithm.
type Mode uint8

const (
	// PUCT is AlphaZero's search: selection by Q + CPUCT·P·√N/(1+n),
	// Dirichlet noise at the root, the visit distribution as policy
	// target.
	PUCT Mode = iota
	// Gumbel is Gumbel AlphaZero's: sequential halving with Gumbel noise
	// at the root, the deterministic completed-Q rule below it, and the
	// improved policy softmax(logits + σ(completed Q)) as policy target.
	// It learns from far fewer simulations per move than PUCT.
	Gumbel
)

// String is the mode's name in configs: "puct" or "gumbel".
func (m Mode) String() string {
	switch m {
	case PUCT:
		return "puct"
	case Gumbel:
		return "gumbel"
	}
	return fmt.Sprintf("mode(%d)", uint8(m))
}

// MarshalText writes the mode's name, for configs.
func (m Mode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText reads a mode's name, for configs: the error names the key.
func (m *Mode) UnmarshalText(text []byte) error {
	mode, err := ParseMode(string(text))
	if err != nil {
		return fmt.Errorf("mode: %w", err)
	}
	*m = mode
	return nil
}

// ParseMode reads a mode's name, "puct" or "gumbel".
func ParseMode(name string) (Mode, error) {
	switch name {
	case "puct":
		return PUCT, nil
	case "gumbel":
		return Gumbel, nil
	}
	return 0, fmt.Errorf("unknown search mode %q (known: puct, gumbel)", name)
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
		PolicyTemperature:   1,
		ForcedPlayouts:      false,
		ForcedPlayoutsK:     2,
		Mode:                PUCT,
		GumbelConsidered:    16,
		GumbelCVisit:        50,
		GumbelCScale:        0.1,
	}
}

// PlayConfig is DefaultConfig for a bot that plays to win rather than
// to learn: no root noise, and the solver on, so that it plays a proven
// win and never a proven loss while it has another move, with the
// endgame solved exactly where the game can (Othello: the last
// playEndgameSolve empty squares). Network players, the engine and
// analysis search with it.
func PlayConfig() Config {
	c := DefaultConfig()
	c.DirichletWeight = 0
	c.Solver = true
	c.EndgameSolve = playEndgameSolve
	return c
}

// playEndgameSolve is where play starts solving Othello exactly: at 400
// playouts a move 14 empty squares won 68–3–29 (+143 Elo) against the
// same network without, 10 gained +85; with the solver asking only for
// the winner, 16 beat 14 200–51–149 (+45) at about 0.3 s more a game on
// a Xeon core. 16 is the most a search setting allows.
const playEndgameSolve = 16

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

// maxEndgameSolve bounds endgame_solve: an exact solve's cost grows
// about fivefold a move, and at 16 Othello empties one takes seconds.
const maxEndgameSolve = 16

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
		{"gumbel_c_visit", c.GumbelCVisit}, {"gumbel_c_scale", c.GumbelCScale},
	} {
		if err := finite(f.name, f.v); err != nil {
			return err
		}
	}
	if !(c.PolicyTemperature > 0) || math.IsInf(c.PolicyTemperature, 0) {
		return fmt.Errorf("policy_temperature: %v, want a finite number > 0", c.PolicyTemperature)
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
	if c.EndgameSolve < 0 || c.EndgameSolve > maxEndgameSolve {
		return fmt.Errorf("endgame_solve: %d, want 0..%d", c.EndgameSolve, maxEndgameSolve)
	}
	if c.EndgameSolve > 0 && !c.Solver {
		return fmt.Errorf("endgame_solve: %d needs solver: true, which backs up proven results", c.EndgameSolve)
	}
	if c.Mode != PUCT && c.Mode != Gumbel {
		return fmt.Errorf("mode: %v, want puct or gumbel", c.Mode)
	}
	if c.Mode == Gumbel && (c.GumbelConsidered < 1 || c.GumbelConsidered > maxActions) {
		return fmt.Errorf("gumbel_considered: %d, want 1..%d", c.GumbelConsidered, maxActions)
	}
	return nil
}
