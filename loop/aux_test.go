package loop

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/data"
	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/nn/cpu"
	"github.com/flipzero/flipzero/runfolder"
)

// TestLoopTrainsAuxiliaryHeads: with network.ownership and network.score
// set, self-play's shards carry the targets, training reports the heads'
// errors, and the run resumes with the heads.
func TestLoopTrainsAuxiliaryHeads(t *testing.T) {
	raw, err := os.ReadFile("../configs/tictactoe.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(raw), "network:\n", "network:\n  ownership: true\n  score: true\n", 1)
	text = strings.Replace(text, "games_per_generation: 200", "games_per_generation: 40", 1)
	text = strings.Replace(text, "min_samples: 256", "min_samples: 64", 1)
	dir := t.TempDir()
	config := filepath.Join(dir, "heads.yaml")
	if err := os.WriteFile(config, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run")
	for gen := 0; gen < 2; gen++ {
		if err := Loop(context.Background(), LoopOptions{Backend: cpu.Backend(), ConfigPath: config, RunDir: run, MaxGenerations: 1, Seed: 3}); err != nil {
			t.Fatal(err)
		}
	}
	folder := runfolder.Folder(run)
	samples, err := data.ReadShard(folder.Shard(1), tictactoe.Game{})
	if err != nil {
		t.Fatal(err)
	}
	with := 0
	for _, s := range samples {
		if s.HasOwnership() {
			with++
		}
	}
	if with != len(samples) || with == 0 {
		t.Errorf("%d of %d samples carry ownership; tic-tac-toe never resigns, so all should", with, len(samples))
	}
	ms, err := ReadMetrics(folder.Metrics())
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 {
		t.Fatalf("%d generations of metrics", len(ms))
	}
	if last := ms[1]; !(last.Steps > 0 && last.OwnershipLoss > 0 && last.ScoreLoss > 0) {
		t.Errorf("generation 2: %d steps, ownership error %v, score error %v", last.Steps, last.OwnershipLoss, last.ScoreLoss)
	}
}
