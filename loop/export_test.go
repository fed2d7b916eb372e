package loop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/cpu"
	"github.com/flipzero/flipzero/runfolder"
)

// TestExport builds a run folder by hand — config, two checkpoints, a
// metrics line with a rating — and exports from it.
func TestExport(t *testing.T) {
	run := runfolder.Folder(t.TempDir())
	if err := run.Create(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("../configs/tictactoe.yaml")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(run.Config(), raw, 0o644)
	cfg, err := LoadConfig(run.Config(), games.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	g := tictactoe.Game{}
	net, err := nn.New(g, cfg.Network, 1)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cpu.NewTrainer(net, nn.DefaultTrainConfig())
	if err != nil {
		t.Fatal(err)
	}
	for gen, meta := range map[int]map[string]string{
		0: {"generation": "0"},
		2: {"generation": "2", "samples_total": "4321"},
	} {
		if err := nn.SaveCheckpoint(run.Checkpoint(gen), tr, meta); err != nil {
			t.Fatal(err)
		}
	}
	rating := 123.4
	if err := AppendMetrics(run.Metrics(), GenerationMetrics{Generation: 2, Rating: &rating}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "model.fznet")
	tests := []struct {
		gen  int
		want map[string]string
		err  string
	}{
		{-1, map[string]string{"generation": "2", "samples_total": "4321", "rating": "123"}, ""},
		{0, map[string]string{"generation": "0", "samples_total": "0"}, ""},
		{1, nil, "no checkpoint of generation 1 (it has 0 to 2)"},
	}
	for _, tt := range tests {
		meta, err := Export(run, tt.gen, out, nil)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("generation %d: error %v, want %q", tt.gen, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range tt.want {
			if meta[k] != v {
				t.Errorf("generation %d: %s = %q, want %q (metadata %v)", tt.gen, k, meta[k], v, meta)
			}
		}
		if _, hasRating := meta["rating"]; hasRating != (tt.want["rating"] != "") || meta["trained"] == "" {
			t.Errorf("generation %d: metadata %v", tt.gen, meta)
		}
		c, err := nn.LoadCheckpoint(out, g)
		if err != nil {
			t.Fatal(err)
		}
		if !c.Folded || c.Training != nil || c.Metadata["generation"] != tt.want["generation"] {
			t.Errorf("generation %d: the file holds folded %v, trainer %v, metadata %v", tt.gen, c.Folded, c.Training != nil, c.Metadata)
		}
	}
	if _, err := Export(runfolder.Folder(t.TempDir()), -1, out, nil); err == nil {
		t.Error("export from a folder that is not a run")
	}
}
