package arena

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/player"
)

func game(t testing.TB, name string) env.Game {
	t.Helper()
	g, err := games.ByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func named(t testing.TB, name string) player.Player {
	t.Helper()
	p, err := player.ParsePlayer(name, player.PlayerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checkRecord replays a record from the start: every move legal, a
// finished game over with the recorded result, an unfinished one not.
func checkRecord(t *testing.T, g env.Game, rec ArenaGame) {
	t.Helper()
	s, err := env.Play(g, strings.Join(rec.Moves, ";"))
	if err != nil {
		t.Fatalf("game %d: %v\n%s", rec.Index+1, err, rec.Line())
	}
	switch {
	case rec.Outcome == "unfinished":
		if s.Terminal() {
			t.Errorf("game %d: unfinished, but its moves end the game", rec.Index+1)
		}
	case rec.Resigned != env.NoPlayer:
		if rec.Outcome != g.PlayerName(rec.Resigned.Other()) {
			t.Errorf("game %d: %s resigned, but the outcome is %s", rec.Index+1, g.PlayerName(rec.Resigned), rec.Outcome)
		}
	case !s.Terminal():
		t.Errorf("game %d: outcome %s, but the game is not over", rec.Index+1, rec.Outcome)
	case env.ResultName(s) != rec.Outcome:
		t.Errorf("game %d: outcome %s, but the moves give %s", rec.Index+1, rec.Outcome, env.ResultName(s))
	}
}

// checkMatch checks what every arena result must satisfy: the games in
// order, all counted, colours alternating, each opening played from both
// sides, every record legal.
func checkMatch(t *testing.T, g env.Game, a, b player.Player, r ArenaResult, games int) {
	t.Helper()
	if len(r.Games) != games || r.Score.Games() != games {
		t.Fatalf("%d records and %d scored games, want %d", len(r.Games), r.Score.Games(), games)
	}
	for i, rec := range r.Games {
		if rec.Index != i {
			t.Fatalf("record %d has index %d", i, rec.Index)
		}
		want := [2]string{a.Name(), b.Name()}
		if i%2 == 1 {
			want[0], want[1] = want[1], want[0]
		}
		if rec.Players != want {
			t.Errorf("game %d: players %v, want %v", i+1, rec.Players, want)
		}
		if i%2 == 1 {
			prev := r.Games[i-1]
			if rec.OpeningPlies != prev.OpeningPlies || strings.Join(rec.Moves[:rec.OpeningPlies], ";") != strings.Join(prev.Moves[:prev.OpeningPlies], ";") {
				t.Errorf("games %d and %d do not share their opening: %v / %v", i, i+1, prev.Moves[:prev.OpeningPlies], rec.Moves[:rec.OpeningPlies])
			}
		}
		checkRecord(t, g, rec)
	}
}

// TestArenaStrength is the bar for the baselines: the stronger
// side scores at least 90% of 20 games.
func TestArenaStrength(t *testing.T) {
	tests := []struct {
		game, a, b string
		games      int
		minScore   float64
	}{
		{"yinsh-blitz", "mcts:2000", "random", 20, 0.9},
		{"othello", "mcts:2000", "random", 20, 0.9},
		{"yinsh", "alphabeta:2", "random", 20, 0.9},
		{"othello", "greedy", "random", 20, 0.6},
		{"yinsh-blitz", "greedy", "random", 20, 0.6},
		// The perfect player never loses; random draws now and then.
		{"tictactoe", "perfect", "random", 20, 0.75},
	}
	for _, tc := range tests {
		t.Run(tc.game+"/"+tc.a+"-"+tc.b, func(t *testing.T) {
			if testing.Short() && strings.HasPrefix(tc.a, "mcts") {
				t.Skip("mcts:2000 over 20 games takes a few seconds per game; run without -short")
			}
			g, a, b := game(t, tc.game), named(t, tc.a), named(t, tc.b)
			r, err := RunArena(context.Background(), g, a, b, ArenaOptions{Games: tc.games, Seed: 7})
			if err != nil {
				t.Fatal(err)
			}
			checkMatch(t, g, a, b, r, tc.games)
			elo, low, high := r.Score.Elo()
			t.Logf("%s %s vs %s: %+v, %.0f Elo [%.0f, %.0f]", tc.game, tc.a, tc.b, r.Score, elo, low, high)
			if r.Score.Fraction() < tc.minScore {
				t.Errorf("%s scored %.2f against %s, want at least %.2f", tc.a, r.Score.Fraction(), tc.b, tc.minScore)
			}
			if tc.a == "perfect" && r.Score.Losses > 0 {
				t.Errorf("the perfect player lost %d games", r.Score.Losses)
			}
		})
	}
}

func TestArenaOpenings(t *testing.T) {
	g := game(t, "othello")
	a, b := named(t, "random"), named(t, "greedy")
	tests := []struct {
		plies, want int
	}{
		{0, DefaultOpeningPlies(g)},
		{-1, 0},
		{7, 7},
	}
	for _, tc := range tests {
		r, err := RunArena(context.Background(), g, a, b, ArenaOptions{Games: 8, OpeningPlies: tc.plies, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		checkMatch(t, g, a, b, r, 8)
		openings := map[string]bool{}
		for _, rec := range r.Games {
			if rec.OpeningPlies != tc.want {
				t.Errorf("OpeningPlies %d: a game opened with %d random moves, want %d", tc.plies, rec.OpeningPlies, tc.want)
			}
			openings[strings.Join(rec.Moves[:rec.OpeningPlies], ";")] = true
		}
		if tc.want > 0 && len(openings) < 3 {
			t.Errorf("OpeningPlies %d: only %d distinct openings over 4 pairs", tc.plies, len(openings))
		}
	}
	// The same seed gives the same openings.
	if x, y := Opening(g, 6, 11, 3), Opening(g, 6, 11, 3); fmt.Sprint(x) != fmt.Sprint(y) {
		t.Errorf("Opening is not repeatable: %v / %v", x, y)
	}
}

func TestArenaSPRTStopsEarly(t *testing.T) {
	// Greedy against random in Othello: clearly better, not always winning.
	g := game(t, "othello")
	a, b := named(t, "greedy"), named(t, "random")
	sprt := DefaultSPRT()
	var progress []int
	r, err := RunArena(context.Background(), g, a, b, ArenaOptions{
		Games: 400, Seed: 5, SPRT: &sprt, Workers: 1, PerWorker: 2,
		Progress: func(n int, _ Score) { progress = append(progress, n) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Decision != 1 {
		t.Fatalf("SPRT decision %d after %+v, want +1 (greedy is better)", r.Decision, r.Score)
	}
	if n := r.Score.Games(); n >= 400 || n != len(r.Games) || sprt.Decide(r.Score) != 1 {
		t.Errorf("stopped after %d games (%d records), want fewer than 400 and a decided test", n, len(r.Games))
	}
	for i, n := range progress {
		if n != i+1 {
			t.Fatalf("progress reports %v, want 1, 2, 3, ...", progress)
		}
	}
}

// badPlayer plays a fixed action, legal or not.
type badPlayer struct{ action int }

func (p badPlayer) Name() string { return fmt.Sprintf("always-%d", p.action) }
func (p badPlayer) Seat(g env.Game, games int, seed uint64) (player.Seat, error) {
	return player.PerGame(p.Name(), func(env.Game, uint64) (player.Mover, error) {
		return fixedMover{action: p.action}, nil
	}).Seat(g, games, seed)
}

type fixedMover struct{ action int }

func (m fixedMover) NewGame(context.Context, env.State) error     { return nil }
func (m fixedMover) Move(context.Context, env.State) (int, error) { return m.action, nil }
func (m fixedMover) Observe(context.Context, int) error           { return nil }
func (m fixedMover) Close() error                                 { return nil }

func TestArenaIllegalMoveAndResignation(t *testing.T) {
	g := game(t, "tictactoe")
	tests := []struct {
		name    string
		action  int
		wantErr string
	}{
		{"illegal", 4, "chose b2, not one of the legal moves"},
		{"out of range", 99, "not one of the legal moves"},
		{"resign", player.Resign, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bad := badPlayer{tc.action}
			r, err := RunArena(context.Background(), g, bad, named(t, "random"),
				ArenaOptions{Games: 2, Workers: 1, PerWorker: 1, OpeningPlies: 1, Seed: 1})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if r.Score.Losses != 2 {
					t.Errorf("a player that resigns scored %+v, want 2 losses", r.Score)
				}
				for _, rec := range r.Games {
					checkRecord(t, g, rec)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
			}
			if len(r.Games) == 0 || r.Games[len(r.Games)-1].Outcome != "unfinished" {
				t.Fatalf("the game cut short is not kept as unfinished: %+v", r.Games)
			}
			for _, rec := range r.Games {
				checkRecord(t, g, rec)
			}
		})
	}
}

func TestArenaCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := RunArena(ctx, game(t, "othello"), named(t, "mcts:100"), named(t, "random"), ArenaOptions{Games: 4})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if r.Score.Games() != 0 {
		t.Errorf("a cancelled match scored %+v", r.Score)
	}
}

// A match stopped midway (an interrupt) says in one line how far it got
// and why, in place of every game under way reporting the same stop.
func TestArenaStoppedSaysHowFar(t *testing.T) {
	interrupt := errors.New("interrupt signal received")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	r, err := RunArena(ctx, game(t, "othello"), named(t, "mcts:20"), named(t, "random"), ArenaOptions{
		Games: 40, Workers: 2, PerWorker: 3, Seed: 1,
		OnGame: func(ArenaGame) error {
			cancel(interrupt)
			return nil
		},
	})
	if !errors.Is(err, context.Canceled) || !errors.Is(err, interrupt) {
		t.Fatalf("error %v: want context.Canceled and the stop's cause", err)
	}
	n := r.Score.Games()
	if n < 1 || n >= 40 {
		t.Fatalf("%d games finished: want the stop to land midway", n)
	}
	want := fmt.Sprintf("arena: stopped after %d of 40 games: interrupt signal received (context canceled)", n)
	if err.Error() != want {
		t.Errorf("error %q, want the one line %q", err, want)
	}
	unfinished := 0
	for _, g := range r.Games {
		if g.Outcome == "unfinished" {
			unfinished++
		}
	}
	if unfinished == 0 || unfinished+n != len(r.Games) {
		t.Errorf("%d games kept, %d of them unfinished, %d finished: want the games cut short kept too", len(r.Games), unfinished, n)
	}
}

func TestArenaOnGame(t *testing.T) {
	g := game(t, "tictactoe")
	var lines []string
	r, err := RunArena(context.Background(), g, named(t, "random"), named(t, "perfect"), ArenaOptions{
		Games: 6, Seed: 2,
		OnGame: func(rec ArenaGame) error {
			lines = append(lines, rec.Line())
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 6 {
		t.Fatalf("OnGame called %d times, want 6", len(lines))
	}
	for _, line := range lines {
		f := strings.Split(line, "\t")
		if len(f) != 5 || f[2] != "tictactoe" || (f[3] != "random" && f[3] != "perfect") || f[3] == f[4] {
			t.Errorf("record line %q: want moves, outcome, game, first player, second player", line)
		}
	}
	// Stopping from OnGame ends the match with its error.
	stop := errors.New("disk full")
	_, err = RunArena(context.Background(), g, named(t, "random"), named(t, "perfect"), ArenaOptions{
		Games: 6, OnGame: func(ArenaGame) error { return stop },
	})
	if !errors.Is(err, stop) {
		t.Errorf("error %v, want the one OnGame returned", err)
	}
	_ = r
}

func TestArenaBadOptions(t *testing.T) {
	g := game(t, "othello")
	if _, err := RunArena(context.Background(), g, named(t, "random"), named(t, "random"), ArenaOptions{}); err == nil {
		t.Error("0 games accepted")
	}
	// A player that cannot play the game says so.
	_, err := RunArena(context.Background(), g, named(t, "perfect"), named(t, "random"), ArenaOptions{Games: 2})
	if err == nil || !strings.Contains(err.Error(), "only solved games") {
		t.Errorf("perfect in othello: error %v", err)
	}
	_, err = RunArena(context.Background(), game(t, "tictactoe"), named(t, "greedy"), named(t, "random"), ArenaOptions{Games: 2})
	if err == nil || !strings.Contains(err.Error(), "no hand-written evaluation") {
		t.Errorf("greedy in tic-tac-toe: error %v", err)
	}
}

func TestParsePlayer(t *testing.T) {
	tests := []struct {
		name, want, wantErr string
	}{
		{"random", "random", ""},
		{"greedy", "greedy", ""},
		{"perfect", "perfect", ""},
		{"mcts:400", "mcts:400", ""},
		{"alphabeta:3", "alphabeta:3", ""},
		{"gtp:/usr/games/gtp-rhino -l 1", "gtp:/usr/games/gtp-rhino -l 1", ""},
		{`gtp:"/usr/games/gtp-rhino -l 1"`, "gtp:/usr/games/gtp-rhino -l 1", ""},
		{"mcts:0", "", "want mcts:N"},
		{"mcts:x", "", "want mcts:N"},
		{"alphabeta:-2", "", "want alphabeta:N"},
		{"gtp:", "", "no command"},
		{`gtp:"engine`, "", "unclosed quote"},
		{"models/gen7.ckpt", "", "unknown player"},
	}
	for _, tc := range tests {
		p, err := player.ParsePlayer(tc.name, player.PlayerOptions{})
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: error %v, want one saying %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.name, err)
			continue
		}
		if p.Name() != tc.want {
			t.Errorf("%q: named %q, want %q", tc.name, p.Name(), tc.want)
		}
	}
	// A file goes to the network loader.
	model := filepath.Join(t.TempDir(), "gen7.ckpt")
	if err := os.WriteFile(model, []byte("a network"), 0o644); err != nil {
		t.Fatal(err)
	}
	var loaded string
	p, err := player.ParsePlayer(model, player.PlayerOptions{Playouts: 50, LoadNetwork: func(path string, playouts int) (player.Player, error) {
		loaded = fmt.Sprintf("%s@%d", path, playouts)
		return player.RandomPlayer(), nil
	}})
	if err != nil || p == nil || loaded != model+"@50" {
		t.Errorf("network loader got %q, err %v", loaded, err)
	}
}

// BenchmarkArena measures whole matches: games and moves per second with
// the games of each goroutine searched in lockstep.
func BenchmarkArena(b *testing.B) {
	for _, tc := range []struct{ game, a, b string }{
		{"othello", "mcts:400", "random"},
		{"othello", "greedy", "random"},
		{"yinsh-blitz", "mcts:400", "random"},
		{"yinsh", "alphabeta:2", "random"},
	} {
		b.Run(tc.game+"/"+tc.a+"-"+tc.b, func(b *testing.B) {
			g, pa, pb := game(b, tc.game), named(b, tc.a), named(b, tc.b)
			games, moves := 0, 0
			for i := 0; i < b.N; i++ {
				r, err := RunArena(context.Background(), g, pa, pb, ArenaOptions{Games: 8, Seed: uint64(i)})
				if err != nil {
					b.Fatal(err)
				}
				for _, rec := range r.Games {
					moves += len(rec.Moves)
				}
				games += len(r.Games)
			}
			b.ReportMetric(float64(games)/b.Elapsed().Seconds(), "games/s")
			b.ReportMetric(float64(moves)/b.Elapsed().Seconds(), "moves/s")
		})
	}
}

// jittery wraps a player so that its seats take a random while over each
// move: the timing of a match changes from run to run, what the players
// choose must not.
type jittery struct{ player.Player }

func (j jittery) Seat(g env.Game, games int, seed uint64) (player.Seat, error) {
	s, err := j.Player.Seat(g, games, seed)
	return jitterySeat{s}, err
}

type jitterySeat struct{ player.Seat }

func (s jitterySeat) Moves(ctx context.Context, slots []int, states []env.State, moves []int) error {
	time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
	return s.Seat.Moves(ctx, slots, states, moves)
}

// TestArenaRepeatable: with the same seed and workers, a match of players
// that choose at random is played move for move the same however its
// workers' timing falls, one-player matches too.
func TestArenaRepeatable(t *testing.T) {
	twoPlayer := func() string {
		r, err := RunArena(context.Background(), game(t, "othello"), jittery{named(t, "random")}, jittery{named(t, "greedy")},
			ArenaOptions{Games: 24, Workers: 3, PerWorker: 2, Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		return recordLines(r.Games)
	}
	solo := func() string {
		r, err := RunSolo(context.Background(), game(t, "reversi-solitaire"), []player.Player{jittery{named(t, "random")}, jittery{named(t, "greedy")}},
			SoloOptions{Deals: 24, Workers: 3, PerWorker: 2, Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		return recordLines(r.Games)
	}
	for name, play := range map[string]func() string{"othello": twoPlayer, "reversi-solitaire": solo} {
		first := play()
		for run := 2; run <= 4; run++ {
			if again := play(); again != first {
				t.Fatalf("%s: run %d played other games than run 1 with the same seed:\n%s\n--- run 1\n%s", name, run, again, first)
			}
		}
	}
}

// recordLines is a match's games as its file holds them, a line each.
func recordLines[G interface{ Line() string }](games []G) string {
	lines := make([]string, len(games))
	for i, g := range games {
		lines[i] = g.Line()
	}
	return strings.Join(lines, "\n")
}
