package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/arena"
	"github.com/flipzero/flipzero/engine"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/gtp"
	"github.com/flipzero/flipzero/loop"
	"github.com/flipzero/flipzero/nn/cpu"
	"github.com/flipzero/flipzero/player"
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
	err := loop.Loop(context.Background(), loop.LoopOptions{Backend: cpu.Backend(),
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

	// analyze --model searches with the model's network; its game comes
	// from the file.
	code, out, errOut = runCLI(t, "", "analyze", "--model", model, "--moves", "a1;b2", "--playouts", "40")
	if code != 0 {
		t.Fatalf("analyze --model: exit %d: %s", code, errOut)
	}
	g, _ := games.ByName("tictactoe")
	s, _ := env.Play(g, "a1;b2")
	if _, err := env.ParseLegal(s, strings.SplitN(out, "\n", 2)[0]); err != nil || strings.Count(out, "\n") != 8 {
		t.Errorf("analyze --model: the best move is not legal (%v) or the lines are not one per legal move:\n%s", err, out)
	}
	for _, args := range [][]string{
		{"analyze", "--model", model, "--game", "othello", "--playouts", "4"},
		{"analyze", "--model", filepath.Join(t.TempDir(), "none"), "--playouts", "4"},
		{"export", "--run", run, "--checkpoint", "7", "--out", model},
	} {
		if code, _, errOut := runCLI(t, "", args...); code != 2 || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, %q; want 2 and one line", args, code, errOut)
		}
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
	s, _ = env.Play(g, "b2")
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
	board, legend, _ := strings.Cut(answers[14], "X black, O white")
	if strings.Count(board, "X") != 1 || strings.Count(board, "O") != 1 || !strings.Contains(legend, "black to decide") {
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
			e, err := engine.NewModelEngine(model, nil, engine.EngineOptions{Backend: cpu.Backend(), Playouts: 2})
			if err != nil {
				t.Fatal(err)
			}
			sess := startGTPSession(t, e)
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
				action, err := env.ParseLegal(s, env.AnyCase(g, answer))
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

// gtpSession talks to gtp.Serve over pipes, one command at a time.
type gtpSession struct {
	in  *io.PipeWriter
	out *bufio.Reader
}

func startGTPSession(t *testing.T, e *engine.Engine) gtpSession {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- gtp.Serve(context.Background(), gtpController{e}, inR, outW, io.Discard)
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		if err := <-done; err != nil {
			t.Errorf("gtp server: %v", err)
		}
	})
	return gtpSession{in: inW, out: bufio.NewReader(outR)}
}

// handle sends one command and returns its answer's text, or its error.
func (s gtpSession) handle(_ context.Context, command string, args []string) (string, error) {
	if _, err := fmt.Fprintln(s.in, strings.Join(append([]string{command}, args...), " ")); err != nil {
		return "", err
	}
	var lines []string
	for {
		line, err := s.out.ReadString('\n')
		if err != nil {
			return "", err
		}
		line = strings.TrimRight(line, "\n")
		if line == "" {
			break
		}
		lines = append(lines, line)
	}
	answer := strings.Join(lines, "\n")
	if strings.HasPrefix(answer, "?") {
		return "", errors.New(strings.TrimSpace(answer[1:]))
	}
	return strings.TrimSpace(strings.TrimPrefix(answer, "=")), nil
}

// TestModelCommandsUsageErrors checks the one-line errors and exit status
// 2 of the commands that take a model.
func TestModelCommandsUsageErrors(t *testing.T) {
	junk := filepath.Join(t.TempDir(), "junk.fznet")
	os.WriteFile(junk, []byte("FZNET but not really"), 0o644)
	model := untrainedModel(t, "othello")
	for _, args := range [][]string{
		{"gtp"}, {"gtp", "--model", junk}, {"gtp", "--model", model, "--playouts", "-1"},
		{"export"}, {"export", "--run", t.TempDir(), "--out", "x"}, {"info"}, {"info", junk}, {"info", model, model},
		{"serve"}, {"serve", "--model", model, "--addr", "256.0.0.1:80"}, {"serve", "--model", model, "--as", "red"},
	} {
		code, out, errOut := runCLI(t, "", args...)
		if code != 2 || strings.Count(errOut, "\n") != 1 || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and one line on standard error", args, code, out, errOut)
		}
	}
}

// TestGTPPassLeftOut plays Othello to a position where Black must pass
// and then tells the engine White's move without the pass, as Othello
// controllers do: the engine passes for Black by itself, and undo takes
// back both.
func TestGTPPassLeftOut(t *testing.T) {
	model := untrainedModel(t, "othello")
	var script strings.Builder
	moves := strings.Split("d3;c3;e6;d2;d1;e1;b3;c1", ";")
	for i, m := range moves {
		script.WriteString("play " + []string{"b", "w"}[i%2] + " " + strings.ToUpper(m) + "\n")
	}
	script.WriteString("genmove b\nshowboard\nplay w d6\nshowboard\nundo\nshowboard\n")
	code, out, errOut := runCLI(t, script.String(), "gtp", "--model", model, "--playouts", "4")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	answers := gtpAnswers(t, out)[len(moves):]
	for i, a := range gtpAnswers(t, out)[:len(moves)] {
		if a != "= " {
			t.Fatalf("play %s: %q", moves[i], a)
		}
	}
	if answers[0] != "= PASS" {
		t.Errorf("genmove b with no black move: %q, want = PASS", answers[0])
	}
	g, _ := games.ByName("othello")
	for _, b := range []struct {
		answer int
		moves  string
	}{{1, "pass"}, {3, "pass;d6"}, {5, "pass"}} {
		want, _ := env.Play(g, strings.Join(moves, ";")+";"+b.moves)
		board := strings.TrimPrefix(answers[b.answer], "= \n")
		if !strings.HasPrefix(board, want.(env.Display).Picture()[:len(want.(env.Display).Picture())-len("black to move\n")]) {
			t.Errorf("showboard after %s:\n%s\nwant\n%s", b.moves, board, want.(env.Display).Picture())
		}
	}
	if answers[2] != "= " || answers[4] != "= " {
		t.Errorf("play w d6 after a pass left out: %q; undo: %q", answers[2], answers[4])
	}
}

