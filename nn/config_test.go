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
		{shapeGame{"fake-othello", 4, 8, 8, 65}, 4, 64},
		{shapeGame{"fake-yinsh", 12, 11, 11, 2142}, 6, 64},
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
}
