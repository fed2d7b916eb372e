package nn

import (
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/env/tictactoe"
)

func TestDefaultConfig(t *testing.T) {
	tests := []struct {
		game            env.Game
		blocks, filters int
	}{
		{tictactoe.Game{}, 2, 16},
		{othello.Othello(), 4, 64},
		{othello.Reversi(), 4, 64},
		{othello.Single(), 4, 64},
		{fakeOthello, 4, 64},
		{fakeYinsh, 6, 64},
	}
	for _, tc := range tests {
		c := DefaultConfig(tc.game)
		if c.Blocks != tc.blocks || c.Filters != tc.filters {
			t.Errorf("%s: %v, want %d blocks × %d filters", tc.game.Name(), c, tc.blocks, tc.filters)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("%s: default config invalid: %v", tc.game.Name(), err)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	good := Config{Blocks: 1, Filters: 8, PolicyFilters: 2, ValueFilters: 1, ValueHidden: 8}
	tests := []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.Blocks = -1 }, "blocks"},
		{func(c *Config) { c.Blocks = maxBlocks + 1 }, "blocks"},
		{func(c *Config) { c.Filters = 0 }, "filters"},
		{func(c *Config) { c.Filters = maxWidth + 1 }, "filters"},
		{func(c *Config) { c.PolicyFilters = 0 }, "policy_filters"},
		{func(c *Config) { c.ValueFilters = -3 }, "value_filters"},
		{func(c *Config) { c.ValueHidden = 0 }, "value_hidden"},
	}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	zeroBlocks := good
	zeroBlocks.Blocks = 0
	if err := zeroBlocks.Validate(); err != nil {
		t.Errorf("no residual blocks should be allowed: %v", err)
	}
	for _, tc := range tests {
		c := good
		tc.change(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one about %s", c, err, tc.want)
		}
		if _, err := New(tictactoe.Game{}, c, 1); err == nil {
			t.Errorf("%+v: New accepted it", c)
		}
	}
}

func TestTrainConfig(t *testing.T) {
	if err := DefaultTrainConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := []func(*TrainConfig){
		func(c *TrainConfig) { c.LearningRate = 0 },
		func(c *TrainConfig) { c.Momentum = 1 },
		func(c *TrainConfig) { c.WeightDecay = -1 },
		func(c *TrainConfig) { c.BatchNormMomentum = 0 },
	}
	for i, change := range bad {
		c := DefaultTrainConfig()
		change(&c)
		if c.Validate() == nil {
			t.Errorf("case %d: %+v accepted", i, c)
		}
	}
	net, _ := New(tictactoe.Game{}, tinyConfig, 1)
	tr, err := NewTrainer(net, DefaultTrainConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.SetLearningRate(0.005); err != nil || tr.Config().LearningRate != 0.005 {
		t.Errorf("SetLearningRate(0.005): %v, rate now %g", err, tr.Config().LearningRate)
	}
	if err := tr.SetLearningRate(-1); err == nil || tr.Config().LearningRate != 0.005 {
		t.Errorf("SetLearningRate(-1): %v, rate now %g", err, tr.Config().LearningRate)
	}
}

// TestLearningRateScalesStep: with zero momentum and decay, a step moves
// each weight by exactly −rate × gradient.
func TestLearningRateScalesStep(t *testing.T) {
	g := tictactoe.Game{}
	b := randomBatch(g, 8, 2)
	moved := func(rate float64) []float32 {
		net, _ := New(g, tinyConfig, 5)
		cfg := TrainConfig{LearningRate: rate, BatchNormMomentum: 0.1}
		tr, err := NewTrainer(net, cfg)
		if err != nil {
			t.Fatal(err)
		}
		before := append([]float32(nil), net.policyFC.w.data...)
		if _, err := tr.Step(b); err != nil {
			t.Fatal(err)
		}
		for i := range before {
			before[i] = net.policyFC.w.data[i] - before[i]
		}
		return before
	}
	small, large := moved(0.01), moved(0.03)
	nonzero := 0
	for i := range small {
		if small[i] != 0 {
			nonzero++
		}
		if d := large[i] - 3*small[i]; d > 1e-5 || d < -1e-5 {
			t.Fatalf("weight %d moved %g at rate 0.03 and %g at rate 0.01", i, large[i], small[i])
		}
	}
	if nonzero == 0 {
		t.Error("no weight moved")
	}
}
