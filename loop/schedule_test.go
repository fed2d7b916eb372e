package loop

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/nn/cpu"
	"github.com/flipzero/flipzero/runfolder"
)

// TestLoopScheduleInMinutesCountsTheWholeRun: a schedule in minutes runs
// on the run's clock, which a resume continues from the wall time
// recorded with the last generation rather than starting again at zero.
func TestLoopScheduleInMinutesCountsTheWholeRun(t *testing.T) {
	const dropMinute = 1000
	raw, err := os.ReadFile(writeTinyConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(raw), "{step: 400, rate: 0.005}\n    - {step: 800, rate: 0.001}", "{minute: 1000, rate: 0.005}", 1)
	if text == string(raw) {
		t.Fatal("the tiny config has no second learning-rate entry to replace")
	}
	config := filepath.Join(t.TempDir(), "minutes.yaml")
	if err := os.WriteFile(config, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(t.TempDir(), "run")
	folder := runfolder.Folder(run)
	generation := func() {
		t.Helper()
		if err := Loop(context.Background(), LoopOptions{Backend: cpu.Backend(), ConfigPath: config, RunDir: run, MaxGenerations: 1, Seed: 3}); err != nil {
			t.Fatal(err)
		}
	}

	generation()
	ms, err := ReadMetrics(folder.Metrics())
	if err != nil || len(ms) != 1 || ms[0].Steps == 0 {
		t.Fatalf("metrics %+v, %v: want one generation that trained", ms, err)
	}
	if ms[0].LR != 0.02 {
		t.Errorf("generation 1, %.1f s into the run: rate %v, want 0.02", ms[0].RunSeconds, ms[0].LR)
	}

	// The run has been going for the drop's minute when it stops: its
	// record says so, and the resumed run trains at the dropped rate.
	ms[0].RunSeconds = dropMinute * 60
	if err := os.Remove(folder.Metrics()); err != nil {
		t.Fatal(err)
	}
	if err := AppendMetrics(folder.Metrics(), ms[0]); err != nil {
		t.Fatal(err)
	}
	generation()
	ms, err = ReadMetrics(folder.Metrics())
	if err != nil || len(ms) != 2 || ms[1].Steps == 0 {
		t.Fatalf("metrics %+v, %v: want two generations that trained", ms, err)
	}
	if ms[1].LR != 0.005 {
		t.Errorf("generation 2, resumed at minute %d: rate %v, want 0.005", dropMinute, ms[1].LR)
	}
	if ms[1].RunSeconds < dropMinute*60 {
		t.Errorf("generation 2 records %.0f s of run time, less than the %d s before the resume", ms[1].RunSeconds, dropMinute*60)
	}
}
