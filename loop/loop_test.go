package loop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/flipzero/flipzero/arena"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/cpu"
	"github.com/flipzero/flipzero/runfolder"
)

// policyLossesAgainstSolver plays games against the perfect player, the
// network's policy alone (the legal move its prior rates best, nothing
// searched) taking each side in turn; the solver picks at random among
// its best moves, so the games differ.
func policyLossesAgainstSolver(t *testing.T, net *nn.Network, games int, seed uint64) (losses, draws int) {
	t.Helper()
	solver := tictactoe.NewSolver()
	eval, err := nn.NewEvaluator(cpu.Backend(), net.Fold(), 1)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	priors, values := make([]float32, tictactoe.Cells), make([]float32, 1)
	var legal []int
	var best [tictactoe.Cells]int
	for game := 0; game < games; game++ {
		netSide := env.Player(game % 2)
		s := &tictactoe.State{}
		for !s.Terminal() {
			var action int
			if s.ToMove() == netSide {
				if err := eval.Evaluate([]env.State{s}, priors, values); err != nil {
					t.Fatal(err)
				}
				legal = s.LegalActions(legal)
				action = legal[0]
				for _, a := range legal {
					if priors[a] > priors[action] {
						action = a
					}
				}
			} else {
				options := solver.BestActions(s, best[:0])
				action = options[rng.IntN(len(options))]
			}
			s.Apply(action)
		}
		switch s.Winner() {
		case netSide.Other():
			losses++
		case env.NoPlayer:
			draws++
		}
	}
	return losses, draws
}

// TestLoopLearnsTicTacToe runs the real loop on the shipped tic-tac-toe
// config, as the README's quick start does. The first generation's line
// does not read as a pass: its policy loses to the perfect player,
// whatever the search made of it. Within the budget the network's policy
// alone never loses to the perfect player in 100 games from both sides,
// and the loop's own line says so.
func TestLoopLearnsTicTacToe(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a network for up to 3 minutes")
	}
	const budget = 3 * time.Minute
	run := t.TempDir()
	start := time.Now()
	var log strings.Builder
	for gen := 1; time.Since(start) < budget; gen++ {
		var line strings.Builder
		err := Loop(context.Background(), LoopOptions{Backend: cpu.Backend(),
			ConfigPath: "../configs/tictactoe.yaml", RunDir: run, MaxGenerations: 1, Seed: 7, Log: &line,
		})
		log.WriteString(line.String())
		if err != nil {
			t.Fatalf("generation %d: %v\n%s", gen, err, log.String())
		}
		ms, err := ReadMetrics(runfolder.Folder(run).Metrics())
		if err != nil || len(ms) != gen {
			t.Fatalf("generation %d: %d metrics lines, %v", gen, len(ms), err)
		}
		m := ms[gen-1]
		if m.PolicyResult == nil || m.BaselineResult == nil || m.Baseline != "perfect" {
			t.Fatalf("generation %d measured %q, search %v, policy %v: want both against perfect play", gen, m.Baseline, m.BaselineResult, m.PolicyResult)
		}
		passed := strings.Contains(line.String(), "by the policy alone: no loss to perfect play in 20 games")
		if gen == 1 {
			if m.PolicyResult[2] == 0 || passed {
				t.Fatalf("the first generation's policy %v reads as a pass:\n%s", *m.PolicyResult, line.String())
			}
			continue
		}
		if !passed {
			continue
		}
		ckpt, err := nn.LoadCheckpoint(runfolder.Folder(run).Checkpoint(gen), tictactoe.Game{})
		if err != nil {
			t.Fatal(err)
		}
		losses, draws := policyLossesAgainstSolver(t, ckpt.Network, 100, uint64(gen))
		t.Logf("generation %d after %.0f s: its policy alone %d losses, %d draws in 100 games against the perfect player",
			gen, time.Since(start).Seconds(), losses, draws)
		if losses == 0 {
			return
		}
	}
	t.Fatalf("no perfect play by the policy within %v\n%s", budget, log.String())
}

