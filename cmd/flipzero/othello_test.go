package main

import (
	"strings"
	"testing"
)

func TestPerftOthelloGames(t *testing.T) {
	tests := []struct {
		game  string
		moves string
		want  []string // counts for depths 1..len(want)
	}{
		// The rules doc's counts from the start.
		{"reversi", "", []string{"4", "12", "56", "244", "1396", "8200"}},
		{"othello", "", []string{"4", "12", "56", "244", "1396", "8200"}},
		// The package's tests check these three ways.
		{"reversi-single", "", []string{"4", "12", "64", "340", "2244"}},
		// After f5 the counts are a quarter of the start's, the four
		// openings being symmetric.
		{"othello", "f5", []string{"3", "14", "61", "349"}},
		// A finished game is one leaf at every depth.
		{"othello", "d3;c3;b3;d2;e1;d6;d7;e3;f4", []string{"1", "1", "1"}},
	}
	for _, tt := range tests {
		args := []string{"perft", "--game", tt.game, "--depth", string(rune('0' + len(tt.want)))}
		if tt.moves != "" {
			args = append(args, "--moves", tt.moves)
		}
		code, out, errOut := runCLI(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != len(tt.want) {
			t.Fatalf("%v: %d lines, want %d:\n%s", args, len(lines), len(tt.want), out)
		}
		for i, line := range lines {
			f := strings.Fields(line)
			if len(f) != 3 || f[0] != string(rune('1'+i)) || f[1] != tt.want[i] {
				t.Errorf("%v: line %q, want %d %s <seconds>", args, line, i+1, tt.want[i])
			}
		}
	}
}

func TestMovesOthelloGames(t *testing.T) {
	// passAhead leaves Black with no move while White has one (found by
	// random play).
	const passAhead = "c4;c3;f5;b4;a4;a5;b2;a3"
	// tie ends 32-32 (found by random play).
	const tie = "d3;c3;f5;d6;c5;f4;e3;f3;f6;c4;e7;g7;g3;g5;b2;h3;g4;c7;h4;f7;g6;b5;d2;d7;a6;b3;g2;e6;e8;d1;b7;a5;c2;h2;b4;f2;e2;a7;g8;h7;d8;b6;e1;c1;f8;a3;h1;h5;b1;c8;a1;h8;h6;f1;b8;g1;c6;a2;a4;a8"
	const wipeout = "d3;c3;b3;d2;e1;d6;d7;e3;f4"
	tests := []struct {
		game  string
		input []string
		want  []string // a prefix "error: " matches any error
	}{
		{"othello", []string{"", "f5", "f5;f5", "z9", passAhead, passAhead + ";pass", passAhead + ";a1", wipeout, tie},
			[]string{"c4;d3;e6;f5", "d6;f4;f6", "error: ", "error: ", "pass", "c1;d2;f4", "error: ", "over black", "over draw"}},
		{"reversi", []string{"", wipeout, tie, tie + ";pass"},
			[]string{"c4;d3;e6;f5", "over black", "over white", "error: "}},
		{"reversi-single", []string{"", "f5", "f5:w", "f5:w;d6:n", "F5:W;pass"},
			[]string{"c4:e;d3:s;e6:n;f5:w", "error: ", "d6:n;f4:w;f6:nw", "c3:se;c4:e;c5:e;c6:ne;c7:ne", "error: "}},
	}
	for _, tt := range tests {
		code, out, errOut := runCLI(t, strings.Join(tt.input, "\n")+"\n", "moves", "--game", tt.game)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tt.game, code, errOut)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != len(tt.want) {
			t.Fatalf("%s: %d lines, want %d:\n%s", tt.game, len(lines), len(tt.want), out)
		}
		for i, w := range tt.want {
			if w == "error: " && strings.HasPrefix(lines[i], w) && strings.Count(lines[i], "\n") == 0 {
				continue
			}
			if lines[i] != w {
				t.Errorf("%s line %d (%q): %q, want %q", tt.game, i+1, tt.input[i], lines[i], w)
			}
		}
	}
}

func TestUsageErrorsOthello(t *testing.T) {
	for _, args := range [][]string{
		{"perft", "--game", "othello", "--depth", "2", "--moves", "f5;f5"},
		{"perft", "--game", "reversi-single", "--depth", "2", "--moves", "f5"},
		{"perft", "--game", "reversi", "--depth", "0"},
	} {
		code, out, errOut := runCLI(t, "", args...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line on stderr", args, code, out, errOut)
		}
	}
}
