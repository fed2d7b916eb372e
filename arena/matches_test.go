package arena

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestAppendReadMatches(t *testing.T) {
	dir := t.TempDir()
	records := []MatchRecord{
		{Game: "othello", A: "gen1", B: "random", Wins: 18, Draws: 1, Losses: 1, Generation: 1},
		{Game: "othello", A: "gen2", B: "gen1", Wins: 12, Draws: 2, Losses: 6, Generation: 2},
		{Game: "othello", A: "gen2", B: "greedy", Wins: 9, Losses: 11, Time: "2026-01-02T03:04:05Z"},
	}
	for _, r := range records {
		if err := AppendMatch(filepath.Join(dir, matchesFile), r); err != nil {
			t.Fatal(err)
		}
	}
	got, skipped, err := ReadMatches(filepath.Join(dir, matchesFile))
	if err != nil || skipped != 0 {
		t.Fatal(err, skipped)
	}
	if !reflect.DeepEqual(got, records) {
		t.Fatalf("read back %+v, want %+v", got, records)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != matchesFile {
		t.Errorf("the run folder holds %v, want only %s (no temporary files left)", entries, matchesFile)
	}
	ratings, err := FitRatings(Matches(got), "random")
	if err != nil {
		t.Fatal(err)
	}
	if len(ratings) != 4 {
		t.Fatalf("%d ratings, want 4 players", len(ratings))
	}
	for _, r := range ratings {
		if r.Player == "random" && r.Elo != 0 {
			t.Errorf("the anchor random is at %.1f, want 0", r.Elo)
		}
		if r.Player == "gen1" && r.Elo <= 0 {
			t.Errorf("gen1 scored 18.5/20 against random but is rated %.0f", r.Elo)
		}
	}
}

func TestAppendMatchRejectsBadRecords(t *testing.T) {
	dir := t.TempDir()
	for _, r := range []MatchRecord{
		{Game: "othello", A: "", B: "random", Wins: 1},
		{Game: "othello", A: "x", B: "x", Wins: 1},
		{Game: "othello", A: "x", B: "y", Wins: -1},
	} {
		if err := AppendMatch(filepath.Join(dir, matchesFile), r); err == nil {
			t.Errorf("accepted %+v", r)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, matchesFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a rejected record wrote the file: %v", err)
	}
}

// TestReadMatchesBadLines: a line that is not a match record, or whose
// figures do not add up, is skipped and counted; the matches around it
// are read.
func TestReadMatchesBadLines(t *testing.T) {
	good := `{"game":"othello","a":"gen1","b":"random","wins":3,"draws":0,"losses":1}`
	for _, bad := range []string{
		"not json",
		`{"game":"othello","a":"x","b":"y","wins":-3}`,
		`{"game":"othello","a":"x","wins":3}`,
		`{"game":"othello","a":"x","b":"y","wins":"many"}`,
	} {
		path := filepath.Join(t.TempDir(), matchesFile)
		if err := os.WriteFile(path, []byte(good+"\n"+bad+"\n"+good+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		got, skipped, err := ReadMatches(path)
		if err != nil || len(got) != 2 || skipped != 1 {
			t.Errorf("%s: %d matches, %d skipped, %v; want 2 and 1", bad, len(got), skipped, err)
		}
	}
	if _, _, err := ReadMatches(filepath.Join(t.TempDir(), matchesFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a run without matches: error %v, want one wrapping os.ErrNotExist", err)
	}
}

// matchesFile is the log's name in the tests' folders.
const matchesFile = "matches.jsonl"
