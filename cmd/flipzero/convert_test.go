package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env/games"
)

// convertAndReplay converts files and replays every game through the
// moves command's own logic, checking each move is legal and finished
// games end with the recorded outcome.
func convertAndReplay(t *testing.T, format string, files ...string) (games_, finished int) {
	t.Helper()
	args := append([]string{"convert", "--from", format}, files...)
	code, out, errOut := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("convert exit %d: %s", code, errOut)
	}
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		fields := strings.Split(line, "\t")
		if len(fields) != 3 {
			t.Fatalf("line %d: %d tab-separated fields, want 3: %q", i+1, len(fields), line)
		}
		moves, outcome, name := fields[0], fields[1], fields[2]
		g, err := games.ByName(name)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		answer := movesLine(g, moves, nil)
		if strings.HasPrefix(answer, "error:") {
			t.Fatalf("line %d: %s", i+1, answer)
		}
		if strings.HasPrefix(answer, "over ") {
			finished++
			if outcome != "unfinished" && answer != "over "+outcome {
				t.Errorf("line %d: replay says %q, record says %s", i+1, answer, outcome)
			}
		}
		games_++
	}
	return games_, finished
}

func TestConvertWTHOR(t *testing.T) {
	n, finished := convertAndReplay(t, "wthor", "../../env/othello/testdata/WTH_1977.wtb")
	if n != 12 || finished == 0 {
		t.Errorf("%d games, %d finished; want the file's 12", n, finished)
	}
}

func TestConvertErrors(t *testing.T) {
	for _, args := range [][]string{
		{"convert", "--from", "wthor"},
		{"convert", "--from", "pgn", "x"},
		{"convert", "--from", "wthor", "no-such-file.wtb"},
		{"convert", "--from", "wthor", "main.go"},
	} {
		code, _, errOut := runCLI(t, "", args...)
		if code != 2 || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message", args, code, errOut)
		}
	}
}

func TestConvertBoardspace(t *testing.T) {
	files, _ := filepath.Glob("../../env/yinsh/testdata/boardspace/*.sgf")
	if len(files) == 0 {
		t.Fatal("no boardspace records in env/yinsh/testdata")
	}
	n, finished := convertAndReplay(t, "boardspace", files...)
	if n != len(files) || finished == 0 {
		t.Errorf("%d games from %d files, %d finished", n, len(files), finished)
	}
}

// TestConvertAllRecords converts every shared record and replays it.
func TestConvertAllRecords(t *testing.T) {
	yinshFiles, _ := filepath.Glob("../../../shared/data/yinsh/boardspace-2005/*.sgf")
	wthorFiles, _ := filepath.Glob("../../../shared/data/othello/wthor/*.wtb")
	if len(yinshFiles) == 0 || len(wthorFiles) == 0 {
		t.Skip("../shared/data is not beside the repository")
	}
	if n, finished := convertAndReplay(t, "boardspace", yinshFiles...); n != 878 || finished != 865 {
		t.Errorf("boardspace: %d games, %d finished; want 878 and the 865 not resigned", n, finished)
	}
	if testing.Short() {
		return
	}
	if n, _ := convertAndReplay(t, "wthor", wthorFiles...); n < 120000 {
		t.Errorf("wthor: %d games", n)
	}
}
