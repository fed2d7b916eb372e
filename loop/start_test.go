package loop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/nn/cpu"
	"github.com/flipzero/flipzero/runfolder"
)

func TestStartConfigValidate(t *testing.T) {
	ok := DefaultStartConfig()
	ok.Records = []string{"a.wtb"}
	ok.Epochs = 3
	tests := []struct {
		name string
		edit func(*StartConfig)
		key  string // "" when valid
	}{
		{"off", func(s *StartConfig) { *s = DefaultStartConfig() }, ""},
		{"records", func(s *StartConfig) {}, ""},
		{"held out", func(s *StartConfig) { s.Validation = []string{"b.wtb"} }, ""},
		{"negative epochs", func(s *StartConfig) { s.Epochs = -1 }, "epochs"},
		{"negative minutes", func(s *StartConfig) { s.Minutes = -5 }, "minutes"},
		{"all held out", func(s *StartConfig) { s.ValidationFraction = 1 }, "validation_fraction"},
		{"smoothing", func(s *StartConfig) { s.Smoothing = 1.5 }, "smoothing"},
		{"held out alone", func(s *StartConfig) { s.Records = nil; s.Validation = []string{"b.wtb"} }, "validation"},
		{"empty path", func(s *StartConfig) { s.Records = []string{"a.wtb", ""} }, "records[1]"},
		{"empty held-out path", func(s *StartConfig) { s.Validation = []string{""} }, "validation[0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := ok
			tc.edit(&s)
			err := s.Validate()
			switch {
			case tc.key == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.key != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.key+":")):
				t.Fatalf("error %v, want one naming %s", err, tc.key)
			}
		})
	}
}

// TestStartSectionInConfig reads a start section from a config file and
// names a bad key by its section.
func TestStartSectionInConfig(t *testing.T) {
	good := quietConfig(t, "start:\n  records: [experts.txt]\n  epochs: 2")
	cfg, err := LoadConfig(good, games.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(cfg.Start.Records) != "[experts.txt]" || cfg.Start.Epochs != 2 || cfg.Start.Smoothing != 0.1 || cfg.Start.ValidationFraction != 0.05 {
		t.Fatalf("start section %+v", cfg.Start)
	}
	bad := quietConfig(t, "start:\n  records: [experts.txt]\n  epochs: -2")
	if _, err := LoadConfig(bad, games.Builtin()); err == nil || !strings.Contains(err.Error(), "start.epochs") {
		t.Fatalf("error %v, want start.epochs named", err)
	}
	typo := quietConfig(t, "start:\n  record: [experts.txt]")
	if _, err := LoadConfig(typo, games.Builtin()); err == nil || !strings.Contains(err.Error(), "start.records") {
		t.Fatalf("error %v, want the nearest key start.records suggested", err)
	}
}

// TestLoopStartsFromRecords runs a config with a start section: the loop
// pretrains generation 0 on the records, then self-plays from it; resumed,
// it goes on without pretraining again.
func TestLoopStartsFromRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("pretrains, then two generations of the loop")
	}
	dir := t.TempDir()
	train := writeExpertGames(t, dir, "experts.txt", 200, 1)
	held := writeExpertGames(t, dir, "held.txt", 50, 2)
	cfg := quietConfig(t, fmt.Sprintf("start:\n  records: [%s]\n  validation: [%s]\n  epochs: 2", train, held))
	run := filepath.Join(dir, "run")
	var log strings.Builder
	if err := Loop(context.Background(), LoopOptions{Backend: cpu.Backend(), ConfigPath: cfg, RunDir: run, MaxGenerations: 1, Seed: 1, Log: &log}); err != nil {
		t.Fatal(err)
	}
	folder := runfolder.Folder(run)
	ms, err := ReadMetrics(folder.Metrics())
	if err != nil || len(ms) != 2 {
		t.Fatalf("metrics %+v, %v; want generation 0 and 1\n%s", ms, err, log.String())
	}
	pre := ms[0].Pretrained
	if ms[0].Generation != 0 || pre == nil || pre.From != "records" || pre.Games != 200 || pre.Epochs < 1.99 || pre.Validation == nil {
		t.Fatalf("generation 0: %+v, pretrained %+v; want two epochs of the 200 records, measured on the held-out ones", ms[0], pre)
	}
	if ms[1].Generation != 1 || ms[1].Step != ms[0].Step+ms[1].Steps || ms[1].RunSeconds < ms[0].RunSeconds+ms[1].Seconds {
		t.Fatalf("generation 1 %+v does not go on from the pretrained generation 0 (step %d, %.2f s)", ms[1], ms[0].Step, ms[0].RunSeconds)
	}
	if !strings.Contains(log.String(), "starts from records") || strings.Contains(log.String(), "goes on from it") {
		t.Errorf("the log does not say the run starts from records, or asks for a loop already going on:\n%s", log.String())
	}

	log.Reset()
	if err := Loop(context.Background(), LoopOptions{Backend: cpu.Backend(), RunDir: run, MaxGenerations: 1, Seed: 2, Log: &log}); err != nil {
		t.Fatal(err)
	}
	ms, err = ReadMetrics(folder.Metrics())
	if err != nil || len(ms) != 3 || ms[2].Generation != 2 || ms[2].Pretrained != nil {
		t.Fatalf("metrics after resuming %+v, %v; want generation 2 from self-play alone", ms, err)
	}
	if strings.Contains(log.String(), "starts from records") {
		t.Errorf("the resumed run pretrained again:\n%s", log.String())
	}
}

// TestLoopStartRefusesMissingRecords: a start section naming records
// that are not there stops the new run with the path named, before any
// generation.
func TestLoopStartRefusesMissingRecords(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nowhere.txt")
	cfg := quietConfig(t, fmt.Sprintf("start:\n  records: [%s]", missing))
	run := filepath.Join(dir, "run")
	err := Loop(context.Background(), LoopOptions{Backend: cpu.Backend(), ConfigPath: cfg, RunDir: run, MaxGenerations: 1, Seed: 1})
	if err == nil || !strings.Contains(err.Error(), "nowhere.txt") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %v, want one line naming the missing records", err)
	}
	if gens, _ := runfolder.Folder(run).Generations(); len(gens) > 0 {
		t.Fatalf("generations %v written without the records", gens)
	}
	if _, err := os.Stat(runfolder.Folder(run).Metrics()); err == nil {
		t.Fatal("a metrics file written without the records")
	}
}
