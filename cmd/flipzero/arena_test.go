package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/arena"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/mcts"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/player"
	"github.com/flipzero/flipzero/runfolder"
)

func TestArenaCommand(t *testing.T) {
	dir := t.TempDir()
	records := filepath.Join(dir, "games.txt")
	run := filepath.Join(dir, "run")
	code, out, errOut := runCLI(t, "", "arena", "--game", "tictactoe", "--a", "perfect", "--b", "random",
		"--games", "10", "--records", records, "--run", run)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "perfect vs random in tictactoe: 10 games") {
		t.Fatalf("output:\n%s", out)
	}
	var wins, draws, losses int
	if _, err := fmt.Sscanf(lines[1], "perfect W-D-L %d-%d-%d", &wins, &draws, &losses); err != nil || losses != 0 {
		t.Fatalf("score line %q: want perfect W-D-L W-D-0 (perfect never loses): %v", lines[1], err)
	}
	if wins+draws != 10 {
		t.Errorf("%d wins and %d draws in 10 games", wins, draws)
	}
	if !strings.HasPrefix(lines[2], "score ") || !strings.HasPrefix(lines[3], "elo ") {
		t.Errorf("score and elo lines: %q, %q", lines[2], lines[3])
	}
	raw, err := os.ReadFile(records)
	if err != nil {
		t.Fatal(err)
	}
	recs := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(recs) != 10 {
		t.Fatalf("%d records, want 10", len(recs))
	}
	for i, line := range recs {
		f := strings.Split(line, "\t")
		if len(f) != 5 || f[2] != "tictactoe" {
			t.Fatalf("record %q: want moves, outcome, game, first, second", line)
		}
		s, err := env.Play(tictactoe.Game{}, f[0])
		if err != nil || !s.Terminal() || env.ResultName(s) != f[1] {
			t.Errorf("record %d %q does not replay to its outcome (%v)", i+1, line, err)
		}
		if first := []string{"perfect", "random"}[i%2]; f[3] != first {
			t.Errorf("game %d: first player %s, want %s (colours alternate)", i+1, f[3], first)
		}
	}
	// The match went into the run: ratings rate it.
	code, out, errOut = runCLI(t, "", "ratings", "--run", run)
	if code != 0 {
		t.Fatalf("ratings: exit %d: %s", code, errOut)
	}
	rows := strings.Split(strings.TrimSpace(out), "\n")
	if len(rows) != 3 || !strings.HasPrefix(rows[1], "perfect ") || !strings.HasPrefix(rows[2], "random ") {
		t.Fatalf("ratings table:\n%s", out)
	}
	if f := strings.Fields(rows[0]); len(f) != 6 || f[5] != "W-D-L" {
		t.Errorf("ratings heading %q: want the games' W-D-L last", rows[0])
	}
	// Each player's games from its own side.
	if f := strings.Fields(rows[2]); f[1] != "+0" || f[4] != "10" || f[5] != fmt.Sprintf("%d-%d-%d", losses, draws, wins) {
		t.Errorf("random row %q: want +0 Elo over 10 games, W-D-L %d-%d-%d", rows[2], losses, draws, wins)
	}
	if f := strings.Fields(rows[1]); !strings.HasPrefix(f[1], "+") || f[1] == "+0" || f[5] != fmt.Sprintf("%d-%d-%d", wins, draws, losses) {
		t.Errorf("perfect row %q: want a positive rating, W-D-L %d-%d-%d", rows[1], wins, draws, losses)
	}
}

func TestArenaCommandSPRT(t *testing.T) {
	code, out, errOut := runCLI(t, "", "arena", "--game", "othello", "--a", "greedy", "--b", "random", "--games", "400", "--sprt")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "sprt accepted H1") || strings.Contains(out, ": 400 games") {
		t.Errorf("greedy against random should stop early with H1:\n%s", out)
	}
}

