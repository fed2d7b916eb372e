package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/loop"
	"github.com/flipzero/flipzero/runfolder"
)

// TestInfoOfARun: info sums up a run folder from its metrics, names a
// stretch whose training ran slow, and says which folder is no run.
func TestInfoOfARun(t *testing.T) {
	dir := t.TempDir()
	run := runfolder.Folder(filepath.Join(dir, "run"))
	if err := run.Create(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("../../configs/othello.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(run.Config(), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "", "info", string(run))
	if code != 0 || !strings.Contains(out, "game:          othello") || !strings.Contains(out, "generations:   none yet") {
		t.Errorf("a run without generations: exit %d: %s%s", code, out, errOut)
	}
	for gen := 1; gen <= 20; gen++ {
		m := loop.GenerationMetrics{Generation: gen, Seconds: 10, RunSeconds: float64(10 * gen), Games: 64, Positions: 3200,
			Steps: 100, Step: 100 * gen, TrainS: 1000, TrainSeconds: 6, Resigned: 50, NoResign: 6}
		if gen > 12 {
			m.TrainS = 400
		}
		if err := loop.AppendMetrics(run.Metrics(), m); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut = runCLI(t, "", "info", string(run))
	for _, want := range []string{"generations:   20 in 3m20s", "2000 steps, 60% of the time", "resignations:  1000 of 1280 games; 0 of 120",
		"check:         generations 13-20 trained at 400 samples/s"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("exit %d, want %q in:\n%s%s", code, want, out, errOut)
		}
	}
	code, _, errOut = runCLI(t, "", "info", dir)
	if code == 0 || !strings.Contains(errOut, "not a run folder") {
		t.Errorf("a folder with no run: exit %d, %s", code, errOut)
	}
}
