package records

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/env/yinsh"
)

// TestLoadLines reads files of record lines holding every kind of fault:
// each fault is counted under its reason and named by file and game, and
// every good record is kept.
func TestLoadLines(t *testing.T) {
	g := othello.Othello()
	ended, final := randomGame(t, g, 1, 200)
	if !final.Terminal() {
		t.Fatal("the random game did not end")
	}
	cut := ended[:20]
	illegal := append(append([]string{}, ended[:5]...), "a1")
	cases := []struct {
		name       string
		lines      []string
		unfinished bool
		games      int
		skipped    Skipped
		problem    string // in the file's report line; "" for none
	}{
		{"one good game", []string{line(ended, "black", "othello")}, false, 1, Skipped{}, ""},
		{"a game of the old format without its game", []string{line(ended, "black", "")}, false, 1, Skipped{}, ""},
		{"another game", []string{line(ended, "black", "othello"), line([]string{"a1"}, "draw", "tictactoe")}, false, 1,
			Skipped{OtherGame: 1}, "line 2: a record of tictactoe, not othello"},
		{"an illegal move", []string{line(illegal, "white", "othello"), line(ended, "white", "othello")}, false, 1,
			Skipped{Illegal: 1}, `line 1: move 6: move "a1" is not legal here`},
		{"a move that is no move", []string{line([]string{"z9"}, "white", "othello")}, false, 0,
			Skipped{Illegal: 1}, "line 1: move 1"},
		{"a line that is no record", []string{"garbage without a tab", line(ended, "white", "othello")}, false, 1,
			Skipped{Damaged: 1}, "1 of 2 games used; line 1 is not a record"},
		{"lines counted past blank ones", []string{"", line(ended, "white", "othello"), "", "no", "x", line(cut, "unfinished", "othello"), "y", "z"}, false, 1,
			Skipped{Damaged: 4, NoResult: 1}, "lines 4, 5, 7 and 1 more are not records; line 6: the record stops"},
		{"a line too long to be a record", []string{strings.Repeat("f5;", 30000) + "\tblack\tothello", line(ended, "white", "othello")}, false, 1,
			Skipped{Damaged: 1}, "line 1 is not a record"},
		{"a record cut short without a result", []string{line(cut, "unfinished", "othello")}, false, 0,
			Skipped{NoResult: 1}, "stops after 20 moves without a result"},
		{"kept when asked", []string{line(cut, "unfinished", "othello")}, true, 1, Skipped{}, ""},
		{"a record cut short with its winner", []string{line(cut, "white", "othello")}, false, 1, Skipped{}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, t.TempDir(), "games.txt", []byte(strings.Join(c.lines, "\n")+"\n"))
			var reports []string
			set, err := Load(context.Background(), g, []string{path}, Options{Unfinished: c.unfinished, Report: func(p string) { reports = append(reports, p) }})
			if err != nil {
				t.Fatal(err)
			}
			if len(set.Games) != c.games || set.Skipped != c.skipped {
				t.Fatalf("%d games, skipped %+v; want %d and %+v", len(set.Games), set.Skipped, c.games, c.skipped)
			}
			if c.problem == "" {
				if len(reports) > 0 {
					t.Fatalf("reported %q for a file without problems", reports)
				}
				return
			}
			if len(reports) != 1 || !strings.HasPrefix(reports[0], path+": ") || !strings.Contains(reports[0], c.problem) {
				t.Fatalf("reports %q, want one line naming %s and %q", reports, path, c.problem)
			}
		})
	}
}

// TestLoadResult: a record played to the end takes its result and its
// final board from the rules; one that stops takes the result it names,
// and has no final board.
func TestLoadResult(t *testing.T) {
	g := othello.Othello()
	moves, final := randomGame(t, g, 3, 200)
	dir := t.TempDir()
	// The recorded outcome of a finished game is the wrong one on
	// purpose: the final position decides.
	wrong := "white"
	if final.Winner() == 1 {
		wrong = "black"
	}
	path := writeFile(t, dir, "g.txt", []byte(line(moves, wrong, "othello")+"\n"+line(moves[:30], "black", "othello")+"\n"))
	set, err := Load(context.Background(), g, []string{path}, Options{})
	if err != nil || len(set.Games) != 2 {
		t.Fatalf("%v games, error %v", len(set.Games), err)
	}
	full, partial := set.Games[0], set.Games[1]
	for p := range 2 {
		if want := env.Value(final, env.Player(p)); full.result[p] != want {
			t.Errorf("finished game: player %d's result %v, want the final position's %v", p, full.result[p], want)
		}
	}
	if len(full.owned) != 64 {
		t.Fatalf("finished game: %d ownership cells, want 64", len(full.owned))
	}
	o := final.(env.Ownership)
	cells := make([]float32, 64)
	o.Ownership(0, cells)
	for c := range cells {
		if float32(full.owned[c]) != cells[c] {
			t.Fatalf("cell %d owned %d, the final board says %v", c, full.owned[c], cells[c])
		}
	}
	if full.margin[0] != o.ScoreMargin(0) || full.margin[1] != o.ScoreMargin(1) {
		t.Errorf("margins %v, want %v and %v", full.margin, o.ScoreMargin(0), o.ScoreMargin(1))
	}
	if partial.result != [2]float32{1, -1} || partial.owned != nil {
		t.Errorf("a record stopped with black's win: result %v, ownership %v", partial.result, partial.owned)
	}
	if full.File != path || full.Index != 1 || partial.Index != 2 {
		t.Errorf("places %s %d, %d", full.File, full.Index, partial.Index)
	}
}