func TestArenaAndRatingsUsageErrors(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt")
	if err := os.MkdirAll(corrupt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(corrupt, "matches.jsonl"), []byte("{\"a\":\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mixed := filepath.Join(dir, "mixed")
	for _, m := range []arena.MatchRecord{
		{Game: "othello", A: "greedy", B: "random", Wins: 3},
		{Game: "tictactoe", A: "perfect", B: "random", Wins: 3},
	} {
		if err := arena.AppendMatch(runfolder.Folder(mixed).Matches(), m); err != nil {
			t.Fatal(err)
		}
	}
	if code, out, errOut := runCLI(t, "", "ratings", "--run", mixed, "--game", "othello"); code != 0 || !strings.Contains(out, "greedy") || strings.Contains(out, "perfect") {
		t.Errorf("ratings of one game of a mixed run: exit %d, %q %q", code, out, errOut)
	}
	tests := [][]string{
		{"arena", "--a", "random", "--b", "greedy"},
		{"arena", "--game", "othello", "--b", "greedy"},
		{"arena", "--game", "othello", "--a", "random", "--b", "nonsense"},
		{"arena", "--game", "othello", "--a", "perfect", "--b", "random"},
		{"arena", "--game", "tictactoe", "--a", "greedy", "--b", "random"},
		{"arena", "--game", "othello", "--a", "mcts:0", "--b", "random"},
		{"arena", "--game", "othello", "--a", "random", "--b", "random"},
		{"arena", "--game", "othello", "--a", "random", "--b", "greedy", "--games", "0"},
		{"arena", "--game", "othello", "--a", "random", "--b", "greedy", "--sprt", "--elo1", "-5"},
		{"arena", "--game", "othello", "--a", "gtp:/nonexistent/engine", "--b", "greedy"},
		{"ratings"},
		{"ratings", "--run", filepath.Join(dir, "missing")},
		{"ratings", "--run", corrupt},
		{"ratings", "--run", mixed},
		{"ratings", "--run", mixed, "--game", "reversi"},
	}
	for _, args := range tests {
		code, out, errOut := runCLI(t, "", args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errOut)
		}
		if strings.Count(errOut, "\n") != 1 || out != "" {
			t.Errorf("%v: want one line on standard error and nothing on standard output, got %q / %q", args, errOut, out)
		}
	}
}

// TestArenaEngineDiesRecordsKept runs an "engine" that answers two
// commands and exits: the arena fails with one line, and the record of
// the game cut short is written.
func TestArenaEngineDiesRecordsKept(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the engine here is a shell script, which Windows does not run")
	}
	dir := t.TempDir()
	engine := filepath.Join(dir, "engine.sh")
	script := "#!/bin/sh\nread l; printf '= 2\\n\\n'; read l; printf '=\\n\\n'; echo 'engine: giving up' >&2; exit 3\n"
	if err := os.WriteFile(engine, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	records := filepath.Join(dir, "games.txt")
	code, out, errOut := runCLI(t, "", "arena", "--game", "tictactoe", "--a", "gtp:"+engine, "--b", "random",
		"--games", "2", "--workers", "1", "--concurrent", "1", "--records", records, "--progress=false")
	if code != 1 || out != "" || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("exit %d, stdout %q, stderr %q: want exit 1 and one line on standard error", code, out, errOut)
	}
	if !strings.Contains(errOut, "exit status 3") || !strings.Contains(errOut, "engine: giving up") {
		t.Errorf("error %q should say how the engine ended and quote it", errOut)
	}
	raw, err := os.ReadFile(records)
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Split(strings.TrimSpace(string(raw)), "\t")
	if len(f) != 5 || f[1] != "unfinished" || f[0] == "" {
		t.Errorf("records %q: want the game cut short, unfinished, with its opening move", raw)
	}
}

// tictactoeModel writes an untrained tic-tac-toe network's model file.
func tictactoeModel(t *testing.T) string {
	t.Helper()
	g := tictactoe.Game{}
	net, err := nn.New(g, nn.DefaultConfig(g), 3)
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(t.TempDir(), "gen0.model")
	if err := nn.SaveModel(model, net, 0, nil); err != nil {
		t.Fatal(err)
	}
	return model
}

func TestArenaModelFilePlayer(t *testing.T) {
	model := tictactoeModel(t)
	code, out, errOut := runCLI(t, "", "arena", "--game", "tictactoe", "--a", model, "--b", "random", "--games", "4", "--playouts", "16")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.HasPrefix(out, model+" vs random in tictactoe: 4 games") {
		t.Errorf("output:\n%s", out)
	}
	// A model of another game is bad input.
	code, _, errOut = runCLI(t, "", "arena", "--game", "othello", "--a", model, "--b", "random")
	if code != 2 || !strings.Contains(errOut, model) {
		t.Errorf("a tic-tac-toe model in othello: exit %d, %q", code, errOut)
	}
}

