package arena

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
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
	got, err := ReadMatches(filepath.Join(dir, matchesFile))
	if err != nil {
		t.Fatal(err)
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

func TestReadMatchesBadFiles(t *testing.T) {
	good := `{"game":"othello","a":"gen1","b":"random","wins":3,"draws":0,"losses":1}`
	tests := []struct {
		name, content, wantErr string
	}{
		{"not json", good + "\nnot json\n", "line 2"},
		{"unknown field", `{"game":"othello","a":"x","b":"y","wins":1,"score":3}`, "unknown field"},
		{"negative", `{"game":"othello","a":"x","b":"y","wins":-3}`, "negative count"},
		{"nameless", `{"game":"othello","a":"x","wins":3}`, "no name"},
		{"wrong type", `{"game":"othello","a":"x","b":"y","wins":"many"}`, "line 1"},
	}
	for _, tc := range tests {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, matchesFile), []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadMatches(filepath.Join(dir, matchesFile))
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), matchesFile) {
			t.Errorf("%s: error %v, want one naming %s and saying %q", tc.name, err, matchesFile, tc.wantErr)
		}
	}
	if _, err := ReadMatches(filepath.Join(t.TempDir(), matchesFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a run without matches: error %v, want one wrapping os.ErrNotExist", err)
	}
}

// matchesFile is the log's name in the tests' folders.
const matchesFile = "matches.jsonl"
