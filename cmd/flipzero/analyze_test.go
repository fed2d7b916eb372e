package main

import (
	"strconv"
	"strings"
	"testing"
)

func TestAnalyze(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		best     string // "" when any legal move will do
		children int
		playouts int
	}{
		{"black wins at a3", []string{"--game", "tictactoe", "--moves", "a1;b1;a2;b2", "--playouts", "500"}, "a3", 5, 500},
		{"white must block a3", []string{"--game", "tictactoe", "--moves", "a1;b2;a2", "--playouts", "2000", "--evaluator", "rollout"}, "a3", 6, 2000},
		{"uniform evaluator", []string{"--game", "tictactoe", "--playouts", "300", "--evaluator", "uniform"}, "", 9, 300},
		{"othello start", []string{"--game", "othello", "--playouts", "200", "--rollouts", "2"}, "", 4, 200},
	}
	for _, tt := range tests {
		code, out, errOut := runCLI(t, "", append([]string{"analyze"}, tt.args...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tt.name, code, errOut)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != 1+tt.children {
			t.Fatalf("%s: %d lines, want the best action and %d children:\n%s", tt.name, len(lines), tt.children, out)
		}
		if tt.best != "" && lines[0] != tt.best {
			t.Errorf("%s: first line %q, want %q", tt.name, lines[0], tt.best)
		}
		sum, last := 0, int(^uint(0)>>1)
		for _, line := range lines[1:] {
			f := strings.Fields(line)
			if len(f) != 4 {
				t.Fatalf("%s: line %q, want action, visits, prior, value", tt.name, line)
			}
			visits, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatalf("%s: visits in %q: %v", tt.name, line, err)
			}
			if visits > last {
				t.Errorf("%s: lines not sorted by visits:\n%s", tt.name, out)
			}
			last = visits
			sum += visits
			if p, err := strconv.ParseFloat(f[2], 64); err != nil || p <= 0 || p > 1 {
				t.Errorf("%s: prior in %q", tt.name, line)
			}
			if v, err := strconv.ParseFloat(f[3], 64); f[3] != "-" && (err != nil || v < -1 || v > 1) {
				t.Errorf("%s: value in %q", tt.name, line)
			}
		}
		if lines[0] != strings.Fields(lines[1])[0] {
			t.Errorf("%s: best %q is not the most visited %q", tt.name, lines[0], lines[1])
		}
		if sum != tt.playouts {
			t.Errorf("%s: visits sum to %d, want %d", tt.name, sum, tt.playouts)
		}
	}
}

func TestAnalyzeAndBenchUsageErrors(t *testing.T) {
	tests := [][]string{
		{"analyze", "--game", "tictactoe"},
		{"analyze", "--game", "tictactoe", "--playouts", "-3"},
		{"analyze", "--game", "chess", "--playouts", "10"},
		{"analyze", "--game", "tictactoe", "--playouts", "10", "--evaluator", "oracle"},
		{"analyze", "--game", "tictactoe", "--playouts", "10", "--rollouts", "0"},
		{"analyze", "--game", "tictactoe", "--playouts", "10", "--moves", "a1;a1"},
		{"analyze", "--game", "tictactoe", "--playouts", "10", "--moves", "a1;b1;a2;b2;a3"},
		{"bench", "mcts", "--game", "tictactoe", "--evaluator", "oracle"},
		{"bench", "mcts", "--game", "tictactoe", "--playouts", "0"},
		{"bench", "mcts"},
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

func TestBenchMCTS(t *testing.T) {
	for _, eval := range []string{"uniform", "rollout"} {
		code, out, errOut := runCLI(t, "", "bench", "mcts", "--game", "tictactoe", "--evaluator", eval, "--playouts", "2000", "--seconds", "0.05")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", eval, code, errOut)
		}
		for _, want := range []string{"simulations/s", "bytes per node", "nodes per simulation"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: output lacks %q:\n%s", eval, want, out)
			}
		}
	}
}

// With a model, the search proves what it can: an untrained network sees
// nothing, but black's a3 after a1;b1;a2;b2 ends the game, so it is
// reported proven won, and white's moves other than the block at a3
// after a1;b2;a2 are proven lost.
func TestAnalyzeModelProves(t *testing.T) {
	model := untrainedModel(t, "tictactoe")
	tests := []struct {
		moves, best string
		proof       map[string]string // action → its proof (others may be proven or not)
	}{
		{"a1;b1;a2;b2", "a3", map[string]string{"a3": "win"}},
		{"a1;b2;a2", "a3", map[string]string{"b1": "loss", "c1": "loss", "c2": "loss", "b3": "loss", "c3": "loss"}},
	}
	for _, tt := range tests {
		code, out, errOut := runCLI(t, "", "analyze", "--model", model, "--moves", tt.moves, "--playouts", "300")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tt.moves, code, errOut)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if lines[0] != tt.best {
			t.Errorf("%s: best %q, want %q", tt.moves, lines[0], tt.best)
		}
		for _, line := range lines[1:] {
			f := strings.Fields(line)
			if want, ok := tt.proof[f[0]]; ok && (len(f) != 6 || f[4] != "proven" || f[5] != want) {
				t.Errorf("%s: line %q, want it proven %s", tt.moves, line, want)
			}
		}
	}
}
