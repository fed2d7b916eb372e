package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInputErrorsExit2 walks the commands with bad flags, bad configs,
// missing and corrupt files: each is refused with exit status 2 and one
// line on standard error that names what was wrong.
func TestInputErrorsExit2(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good, err := os.ReadFile("../../configs/tictactoe.yaml")
	if err != nil {
		t.Fatal(err)
	}
	chess := write("chess.yaml", strings.Replace(string(good), "game: tictactoe", "game: chess", 1))
	badKey := write("badkey.yaml", strings.Replace(string(good), "cpuct: 1.5", "cpuct: 1.5\n  cpucct: 2", 1))
	badValue := write("badvalue.yaml", strings.Replace(string(good), "noise_weight: 0.25", "noise_weight: 7", 1))
	notYAML := write("notyaml.yaml", "game: [tictactoe\n  :::")
	corrupt := write("corrupt.ckpt", "FZNET and then nonsense")
	missing := filepath.Join(dir, "missing.ckpt")
	notRun := t.TempDir()
	tests := []struct {
		args []string
		want string // what the message must name
	}{
		{[]string{"loop", "--config", filepath.Join(dir, "nope.yaml"), "--run", filepath.Join(dir, "r1")}, "nope.yaml"},
		{[]string{"loop", "--config", chess, "--run", filepath.Join(dir, "r2")}, "chess"},
		{[]string{"loop", "--config", badKey, "--run", filepath.Join(dir, "r3")}, "unknown key search.cpucct; did you mean search.cpuct?"},
		{[]string{"loop", "--config", badValue, "--run", filepath.Join(dir, "r4")}, "search.noise_weight"},
		{[]string{"loop", "--config", notYAML, "--run", filepath.Join(dir, "r5")}, "notyaml.yaml"},
		{[]string{"loop", "--run", notRun}, notRun},
		{[]string{"loop", "--run", corrupt}, "corrupt.ckpt is a file, not a run folder"},
		{[]string{"loop", "--config", chess, "--run", corrupt}, "corrupt.ckpt is a file, not a run folder"},
		{[]string{"loop", "--run", filepath.Join(dir, "r6"), "--generations", "x"}, "--generations"},
		{[]string{"loop", "--bogus"}, "bogus"},
		{[]string{"arena", "--game", "chess", "--a", "random", "--b", "random"}, "chess"},
		{[]string{"arena", "--game", "othello", "--a", missing, "--b", "random"}, "missing.ckpt"},
		{[]string{"arena", "--game", "othello", "--a", corrupt, "--b", "random"}, "corrupt.ckpt"},
		{[]string{"arena", "--game", "othello", "--a", "mcts:x", "--b", "random"}, "mcts:x"},
		{[]string{"arena", "--game", "othello", "--a", "greedy", "--a-search", "cpuct: 2", "--b", "random"}, "--a-search: greedy does not search"},
		{[]string{"arena", "--game", "othello", "--a", "random", "--b", "mcts:10", "--b-search", "cpucct: 2"}, "cpucct"},
		{[]string{"arena", "--game", "othello", "--a", "random", "--b", "mcts:10", "--b-search", "cpuct: -1"}, "cpuct"},
		{[]string{"arena", "--game", "reversi-solitaire", "--a", "greedy", "--b-search", "cpuct: 2"}, "--b-search"},
		{[]string{"arena", "--game", "othello", "--a", "greedy", "--b", "random", "--resume"}, "--resume needs --records"},
		{[]string{"arena", "--game", "reversi-solitaire", "--a", "greedy", "--resume"}, "--resume: reversi-solitaire is a one-player game"},
		{[]string{"export", "--run", filepath.Join(dir, "none"), "--out", filepath.Join(dir, "m")}, "none"},
		{[]string{"export", "--run", notRun, "--out", filepath.Join(dir, "m"), "--format", "tflite"}, "tflite"},
		{[]string{"export", "--run", notRun, "--out", filepath.Join(dir, "m")}, notRun + " is not a run folder (no config.yaml)"},
		// A file given as --run is said to be one, by every command that
		// takes a run, not met as "open FILE/models: not a directory".
		{[]string{"export", "--run", corrupt, "--out", filepath.Join(dir, "m")}, "--run: " + corrupt + " is a file, not a run folder"},
		{[]string{"plot", "--run", corrupt}, "--run: " + corrupt + " is a file, not a run folder"},
		{[]string{"ratings", "--run", corrupt}, "--run: " + corrupt + " is a file, not a run folder"},
		{[]string{"serve", "--run", corrupt}, "--run: " + corrupt + " is a file, not a run folder"},
		{[]string{"arena", "--game", "tictactoe", "--a", "perfect", "--b", "random", "--run", corrupt}, "--run: " + corrupt + " is a file, not a run folder"},
		// A player that is neither a kind nor a file lists the kinds.
		{[]string{"arena", "--game", "tictactoe", "--a", "perfect", "--b", "nosuchplayer"}, `--b: unknown player "nosuchplayer": no such model file, nor one of random, greedy, perfect, mcts:N, alphabeta:D, gtp:COMMAND`},
		{[]string{"arena", "--game", "tictactoe", "--a", "perfect", "--b", "greddy"}, "did you mean greedy?"},
		{[]string{"info", missing}, "missing.ckpt"},
		{[]string{"info", corrupt}, "corrupt.ckpt"},
		{[]string{"play", "--model", missing}, "missing.ckpt"},
		{[]string{"gtp", "--model", corrupt}, "corrupt.ckpt"},
		{[]string{"serve", "--model", missing}, "missing.ckpt"},
		{[]string{"gtp", "--model", missing, "--search", "mode: sideways"}, "sideways"},
		{[]string{"analyze", "--game", "othello", "--moves", "z9", "--playouts", "10"}, "z9"},
		{[]string{"analyze", "--model", corrupt, "--playouts", "10"}, "corrupt.ckpt"},
		{[]string{"perft", "--game", "chess", "--depth", "2"}, "chess"},
		{[]string{"perft", "--game", "othello", "--depth", "-1"}, "depth"},
		{[]string{"moves", "--game", "chess"}, "chess"},
		{[]string{"bench", "nn", "--game", "chess"}, "chess"},
		{[]string{"bench", "selfplay", "--game", "tictactoe", "--config", badKey}, "unknown key search.cpucct; did you mean search.cpuct?"},
		{[]string{"bench", "warp"}, "warp"},
		{[]string{"plot", "--run", filepath.Join(dir, "none")}, "none"},
		{[]string{"ratings", "--run", filepath.Join(dir, "none")}, "none"},
		{[]string{"convert", "--from", "wthor", missing}, "missing.ckpt"},
		{[]string{"convert", "--from", "pgn", missing}, "pgn"},
		{[]string{"frobnicate"}, "frobnicate"},
	}
	for _, tt := range tests {
		code, _, errOut := runCLI(t, "", tt.args...)
		if code != 2 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tt.want) {
			t.Errorf("%s: exit %d, standard error %q; want 2 and one line naming %q", strings.Join(tt.args, " "), code, errOut, tt.want)
		}
	}
}