// TestArenaSearchSettings sets a network against itself searching
// otherwise: each side is named by its settings and plays with them.
func TestArenaSearchSettings(t *testing.T) {
	model := tictactoeModel(t)
	code, out, errOut := runCLI(t, "", "arena", "--game", "tictactoe", "--a", model, "--a-search", "cpuct: 3, leaves_per_tree: 1",
		"--b", model, "--b-search", "{mode: gumbel}", "--games", "4", "--playouts", "16")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if want := model + " {cpuct: 3, leaves_per_tree: 1} vs " + model + " {mode: gumbel} in tictactoe: 4 games"; !strings.HasPrefix(out, want) {
		t.Errorf("output:\n%s\nwant it to begin %q", out, want)
	}

	p, err := withSearch("a", "cpuct: 3", player.RolloutPlayer(10))
	if err != nil {
		t.Fatal(err)
	}
	sp := p.(*player.SearchPlayer)
	want := mcts.RolloutConfig()
	want.CPUCT = 3
	if sp.Config != want || sp.Label != "mcts:10 {cpuct: 3}" {
		t.Errorf("mcts:10 with cpuct 3: %s searching with %+v, want %+v", sp.Label, sp.Config, want)
	}
}

func TestPrintScoreElo(t *testing.T) {
	g := tictactoe.Game{}
	a, b := player.RandomPlayer(), player.PerfectPlayer()
	tests := []struct {
		score arena.Score
		want  string
	}{
		// Winning all of 40 games: 0.05^(1/40) = 0.9278 at least, +444 Elo.
		{arena.Score{Wins: 40}, "elo > +444 (every game won; 95% bound)"},
		{arena.Score{Losses: 40}, "elo < -444 (every game lost; 95% bound)"},
		{arena.Score{Wins: 5, Losses: 5}, "elo +0 ["},
		{arena.Score{Draws: 8}, "elo +0 [-79, +79]"}, // all draws: still an interval of some width
	}
	for _, tc := range tests {
		var out strings.Builder
		printScore(&out, g, a, b, arena.ArenaResult{Score: tc.score}, nil, 0)
		if !strings.Contains(out.String(), "\n"+tc.want) {
			t.Errorf("%+v: output\n%s\nwant a line starting %q", tc.score, out.String(), tc.want)
		}
	}
}

// A match cut short resumes from its records: the games there count and
// are not played again, a line a crash cut short is left out, and the
// file ends with every game once. Records of another match, or a file
// that holds games when --resume is not given, are refused.
func TestArenaResumesFromRecords(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "full.txt")
	args := []string{"arena", "--game", "othello", "--a", "greedy", "--b", "random", "--games", "10", "--seed", "5"}
	if code, _, errOut := runCLI(t, "", append(args, "--records", full)...); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	raw, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) != 10 {
		t.Fatalf("%d records, want 10", len(lines))
	}
	// A kill after four games, in the middle of writing the fifth.
	cut := filepath.Join(dir, "cut.txt")
	kept := []string{lines[6], lines[1], lines[8], lines[3]}
	if err := os.WriteFile(cut, []byte(strings.Join(kept, "\n")+"\n"+lines[4][:len(lines[4])/2]), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI(t, "", append(args, "--records", cut)...)
	if code != 2 || !strings.Contains(errOut, "--resume") {
		t.Fatalf("a records file holding games, without --resume: exit %d, %q; want 2 and a word of --resume", code, errOut)
	}
	code, out, errOut := runCLI(t, "", append(args, "--records", cut, "--resume")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, ": 10 games in") || !strings.Contains(out, "(4 of them played before") {
		t.Errorf("output %q: want 10 games, 4 of them played before (resumed)", out)
	}
	if !strings.Contains(errOut, "resuming from "+cut+": 4 of the 10 games played before, 6 to play") {
		t.Errorf("standard error %q: want the resumption said before the first new game", errOut)
	}
	if !strings.Contains(errOut, "1 line of") {
		t.Errorf("standard error %q: want the line cut short said to be left out", errOut)
	}
	raw, err = os.ReadFile(cut)
	if err != nil {
		t.Fatal(err)
	}
	after := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(after) != 10 {
		t.Fatalf("%d records after resuming, want 10:\n%s", len(after), raw)
	}
	for _, line := range kept {
		if !slices.Contains(after, line) {
			t.Errorf("game %q, played before, lost or changed", line)
		}
	}
	g, err := games.ByName("othello")
	if err != nil {
		t.Fatal(err)
	}
	first := [2]int{}
	for _, line := range after {
		rec, err := arena.ParseGame(g, line)
		if err != nil || rec.Outcome == "unfinished" {
			t.Fatalf("record %q: %v", line, err)
		}
		if rec.Players[0] == "greedy" {
			first[0]++
		} else {
			first[1]++
		}
	}
	if first != [2]int{5, 5} {
		t.Errorf("greedy first in %d games and random in %d, want 5 each", first[0], first[1])
	}
	other := []string{"arena", "--game", "othello", "--a", "greedy", "--b", "mcts:5", "--games", "10", "--seed", "5", "--records", cut, "--resume"}
	code, _, errOut = runCLI(t, "", other...)
	if code != 2 || !strings.Contains(errOut, "not this match's") {
		t.Errorf("records of another match resumed: exit %d, %q", code, errOut)
	}
}

