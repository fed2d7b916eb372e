package loop

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/mcts"
)

// shippedConfigs lists the configs the project ships.
func shippedConfigs(t testing.TB) []string {
	t.Helper()
	paths, _ := filepath.Glob("../configs/*.yaml")
	if len(paths) == 0 {
		t.Fatal("no configs found in ../configs")
	}
	return paths
}

func TestShippedConfigsLoad(t *testing.T) {
	for _, p := range shippedConfigs(t) {
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
		{"schedule order", "{step: 400, rate: 0.005}", "{step: 0, rate: 0.005}", "train.learning_rate[1]"},
		{"schedule mixed", "{step: 400, rate: 0.005}", "{minute: 20, rate: 0.005}\n    - {step: 3000, rate: 0.001}", "train.learning_rate[2]"},
		{"unknown section", "window:", "windows:", "windows"},
		{"gumbel temperature with puct", "  temperature: 1.0", "  temperature: 1.0\n  gumbel_temperature: true", "selfplay.gumbel_temperature"},
		{"negative half-life", "min_samples: 256", "min_samples: 256\n  average_half_life: -5", "train.average_half_life"},
		{"negative schedule length", "min_samples: 256", "min_samples: 256\n  schedule_minutes: -120", "train.schedule_minutes"},
		{"schedule length for steps", "min_samples: 256", "min_samples: 256\n  schedule_minutes: 120", "train.schedule_minutes"},
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
	bySteps := TrainConfig{LearningRate: []LRStep{{Rate: 0.1}, {Step: 100, Rate: 0.01}, {Step: 200, Rate: 0.001}}}
	byMinutes := TrainConfig{LearningRate: []LRStep{{Rate: 0.1}, {Minute: 30, Rate: 0.01}, {Minute: 50.5, Rate: 0.001}}}
	for _, tt := range []struct {
		name    string
		tc      TrainConfig
		step    int
		minutes float64
		want    float64
	}{
		{"steps: start", bySteps, 0, 0, 0.1},
		{"steps: before the drop", bySteps, 99, 1e6, 0.1},
		{"steps: at the drop", bySteps, 100, 0, 0.01},
		{"steps: between", bySteps, 150, 0, 0.01},
		{"steps: past the last", bySteps, 5000, 0, 0.001},
		{"minutes: start", byMinutes, 0, 0, 0.1},
		{"minutes: before the drop", byMinutes, 1e6, 29.9, 0.1},
		{"minutes: at the drop", byMinutes, 0, 30, 0.01},
		{"minutes: between", byMinutes, 10, 50.4, 0.01},
		{"minutes: past the last", byMinutes, 10, 600, 0.001},
	} {
		if got := tt.tc.LearningRateAt(tt.step, tt.minutes); got != tt.want {
			t.Errorf("%s (step %d, minute %v): rate %v, want %v", tt.name, tt.step, tt.minutes, got, tt.want)
		}
		if got := tt.tc.Optimizer(tt.step, tt.minutes).LearningRate; got != tt.want {
			t.Errorf("%s: the optimizer's rate %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestScheduleFittedToTheRun scales a schedule by minutes written for
// two hours to the run's own limit, and leaves every other schedule, and
// the config it was taken from, as they were.
func TestScheduleFittedToTheRun(t *testing.T) {
	twoHours := []LRStep{{Rate: 0.02}, {Minute: 60, Rate: 0.006}, {Minute: 104, Rate: 0.002}}
	bySteps := []LRStep{{Rate: 0.02}, {Step: 100, Rate: 0.006}}
	for _, tt := range []struct {
		name            string
		lrs             []LRStep
		scheduleMinutes float64
		limit           time.Duration
		want            []float64 // the minutes of the fitted schedule's drops
		wantLine        string
	}{
		{"twelve hours", twoHours, 120, 12 * time.Hour, []float64{0, 360, 624}, "0.006 from minute 360, 0.002 from minute 624 (the schedule's 120 minutes fitted to the run's 720)"},
		{"half an hour", twoHours, 120, 30 * time.Minute, []float64{0, 15, 26}, "from minute 15,"},
		{"its own length", twoHours, 120, 2 * time.Hour, []float64{0, 60, 104}, "fitted to the run's 120"},
		{"no time limit", twoHours, 120, 0, []float64{0, 60, 104}, ""},
		{"no schedule length", twoHours, 0, 12 * time.Hour, []float64{0, 60, 104}, ""},
		{"by steps", bySteps, 120, 12 * time.Hour, []float64{0, 0}, ""},
	} {
		given := TrainConfig{LearningRate: slices.Clone(tt.lrs), ScheduleMinutes: tt.scheduleMinutes}
		fitted, line := given.FittedTo(tt.limit)
		var minutes []float64
		for _, s := range fitted.LearningRate {
			minutes = append(minutes, math.Round(s.Minute*1e9)/1e9)
		}
		if !slices.Equal(minutes, tt.want) {
			t.Errorf("%s: drops at minutes %v, want %v", tt.name, minutes, tt.want)
		}
		if !slices.Equal(given.LearningRate, tt.lrs) {
			t.Errorf("%s: fitting changed the given schedule to %v", tt.name, given.LearningRate)
		}
		if (line == "") != (tt.wantLine == "") || !strings.Contains(line, tt.wantLine) {
			t.Errorf("%s: line %q, want one with %q", tt.name, line, tt.wantLine)
		}
	}
}

func TestLearningRateScheduleRefused(t *testing.T) {
	for _, tt := range []struct {
		name string
		lrs  []LRStep
	}{
		{"empty", nil},
		{"first not at 0", []LRStep{{Step: 10, Rate: 0.1}}},
		{"first at a minute", []LRStep{{Minute: 5, Rate: 0.1}}},
		{"steps out of order", []LRStep{{Rate: 0.1}, {Step: 200, Rate: 0.01}, {Step: 100, Rate: 0.001}}},
		{"minutes out of order", []LRStep{{Rate: 0.1}, {Minute: 30, Rate: 0.01}, {Minute: 30, Rate: 0.001}}},
		{"a minute in a schedule of steps", []LRStep{{Rate: 0.1}, {Step: 100, Rate: 0.01}, {Minute: 50, Rate: 0.001}}},
		{"a step in a schedule of minutes", []LRStep{{Rate: 0.1}, {Minute: 30, Rate: 0.01}, {Step: 2000, Minute: 50, Rate: 0.001}}},
		{"an infinite minute", []LRStep{{Rate: 0.1}, {Minute: math.Inf(1), Rate: 0.01}}},
		{"a NaN minute", []LRStep{{Rate: 0.1}, {Minute: math.NaN(), Rate: 0.01}}},
		{"a zero rate", []LRStep{{Rate: 0.1}, {Minute: 30, Rate: 0}}},
	} {
		err := validSchedule(tt.lrs)
		if err == nil || !strings.Contains(err.Error(), "learning_rate") {
			t.Errorf("%s: error %v, want one naming learning_rate", tt.name, err)
		}
	}
}

func TestParseSearchSettings(t *testing.T) {
	base := mcts.PlayConfig()
	tests := []struct {
		spec  string
		check func(mcts.Config) bool
	}{
		{"cpuct: 2", func(c mcts.Config) bool { return c.CPUCT == 2 }},
		{"{leaves_per_tree: 1, mode: gumbel}", func(c mcts.Config) bool { return c.LeavesPerTree == 1 && c.Mode == mcts.Gumbel }},
		{"  fpu_reduction: 0.3 ", func(c mcts.Config) bool { return c.FPUReduction == 0.3 }},
	}
	for _, tt := range tests {
		got, err := ParseSearchSettings(tt.spec, base)
		if err != nil {
			t.Errorf("%q: %v", tt.spec, err)
			continue
		}
		if !tt.check(got) {
			t.Errorf("%q: settings %+v do not say it", tt.spec, got)
		}
		// Every key the spec leaves out keeps the base's value.
		if got.Solver != base.Solver || got.DirichletWeight != base.DirichletWeight || got.GumbelCScale != base.GumbelCScale {
			t.Errorf("%q changed settings it does not name: %+v", tt.spec, got)
		}
	}
	// Play's exact endgame goes with its solver, unless named.
	if got, err := ParseSearchSettings("solver: false", base); err != nil || got.Solver || got.EndgameSolve != 0 {
		t.Errorf("solver: false over play's settings: %+v, %v; want the solver and the exact endgame off", got, err)
	}
	bad := []struct{ spec, want string }{
		{"solver: false, endgame_solve: 12", "needs solver"},
		{"cpucct: 2", "unknown key cpucct"},
		{"cpuct: -1", "cpuct"},
		{"mode: sideways", "sideways"},
		{"cpuct: [1", "cpuct: [1"},
	}
	for _, tt := range bad {
		_, err := ParseSearchSettings(tt.spec, base)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line naming %q", tt.spec, err, tt.want)
		}
	}
}

// TestPolicyMatchIsForTwoPlayers: the policy's match against the baseline
// is refused in a one-player game, whose arena compares scores on deals,
// and taken in a two-player one.
func TestPolicyMatchIsForTwoPlayers(t *testing.T) {
	for _, tc := range []struct {
		config string
		ok     bool
	}{
		{"game: tictactoe\narena:\n  games: 4\n  baseline: perfect\n  policy_match: true\n", true},
		{"game: reversi-solitaire\narena:\n  games: 4\n  policy_match: true\n", false},
		{"game: reversi-solitaire\narena:\n  games: 0\n  policy_match: true\n", true},
	} {
		cfg, err := ParseConfig([]byte(tc.config), games.Builtin())
		switch {
		case tc.ok && (err != nil || !cfg.Arena.PolicyMatch):
			t.Errorf("%q: %v, policy_match %v", tc.config, err, cfg.Arena.PolicyMatch)
		case !tc.ok && (err == nil || !strings.Contains(err.Error(), "arena.policy_match") || strings.Contains(err.Error(), "\n")):
			t.Errorf("%q: %v, want one line naming arena.policy_match", tc.config, err)
		}
	}
}
