package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// tictactoeRecords writes record lines of tic-tac-toe games, and one of
// each fault: a damaged line, a record of another game, an illegal move.
func tictactoeRecords(t *testing.T, dir string) (good, faulty string) {
	t.Helper()
	games := []string{
		"a1;b2;a2;a3;c1;b1;c3;c2;b3\tdraw\ttictactoe",
		"b2;a1;c3;a3;a2;c1;b1;b3;c2\tdraw\ttictactoe",
		"a1;b1;a2;b2;a3\tblack\ttictactoe",
		"c3;b2;a1;a2;b3;c2\twhite\ttictactoe",
	}
	good = filepath.Join(dir, "good.txt")
	os.WriteFile(good, []byte(strings.Join(games, "\n")+"\n"), 0o644)
	faulty = filepath.Join(dir, "faulty.txt")
	os.WriteFile(faulty, []byte(strings.Join(append(games[:2:2],
		"this line is no record",
		"f5;d6\tblack\tothello",
		"a1;a1\twhite\ttictactoe"), "\n")+"\n"), 0o644)
	return good, faulty
}

// TestPretrainAndAnalyze runs pretrain on records with a damaged file
// among them (named, counted, the rest used), then analyze on the
// network it wrote, then the loop from it.
func TestPretrainAndAnalyze(t *testing.T) {
	dir := t.TempDir()
	good, faulty := tictactoeRecords(t, dir)
	run := filepath.Join(dir, "run")
	model := filepath.Join(dir, "pre.fznet")
	code, out, errOut := runCLI(t, "", "pretrain", "--config", "../../configs/tictactoe.yaml", "--records", good, faulty,
		"--validation-fraction", "0", "--run", run, "--out", model, "--steps", "4", "--seed", "1", "--quiet")
	if code != 0 {
		t.Fatalf("pretrain: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		faulty + `: 2 of 5 games used; line 3 is not a record; line 4: a record of othello, not tictactoe; line 5: move 2: move "a1" is not legal here`,
		"records: 6 games, ",
		"left out: 1 damaged record, 1 record of another game, 1 record with an illegal move",
		"wrote generation 0 of " + run,
		"wrote " + model,
		"flipzero loop --run " + run + " goes on from it",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("pretrain's output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(run, "models", "gen-000000.ckpt")); err != nil {
		t.Fatal(err)
	}

	code, out, errOut = runCLI(t, "", "analyze", "--records", good, faulty, "--model", model)
	if code != 0 {
		t.Fatalf("analyze: exit %d\n%s%s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !regexp.MustCompile(`^\d+ positions of 6 games; records: 6 games, `).MatchString(lines[0]) ||
		!regexp.MustCompile(`^top-1 \d+\.\d% \[\d+\.\d, \d+\.\d\]$`).MatchString(lines[1]) ||
		!regexp.MustCompile(`^top-3 \d+\.\d% \[`).MatchString(lines[2]) || !strings.HasPrefix(lines[3], "value error ") {
		t.Errorf("analyze's output:\n%s", out)
	}
	if !strings.Contains(errOut, faulty+": 2 of 5 games used") {
		t.Errorf("analyze did not name the faulty file:\n%s", errOut)
	}

	code, out, errOut = runCLI(t, "", "loop", "--run", run, "--generations", "1", "--quiet")
	if code != 0 || !strings.Contains(out, "generation 0, step 4,") || !strings.Contains(out, "gen 1: ") {
		t.Errorf("loop after pretrain: exit %d\n%s%s", code, out, errOut)
	}
}

func TestPretrainUsage(t *testing.T) {
	dir := t.TempDir()
	good, _ := tictactoeRecords(t, dir)
	cfg := "../../configs/tictactoe.yaml"
	yinsh := filepath.Join(dir, "yinsh.txt")
	os.WriteFile(yinsh, []byte("P E5;P F6\tunfinished\tyinsh\n"), 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--config", cfg, "--records", good}, "--run or --out is required"},
		{[]string{"--config", cfg, "--run", filepath.Join(dir, "r")}, "--records or --from-run is required"},
		{[]string{"--config", cfg, "--records", good, "--from-run", dir, "--run", filepath.Join(dir, "r")}, "give one"},
		{[]string{"--config", cfg, "--records", good, "--run", filepath.Join(dir, "r"), "--validation-fraction", "1"}, "--validation-fraction must be in [0, 1)"},
		{[]string{"--config", cfg, "--records", good, "--run", filepath.Join(dir, "r"), "--game", "othello"}, "--game othello, but the config"},
		{[]string{"--records", good, "--run", filepath.Join(dir, "r")}, "--game or --config is required"},
		{[]string{"--config", cfg, "--records", yinsh, "--run", filepath.Join(dir, "r"), "--steps", "1"}, "no records positions of tictactoe"},
		{[]string{"--config", cfg, "--records", filepath.Join(dir, "none.txt"), "--run", filepath.Join(dir, "r")}, "none.txt"},
		{[]string{"--config", cfg, "--records", good, "--run", good}, "is a file, not a run folder"},
	}
	for _, c := range cases {
		code, out, errOut := runCLI(t, "", append([]string{"pretrain", "--quiet"}, c.args...)...)
		if code != 2 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, standard error %q, output %q; want exit 2 and one line with %q", c.args, code, errOut, out, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "r")); err == nil {
		t.Error("a refused pretraining left a run folder")
	}
	for _, args := range [][]string{
		{"analyze", "--records", good},
		{"analyze", "--records", good, "--model", filepath.Join(dir, "none.fznet")},
		{"analyze", "--model", good, "--records"},
	} {
		if code, _, errOut := runCLI(t, "", args...); code != 2 || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, %q; want exit 2 and one line", args, code, errOut)
		}
	}
}

func TestExpandFileLists(t *testing.T) {
	cases := []struct{ in, want string }{
		{"--records a b c --run r", "--records a --records b --records c --run r"},
		{"--run r --records a", "--run r --records a"},
		{"-records a b", "-records a -records b"},
		{"--records=a b --run r", "--records=a b --run r"},
		{"--records a --validation x y", "--records a --validation x --validation y"},
		{"--records", "--records"},
		{"--other a b", "--other a b"},
	}
	for _, c := range cases {
		got := expandFileLists(strings.Fields(c.in), "records", "validation")
		if !slices.Equal(got, strings.Fields(c.want)) {
			t.Errorf("%q: %q, want %q", c.in, got, c.want)
		}
	}
}