// A match stopped by an interrupt says in one line how far it got and
// how to go on: with its records, the command that resumes it; without,
// that its games were not kept.
func TestArenaStoppedSaysHowToGoOn(t *testing.T) {
	ctx, stop := context.WithCancel(context.Background())
	stop()
	records := filepath.Join(t.TempDir(), "m.txt")
	args := []string{"arena", "--game", "othello", "--a", "greedy", "--b", "random", "--games", "10", "--progress=false"}
	for _, tc := range []struct {
		extra []string
		want  string
	}{
		{[]string{"--records", records}, "W-D-L 0-0-0 so far, the games in " + records + ": the same command with --resume plays the rest"},
		{nil, "so far, not kept (--records keeps"},
	} {
		var out, errOut bytes.Buffer
		code := run(ctx, append(args, tc.extra...), stdio{strings.NewReader(""), &out, &errOut})
		msg := errOut.String()
		if code != 1 || strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "flipzero arena: arena: stopped after 0 of 10 games: context canceled; ") || !strings.Contains(msg, tc.want) {
			t.Errorf("%v: exit %d, standard error %q; want 1 and one line saying how far and %q", tc.extra, code, msg, tc.want)
		}
	}
	if code, _, errOut := runCLI(t, "", append(args, "--records", records, "--resume")...); code != 0 {
		t.Errorf("resuming the stopped match: exit %d, %s", code, errOut)
	}
}

// Where standard error is no terminal (a log), the arena says there in
// plain lines that the match started and how it ended, with the score;
// --progress=false, nothing.
func TestArenaProgressLines(t *testing.T) {
	args := []string{"arena", "--game", "othello", "--a", "greedy", "--b", "random", "--games", "6"}
	code, out, errOut := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if len(lines) != 2 || lines[0] != "greedy vs random: started, 6 to do" {
		t.Fatalf("standard error %q: want the match's start and end", errOut)
	}
	score := strings.Split(out, "\n")[1] // "greedy W-D-L W-D-L"
	var w, d, l int
	if _, err := fmt.Sscanf(score, "greedy W-D-L %d-%d-%d", &w, &d, &l); err != nil {
		t.Fatalf("score line %q: %v", score, err)
	}
	if want := fmt.Sprintf(", W-D-L %d-%d-%d)", w, d, l); !strings.HasPrefix(lines[1], "greedy vs random: 6 of 6 in ") || !strings.HasSuffix(lines[1], want) {
		t.Errorf("last line %q, want 6 of 6 and the score %q", lines[1], want)
	}
	if code, _, errOut := runCLI(t, "", append(args, "--progress=false")...); code != 0 || errOut != "" {
		t.Errorf("--progress=false: exit %d, standard error %q: want nothing there", code, errOut)
	}
}
