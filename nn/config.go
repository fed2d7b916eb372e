package nn

import (
	"fmt"

	"github.com/flipzero/flipzero/env"
)

// Config is the network's architecture.
type Config struct {
	// Blocks is the number of residual blocks after the input convolution.
	// Defaults (DefaultConfig) grow with the board: 2 for tic-tac-toe, 4
	// for 8×8, 6 for YINSH, deep enough for the game, small enough for a CPU.
	Blocks int `json:"blocks" yaml:"blocks"`
	// Filters is the width of the tower (default 16 for tic-tac-toe, else
	// 64: AlphaZero used 256, which two cores cannot feed).
	Filters int `json:"filters" yaml:"filters"`
	// PolicyFilters is the number of 1×1 filters feeding the policy's
	// fully connected layer (default 2, AlphaZero's).
	PolicyFilters int `json:"policy_filters" yaml:"policy_filters"`
	// ValueFilters is the number of 1×1 filters feeding the value head
	// (default 1, AlphaZero's).
	ValueFilters int `json:"value_filters" yaml:"value_filters"`
	// ValueHidden is the width of the value head's hidden layer (default 64;
	// 32 for tic-tac-toe).
	ValueHidden int `json:"value_hidden" yaml:"value_hidden"`
	// Ownership adds KataGo's ownership head: a 1×1 convolution of the
	// tower to one plane, tanh, trained to say who holds each cell at the
	// end of the game, where the game tells (env.Ownership). Score adds a
	// score head: one output of the value head's hidden layer, tanh,
	// trained on the final score margin. Both only teach the tower during
	// training (default off): searches, exported models and ONNX files
	// never compute them.
	Ownership bool `json:"ownership,omitempty" yaml:"ownership"`
	Score     bool `json:"score,omitempty" yaml:"score"`
	// SoftPolicy adds KataGo's auxiliary soft policy head: a second
	// policy output beside the first (the same shape, its own last
	// layer), trained on the policy target raised to the power ¼ and
	// renormalised (SoftPolicyTarget). The flattened target weighs the
	// moves the search ranks below its best ones, which the sharp target
	// all but hides, so the tower learns to tell them apart sooner.
	// Training only, like the heads above (default off).
	SoftPolicy bool `json:"soft_policy,omitempty" yaml:"soft_policy"`
	// GlobalPooling gives every other residual block, from the first,
	// KataGo's global pooling bias: the mean and maximum of each channel
	// over the board, through a fully connected layer, added to every
	// cell before the block's second convolution (default off).
	GlobalPooling bool `json:"global_pooling,omitempty" yaml:"global_pooling"`
	// PolicyHead is "dense" (default: AlphaZero's, a fully connected
	// layer from the policy convolution's planes to every action) or
	// "conv", for games that lay their actions out on the board
	// (env.PolicyMap): a 1×1 convolution scores each action at its cell,
	// one plane per kind of action, with the same weights everywhere on
	// the board, and the actions without a cell (a pass) come from the
	// policy convolution's mean and maximum over the board. YINSH's dense
	// head maps 2·121 values to 2,142 actions, half the network's
	// weights; the convolution needs a few thousand.
	PolicyHead string `json:"policy_head,omitempty" yaml:"policy_head"`
}

// ConvPolicy says whether the policy head is the convolutional one.
func (c Config) ConvPolicy() bool { return c.PolicyHead == "conv" }

// normal is the config with its defaults spelled one way ("dense" as
// the empty head), so that equal architectures compare equal.
func (c Config) normal() Config {
	if c.PolicyHead == "dense" {
		c.PolicyHead = ""
	}
	return c
}

// Inference is the architecture without what only training uses: that
// of the network's folded snapshots and exported models.
func (c Config) Inference() Config {
	c.Ownership, c.Score, c.SoftPolicy = false, false, false
	return c
}

// Bounds that keep a network (and a size read from an untrusted file)
// within what this machine can hold.
const (
	maxBlocks = 64
	maxWidth  = 1024
)

// DefaultConfig is the architecture used for a game unless a config says
// otherwise: tiny for tic-tac-toe, 64 filters × 4 blocks for the Reversi
// family, 64 × 6 for YINSH and anything larger.
func DefaultConfig(game env.Game) Config {
	_, h, w := game.EncodedShape()
	switch {
	case h*w <= 16:
		return Config{Blocks: 2, Filters: 16, PolicyFilters: 2, ValueFilters: 1, ValueHidden: 32}
	case h*w <= 64:
		return Config{Blocks: 4, Filters: 64, PolicyFilters: 2, ValueFilters: 1, ValueHidden: 64}
	default:
		return Config{Blocks: 6, Filters: 64, PolicyFilters: 2, ValueFilters: 1, ValueHidden: 64}
	}
}

// Validate checks that every size is positive and within bounds.
func (c Config) Validate() error {
	sizes := []struct {
		name       string
		value, max int
		allowZero  bool
	}{
		{"blocks", c.Blocks, maxBlocks, true},
		{"filters", c.Filters, maxWidth, false},
		{"policy_filters", c.PolicyFilters, maxWidth, false},
		{"value_filters", c.ValueFilters, maxWidth, false},
		{"value_hidden", c.ValueHidden, maxWidth, false},
	}
	for _, s := range sizes {
		if s.value > s.max || s.value < 0 || (s.value == 0 && !s.allowZero) {
			return fmt.Errorf("%s: %d, want 1..%d", s.name, s.value, s.max)
		}
	}
	if c.PolicyHead != "" && c.PolicyHead != "dense" && c.PolicyHead != "conv" {
		return fmt.Errorf("policy_head: %q, want dense or conv", c.PolicyHead)
	}
	return nil
}

func (c Config) String() string {
	s := fmt.Sprintf("%d blocks × %d filters, policy %d filters, value %d filters + %d hidden",
		c.Blocks, c.Filters, c.PolicyFilters, c.ValueFilters, c.ValueHidden)
	if c.Ownership {
		s += ", ownership head"
	}
	if c.Score {
		s += ", score head"
	}
	if c.SoftPolicy {
		s += ", soft policy head"
	}
	if c.GlobalPooling {
		s += ", global pooling"
	}
	if c.ConvPolicy() {
		s += ", convolutional policy head"
	}
	return s
}

// shape is the geometry a network gets from its game.
type shape struct {
	planes, height, width, actions int
}

func gameShape(game env.Game) (shape, error) {
	p, h, w := game.EncodedShape()
	s := shape{p, h, w, game.ActionSpace()}
	if p < 1 || h < 1 || w < 1 || s.actions < 1 || p > maxWidth || h*w > 1<<12 || s.actions > 1<<16 {
		return s, fmt.Errorf("game %s: unsupported encoding %d×%d×%d with %d actions", game.Name(), p, h, w, s.actions)
	}
	return s, nil
}

func (s shape) cells() int { return s.height * s.width }
