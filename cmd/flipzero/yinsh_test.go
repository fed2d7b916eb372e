package main

import (
	"strings"
	"testing"
)

// blitzGame is a blitz game from boardspace.net (2005): black's row G2–G6
// ends it.
const blitzGame = "P F6;P G6;P J7;P G5;P I8;P H6;P C4;P G4;P F4;P G3;" +
	"M C4 C7;M G6 H7;M F6 E6;M G5 H5;M C7 G7;M G4 H4;M I8 D8;M G3 G2;M F4 F5;M G2 B2;R G2 G6;X H4"

func TestPerftYinsh(t *testing.T) {
	tests := []struct {
		args []string
		want []string // "<depth> <count>" of each line, from the rules document
	}{
		{[]string{"--game", "yinsh", "--depth", "2"}, []string{"1 85", "2 7140"}},
		{[]string{"--game", "yinsh-blitz", "--depth", "2"}, []string{"1 85", "2 7140"}},
		{[]string{"--game", "yinsh", "--depth", "2", "--moves", "P C4;P G4;P H8;P G6;P J7;P C2;P F4;P I10;P C7;P E2"}, []string{"1 88", "2 6078"}},
	}
	for _, tt := range tests {
		code, out, errOut := runCLI(t, "", append([]string{"perft"}, tt.args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tt.args, code, errOut)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != len(tt.want) {
			t.Fatalf("%v: %d lines, want %d:\n%s", tt.args, len(lines), len(tt.want), out)
		}
		for i, w := range tt.want {
			if f := strings.Fields(lines[i]); len(f) != 3 || f[0]+" "+f[1] != w {
				t.Errorf("%v: line %q, want %q <seconds>", tt.args, lines[i], w)
			}
		}
	}
}

func TestMovesYinsh(t *testing.T) {
	placed := "P C4;P G4;P H8;P G6;P J7;P C2;P F4;P I10;P C7;P E2"
	input := strings.Join([]string{
		"",
		placed,
		"P A1",
		"P E5;P E5",
		blitzGame,
		strings.TrimSuffix(blitzGame, ";X H4"),
		blitzGame + ";M F5 G5",
	}, "\n") + "\n"
	for _, game := range []string{"yinsh", "yinsh-blitz"} {
		code, out, errOut := runCLI(t, input, "moves", "--game", game)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", game, code, errOut)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != 7 {
			t.Fatalf("%s: %d lines, want 7:\n%s", game, len(lines), out)
		}
		start := strings.Split(lines[0], ";")
		if len(start) != 85 || start[0] != "P A2" || start[84] != "P K9" {
			t.Errorf("%s: start: %d moves, %q … %q", game, len(start), start[0], start[len(start)-1])
		}
		for i := 1; i < len(start); i++ {
			if start[i-1] >= start[i] {
				t.Errorf("%s: start moves not in byte order at %q", game, start[i])
			}
		}
		if moves := strings.Split(lines[1], ";"); len(moves) != 88 || !strings.HasPrefix(lines[1], "M C4 ") {
			t.Errorf("%s: after the placements: %d moves, want 88, starting with C4's", game, len(moves))
		}
		for i := 2; i <= 3; i++ {
			if !strings.HasPrefix(lines[i], "error: ") {
				t.Errorf("%s: line %d %q, want an error", game, i+1, lines[i])
			}
		}
		// Removing the ring: black's five rings.
		if lines[5] != "X B2;X H4;X H5;X H6;X H7" {
			t.Errorf("%s: ring removals %q", game, lines[5])
		}
		if game == "yinsh-blitz" {
			if lines[4] != "over black" || !strings.HasPrefix(lines[6], "error: ") {
				t.Errorf("blitz: lines %q, %q, want over black and an error", lines[4], lines[6])
			}
		} else if strings.HasPrefix(lines[4], "over") || !strings.HasPrefix(lines[6], "M B2 ") {
			t.Errorf("yinsh: the game goes on after one row: %q, %q", lines[4], lines[6])
		}
	}
}
