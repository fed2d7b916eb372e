package loop

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/nn/cpu"
	"github.com/flipzero/flipzero/runfolder"
)

// TestLoopKeepsGamesStatusAndPhaseTimes runs two generations with the
// arena on and checks what the run's page reads: every generation's games
// as record lines that replay by the rules to their outcome, the time of
// each phase, and a status file that says the loop stopped.
func TestLoopKeepsGamesStatusAndPhaseTimes(t *testing.T) {
	run := runfolder.Folder(t.TempDir())
	raw, err := os.ReadFile(writeTinyConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	text, _, _ := strings.Cut(string(raw), "\narena:")
	text += "\narena:\n  games: 4\n  playouts: 8\n  baseline: random\n"
	cfg := filepath.Join(t.TempDir(), "arena.yaml")
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := Loop(context.Background(), LoopOptions{Backend: cpu.Backend(), ConfigPath: cfg, RunDir: string(run), MaxGenerations: 2, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	gens, err := run.RecordedGenerations()
	if err != nil || len(gens) != 2 || gens[0] != 1 || gens[1] != 2 {
		t.Fatalf("recorded generations %v, %v; want [1 2]", gens, err)
	}
	g := tictactoe.Game{}
	for _, gen := range gens {
		games, skipped, err := ReadGames(run.GameRecords(gen), 1000, 1<<20)
		if err != nil || skipped != 0 || len(games) != 24 {
			t.Fatalf("generation %d: %d games, %d skipped, %v; want 24", gen, len(games), skipped, err)
		}
		for i, rec := range games {
			s := g.NewState()
			for _, mv := range rec.Moves {
				a, err := g.ParseAction(mv)
				if err != nil || s.Terminal() || !s.IsLegal(a) {
					t.Fatalf("generation %d game %d: %q is not legal in %v", gen, i, mv, rec.Moves)
				}
				s.Apply(a)
			}
			want := "draw"
			if w := s.Winner(); w >= 0 {
				want = g.PlayerName(w)
			}
			if !s.Terminal() || rec.Outcome != want || rec.Game != "tictactoe" {
				t.Fatalf("generation %d game %d: %v ends terminal %v as %s, record says %s (%s)", gen, i, rec.Moves, s.Terminal(), want, rec.Outcome, rec.Game)
			}
		}
	}
	ms, err := ReadMetrics(run.Metrics())
	if err != nil || len(ms) != 2 {
		t.Fatalf("metrics %+v, %v", ms, err)
	}
	for _, m := range ms {
		if m.SelfPlaySeconds <= 0 || m.TrainSeconds <= 0 || m.ArenaSeconds <= 0 || m.SelfPlaySeconds+m.TrainSeconds > m.Seconds+1e-6 {
			t.Errorf("generation %d: self-play %v s, training %v s, arena %v s, generation %v s",
				m.Generation, m.SelfPlaySeconds, m.TrainSeconds, m.ArenaSeconds, m.Seconds)
		}
	}
	st, err := ReadStatus(run.Status())
	if err != nil {
		t.Fatal(err)
	}
	updated, err := time.Parse(time.RFC3339Nano, st.Updated)
	if st.Phase != PhaseStopped || st.Generation != 2 || err != nil || updated.Before(start.Add(-time.Second)) {
		t.Errorf("status after the loop: %+v (%v)", st, err)
	}
}

// TestReadGamesBounds reads a record file with a line that is not a
// record, and stops at the limit it is given.
func TestReadGamesBounds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gen-000001.txt")
	text := "a1;b2;c3\tdraw\ttictactoe\nnot a record\n\n\twhite\ttictactoe\nb2\tblack\ttictactoe\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	games, skipped, err := ReadGames(path, 2, 1<<20)
	if err != nil || skipped != 1 || len(games) != 2 || len(games[0].Moves) != 3 || games[1].Moves != nil || games[1].Outcome != "white" {
		t.Fatalf("games %+v, skipped %d, %v", games, skipped, err)
	}
	// A limit inside a line leaves that line out whole.
	games, _, _ = ReadGames(path, 10, 10)
	if len(games) != 0 {
		t.Errorf("10 bytes read gave %+v", games)
	}
	games, skipped, _ = ReadGames(path, 10, 30)
	if len(games) != 1 || skipped != 0 || games[0].Outcome != "draw" {
		t.Errorf("30 bytes read gave %+v, %d skipped", games, skipped)
	}
}

// TestStatusHeartbeat: a running loop's status is rewritten while
// nothing else happens, and says which process writes it.
func TestStatusHeartbeat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	f := newStatusFile(path)
	f.phase(3, PhaseTraining, 10, "steps")
	first, err := ReadStatus(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.heartbeat(ctx); close(done) }()
	time.Sleep(statusHeartbeat + statusHeartbeat/2)
	cancel()
	<-done
	later, err := ReadStatus(path)
	if err != nil {
		t.Fatal(err)
	}
	if later.Updated == first.Updated || later.PID != os.Getpid() || later.Heartbeat != statusHeartbeat.Seconds() || later.Unit != "steps" {
		t.Errorf("status after a heartbeat: %+v (first written %s)", later, first.Updated)
	}
}
