package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flipzero/flipzero/data"
	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/loop"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/runfolder"
)

// TestMain lets the test binary act as the flipzero command, so a test can
// run it as a real process (and kill it).
func TestMain(m *testing.M) {
	if os.Getenv("FLIPZERO_AS_COMMAND") == "1" {
		os.Exit(run(context.Background(), os.Args[1:], stdio{os.Stdin, os.Stdout, os.Stderr}))
	}
	os.Exit(m.Run())
}

func commandProcess(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "FLIPZERO_AS_COMMAND=1")
	return cmd
}

// tinyRunConfig is the tic-tac-toe config with generations of a given size.
func tinyRunConfig(t *testing.T, games int) string {
	t.Helper()
	raw, err := os.ReadFile("../../configs/tictactoe.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(raw), "games_per_generation: 200", "games_per_generation: "+strconv.Itoa(games), 1)
	text = strings.Replace(text, "min_samples: 256", "min_samples: 32", 1)
	path := filepath.Join(t.TempDir(), "tictactoe.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLoopSurvivesSIGKILL kills a real loop process in the middle of a
// generation, restarts it, and checks that it resumes from the last
// checkpoint with the step count going on, and that every file it left
// loads: with self-play in rounds (ahead 0) and as a stream ahead of
// training (ahead 1).
func TestLoopSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the loop as a real process for several seconds")
	}
	for _, ahead := range []int{0, 1} {
		t.Run(fmt.Sprintf("ahead %d", ahead), func(t *testing.T) { loopSurvivesSIGKILL(t, ahead) })
	}
}

func loopSurvivesSIGKILL(t *testing.T, ahead int) {
	run := filepath.Join(t.TempDir(), "run")
	config := tinyRunConfig(t, 300)
	if ahead > 0 {
		raw, err := os.ReadFile(config)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Replace(string(raw), "  workers: 0", "  workers: 0\n  ahead: "+strconv.Itoa(ahead), 1)
		if text == string(raw) {
			t.Fatal("the tic-tac-toe config has no selfplay workers line to put ahead beside")
		}
		if err := os.WriteFile(config, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	first := commandProcess(t, "loop", "--config", config, "--run", run, "--quiet", "--seed", "5")
	var firstOut bytes.Buffer
	first.Stdout, first.Stderr = &firstOut, &firstOut
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	// Let one generation finish, then kill the process during the next.
	metrics := filepath.Join(run, "metrics.jsonl")
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if ms, _ := loop.ReadMetrics(metrics); len(ms) >= 1 {
			break
		}
		if time.Now().After(deadline) {
			first.Process.Kill()
			t.Fatalf("no generation finished in 2 minutes:\n%s", firstOut.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(700 * time.Millisecond)
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	first.Wait()
	before, err := loop.ReadMetrics(metrics)
	if err != nil {
		t.Fatal(err)
	}
	last := before[len(before)-1]
	// The checkpoint is written before the generation's metrics line: the
	// kill may fall between them, and the restart resumes from the
	// checkpoint.
	gens, err := runfolder.Folder(run).Generations()
	if err != nil || len(gens) == 0 {
		t.Fatalf("no checkpoints after the kill (%v)", err)
	}
	newest := gens[len(gens)-1]
	if newest != last.Generation && newest != last.Generation+1 {
		t.Fatalf("after the kill: newest checkpoint generation %d, last metrics line generation %d", newest, last.Generation)
	}

	checkRunFiles(t, run)

	second := commandProcess(t, "loop", "--run", run, "--quiet", "--generations", "1", "--seed", "6")
	out, err := second.CombinedOutput()
	if err != nil {
		t.Fatalf("restart: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "generation "+strconv.Itoa(newest)+",") {
		t.Errorf("the restart did not resume from generation %d:\n%s", newest, out)
	}
	if missing := newest != last.Generation; missing != strings.Contains(string(out), "its line is missing") {
		t.Errorf("checkpoint generation %d, metrics generation %d, and the restart's log:\n%s", newest, last.Generation, out)
	}
	after, err := loop.ReadMetrics(metrics)
	if err != nil {
		t.Fatal(err)
	}
	resumed := after[len(after)-1]
	if resumed.Generation != newest+1 || resumed.Step <= last.Step {
		t.Errorf("after the restart: generation %d step %d; before: checkpoint generation %d, metrics generation %d step %d",
			resumed.Generation, resumed.Step, newest, last.Generation, last.Step)
	}
	checkRunFiles(t, run)
}

// checkRunFiles loads every checkpoint and shard of a run and fails on
// leftovers that are not complete files.
func checkRunFiles(t *testing.T, run string) {
	t.Helper()
	g := tictactoe.Game{}
	ckpts, _ := filepath.Glob(filepath.Join(run, "models", "*"))
	shards, _ := filepath.Glob(filepath.Join(run, "data", "*"))
	if len(ckpts) == 0 || len(shards) == 0 {
		t.Fatalf("run has %d checkpoints and %d shards", len(ckpts), len(shards))
	}
	for _, p := range ckpts {
		if strings.HasPrefix(filepath.Base(p), ".") {
			continue // an interrupted write's temporary: never renamed into place
		}
		if _, err := nn.LoadCheckpoint(p, g); err != nil {
			t.Errorf("checkpoint: %v", err)
		}
	}
	for _, p := range shards {
		if strings.HasPrefix(filepath.Base(p), ".") {
			continue
		}
		if _, err := data.ReadShard(p, g); err != nil {
			t.Errorf("shard: %v", err)
		}
	}
}

// TestLoopLogToAFile runs the loop as a real process with its standard
// error sent to a file, as "flipzero loop … 2>log" does: the log reads one
// line per event, each phase's start and end, with no carriage returns or
// escape codes of progress bars.
func TestLoopLogToAFile(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	logPath := filepath.Join(t.TempDir(), "log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := commandProcess(t, "loop", "--config", tinyRunConfig(t, 40), "--run", run, "--generations", "1", "--seed", "3")
	cmd.Stderr = logFile
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("loop: %v\n%s", err, out)
	}
	// Standard output is the run's line and one line a generation; what
	// computes goes to standard error, in a few words.
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.HasPrefix(line, "run ") && !strings.HasPrefix(line, "gen 1: ") {
			t.Errorf("standard output holds %q", line)
		}
	}
	logFile.Close()
	raw, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	log := string(raw)
	if strings.ContainsAny(log, "\r\x1b") {
		t.Fatalf("the log holds terminal control characters: %q", log)
	}
	if first, _, _ := strings.Cut(log, "\n"); !strings.HasPrefix(first, "flipzero: device ") || len(first) > 80 {
		t.Errorf("the log starts %q, want a short device line", first)
	}
	// 40 games of tic-tac-toe, their moves estimated from the board's 9
	// cells before a generation has counted them.
	for _, want := range []string{"gen 1 self-play moves: started, about 360 to do", "evaluations/s)", "gen 1 training: started"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
	if !regexp.MustCompile(`gen 1 self-play moves: [1-9][0-9]* in [0-9.]+ s \([0-9.]+/s, [0-9]+ evaluations/s\)`).MatchString(log) {
		t.Errorf("the log lacks self-play's end with its moves and evaluations/s:\n%s", log)
	}
}
