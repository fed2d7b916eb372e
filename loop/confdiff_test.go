package loop

import (
	"fmt"
	"testing"

	"github.com/flipzero/flipzero/env/games"
)

func TestFirstDifference(t *testing.T) {
	base, err := LoadConfig("../configs/othello.yaml", games.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	if k, _, _, ok := FirstDifference(base, base); ok {
		t.Fatalf("a config differs from itself at %s", k)
	}
	for _, tc := range []struct {
		change      func(*Config)
		key, av, bv string
	}{
		// The shipped config's own values, so that a retuned config
		// does not break the test of how its differences are found.
		{func(c *Config) { c.SelfPlay.Games = 2048 }, "selfplay.games_per_generation", fmt.Sprint(base.SelfPlay.Games), "2048"},
		{func(c *Config) { c.Train.Momentum = 0.8 }, "train.momentum", fmt.Sprint(base.Train.Momentum), "0.8"},
		{func(c *Config) { c.SelfPlay.Temperature.HalfLife = 5 }, "selfplay.temperature_half_life", fmt.Sprint(base.SelfPlay.Temperature.HalfLife), "5"},
		{func(c *Config) { c.Network.Ownership = false; c.Train.BatchSize = 1 }, "network.ownership", "true", "false"},
		{func(c *Config) { c.Train.LearningRate = c.Train.LearningRate[:1] }, "train.learning_rate", "", ""},
		{func(c *Config) { c.Game = "reversi" }, "game", "othello", "reversi"},
	} {
		other := base
		other.Train.LearningRate = append([]LRStep(nil), base.Train.LearningRate...)
		tc.change(&other)
		k, av, bv, ok := FirstDifference(base, other)
		if !ok || k != tc.key || (tc.av != "" && (av != tc.av || bv != tc.bv)) {
			t.Errorf("difference at %q (%q, %q), want %q (%q, %q)", k, av, bv, tc.key, tc.av, tc.bv)
		}
		if av == "" || bv == "" || av == bv {
			t.Errorf("%s: values %q and %q", k, av, bv)
		}
	}
}
