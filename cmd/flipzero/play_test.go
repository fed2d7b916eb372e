package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/nn"
)

// untrainedModel writes an exported model of a small untrained network
// for game: it plays legal moves, which is all a protocol test needs.
func untrainedModel(t *testing.T, game string) string {
	t.Helper()
	g, err := games.ByName(game)
	if err != nil {
		t.Fatal(err)
	}
	net, err := nn.New(g, nn.Config{Blocks: 1, Filters: 8, PolicyFilters: 2, ValueFilters: 1, ValueHidden: 8}, 3)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), game+".fznet")
	if err := nn.SaveFolded(path, net.Fold(), 0, map[string]string{"generation": "0"}); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPlayScriptedGames(t *testing.T) {
	ttt := untrainedModel(t, "tictactoe")
	oth := untrainedModel(t, "othello")
	yin := untrainedModel(t, "yinsh")
	tests := []struct {
		name  string
		args  []string
		input string
		// want are pieces of the output in the order they must appear.
		want []string
	}{
		{
			name:  "tic-tac-toe: bad input, a move, undo, hint, resign",
			args:  []string{"--model", ttt, "--playouts", "16"},
			input: "zz\nb2\nundo\nundo\nhint\nB2\nresign\n",
			want: []string{
				"flipzero plays tictactoe as white; you are black",
				"   a b c", "black, your move: ",
				`bad tic-tac-toe move "zz"`, "Legal: a1, b1, c1, a2, b2", "Try again",
				"flipzero (white) plays ", "eval ", " for white (~", "16 playouts",
				// undo takes back the answer and the move: an empty board again.
				"1  . . .\n   a b c", "nothing to undo",
				"hint: ", " for black",
				"flipzero (white) plays ",
				"You resign: white wins.",
			},
		},
		{
			name:  "tic-tac-toe as white: the bot opens, illegal repeat, end of input",
			args:  []string{"--model", ttt, "--as", "white", "--seconds", "0.05"},
			input: "moves\n",
			want:  []string{"flipzero plays tictactoe as black; you are white", "flipzero (black) plays ", "white, your move: ", "legal: "},
		},
		{
			name:  "othello: a move in capitals, an illegal one",
			args:  []string{"--model", oth, "--playouts", "8"},
			input: "a1\nF5\nquit\n",
			want: []string{
				"  a b c d e f g h\n1 . . .", "black, your move: ",
				`move "a1" is not legal here`, "Legal: d3, c4, f5, e6",
				"flipzero (white) plays ",
			},
		},
		{
			name:  "yinsh: the hexagonal board, a placement, a bad point",
			args:  []string{"--model", yin, "--playouts", "8"},
			input: "P A1\np f6\nquit\n",
			want: []string{
				"flipzero plays yinsh as black; you are white",
				"A   B   C   D   E   F   G   H   I   J   K\n", "10 .    11 .\n", " 5 .       .       .       .       .       . 10\n",
				"A   B   C   D   E   F   G   H   I   J   K\n", "W B rings, w b markers",
				"white, place a ring (P E5): ",
				`point "A1" is not on the board`,
				"flipzero (black) plays P ",
				"W", "Rings removed: white 0, black 0 (of 3); markers left 51",
			},
		},
	}
	sol := untrainedModel(t, "reversi-solitaire")
	tests = append(tests, struct {
		name  string
		args  []string
		input string
		want  []string
	}{
		name:  "reversi-solitaire: hint, the bot's move, undo, a placement and its reveals, stop",
		args:  []string{"--model", sol, "--playouts", "8", "--seed", "5"},
		input: "hint\nbot\nundo\nd3:gold\nmoves\nresign\n",
		want: []string{
			"You play reversi-solitaire; flipzero advises",
			"  a b c d e f g h\n1 . . # . # . # .", "captured 0, score 0 of 24, 24 face down",
			"player, place a gold or a black disc (f5:gold): ",
			"hint: ", "expects a score of ", " of 24, 8 playouts",
			"flipzero plays ", "expects a score of ",
			// undo takes back the bot's placement and what it turned up.
			"captured 0, score 0 of 24, 24 face down",
			"chance: reveal:", "4 . # . g g . . #", "22 face down",
			"legal: ",
			"You stop: score 0 of 24.",
		},
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tt.input, append([]string{"play"}, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s\n%s", code, errOut, out)
			}
			rest := out
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("output lacks %q (in order) after what came before:\n%s", w, out)
				}
				rest = rest[i+len(w):]
			}
		})
	}
}

// TestPlayToTheEnd plays a whole tic-tac-toe game from a script that tries
// every cell in turn: the bot answers each move and the game ends with a
// result.
func TestPlayToTheEnd(t *testing.T) {
	model := untrainedModel(t, "tictactoe")
	script := strings.Repeat("a1\nb1\nc1\na2\nb2\nc2\na3\nb3\nc3\n", 1)
	code, out, errOut := runCLI(t, script, "play", "--model", model, "--playouts", "4")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "Game over: ") {
		t.Fatalf("the game did not end:\n%s", out)
	}
	// Replay what was played from the transcript: every move legal.
	g, _ := games.ByName("tictactoe")
	s := g.NewState()
	for _, line := range strings.Split(out, "\n") {
		if i := strings.Index(line, "plays "); i >= 0 && strings.HasPrefix(line, "flipzero (") {
			move := strings.Fields(line[i+len("plays "):])[0]
			if _, err := env.ParseLegal(s, move); err != nil {
				t.Fatalf("the bot's move %s: %v", move, err)
			}
		}
	}
}

func TestPlayUsageErrors(t *testing.T) {
	model := untrainedModel(t, "tictactoe")
	tests := [][]string{
		{"play"},
		{"play", "--model", filepath.Join(t.TempDir(), "missing.fznet")},
		{"play", "--model", model, "--as", "purple"},
		{"play", "--model", model, "--playouts", "0"},
		{"play", "--model", model, "--seconds", "-1"},
	}
	for _, args := range tests {
		code, out, errOut := runCLI(t, "", args...)
		if code != 2 || strings.Count(errOut, "\n") != 1 || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and one line on standard error", args, code, out, errOut)
		}
	}
}

// TestPlaySolitaireToTheEnd lets the bot play every move of a solitaire:
// the game ends with its score, and the transcript's moves and reveals
// replay by the rules.
func TestPlaySolitaireToTheEnd(t *testing.T) {
	model := untrainedModel(t, "reversi-solitaire")
	code, out, errOut := runCLI(t, strings.Repeat("bot\n", 80), "play", "--model", model, "--playouts", "4", "--seed", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	g, _ := games.ByName("reversi-solitaire")
	s := g.NewState()
	for _, line := range strings.Split(out, "\n") {
		var moves []string
		// The prompt has no line's end: the person's answer ends it.
		switch i := strings.Index(line, "flipzero plays "); {
		case i >= 0:
			moves = strings.Fields(line[i:])[2:3]
		case strings.HasPrefix(line, "chance: "):
			moves = strings.Split(strings.TrimPrefix(line, "chance: "), ", ")
		}
		for _, m := range moves {
			a, err := env.ParseLegal(s, m)
			if err != nil {
				t.Fatalf("%s: %v\n%s", m, err, out)
			}
			s.Apply(a)
		}
	}
	if !s.Terminal() || !strings.Contains(out, "Game over: "+"score "+strconv.FormatFloat(s.(env.Scorer).Score(), 'g', -1, 64)+" of 24.") {
		t.Fatalf("the transcript does not end the game with its score (over: %v):\n%s", s.Terminal(), out)
	}
}
