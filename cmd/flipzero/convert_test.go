package main

import (
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