// TestLoadWTHOR reads a WTHOR file with a damaged record and a cut-off
// end: the year is the header's, the good records are kept, the bad
// ones counted, and the file named with what went wrong.
func TestLoadWTHOR(t *testing.T) {
	g := othello.Othello()
	a, sa := randomGame(t, g, 4, 200)
	b, sb := randomGame(t, g, 5, 200)
	score := func(s env.State) byte {
		switch s.Winner() {
		case 0:
			return 40
		case 1:
			return 20
		}
		return 32
	}
	raw := wthorBytes(t, 1999, []wthorRecord{{a, score(sa)}, {[]string{"a1"}, 32}, {b, score(sb)}, {b, score(sb)}})
	raw = raw[:len(raw)-10] // the last record cut short
	dir := t.TempDir()
	path := writeFile(t, dir, "WTH_1999.wtb", raw)
	var reports []string
	set, err := Load(context.Background(), g, []string{path}, Options{Report: func(p string) { reports = append(reports, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Games) != 2 || set.Skipped != (Skipped{Damaged: 1}) {
		t.Fatalf("%d games, skipped %+v; want 2 and one damaged", len(set.Games), set.Skipped)
	}
	if set.Games[0].Year != 1999 || set.Games[1].Index != 3 {
		t.Errorf("year %d, second good record's place %d; want 1999 and 3", set.Games[0].Year, set.Games[1].Index)
	}
	if len(reports) != 1 || !strings.Contains(reports[0], path) || !strings.Contains(reports[0], "record 2") || !strings.Contains(reports[0], "record 4 of 4") {
		t.Fatalf("reports %q, want the file with records 2 and 4 named", reports)
	}

	// A file too short for a header is unreadable, and the others still
	// read.
	short := writeFile(t, dir, "short.wtb", raw[:5])
	set, err = Load(context.Background(), g, []string{short, path}, Options{})
	if err != nil || set.Skipped.Files != 1 || set.Files != 1 || len(set.Games) != 2 {
		t.Fatalf("an unreadable file beside a good one: %+v, error %v", set, err)
	}
}

// TestLoadFolders reads a folder of SGF files (one of them damaged, one
// of the blitz variant) and a run folder's game records.
func TestLoadFolders(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"resign.sgf", "blitz.sgf", "pick-board.sgf"} {
		raw, err := os.ReadFile(filepath.Join("..", "env", "yinsh", "testdata", "boardspace", name))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, filepath.Join("sgf", name), raw)
	}
	writeFile(t, dir, "sgf/broken.sgf", []byte("(;GM[24] P0[1 place wr"))
	writeFile(t, dir, "sgf/notes.md", []byte("not a record"))
	set, err := Load(context.Background(), yinsh.Full(), []string{filepath.Join(dir, "sgf")}, Options{Unfinished: true})
	if err != nil {
		t.Fatal(err)
	}
	if set.Files != 4 || set.Skipped.Damaged != 1 || set.Skipped.OtherGame != 1 || len(set.Games) != 2 {
		t.Fatalf("read %d files, %d games, skipped %+v; want 4 files (the .md left alone), 2 games, one damaged and one blitz", set.Files, len(set.Games), set.Skipped)
	}

	g := tictactoe.Game{}
	run := filepath.Join(dir, "run")
	writeFile(t, run, "config.yaml", []byte("game: tictactoe\n"))
	writeFile(t, run, "games/gen-000001.txt", []byte(line([]string{"a1", "b1", "a2", "b2", "a3"}, "black", "tictactoe")+"\n"))
	writeFile(t, run, "games/gen-000002.txt", []byte(line([]string{"b2", "a1", "c3", "a3", "a2", "c1", "b1", "b3", "c2"}, "draw", "tictactoe")+"\n"))
	set, err = Load(context.Background(), g, []string{run}, Options{})
	if err != nil || set.Files != 2 || len(set.Games) != 2 {
		t.Fatalf("run folder: %+v, error %v", set, err)
	}

	if _, err := Load(context.Background(), g, []string{filepath.Join(dir, "missing.txt")}, Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: error %v, want one that says it does not exist", err)
	}
	writeFile(t, dir, "empty/notes.md", []byte("not a record"))
	if _, err := Load(context.Background(), g, []string{filepath.Join(dir, "empty")}, Options{}); err == nil {
		t.Error("a folder of no record files read without an error")
	}
}

// TestLoadReportsFew: a folder of hundreds of bad files is named file
// by file only for the first few, then counted.
func TestLoadReportsFew(t *testing.T) {
	dir := t.TempDir()
	for i := range filesShown + 5 {
		writeFile(t, dir, filepath.Join("f", strings.Repeat("x", i+1)+".txt"), []byte(line([]string{"a1"}, "draw", "yinsh")+"\n"))
	}
	var reports []string
	set, err := Load(context.Background(), tictactoe.Game{}, []string{filepath.Join(dir, "f")}, Options{Report: func(p string) { reports = append(reports, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if set.Skipped.OtherGame != filesShown+5 || len(reports) != filesShown+1 || !strings.Contains(reports[filesShown], "and 5 more files") {
		t.Fatalf("skipped %+v, %d report lines (last %q)", set.Skipped, len(reports), reports[len(reports)-1])
	}
}

func TestSkippedString(t *testing.T) {
	cases := []struct {
		s    Skipped
		want string
	}{
		{Skipped{}, "nothing"},
		{Skipped{Damaged: 1}, "1 damaged record"},
		{Skipped{Files: 2, OtherGame: 878, NoResult: 1}, "2 unreadable files, 878 records of another game, 1 record without a result"},
	}
	for _, c := range cases {
		if got := c.s.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.s, got, c.want)
		}
	}
}