// TestLoopResumesAndSkipsDamage stops a run, damages its newest shard and
// checkpoint, and resumes: the run goes on from the newest good
// checkpoint, reporting what it skipped.
func TestLoopResumesAndSkipsDamage(t *testing.T) {
	run := t.TempDir()
	cfg := writeTinyConfig(t)
	var log strings.Builder
	opts := LoopOptions{Backend: cpu.Backend(), ConfigPath: cfg, RunDir: run, MaxGenerations: 2, Seed: 3, Log: &log}
	if err := Loop(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	ms, err := ReadMetrics(runfolder.Folder(run).Metrics())
	if err != nil || len(ms) != 2 || ms[1].Step <= ms[0].Step || ms[0].Step == 0 {
		t.Fatalf("metrics after two generations: %+v, %v", ms, err)
	}
	// Damage generation 2's checkpoint and shard.
	for _, p := range []string{runfolder.Folder(run).Checkpoint(2), runfolder.Folder(run).Shard(2)} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 0xff
		os.WriteFile(p, b, 0o644)
	}
	log.Reset()
	opts.ConfigPath = "" // a run folder resumes with its own config
	opts.MaxGenerations = 1
	if err := Loop(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	out := log.String()
	if !strings.Contains(out, "skipping checkpoint") || !strings.Contains(out, "generation 1,") {
		t.Errorf("resume should skip the damaged checkpoint and go on from generation 1:\n%s", out)
	}
	// The damaged shard is reported and then replaced by a new generation 2.
	if !strings.Contains(out, "skipping damaged training data") {
		t.Errorf("the damaged shard was not reported:\n%s", out)
	}
	if _, err := nn.LoadCheckpoint(runfolder.Folder(run).Checkpoint(2), tictactoe.Game{}); err != nil {
		t.Errorf("generation 2 was not redone: %v", err)
	}
}

// TestLoopTimeLimitIsTheRunsClock: the time limit counts the run's whole
// time, so a run whose clock reads an hour plays nothing more under a
// 59-minute limit and goes on under a 61-minute one.
func TestLoopTimeLimitIsTheRunsClock(t *testing.T) {
	run := t.TempDir()
	var log strings.Builder
	opts := LoopOptions{Backend: cpu.Backend(), ConfigPath: writeTinyConfig(t), RunDir: run, MaxGenerations: 1, Seed: 3, Log: &log}
	if err := Loop(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	// The run's clock as an hour: its one line rewritten.
	metrics := runfolder.Folder(run).Metrics()
	ms, err := ReadMetrics(metrics)
	if err != nil || len(ms) != 1 {
		t.Fatalf("metrics after a generation: %+v, %v", ms, err)
	}
	ms[0].RunSeconds = 3600
	if err := os.Remove(metrics); err != nil {
		t.Fatal(err)
	}
	if err := AppendMetrics(metrics, ms[0]); err != nil {
		t.Fatal(err)
	}
	opts.ConfigPath = ""
	for _, c := range []struct {
		limit       time.Duration
		generations int
	}{{59 * time.Minute, 1}, {61 * time.Minute, 2}} {
		log.Reset()
		opts.Until = c.limit
		if err := Loop(context.Background(), opts); err != nil {
			t.Fatal(err)
		}
		ms, err := ReadMetrics(metrics)
		if err != nil || len(ms) != c.generations {
			t.Fatalf("limit %v on a run at 60 minutes: %d generations (%v), want %d\n%s", c.limit, len(ms), err, c.generations, log.String())
		}
		if c.generations == 1 && !strings.Contains(log.String(), "the run's clock is at 60.0 minutes") {
			t.Errorf("limit %v: the log does not say where the run's clock is:\n%s", c.limit, log.String())
		}
		if last := ms[len(ms)-1]; last.RunSeconds < 3600 {
			t.Errorf("limit %v: the clock went back to %.0f s", c.limit, last.RunSeconds)
		}
	}
}

// TestLoopFitsTheScheduleToItsTime gives a schedule by minutes written
// for a run a million minutes long: in a run of an hour its drop at
// minute 1 comes after 3.6 ms, before the first generation trains, and
// the run says so; without the limit it comes at minute 1, long after.
func TestLoopFitsTheScheduleToItsTime(t *testing.T) {
	config := writeTinyConfig(t, "schedule_minutes: 1000000")
	raw, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(raw), "{step: 400, rate: 0.005}\n    - {step: 800, rate: 0.001}", "{minute: 1, rate: 0.005}", 1)
	if text == string(raw) {
		t.Fatal("the tiny config's schedule was not replaced")
	}
	if err := os.WriteFile(config, []byte(strings.Replace(text, "{step: 0,", "{minute: 0,", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		until    time.Duration
		wantRate float64
		wantLine string
	}{
		{time.Hour, 0.005, "learning rate 0.02, 0.005 from minute 6e-05 (the schedule's 1e+06 minutes fitted to the run's 60)"},
		{0, 0.02, ""},
	} {
		run := t.TempDir()
		var log strings.Builder
		opts := LoopOptions{Backend: cpu.Backend(), ConfigPath: config, RunDir: run, MaxGenerations: 1, Until: tt.until, Seed: 5, Log: &log}
		if err := Loop(context.Background(), opts); err != nil {
			t.Fatal(err)
		}
		ms, err := ReadMetrics(runfolder.Folder(run).Metrics())
		if err != nil || len(ms) != 1 {
			t.Fatalf("limit %v: metrics %+v, %v", tt.until, ms, err)
		}
		if ms[0].LR != tt.wantRate || ms[0].Step == 0 {
			t.Errorf("limit %v: generation 1 trained %d steps at %v, want some at %v\n%s", tt.until, ms[0].Step, ms[0].LR, tt.wantRate, log.String())
		}
		if got := strings.Contains(log.String(), "fitted to the run's"); got != (tt.wantLine != "") || !strings.Contains(log.String(), tt.wantLine) {
			t.Errorf("limit %v: the log should say %q:\n%s", tt.until, tt.wantLine, log.String())
		}
	}
}

// writeTinyConfig writes a tic-tac-toe config small enough for a fast test,
// with trainKeys (lines such as "average_half_life: 20") added to its
// train section.
func writeTinyConfig(t *testing.T, trainKeys ...string) string {
	t.Helper()
	raw, err := os.ReadFile("../configs/tictactoe.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(raw), "games_per_generation: 200", "games_per_generation: 24", 1)
	text = strings.Replace(text, "min_samples: 256", "min_samples: 16"+strings.Join(append([]string{""}, trainKeys...), "\n  "), 1)
	path := filepath.Join(t.TempDir(), "tictactoe-tiny.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLoopMeasuresEachGeneration turns the arena on: each generation
// plays the self-play network and the baseline, records both matches and
// gets a rating; with a gate nobody can pass, the self-play network stays
// generation 0.
func TestLoopMeasuresEachGeneration(t *testing.T) {
	run := t.TempDir()
	raw, err := os.ReadFile(writeTinyConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "arena.yaml")
	text, _, _ := strings.Cut(string(raw), "\narena:")
	text += "\narena:\n  games: 6\n  playouts: 8\n  baseline: random\n  gate: 0.99\n"
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Loop(context.Background(), LoopOptions{Backend: cpu.Backend(), ConfigPath: cfg, RunDir: run, MaxGenerations: 2, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	records, _, err := arena.ReadMatches(runfolder.Folder(run).Matches())
	if err != nil {
		t.Fatal(err)
	}
	ms, err := ReadMetrics(runfolder.Folder(run).Metrics())
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 2*len(ms) || len(ms) != 2 {
		t.Fatalf("%d matches recorded over %d generations, want two per generation", len(records), len(ms))
	}
	best := 0
	for i, m := range ms {
		versusBest, versusBaseline := records[2*i], records[2*i+1]
		if versusBest.A != runfolder.GenerationName(m.Generation) || versusBest.B != runfolder.GenerationName(best) || versusBaseline.B != "random" {
			t.Errorf("generation %d played %s vs %s and %s vs %s; want it against %s and random",
				m.Generation, versusBest.A, versusBest.B, versusBaseline.A, versusBaseline.B, runfolder.GenerationName(best))
		}
		for _, r := range []arena.MatchRecord{versusBest, versusBaseline} {
			if r.Wins+r.Draws+r.Losses != 6 {
				t.Errorf("%s vs %s: %d games, want 6", r.A, r.B, r.Wins+r.Draws+r.Losses)
			}
		}
		if m.Rating == nil {
			t.Errorf("generation %d has no rating", m.Generation)
		}
		if r := m.BaselineResult; m.Baseline != "random" || r == nil || *r != [3]int{versusBaseline.Wins, versusBaseline.Draws, versusBaseline.Losses} {
			t.Errorf("generation %d's metrics hold the baseline match %q %v, the match log %+v", m.Generation, m.Baseline, r, versusBaseline)
		}
		// The 0.99 gate is passed only by winning every game.
		if versusBest.Match().Score.Fraction() >= 0.99 {
			best = m.Generation
		}
		if m.Best != best {
			t.Errorf("generation %d: best %d, want %d", m.Generation, m.Best, best)
		}
	}
}

// TestResumedGenerationSaysItReused: a generation whose games were saved
// before a stop, but not its checkpoint, trains on them when the run
// resumes and says so once: its line and metrics count the games, no
// progress bar counts moves that are not played, and no rate is
// recorded for self-play that did not happen.
func TestResumedGenerationSaysItReused(t *testing.T) {
	run := t.TempDir()
	cfg := writeTinyConfig(t)
	var log strings.Builder
	opts := LoopOptions{Backend: cpu.Backend(), ConfigPath: cfg, RunDir: run, MaxGenerations: 2, Seed: 3, Log: &log}
	if err := Loop(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	// As if killed after generation 2's games were saved: its checkpoint
	// and metrics line gone, its shard kept.
	folder := runfolder.Folder(run)
	if err := os.Remove(folder.Checkpoint(2)); err != nil {
		t.Fatal(err)
	}
	ms, err := ReadMetrics(folder.Metrics())
	if err != nil || len(ms) != 2 {
		t.Fatalf("metrics: %v, %v", ms, err)
	}
	line, err := json.Marshal(ms[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(folder.Metrics(), append(line, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	log.Reset()
	var progress strings.Builder
	opts.ConfigPath, opts.MaxGenerations, opts.Progress = "", 1, &progress
	if err := Loop(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("gen 2: %d games, %d positions, saved before the last stop and not played again", ms[1].Games, ms[1].Positions)
	if out := log.String(); !strings.Contains(out, want) {
		t.Errorf("the resumed generation does not say it reused its games (%q):\n%s", want, out)
	}
	if out := progress.String(); strings.Contains(out, "self-play") || !strings.Contains(out, "gen 2 training") {
		t.Errorf("the resumed generation's progress counts self-play, or no training:\n%s", out)
	}
	after, err := ReadMetrics(folder.Metrics())
	if err != nil || len(after) != 2 {
		t.Fatalf("metrics after the resume: %v, %v", after, err)
	}
	m := after[1]
	if !m.Reused || m.PositionsS != 0 || m.EvalsS != 0 || m.Positions != ms[1].Positions || m.Steps == 0 {
		t.Errorf("resumed generation recorded %+v: want reused, no rates, its %d positions, and training", m, ms[1].Positions)
	}
	if m.Games != ms[1].Games || m.Results != ms[1].Results || m.Moves != ms[1].Moves {
		t.Errorf("resumed generation counted %d games, %v results, %d moves; they were played as %d, %v, %d",
			m.Games, m.Results, m.Moves, ms[1].Games, ms[1].Results, ms[1].Moves)
	}
	raw, err := os.ReadFile(folder.Metrics())
	if err != nil {
		t.Fatal(err)
	}
	if last := raw[bytes.LastIndexByte(raw[:len(raw)-1], '\n')+1:]; bytes.Contains(last, []byte("positions_per_s")) || bytes.Contains(last, []byte("evals_per_s")) {
		t.Errorf("the resumed generation's line records self-play rates: %s", last)
	}
}

// TestLoopCountsWhatTheCacheAnswers: with selfplay.eval_cache, each
// generation's metrics and log line give the share of self-play's
// positions the cache answered, and evals_per_s counts the network's
// evaluations alone; without one, no share. Played in rounds and as a
// stream.
func TestLoopCountsWhatTheCacheAnswers(t *testing.T) {
	for _, tc := range []struct {
		name, keys string
		cached     bool
	}{
		{"rounds, no cache", "", false},
		{"rounds", "  eval_cache: 4096\n", true},
		{"stream", "  eval_cache: 4096\n  ahead: 1\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := os.ReadFile(writeTinyConfig(t))
			if err != nil {
				t.Fatal(err)
			}
			cfg := filepath.Join(t.TempDir(), "cache.yaml")
			if err := os.WriteFile(cfg, []byte(strings.Replace(string(raw), "  workers: 0", tc.keys+"  workers: 0", 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			run := t.TempDir()
			var log strings.Builder
			if err := Loop(context.Background(), LoopOptions{Backend: cpu.Backend(), ConfigPath: cfg, RunDir: run, MaxGenerations: 2, Seed: 5, Log: &log}); err != nil {
				t.Fatal(err)
			}
			ms, err := ReadMetrics(runfolder.Folder(run).Metrics())
			if err != nil || len(ms) != 2 {
				t.Fatalf("metrics: %d generations, %v", len(ms), err)
			}
			for _, m := range ms {
				// Tic-tac-toe's few thousand positions recur in every
				// game: a cache answers many, never all (the first
				// time a position is met, the network is asked).
				if got := m.CacheShare > 0.05 && m.CacheShare < 1; got != tc.cached {
					t.Errorf("generation %d: cache share %.3f (want one: %v)", m.Generation, m.CacheShare, tc.cached)
				}
				if m.EvalsS <= 0 {
					t.Errorf("generation %d: %.0f evaluations/s", m.Generation, m.EvalsS)
				}
			}
			if said := strings.Contains(log.String(), "answered by the cache"); said != tc.cached {
				t.Errorf("the log speaks of the cache: %v, want %v:\n%s", said, tc.cached, log.String())
			}
		})
	}
}

// TestStoppedSelfPlaySaysWhatWasLost: a loop stopped while playing a
// generation's games says how many moves are lost and why: when it stops
// (Ctrl-C), and, killed without a word, when the run resumes, from the
// status it left.
func TestStoppedSelfPlaySaysWhatWasLost(t *testing.T) {
	raw, err := os.ReadFile(writeTinyConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	// As many games as a generation may have, so that the stop comes
	// while they are played however fast the machine (or an evaluation
	// cache, which answers most of tic-tac-toe's few positions) plays them.
	cfg := filepath.Join(t.TempDir(), "long.yaml")
	if err := os.WriteFile(cfg, []byte(strings.Replace(string(raw), "games_per_generation: 24", "games_per_generation: 1000000", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	folder := runfolder.Folder(t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go cancelInPhase(ctx, cancel, folder, PhaseSelfPlay, 0)
	var log strings.Builder
	opts := LoopOptions{Backend: cpu.Backend(), ConfigPath: cfg, RunDir: string(folder), MaxGenerations: 1, Seed: 3, Log: &log}
	if err := Loop(ctx, opts); err != nil {
		t.Fatal(err)
	}
	stopped := regexp.MustCompile(`stopped during generation 1's self-play after (\d+) moves, which are lost: a generation's games are saved only together, once all have ended, so generation 1's are played again from the start; the run resumes from generation 0`)
	if m := stopped.FindStringSubmatch(log.String()); m == nil || m[1] == "0" {
		t.Errorf("stopped in self-play, the loop says:\n%s", log.String())
	}

	// Killed instead: the status it left counts the moves made.
	now := time.Now().UTC().Format(time.RFC3339Nano)
	killed, _ := json.Marshal(Status{Generation: 1, Phase: PhaseSelfPlay, Done: 321, Total: 4000, Unit: "moves",
		GenerationStarted: now, PhaseStarted: now, Updated: now})
	if err := os.WriteFile(folder.Status(), killed, 0o644); err != nil {
		t.Fatal(err)
	}
	log.Reset()
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	opts.ConfigPath, opts.Started = "", cancel
	if err := Loop(ctx, opts); err != nil {
		t.Fatal(err)
	}
	if want := "the run was stopped during generation 1's self-play after about 321 moves, which are lost"; !strings.Contains(log.String(), want) {
		t.Errorf("resumed after a kill in self-play, the loop does not say %q:\n%s", want, log.String())
	}
}

// TestStopWhilePlayingAheadSaysWhatWasLost: with selfplay.ahead 1 the
// next generation's games are played while a generation trains; a loop
// stopped then says how many of their moves are lost.
func TestStopWhilePlayingAheadSaysWhatWasLost(t *testing.T) {
	raw, err := os.ReadFile(writeTinyConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	// Training long enough (a thousand steps or so) that the games played
	// ahead make moves before the stop.
	text := strings.Replace(string(raw), "replay_ratio: 8", "replay_ratio: 100", 1)
	text = strings.Replace(text, "games_per_generation: 24", "games_per_generation: 200", 1)
	text = strings.Replace(text, "  workers: 0", "  ahead: 1\n  workers: 0", 1)
	cfg := filepath.Join(t.TempDir(), "ahead.yaml")
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	folder := runfolder.Folder(t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go cancelInPhase(ctx, cancel, folder, PhaseTraining, 300*time.Millisecond)
	var log strings.Builder
	opts := LoopOptions{Backend: cpu.Backend(), ConfigPath: cfg, RunDir: string(folder), MaxGenerations: 1, Seed: 3, Log: &log}
	if err := Loop(ctx, opts); err != nil {
		t.Fatal(err)
	}
	stopped := regexp.MustCompile(`stopped during generation 1, while generation 2's games were played ahead; their (\d+) moves are lost: a generation's games are saved only together, once all have ended; the run resumes from generation 0`)
	if m := stopped.FindStringSubmatch(log.String()); m == nil || m[1] == "0" {
		t.Errorf("stopped in training while playing ahead, the loop says:\n%s", log.String())
	}
}

// cancelInPhase calls cancel once the run's status shows phase under
// way (some of it done), after a further wait.
func cancelInPhase(ctx context.Context, cancel func(), folder runfolder.Folder, phase string, wait time.Duration) {
	for ctx.Err() == nil {
		if st, err := ReadStatus(folder.Status()); err == nil && st.Phase == phase && st.Done > 0 {
			time.Sleep(wait)
			cancel()
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestConfigOfAnExistingRun: a run resumes with a --config equal to its
// own, and refuses one that differs, naming the first key.
func TestConfigOfAnExistingRun(t *testing.T) {
	run := t.TempDir()
	cfg := writeTinyConfig(t)
	opts := LoopOptions{Backend: cpu.Backend(), ConfigPath: cfg, RunDir: run, MaxGenerations: 1, Seed: 3}
	if err := Loop(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if err := Loop(context.Background(), opts); err != nil {
		t.Fatalf("the run's own config again: %v", err)
	}
	raw, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	edited := filepath.Join(t.TempDir(), "edited.yaml")
	if err := os.WriteFile(edited, []byte(strings.Replace(string(raw), "games_per_generation: 24", "games_per_generation: 48", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	opts.ConfigPath = edited
	err = Loop(context.Background(), opts)
	var ce ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "at selfplay.games_per_generation (24 there, 48 given)") {
		t.Errorf("an edited config on an existing run: %v", err)
	}
	ms, _ := ReadMetrics(runfolder.Folder(run).Metrics())
	if len(ms) != 2 {
		t.Errorf("%d generations after the refusal, want the 2 played before it", len(ms))
	}
	opts.ConfigPath = "../configs/othello.yaml"
	if err := Loop(context.Background(), opts); err == nil || !strings.Contains(err.Error(), "at game (tictactoe there, othello given)") {
		t.Errorf("another game's config on an existing run: %v", err)
	}
}
