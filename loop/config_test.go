package loop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env/games"
)

func TestShippedConfigsLoad(t *testing.T) {
	paths, _ := filepath.Glob("../configs/*.yaml")
	if len(paths) == 0 {
		t.Fatal("no configs found in ../configs")
	}
	for _, p := range paths {
		cfg, err := LoadConfig(p, games.Builtin())
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if want := strings.TrimSuffix(filepath.Base(p), ".yaml"); !strings.HasPrefix(want, cfg.Game) {
			t.Errorf("%s is for game %q: the file name should start with the game", p, cfg.Game)
		}
	}
}

func TestConfigErrorsNameKeyAndFile(t *testing.T) {
	good, err := os.ReadFile("../configs/tictactoe.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, from, to, want string
	}{
		{"unknown key", "  cpuct: 1.5", "  cpuct: 1.5\n  cpucct: 2", "cpucct"},
		{"out of range", "noise_weight: 0.25", "noise_weight: 1.5", "search.noise_weight"},
		{"negative", "blocks: 2", "blocks: -1", "network.blocks"},
		{"wrong type", "batch_size: 32", "batch_size: lots", "lots"},
		{"fast above full", "playouts_fast: 16", "playouts_fast: 100", "search.playouts_fast"},
		{"schedule order", "{step: 1500, rate: 0.005}", "{step: 0, rate: 0.005}", "train.learning_rate[1]"},
		{"unknown section", "window:", "windows:", "windows"},
		{"negative half-life", "min_samples: 256", "min_samples: 256\n  average_half_life: -5", "train.average_half_life"},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		text := strings.Replace(string(good), tt.from, tt.to, 1)
		if text == string(good) {
			t.Fatalf("%s: %q not in the config", tt.name, tt.from)
		}
		path := filepath.Join(dir, "bad.yaml")
		os.WriteFile(path, []byte(text), 0o644)
		_, err := LoadConfig(path, games.Builtin())
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tt.want) || !strings.Contains(msg, path) || strings.Contains(msg, "\n") {
			t.Errorf("%s: error %q should name %q and the file on one line", tt.name, msg, tt.want)
		}
	}
}

func TestLearningRateSchedule(t *testing.T) {
	tc := TrainConfig{LearningRate: []LRStep{{0, 0.1}, {100, 0.01}, {200, 0.001}}}
	for _, tt := range []struct {
		step int
		want float64
	}{{0, 0.1}, {99, 0.1}, {100, 0.01}, {150, 0.01}, {5000, 0.001}} {
		if got := tc.LearningRateAt(tt.step); got != tt.want {
			t.Errorf("step %d: rate %v, want %v", tt.step, got, tt.want)
		}
	}
}