// TestGTPAgainstGRhino plays a real match: the arena's GTP client runs
// "flipzero gtp" with an Othello model against GRhino at level 1 for two
// games, one with each colour.
func TestGTPAgainstGRhino(t *testing.T) {
	const grhino = "/usr/games/gtp-rhino"
	if _, err := os.Stat(grhino); err != nil {
		t.Skip("GRhino is not installed (apt-get install grhino; .ci/run installs it)")
	}
	model := untrainedModel(t, "othello")
	// The test binary acts as flipzero when this is set (see TestMain);
	// GRhino ignores it.
	t.Setenv("FLIPZERO_AS_COMMAND", "1")
	ours, err := player.ParsePlayer(fmt.Sprintf(`gtp:'%s' gtp --model '%s' --playouts 16`, os.Args[0], model), player.PlayerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := player.ParsePlayer(`gtp:"`+grhino+` -l 1"`, player.PlayerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := games.ByName("othello")
	r, err := arena.RunArena(context.Background(), g, ours, theirs, arena.ArenaOptions{Games: 2, Workers: 1, PerWorker: 1, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if r.Score.Games() != 2 || len(r.Games) != 2 {
		t.Fatalf("score %+v after %d games, want 2 games", r.Score, len(r.Games))
	}
	for i, game := range r.Games {
		if game.Outcome == "unfinished" && game.Resigned == env.NoPlayer {
			t.Fatalf("game %d unfinished", i)
		}
		// Every move of the record is legal, and the outcome is the
		// position's.
		s, err := env.Play(g, strings.Join(game.Moves, ";"))
		if err != nil {
			t.Fatalf("game %d: %v", i, err)
		}
		if game.Resigned == env.NoPlayer && (!s.Terminal() || env.ResultName(s) != game.Outcome) {
			t.Errorf("game %d: outcome %s, the moves give %s (over: %v)", i, game.Outcome, env.ResultName(s), s.Terminal())
		}
		t.Logf("game %d: %s (%s vs %s), %d moves", i, game.Outcome, game.Players[0], game.Players[1], len(game.Moves))
	}
	t.Logf("flipzero (untrained, 16 playouts) vs GRhino level 1: %+v", r.Score)
}

// TestGTPYinshThroughArenaClient plays flipzero's own GTP engine with a
// YINSH blitz model through the arena's GTP client, so several decisions
// per turn and YINSH's notation cross the protocol both ways.
func TestGTPYinshThroughArenaClient(t *testing.T) {
	model := untrainedModel(t, "yinsh-blitz")
	t.Setenv("FLIPZERO_AS_COMMAND", "1")
	ours, err := player.ParsePlayer(fmt.Sprintf(`gtp:'%s' gtp --model '%s' --playouts 4`, os.Args[0], model), player.PlayerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := games.ByName("yinsh-blitz")
	r, err := arena.RunArena(context.Background(), g, ours, player.RandomPlayer(), arena.ArenaOptions{Games: 2, Workers: 1, PerWorker: 1, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i, game := range r.Games {
		s, err := env.Play(g, strings.Join(game.Moves, ";"))
		if err != nil {
			t.Fatalf("game %d: %v", i, err)
		}
		if !s.Terminal() || env.ResultName(s) != game.Outcome {
			t.Errorf("game %d: outcome %s after %d moves, the moves give %s (over: %v)", i, game.Outcome, len(game.Moves), env.ResultName(s), s.Terminal())
		}
	}
	if r.Score.Games() != 2 {
		t.Errorf("%d games finished, want 2", r.Score.Games())
	}
}

// TestGTPMoveErrorsAndBoard: a move GTP cannot read is a syntax error, a
// readable one the rules forbid an illegal move; showboard says once who
// moves and which letter is which colour.
func TestGTPMoveErrorsAndBoard(t *testing.T) {
	model := untrainedModel(t, "othello")
	code, out, errOut := runCLI(t, "play black z99\nplay black a1\nshowboard\n", "gtp", "--model", model, "--playouts", "4")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	answers := gtpAnswers(t, out)
	if len(answers) != 3 || !strings.HasPrefix(answers[0], "? syntax error") || !strings.HasPrefix(answers[1], "? illegal move") {
		t.Fatalf("answers %q: want a syntax error for z99 and an illegal move for a1", answers)
	}
	board := answers[2]
	if strings.Count(board, "black to move") != 1 || strings.Contains(board, "to decide") || !strings.Contains(board, "X black, O white") {
		t.Errorf("showboard:\n%s", board)
	}
}
