package progress

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLinesWhenNotATerminal: to a file, a task is plain lines — a start,
// counts while it runs, an end — with no carriage return or escape code.
func TestLinesWhenNotATerminal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	r := New(f)
	r.every = 0 // a line per step, to see them
	task := r.Start(3, "gen 1 self-play")
	for i := 0; i < 3; i++ {
		task.Add(1)
	}
	task.Close()
	f.Close()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	log := string(raw)
	if strings.ContainsAny(log, "\r\x1b") {
		t.Fatalf("log holds terminal control characters: %q", log)
	}
	lines := strings.Split(strings.TrimSuffix(log, "\n"), "\n")
	want := []string{"gen 1 self-play: started, 3 to do", "gen 1 self-play: 1 of 3", "gen 1 self-play: 2 of 3", "gen 1 self-play: 3 of 3", "gen 1 self-play: 3 of 3 in"}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), log)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %q, want it to start %q", i+1, lines[i], w)
		}
	}
}

// TestQuietReporters: a nil writer or reporter reports nothing and does
// not fail.
func TestQuietReporters(t *testing.T) {
	for _, r := range []*Reporter{New(nil), nil, {}} {
		task := r.Start(2, "x")
		task.Add(2)
		task.Close()
	}
}

// TestLinesAreThrottled: with an interval, a fast task prints only its
// start and its end.
func TestLinesAreThrottled(t *testing.T) {
	var b strings.Builder
	task := Lines(&b, 1<<40).Start(1000, "training")
	for i := 0; i < 1000; i++ {
		task.Add(1)
	}
	task.Close()
	if n := strings.Count(b.String(), "\n"); n != 2 {
		t.Errorf("%d lines for a fast task, want 2:\n%s", n, b.String())
	}
}

// TestEstimatedTaskGrowsAndNotes: work past an estimated size grows the
// task instead of passing 100%, and a note rides along each line.
func TestEstimatedTaskGrowsAndNotes(t *testing.T) {
	var b strings.Builder
	task := Lines(&b, 0).StartEstimate(2, "gen 2 self-play moves")
	task.Note("900 evaluations/s")
	task.Add(3)
	task.Close()
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 3 || lines[0] != "gen 2 self-play moves: started, about 2 to do" ||
		!strings.HasPrefix(lines[1], "gen 2 self-play moves: 3 of about 3, ") || !strings.HasSuffix(lines[1], ", 900 evaluations/s") ||
		!strings.HasPrefix(lines[2], "gen 2 self-play moves: 3 in ") || !strings.HasSuffix(lines[2], ", 900 evaluations/s)") {
		t.Errorf("lines %q", lines)
	}
}
