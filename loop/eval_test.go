package loop

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/nn/cpu"
	"github.com/flipzero/flipzero/runfolder"
)

func TestEvalConfig(t *testing.T) {
	cases := []struct {
		yaml string
		want string // "" for a good config
	}{
		{"eval:\n  records: [a.txt]\n  every: 5\n  positions: 100\n", ""},
		{"eval:\n  every: 0\n", "eval.every: 0"},
		{"eval:\n  positions: 0\n", "eval.positions: 0"},
		{"eval:\n  records: [\"\"]\n", "eval.records[0]: an empty path"},
		{"eval:\n  recrods: [a.txt]\n", "did you mean eval.records?"},
	}
	for _, c := range cases {
		cfg, err := ParseConfig([]byte("game: tictactoe\n"+c.yaml), games.Builtin())
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.yaml, err)
		case c.want == "" && (cfg.Eval.Every != 5 || len(cfg.Eval.Records) != 1):
			t.Errorf("%q read as %+v", c.yaml, cfg.Eval)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: error %v, want %q", c.yaml, err, c.want)
		}
	}
	cfg, err := ParseConfig([]byte("game: tictactoe\n"), games.Builtin())
	if err != nil || cfg.Eval.Every != 10 || cfg.Eval.Positions != 5000 || cfg.Eval.Records != nil {
		t.Errorf("defaults %+v, %v", cfg.Eval, err)
	}
}

// TestLoopMeasuresHeldOut: with eval.records the loop measures every
// generation the config says, a pretrained generation 0 too, the same
// positions each time, into the metrics and the generation's line; a
// held-out file that is gone costs the measurement, not the run.
func TestLoopMeasuresHeldOut(t *testing.T) {
	dir := t.TempDir()
	held := writeExpertGames(t, dir, "held.txt", 30, 5)
	cfg := quietConfig(t, "eval:\n  records: ["+held+"]\n  every: 2\n  positions: 50")
	run := filepath.Join(dir, "run")
	if err := Pretrain(context.Background(), PretrainOptions{Backend: cpu.Backend(), ConfigPath: cfg, RunDir: run,
		Records: []string{writeExpertGames(t, dir, "experts.txt", 40, 6)}, ValidationFraction: 0.1, MaxSteps: 5, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	if err := Loop(context.Background(), LoopOptions{Backend: cpu.Backend(), RunDir: run, MaxGenerations: 2, Seed: 2, Log: &log}); err != nil {
		t.Fatal(err)
	}
	ms, err := ReadMetrics(runfolder.Folder(run).Metrics())
	if err != nil || len(ms) != 3 {
		t.Fatalf("metrics %+v, %v", ms, err)
	}
	for _, m := range ms {
		measured := m.Generation%2 == 0
		if (m.Agreement != nil) != measured {
			t.Fatalf("generation %d: agreement %+v, want one every 2 generations", m.Generation, m.Agreement)
		}
		if measured && (m.Agreement.Positions != 50 || m.Agreement.ValueMSE == nil) {
			t.Errorf("generation %d measured %+v, want 50 positions with the value's error", m.Generation, m.Agreement)
		}
	}
	if !strings.Contains(log.String(), "gen 2: ") || !strings.Contains(log.String(), ", held out top-1 ") {
		t.Errorf("generation 2's line does not say its agreement:\n%s", log.String())
	}
	if ms[0].Pretrained == nil || ms[0].Pretrained.Validation == nil {
		t.Errorf("pretraining's own held-out games were not measured: %+v", ms[0].Pretrained)
	}

	// The held-out file gone: the run goes on, unmeasured, and says so.
	if err := os.Remove(held); err != nil {
		t.Fatal(err)
	}
	log.Reset()
	if err := Loop(context.Background(), LoopOptions{Backend: cpu.Backend(), RunDir: run, MaxGenerations: 2, Seed: 3, Log: &log}); err != nil {
		t.Fatal(err)
	}
	ms, _ = ReadMetrics(runfolder.Folder(run).Metrics())
	if len(ms) != 5 || ms[4].Agreement != nil || !strings.Contains(log.String(), "without measuring") {
		t.Errorf("without the held-out file: %d generations, the last measured %+v; log:\n%s", len(ms), ms[len(ms)-1].Agreement, log.String())
	}
}
