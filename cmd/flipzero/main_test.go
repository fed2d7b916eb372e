package main

import (
	"bytes"
	"context"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/nn/cpu"
)

// runCLI runs a command line in-process and returns its exit status,
// standard output and standard error.
func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, stdio{strings.NewReader(stdin), &out, &errOut})
	return code, out.String(), errOut.String()
}

func TestPerftTicTacToe(t *testing.T) {
	code, out, _ := runCLI(t, "", "perft", "--game", "tictactoe", "--depth", "9")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 9 {
		t.Fatalf("%d lines, want 9:\n%s", len(lines), out)
	}
	if !strings.HasPrefix(lines[8], "9 255168 ") {
		t.Errorf("ninth line %q, want 9 255168 <seconds>", lines[8])
	}
	if f := strings.Fields(lines[0]); len(f) != 3 || f[0] != "1" || f[1] != "9" {
		t.Errorf("first line %q", lines[0])
	}
}

func TestMovesTicTacToe(t *testing.T) {
	code, out, _ := runCLI(t, "\na1;b1\na1;a1\na1;b1;a2;b2;a3\nzz\n", "moves", "--game", "tictactoe")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	want := []string{
		"a1;a2;a3;b1;b2;b3;c1;c2;c3",
		"a2;a3;b2;b3;c1;c2;c3",
		"error: ",
		"over black",
		"error: ",
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) || (w != "error: " && lines[i] != w) {
			t.Errorf("line %d: %q, want %q", i+1, lines[i], w)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	tests := [][]string{
		{"perft", "--game", "chess", "--depth", "2"},
		{"perft", "--game", "tictactoe"},
		{"perft", "--game", "tictactoe", "--depth", "x"},
		{"perft", "--game", "tictactoe", "--depth", "2", "--moves", "a1;a1"},
		{"perft", "--nonsense"},
		{"moves"},
		{"moves", "--game", "nope"},
		{"no-such-command"},
	}
	for _, args := range tests {
		code, out, errOut := runCLI(t, "", args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
		if strings.Count(errOut, "\n") != 1 || out != "" {
			t.Errorf("%v: want one line on standard error and nothing on standard output, got %q / %q", args, errOut, out)
		}
	}
}

// TestHelp: every command's --help goes to standard output, plain text
// for a shell (no terminal codes), with exit status 0.
func TestHelp(t *testing.T) {
	cases := [][]string{{"help"}, {"--help"}, {"moves", "-h"}, {"bench", "--help"}}
	for _, c := range commands() {
		cases = append(cases, []string{c.name, "--help"})
	}
	for name := range benchTargets() {
		cases = append(cases, []string{"bench", name, "--help"})
	}
	for _, args := range cases {
		code, out, errOut := runCLI(t, "", args...)
		if code != 0 || errOut != "" || !strings.Contains(out, "Usage") && !strings.Contains(out, "Commands") || strings.ContainsAny(out, "\r\x1b") {
			t.Errorf("%v: exit %d, output %q, standard error %q", args, code, out, errOut)
		}
	}
}

// TestHelpCommand: "help loop" is the loop's usage, and a flag whose
// default is drawn anew each time says so instead of printing one.
func TestHelpCommand(t *testing.T) {
	code, out, _ := runCLI(t, "", "help", "loop")
	_, want, _ := runCLI(t, "", "loop", "--help")
	if code != 0 || out != want || !strings.Contains(out, "Usage: flipzero loop") {
		t.Errorf("help loop: exit %d, %q", code, out)
	}
	if !strings.Contains(out, "default 0: drawn from the clock") || regexp.MustCompile(`default [0-9]{10,}`).MatchString(out) {
		t.Errorf("loop --help shows the seed as %q", out)
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, out, _ := runCLI(t, "", args...)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], "flipzero ") || !strings.Contains(lines[0], runtime.Version()) {
			t.Errorf("%v: exit %d, output %q", args, code, out)
			continue
		}
		// The second line names the kernels and the BLAS this machine runs.
		if !strings.HasPrefix(lines[1], "cpu backend: convolutions ") || !strings.Contains(lines[1], cpu.ConvInfo()) || !strings.Contains(lines[1], "; training ") || !strings.HasSuffix(lines[1], "; BLAS "+cpu.BLASInfo()) {
			t.Errorf("%v: second line %q, want the CPU's kernels (%s) and BLAS (%s)", args, lines[1], cpu.ConvInfo(), cpu.BLASInfo())
		}
	}
}

func TestFormatVersion(t *testing.T) {
	for _, tc := range []struct {
		version, revision string
		modified          bool
		want              string
	}{
		{"devel", "", false, "flipzero devel, built without version-control data"},
		{"devel", "0123456789abcdef", true, "flipzero devel 0123456789ab+changes ("},
		{"v1.2.0", "", false, "flipzero v1.2.0 ("},
	} {
		if got := formatVersion(tc.version, tc.revision, tc.modified); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%q, want it to start %q", got, tc.want)
		}
	}
}
