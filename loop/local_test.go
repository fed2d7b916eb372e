package loop

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flipzero/flipzero/data"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/cpu"
	"github.com/flipzero/flipzero/runfolder"
)

// writeAheadConfig is the tiny tic-tac-toe config with self-play's ahead
// set.
func writeAheadConfig(t *testing.T, ahead int) string {
	t.Helper()
	raw, err := os.ReadFile(writeTinyConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(raw), "  workers: 0", "  workers: 0\n  ahead: "+strconv.Itoa(ahead), 1)
	if text == string(raw) {
		t.Fatal("the tic-tac-toe config has no selfplay workers line to put ahead beside")
	}
	path := t.TempDir() + "/ahead.yaml"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// startTestSource starts this machine's self-play for a fresh run of the
// tiny config with ahead, and publishes an untrained network.
func startTestSource(t *testing.T, ahead int) (*localSelfPlay, runfolder.Folder) {
	t.Helper()
	cfg, err := LoadConfig(writeAheadConfig(t, ahead), games.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SelfPlay.Ahead != ahead {
		t.Fatalf("config says ahead %d, want %d", cfg.SelfPlay.Ahead, ahead)
	}
	net, err := nn.New(tictactoe.Game{}, cfg.Network, 1)
	if err != nil {
		t.Fatal(err)
	}
	evals, err := nn.NewEvaluators(cpu.Backend(), net.Fold(), cfg.SelfPlay.WorkerCount(), cfg.SelfPlay.BatchSize)
	if err != nil {
		t.Fatal(err)
	}
	run := runfolder.Folder(t.TempDir())
	if err := os.MkdirAll(run.Data(), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := startLocalSelfPlay(ctx, tictactoe.Game{}, cfg, evals, run, 7, 0)
	t.Cleanup(func() {
		cancel()
		<-s.stopped
		evals.Close()
	})
	if err := s.Publish(ctx, 0, net.Fold()); err != nil {
		t.Fatal(err)
	}
	return s, run
}

// collectOne collects generation number and checks it holds the
// config's games, written to the run folder.
func collectOne(t *testing.T, s *localSelfPlay, run runfolder.Folder, number int) {
	t.Helper()
	var got RemoteGames
	if err := s.Collect(context.Background(), number, s.cfg.SelfPlay.Games, func(g RemoteGames) { got = g }); err != nil {
		t.Fatal(err)
	}
	n, err := data.ShardSamples(run.Shard(number), tictactoe.Game{})
	if err != nil || got.Games != s.cfg.SelfPlay.Games || len(got.Samples) != n || n == 0 {
		t.Fatalf("generation %d: %d games and %d samples handed over, shard of %d (%v); want %d games",
			number, got.Games, len(got.Samples), n, err, s.cfg.SelfPlay.Games)
	}
	if _, err := os.Stat(run.GameRecords(number)); err != nil {
		t.Errorf("generation %d's game records: %v", number, err)
	}
}

// hasPlayed says whether generation number's round has finished.
func hasPlayed(s *localSelfPlay, number int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.done[number]
	return ok
}

// TestLocalSelfPlayPlaysAheadAndNoFurther: with ahead 1, the next
// generation's games are played while the loop has not asked for them,
// and the one after waits until it does (back-pressure); with ahead 0,
// nothing is played before it is asked for.
func TestLocalSelfPlayPlaysAheadAndNoFurther(t *testing.T) {
	t.Run("ahead 1", func(t *testing.T) {
		s, run := startTestSource(t, 1)
		if s.stream == nil {
			t.Fatal("playing ahead in rounds, want one stream")
		}
		collectOne(t, s, run, 1)
		deadline := time.Now().Add(time.Minute)
		for !hasPlayed(s, 2) {
			if time.Now().After(deadline) {
				t.Fatal("generation 2 was not played ahead of the loop asking for it")
			}
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond)
		// The stream fills generation 3 next, but may start none of its
		// games: no move is played.
		if _, err := os.Stat(run.Shard(3)); err == nil || s.moves.Load() != 0 {
			t.Fatalf("generation 3 was played two generations ahead of the loop (%d moves)", s.moves.Load())
		}
		collectOne(t, s, run, 2)
		collectOne(t, s, run, 3)
	})
	t.Run("ahead 0", func(t *testing.T) {
		s, run := startTestSource(t, 0)
		collectOne(t, s, run, 1)
		time.Sleep(300 * time.Millisecond)
		s.mu.Lock()
		playing := s.playing
		s.mu.Unlock()
		if playing == 2 || hasPlayed(s, 2) {
			t.Fatal("generation 2 was played before the loop asked for it")
		}
		collectOne(t, s, run, 2)
	})
}

// TestLoopPlaysAhead runs the loop with self-play ahead of training and
// resumes it: every generation trains on its own games, written to its
// shard, whether it was played before the stop or after.
func TestLoopPlaysAhead(t *testing.T) {
	run := t.TempDir()
	opts := LoopOptions{Backend: cpu.Backend(), ConfigPath: writeAheadConfig(t, 1), RunDir: run, MaxGenerations: 3, Seed: 5}
	if err := Loop(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	opts.ConfigPath, opts.MaxGenerations = "", 2
	if err := Loop(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	ms, err := ReadMetrics(runfolder.Folder(run).Metrics())
	if err != nil || len(ms) != 5 {
		t.Fatalf("%d generations of metrics, %v; want 5", len(ms), err)
	}
	for i, m := range ms {
		n, err := data.ShardSamples(runfolder.Folder(run).Shard(m.Generation), tictactoe.Game{})
		if m.Generation != i+1 || err != nil || m.Positions != n || m.Steps == 0 {
			t.Errorf("generation %d (line %d): %d positions, %d steps; its shard holds %d (%v)", m.Generation, i+1, m.Positions, m.Steps, n, err)
		}
		if played := !m.Reused; played != (m.PolicySurprise != nil) {
			t.Errorf("generation %d: policy surprise %v with its games played now %v", m.Generation, m.PolicySurprise, played)
		}
		if i > 0 && m.Step <= ms[i-1].Step {
			t.Errorf("generation %d at step %d, the one before at %d", m.Generation, m.Step, ms[i-1].Step)
		}
	}
}
