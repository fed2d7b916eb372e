package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/selfplay"
)

// gtpAnswers splits a GTP transcript into its answers: each starts with
// = or ? and ends with a blank line.
func gtpAnswers(t *testing.T, out string) []string {
	t.Helper()
	if !strings.HasSuffix(out, "\n\n") && out != "" {
		t.Fatalf("transcript does not end with a blank line: %q", out)
	}
	answers := strings.Split(strings.TrimSuffix(out, "\n\n"), "\n\n")
	for _, a := range answers {
		if a == "" || (a[0] != '=' && a[0] != '?') {
			t.Fatalf("answer %q does not start with = or ?", a)
		}
	}
	return answers
}

// TestExportAndGTPTicTacToe trains a tiny tic-tac-toe run for one
// generation, exports it, reads it back with info, and plays it through
// GTP commands: the engine's moves are legal, play and undo change the
// board the way they should, and bad commands are refused with ? and
// change nothing.
func TestExportAndGTPTicTacToe(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	err := selfplay.Loop(context.Background(), selfplay.LoopOptions{
		ConfigPath: tinyRunConfig(t, 24), RunDir: run, MaxGenerations: 1, Seed: 4,
	})
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(t.TempDir(), "ttt.fznet")
	code, out, errOut := runCLI(t, "", "export", "--run", run, "--out", model)
	if code != 0 || !strings.Contains(out, "generation=1") || !strings.Contains(out, "samples_total=") {
		t.Fatalf("export: exit %d: %s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "", "info", model)
	if code != 0 {
		t.Fatalf("info: exit %d: %s", code, errOut)
	}
	fields := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		key, value, _ := strings.Cut(line, ":")
		fields[key] = strings.TrimSpace(value)
	}
	for key, want := range map[string]string{"game": "tictactoe", "kind": "exported model (batch norm folded)",
		"generation": "1", "architecture": "2 blocks"} {
		if !strings.HasPrefix(fields[key], want) {
			t.Errorf("info: %s is %q, want %q:\n%s", key, fields[key], want, out)
		}
	}
	if !strings.HasSuffix(fields["kind"], "checksum ok") || fields["steps"] == "0" || fields["steps"] == "" ||
		fields["samples_total"] == "" || fields["samples_total"] == "0" || fields["trained"] == "" {
		t.Errorf("info lacks the checksum, steps, positions seen or training date:\n%s", out)
	}

	script := strings.Join([]string{
		"protocol_version",
		"1 name",
		"known_command genmove",
		"known_command frobnicate",
		"boardsize 3",
		"boardsize 8",
		"clear_board",
		"play black b2",
		"genmove white",
		"play black b2", // occupied
		"play white c3", // not white's turn
		"play black zz",
		"genmove black",
		"undo",
		"showboard",
		"frobnicate",
		"# a comment line",
		"final_score",
		"quit",
		"genmove white", // after quit: never answered
	}, "\n") + "\n"
	code, out, errOut = runCLI(t, script, "gtp", "--model", model, "--playouts", "32")
	if code != 0 {
		t.Fatalf("gtp: exit %d: %s", code, errOut)
	}
	answers := gtpAnswers(t, out)
	if len(answers) != 18 {
		t.Fatalf("%d answers, want 18:\n%s", len(answers), out)
	}
	want := []string{"= 2", "=1 flipzero", "= true", "= false", "= ", "? ", "= ", "= ", "", "? ", "? ", "? ", "", "= ", "", "? ", "= ", "= "}
	for i, w := range want {
		if w != "" && !strings.HasPrefix(answers[i], w) {
			t.Errorf("answer %d: %q, want it to start with %q", i+1, answers[i], w)
		}
	}
	g, _ := games.ByName("tictactoe")
	s, _ := env.Play(g, "b2")
	white := strings.ToLower(strings.TrimPrefix(answers[8], "= "))
	if _, err := env.ParseLegal(s, white); err != nil {
		t.Fatalf("genmove white answered %q: %v", answers[8], err)
	}
	s.Apply(mustParse(t, g, white))
	black := strings.ToLower(strings.TrimPrefix(answers[12], "= "))
	if _, err := env.ParseLegal(s, black); err != nil {
		t.Fatalf("genmove black answered %q: %v", answers[12], err)
	}
	// After undo of black's genmove the board has b2 (X) and white's move.
	board := answers[14]
	if strings.Count(board, "X") != 1 || strings.Count(board, "O") != 1 || !strings.Contains(board, "black to decide") {
		t.Errorf("showboard after undo:\n%s", board)
	}
	if !strings.Contains(errOut, "flipzero: white "+white) || !strings.Contains(errOut, "32 playouts") {
		t.Errorf("standard error lacks the evaluation of the engine's moves:\n%s", errOut)
	}
}

func mustParse(t *testing.T, g env.Game, text string) int {
	t.Helper()
	a, err := g.ParseAction(text)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestGTPPlaysWholeGames lets the engine play itself through GTP to the
// end of a game of each family, as a controller does: genmove for the
// player to decide, the same colour again while it is that player's
// decision (YINSH removals). Every answer is checked against the rules,
// and the final score against the winner.
func TestGTPPlaysWholeGames(t *testing.T) {
	for _, name := range []string{"othello", "yinsh-blitz"} {
		t.Run(name, func(t *testing.T) {
			model := untrainedModel(t, name)
			g, _ := games.ByName(name)
			s := g.NewState()
			e, err := selfplay.NewModelEngine(model, selfplay.EngineOptions{Playouts: 2})
			if err != nil {
				t.Fatal(err)
			}
			sess := &gtpSession{engine: e, log: new(strings.Builder)}
			ctx := context.Background()
			if _, err := sess.handle(ctx, "clear_board", nil); err != nil {
				t.Fatal(err)
			}
			for plies := 0; !s.Terminal(); plies++ {
				if plies > 2000 {
					t.Fatal("the game does not end")
				}
				color := g.PlayerName(s.ToMove())
				answer, err := sess.handle(ctx, "genmove", []string{color})
				if err != nil {
					t.Fatalf("genmove %s at ply %d: %v", color, plies, err)
				}
				action, err := env.ParseLegal(s, playerMove(g, answer))
				if err != nil {
					t.Fatalf("genmove %s at ply %d answered %q: %v\n%s", color, plies, answer, err, s)
				}
				s.Apply(action)
			}
			score, _ := sess.handle(ctx, "final_score", nil)
			want := "0"
			if w := s.Winner(); w != env.NoPlayer {
				want = strings.ToUpper(g.PlayerName(w))[:1] + "+"
			}
			if !strings.HasPrefix(score, want) {
				t.Errorf("final score %q, winner %s", score, env.ResultName(s))
			}
			if _, err := sess.handle(ctx, "genmove", []string{"black"}); err == nil {
				t.Error("genmove after the end of the game")
			}
		})
	}
}

func TestGTPUsageErrors(t *testing.T) {
	junk := filepath.Join(t.TempDir(), "junk.fznet")
	os.WriteFile(junk, []byte("FZNET but not really"), 0o644)
	for _, args := range [][]string{{"gtp"}, {"gtp", "--model", junk}, {"export", "--run", t.TempDir(), "--out", "x"}, {"info"}, {"info", junk}} {
		code, out, errOut := runCLI(t, "", args...)
		if code != 2 || strings.Count(errOut, "\n") != 1 || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and one line on standard error", args, code, out, errOut)
		}
	}
}
