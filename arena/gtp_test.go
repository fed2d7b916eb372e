package arena

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/flipzero/flipzero/player"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/tictactoe"
)

// fakeEngineEnv names the behaviour of the fake GTP engine: the test
// binary itself, run as TestHelperGTPEngine.
const fakeEngineEnv = "FLIPZERO_FAKE_GTP"

// TestHelperGTPEngine is not a test: run with fakeEngineEnv set, it is a
// GTP engine for tic-tac-toe that plays the first legal cell, misbehaving
// as the variable says: "exit:N" dies after N genmoves, "illegal" plays
// b2 whatever the board, "garbage" answers nonsense, "refuse-play"
// refuses every play, "resign" resigns, "hang" never answers genmove,
// "chatty" prints noise before its answers.
func TestHelperGTPEngine(t *testing.T) {
	mode := os.Getenv(fakeEngineEnv)
	if mode == "" {
		t.Skip("the fake GTP engine runs only as a child process of the GTP tests")
	}
	g := tictactoe.Game{}
	s := g.NewState()
	in := bufio.NewScanner(os.Stdin)
	genmoves := 0
	answer := func(ok bool, text string) {
		if mode == "chatty" {
			fmt.Println("thinking very hard...")
		}
		mark := "="
		if !ok {
			mark = "?"
		}
		fmt.Printf("%s %s\n\n", mark, text)
	}
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "protocol_version":
			answer(true, "2")
		case "clear_board":
			s = g.NewState()
			answer(true, "")
		case "play":
			if mode == "refuse-play" || len(f) != 3 {
				answer(false, "illegal move")
				continue
			}
			a, err := env.ParseLegal(s, f[2])
			if err != nil {
				answer(false, "illegal move")
				continue
			}
			s.Apply(a)
			answer(true, "")
		case "genmove":
			genmoves++
			if n, err := strconv.Atoi(strings.TrimPrefix(mode, "exit:")); err == nil && genmoves > n {
				fmt.Fprintln(os.Stderr, "fake engine: out of memory")
				os.Exit(3)
			}
			switch mode {
			case "illegal":
				answer(true, "B2")
			case "garbage":
				answer(true, "Z9")
			case "resign":
				answer(true, "resign")
			case "hang":
				time.Sleep(time.Hour)
			default:
				a := s.LegalActions(nil)[0]
				s.Apply(a)
				answer(true, strings.ToUpper(g.FormatAction(a)))
			}
		case "quit":
			answer(true, "")
			os.Exit(0)
		default:
			answer(false, "unknown command")
		}
	}
	os.Exit(0)
}

// fakeEngine is a GTP player running the fake engine in mode.
func fakeEngine(t *testing.T, mode string) player.Player {
	t.Helper()
	t.Setenv(fakeEngineEnv, mode)
	p, err := player.GTPPlayer(fmt.Sprintf("%q -test.run=^TestHelperGTPEngine$", os.Args[0]))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGTPFakeEngine(t *testing.T) {
	g := game(t, "tictactoe")
	tests := []struct {
		mode    string
		wantErr string
		// losses is what the engine scores when the match completes.
		losses int
	}{
		{mode: "normal"},
		{mode: "chatty"},
		{mode: "resign", losses: 4},
		{mode: "exit:3", wantErr: "stopped (exit status 3) during \"genmove"},
		{mode: "illegal", wantErr: "played b2, which is not legal here"},
		{mode: "garbage", wantErr: "answered \"Z9\" to \"genmove"},
		{mode: "refuse-play", wantErr: "refused \"play"},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			engine := fakeEngine(t, tc.mode)
			r, err := RunArena(context.Background(), g, engine, named(t, "random"),
				ArenaOptions{Games: 4, Workers: 1, PerWorker: 1, Seed: 9})
			for _, rec := range r.Games {
				checkRecord(t, g, rec)
			}
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				checkMatch(t, g, engine, named(t, "random"), r, 4)
				if tc.losses > 0 && r.Score.Losses != tc.losses {
					t.Errorf("score %+v, want %d losses", r.Score, tc.losses)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one saying %s", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			// The record so far is kept: the finished games count, the
			// one cut short is there, unfinished.
			if len(r.Games) == 0 || r.Games[len(r.Games)-1].Outcome != "unfinished" {
				t.Fatalf("no unfinished game kept: %+v", r.Games)
			}
			if r.Score.Games() != len(r.Games)-1 {
				t.Errorf("%d games scored of %d kept, want all but the unfinished one", r.Score.Games(), len(r.Games))
			}
		})
	}
}

func TestGTPEngineDeathNamesItsLastWords(t *testing.T) {
	engine := fakeEngine(t, "exit:0")
	_, err := RunArena(context.Background(), game(t, "tictactoe"), engine, named(t, "random"),
		ArenaOptions{Games: 1, Workers: 1, OpeningPlies: -1})
	if err == nil || !strings.Contains(err.Error(), "fake engine: out of memory") {
		t.Fatalf("error %v, want it to quote the engine's standard error", err)
	}
}

func TestGTPHangingEngineTimesOut(t *testing.T) {
	engine := fakeEngine(t, "hang")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := RunArena(ctx, game(t, "tictactoe"), engine, named(t, "random"),
		ArenaOptions{Games: 1, Workers: 1, OpeningPlies: -1})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want the context's deadline", err)
	}
	// The engine that does not answer "quit" is killed.
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v to give up on a hanging engine", d)
	}
}

func TestGTPMissingEngine(t *testing.T) {
	p, err := player.GTPPlayer("/nonexistent/engine -x")
	if err != nil {
		t.Fatal(err)
	}
	_, err = RunArena(context.Background(), game(t, "othello"), p, named(t, "random"), ArenaOptions{Games: 2})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/engine") {
		t.Errorf("error %v, want one naming the engine", err)
	}
}

const grhino = "/usr/games/gtp-rhino"

func needGRhino(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath(grhino); err != nil {
		t.Skip("GRhino is not installed (apt-get install grhino; .ci/run installs it)")
	}
}

// TestGRhinoArena plays Othello against a real GTP engine.
func TestGRhinoArena(t *testing.T) {
	needGRhino(t)
	g := game(t, "othello")
	engine, err := player.ParsePlayer(`gtp:"`+grhino+` -l 1"`, player.PlayerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a := named(t, "greedy")
	r, err := RunArena(context.Background(), g, a, engine, ArenaOptions{Games: 4, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	checkMatch(t, g, a, engine, r, 4)
	t.Logf("greedy vs GRhino level 1: %+v", r.Score)
}
