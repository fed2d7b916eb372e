package loop

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/cpu"
	"github.com/flipzero/flipzero/records"
	"github.com/flipzero/flipzero/runfolder"
)

// quietConfig writes the tiny tic-tac-toe config without its arena, with
// extra lines appended (sections of their own).
func quietConfig(t *testing.T, extra ...string) string {
	t.Helper()
	raw, err := os.ReadFile(writeTinyConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	text, _, _ := strings.Cut(string(raw), "\narena:")
	text += "\n" + strings.Join(extra, "\n") + "\n"
	path := filepath.Join(t.TempDir(), "quiet.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeExpertGames writes n games of perfect play (a random one of the
// best moves at each turn) as record lines.
func writeExpertGames(t *testing.T, dir, name string, n int, seed uint64) string {
	t.Helper()
	solver := tictactoe.NewSolver()
	rng := rand.New(rand.NewPCG(seed, 3))
	g := tictactoe.Game{}
	var lines []string
	var best []int
	for range n {
		s := &tictactoe.State{}
		var moves []string
		for !s.Terminal() {
			best = solver.BestActions(s, best[:0])
			a := best[rng.IntN(len(best))]
			moves = append(moves, g.FormatAction(a))
			s.Apply(a)
		}
		lines = append(lines, strings.Join(moves, ";")+"\t"+env.ResultName(s)+"\ttictactoe")
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// agreementOf measures a network on record files.
func agreementOf(t *testing.T, net *nn.Network, paths ...string) records.Agreement {
	t.Helper()
	g := tictactoe.Game{}
	set, err := records.Load(context.Background(), g, paths, records.Options{})
	if err != nil {
		t.Fatal(err)
	}
	eval, err := nn.NewEvaluator(cpu.Backend(), net.Fold(), 64)
	if err != nil {
		t.Fatal(err)
	}
	a, err := records.Measure(context.Background(), eval, g, set.Games, records.MeasureOptions{Seed: 1, Resamples: 100})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestPretrainThenLoop pretrains a run's generation 0 on perfect play,
// which its policy learns (the held-out games' moves agree with it far
// more than with an untrained network's), and the loop goes on from it:
// the next generation, the step count and the optimizer's momentum, and
// the run's clock.
func TestPretrainThenLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("pretrains for 300 steps, then a generation of the loop")
	}
	dir := t.TempDir()
	train := writeExpertGames(t, dir, "experts.txt", 400, 1)
	held := writeExpertGames(t, dir, "held.txt", 100, 2)
	cfg := quietConfig(t)
	run := filepath.Join(dir, "run")
	var log strings.Builder
	const steps = 300
	err := Pretrain(context.Background(), PretrainOptions{Backend: cpu.Backend(), ConfigPath: cfg, RunDir: run,
		Records: []string{train}, Validation: []string{held}, Smoothing: 0.1, MaxSteps: steps, Seed: 1, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	folder := runfolder.Folder(run)
	ckpt, err := nn.LoadCheckpoint(folder.Checkpoint(0), tictactoe.Game{})
	if err != nil {
		t.Fatal(err)
	}
	if ckpt.Step != steps || ckpt.Training == nil || !anyNonzero(ckpt.Training.Velocity) {
		t.Fatalf("generation 0: step %d, optimizer state %v; want step %d with momentum", ckpt.Step, ckpt.Training != nil, steps)
	}
	ms, err := ReadMetrics(folder.Metrics())
	if err != nil || len(ms) != 1 {
		t.Fatalf("metrics %+v, %v", ms, err)
	}
	m := ms[0]
	if m.Generation != 0 || m.Steps != steps || m.Step != steps || m.Pretrained == nil || m.Pretrained.From != "records" ||
		m.Pretrained.Games != 400 || m.RunSeconds <= 0 || m.PolicyLoss <= 0 {
		t.Fatalf("generation 0's line: %+v (pretrained %+v)", m, m.Pretrained)
	}
	untrained, err := nn.New(tictactoe.Game{}, ckpt.Network.Config(), 1)
	if err != nil {
		t.Fatal(err)
	}
	untrained.NeutralHeads()
	before := agreementOf(t, untrained, held)
	after := m.Pretrained.Validation
	if after == nil || after.Top1.Value < before.Top1.Value+0.25 || after.Top1.Low <= before.Top1.High {
		t.Fatalf("held-out top-1: %+v pretrained, %+v untrained; want it well above\n%s", after, before.Top1, log.String())
	}
	if got := agreementOf(t, ckpt.Network, held); got.Top1.Value != after.Top1.Value {
		t.Errorf("the checkpoint's network agrees %v, the line says %v", got.Top1, after.Top1)
	}

	if err := Loop(context.Background(), LoopOptions{Backend: cpu.Backend(), RunDir: run, MaxGenerations: 1, Seed: 2}); err != nil {
		t.Fatal(err)
	}
	ms, err = ReadMetrics(folder.Metrics())
	if err != nil || len(ms) != 2 {
		t.Fatalf("metrics after a generation of the loop: %+v, %v", ms, err)
	}
	next := ms[1]
	if next.Generation != 1 || next.Step != steps+next.Steps || next.Steps == 0 {
		t.Errorf("the loop's first generation %d: step %d after %d steps, want it to go on from step %d", next.Generation, next.Step, next.Steps, steps)
	}
	if next.RunSeconds < m.RunSeconds+next.Seconds {
		t.Errorf("run clock %.2f s after a generation of %.2f s, pretraining's %.2f s not counted", next.RunSeconds, next.Seconds, m.RunSeconds)
	}
}

func anyNonzero(arrays [][]float32) bool {
	for _, a := range arrays {
		for _, v := range a {
			if v != 0 {
				return true
			}
		}
	}
	return false
}

// TestPretrainFromRun grows a run: another architecture trained on the
// old run's window becomes a new run's generation 0, the old window the
// new run's first, and the loop goes on with it, counting the old
// samples; the old run is left as it was.
func TestPretrainFromRun(t *testing.T) {
	if testing.Short() {
		t.Skip("three generations of the loop and a pretraining")
	}
	dir := t.TempDir()
	old := filepath.Join(dir, "old")
	if err := Loop(context.Background(), LoopOptions{Backend: cpu.Backend(), ConfigPath: quietConfig(t), RunDir: old, MaxGenerations: 2, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	oldMetrics, _ := ReadMetrics(runfolder.Folder(old).Metrics())
	oldShards, _ := filepath.Glob(filepath.Join(runfolder.Folder(old).Data(), "*.shard"))
	bigger := strings.Replace(readFile(t, quietConfig(t)), "filters: 32", "filters: 40", 1)
	cfg := filepath.Join(dir, "bigger.yaml")
	if err := os.WriteFile(cfg, []byte(bigger), 0o644); err != nil {
		t.Fatal(err)
	}
	grown := filepath.Join(dir, "grown")
	err := Pretrain(context.Background(), PretrainOptions{Backend: cpu.Backend(), ConfigPath: cfg, RunDir: grown, FromRun: old, Epochs: 0.5, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	folder := runfolder.Folder(grown)
	ckpt, err := nn.LoadCheckpoint(folder.Checkpoint(0), tictactoe.Game{})
	if err != nil || ckpt.Network.Config().Filters != 40 || ckpt.Step == 0 {
		t.Fatalf("the grown network: %v (error %v)", ckpt, err)
	}
	carried, _ := filepath.Glob(filepath.Join(folder.Data(), "*.shard"))
	if len(carried) != len(oldShards) || len(oldShards) == 0 {
		t.Fatalf("%d shards carried of the old run's %d", len(carried), len(oldShards))
	}
	if err := Loop(context.Background(), LoopOptions{Backend: cpu.Backend(), RunDir: grown, MaxGenerations: 1, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	ms, err := ReadMetrics(folder.Metrics())
	if err != nil || len(ms) != 2 {
		t.Fatalf("metrics %+v, %v", ms, err)
	}
	oldTotal := oldMetrics[len(oldMetrics)-1].Samples
	if ms[0].Pretrained == nil || ms[0].Pretrained.From != "run "+old || ms[0].Samples != oldTotal {
		t.Errorf("generation 0's line: %+v, want it to count the old run's %d samples", ms[0], oldTotal)
	}
	if ms[1].Samples != oldTotal+ms[1].Positions {
		t.Errorf("generation 1: %d samples in all, want the old run's %d and its own %d", ms[1].Samples, oldTotal, ms[1].Positions)
	}
	after, _ := filepath.Glob(filepath.Join(runfolder.Folder(old).Data(), "*.shard"))
	gens, _ := runfolder.Folder(old).Generations()
	if len(after) != len(oldShards) || len(gens) != 3 {
		t.Errorf("the old run changed: %d shards (had %d), generations %v", len(after), len(oldShards), gens)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestPretrainRefuses: what cannot be pretrained is refused with one
// line naming why, before any run folder is made.
func TestPretrainRefuses(t *testing.T) {
	dir := t.TempDir()
	cfg := quietConfig(t)
	good := writeExpertGames(t, dir, "experts.txt", 20, 1)
	yinsh := filepath.Join(dir, "yinsh.txt")
	os.WriteFile(yinsh, []byte("P E5;P F6\tunfinished\tyinsh\n"), 0o644)
	done := filepath.Join(dir, "done")
	if err := Pretrain(context.Background(), PretrainOptions{Backend: cpu.Backend(), ConfigPath: cfg, RunDir: done, Records: []string{good}, MaxSteps: 2}); err != nil {
		t.Fatal(err)
	}
	othello := filepath.Join(dir, "othello.yaml")
	os.WriteFile(othello, []byte("game: othello\n"), 0o644)
	cases := []struct {
		name string
		opts PretrainOptions
		want string
	}{
		{"nothing to train on", PretrainOptions{ConfigPath: cfg, MaxSteps: 1}, "give records"},
		{"records and a run", PretrainOptions{ConfigPath: cfg, Records: []string{good}, FromRun: done, MaxSteps: 1}, "not both"},
		{"no limit", PretrainOptions{ConfigPath: cfg, Records: []string{good}}, "no limit"},
		{"no config", PretrainOptions{Records: []string{good}, MaxSteps: 1}, "no config"},
		{"a run that has generations", PretrainOptions{ConfigPath: cfg, Records: []string{good}, MaxSteps: 1, RunDir: done}, "already has generations"},
		{"records of another game", PretrainOptions{ConfigPath: cfg, Records: []string{yinsh}, MaxSteps: 1}, "no records positions of tictactoe"},
		{"a missing file", PretrainOptions{ConfigPath: cfg, Records: []string{filepath.Join(dir, "missing.txt")}, MaxSteps: 1}, "missing.txt does not exist"},
		{"a run of another game", PretrainOptions{ConfigPath: othello, FromRun: done, MaxSteps: 1}, "plays tictactoe, the config othello"},
		{"a run into itself", PretrainOptions{FromRun: done, MaxSteps: 1, RunDir: done}, "already has generations"},
		{"not a run", PretrainOptions{FromRun: dir, MaxSteps: 1}, "not a run folder"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.opts.Backend = cpu.Backend()
			if c.opts.RunDir == "" {
				c.opts.RunDir = filepath.Join(dir, fmt.Sprintf("new%d", i))
			}
			err := Pretrain(context.Background(), c.opts)
			var in InputError
			var ce ConfigError
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line with %q", err, c.want)
			}
			if !errors.As(err, &in) && !errors.As(err, &ce) && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("error %v (%T) is not the input's", err, err)
			}
			if c.opts.RunDir != done {
				if _, err := os.Stat(c.opts.RunDir); err == nil {
					t.Errorf("a refused pretraining made the run folder %s", c.opts.RunDir)
				}
			}
		})
	}
}

// stoppingBackend cancels a context after a number of training steps,
// as Ctrl-C in the middle of pretraining.
type stoppingBackend struct {
	nn.Backend
	after  int
	cancel context.CancelFunc
}

func (b stoppingBackend) NewTraining(s nn.TrainingState) (nn.Training, error) {
	t, err := b.Backend.NewTraining(s)
	return &stoppingTraining{Training: t, b: b}, err
}

type stoppingTraining struct {
	nn.Training
	b     stoppingBackend
	steps int
}

func (t *stoppingTraining) Step(batch nn.Batch) (nn.Losses, error) {
	t.steps++
	if t.steps == t.b.after {
		t.b.cancel()
	}
	return t.Training.Step(batch)
}

// TestPretrainStoppedKeepsItsSteps: a pretraining stopped (Ctrl-C) writes
// what it trained as generation 0, which the loop goes on from.
func TestPretrainStoppedKeepsItsSteps(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run := filepath.Join(dir, "run")
	backend := stoppingBackend{Backend: cpu.Backend(), after: 7, cancel: cancel}
	err := Pretrain(ctx, PretrainOptions{Backend: backend, ConfigPath: quietConfig(t), RunDir: run,
		Records: []string{writeExpertGames(t, dir, "experts.txt", 50, 1)}, MaxSteps: 1000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := ReadMetrics(runfolder.Folder(run).Metrics())
	if err != nil || len(ms) != 1 || ms[0].Steps != 7 {
		t.Fatalf("a pretraining stopped after 7 steps: %+v, %v", ms, err)
	}
}
