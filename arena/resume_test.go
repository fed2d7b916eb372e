package arena

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env"
)

// playedMatch is a finished othello match of greedy against random.
func playedMatch(t *testing.T, games int) (env.Game, ArenaOptions, ArenaResult) {
	t.Helper()
	g := game(t, "othello")
	opts := ArenaOptions{Games: games, Workers: 2, Seed: 7}
	r, err := RunArena(context.Background(), g, named(t, "greedy"), named(t, "random"), opts)
	if err != nil {
		t.Fatal(err)
	}
	return g, opts, r
}

func TestParseGameReadsWhatLineWrites(t *testing.T) {
	g, _, r := playedMatch(t, 12)
	for _, rec := range r.Games {
		got, err := ParseGame(g, rec.Line())
		if err != nil {
			t.Fatalf("game %d: %v\n%s", rec.Index+1, err, rec.Line())
		}
		got.Index, got.OpeningPlies = rec.Index, rec.OpeningPlies
		if got.Line() != rec.Line() || got.Resigned != rec.Resigned || got.Players != rec.Players {
			t.Errorf("game %d: read back as %+v, want %+v", rec.Index+1, got, rec)
		}
	}
}

func TestParseGameRefusesDamagedLines(t *testing.T) {
	g := game(t, "othello")
	finished := playedGame(t, g)
	fields := strings.Split(finished, "\t")
	moves := strings.Split(fields[0], ";")
	short := strings.Join(moves[:6], ";")
	toMove, other := g.PlayerName(0), g.PlayerName(1) // six plies: the first player to move again
	cases := []struct {
		name, line, want string
	}{
		{"too few fields", strings.Join(fields[:4], "\t"), "4 tab-separated fields"},
		{"another game", strings.Join([]string{fields[0], fields[1], "yinsh", fields[3], fields[4]}, "\t"), `"yinsh"`},
		{"illegal move", strings.Join([]string{"a1;" + fields[0], fields[1], fields[2], fields[3], fields[4]}, "\t"), "move 1"},
		{"wrong result", strings.Join([]string{fields[0], flip(g, fields[1]), fields[2], fields[3], fields[4]}, "\t"), "but the moves end in"},
		{"draw before the end", strings.Join([]string{short, "draw", fields[2], fields[3], fields[4]}, "\t"), "before the game's end"},
		{"the resigner as winner", strings.Join([]string{short, toMove, fields[2], fields[3], fields[4]}, "\t"), "before the game's end"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseGame(g, c.line)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
		})
	}
	resigned, err := ParseGame(g, strings.Join([]string{short, other, fields[2], fields[3], fields[4]}, "\t"))
	if err != nil || resigned.Resigned != 0 {
		t.Errorf("a win by the player not to move reads as %+v, %v: want the player to move resigned", resigned, err)
	}
	unfinished, err := ParseGame(g, strings.Join([]string{short, "unfinished", fields[2], fields[3], fields[4]}, "\t"))
	if err != nil || unfinished.Outcome != "unfinished" {
		t.Errorf("an unfinished game reads as %+v, %v", unfinished, err)
	}
}

// playedGame is one finished othello game's line.
func playedGame(t *testing.T, g env.Game) string {
	t.Helper()
	r, err := RunArena(context.Background(), g, named(t, "greedy"), named(t, "random"), ArenaOptions{Games: 1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	return r.Games[0].Line()
}

// flip is another outcome than the one given.
func flip(g env.Game, outcome string) string {
	if outcome == g.PlayerName(0) {
		return g.PlayerName(1)
	}
	return g.PlayerName(0)
}

func TestPlaceFindsEachGamesNumber(t *testing.T) {
	g, opts, r := playedMatch(t, 40)
	shuffled := slices.Clone(r.Games)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	read := make([]ArenaGame, len(shuffled))
	for i, rec := range shuffled {
		var err error
		if read[i], err = ParseGame(g, rec.Line()); err != nil {
			t.Fatal(err)
		}
	}
	placed, err := Place(g, opts, "greedy", "random", read)
	if err != nil {
		t.Fatal(err)
	}
	seen := make(map[int]bool)
	for i, rec := range placed {
		want := shuffled[i]
		if seen[rec.Index] {
			t.Fatalf("index %d given twice", rec.Index)
		}
		seen[rec.Index] = true
		// Two pairs may share an opening: then either index is right.
		twin := r.Games[rec.Index]
		if rec.Index%2 != want.Index%2 || rec.OpeningPlies != want.OpeningPlies ||
			!slices.Equal(twin.Moves[:twin.OpeningPlies], want.Moves[:want.OpeningPlies]) {
			t.Errorf("game %s placed at %d, whose opening is %v", rec.Line(), rec.Index, twin.Moves[:twin.OpeningPlies])
		}
	}
	if _, err := Place(g, opts, "greedy", "mcts:10", read); err == nil || !strings.Contains(err.Error(), "not this match's") {
		t.Errorf("games of other players placed: %v", err)
	}
	fewer := opts
	fewer.Games = 20
	if _, err := Place(g, fewer, "greedy", "random", read); err == nil || !strings.Contains(err.Error(), "no game of this match") {
		t.Errorf("40 games placed in a match of 20: %v", err)
	}
	other := opts
	other.Seed++
	if _, err := Place(g, other, "greedy", "random", read); err == nil {
		t.Error("games placed in a match of other openings")
	}
}

// A resumed match plays only the games it lacks, and ends with every game
// of the match once, counted once.
func TestRunArenaResumesFromPlayedGames(t *testing.T) {
	g, opts, full := playedMatch(t, 20)
	played := []ArenaGame{full.Games[0], full.Games[3], full.Games[4], full.Games[11], full.Games[19]}
	opts.Played = played
	var fresh []int
	opts.OnGame = func(rec ArenaGame) error { fresh = append(fresh, rec.Index); return nil }
	r, err := RunArena(context.Background(), g, named(t, "greedy"), named(t, "random"), opts)
	if err != nil {
		t.Fatal(err)
	}
	checkMatch(t, g, named(t, "greedy"), named(t, "random"), r, 20)
	if len(fresh) != 15 {
		t.Fatalf("%d games played, want the 15 not played before", len(fresh))
	}
	for _, rec := range played {
		if slices.Contains(fresh, rec.Index) {
			t.Errorf("game %d played again", rec.Index+1)
		}
		if r.Games[rec.Index].Line() != rec.Line() {
			t.Errorf("game %d: %s, want the game played before", rec.Index+1, r.Games[rec.Index].Line())
		}
	}
	var now []ArenaGame
	for _, rec := range r.Games {
		if slices.Contains(fresh, rec.Index) {
			now = append(now, rec)
		}
	}
	before, after := scoreOf(g, played), scoreOf(g, now)
	if want := (Score{Wins: before.Wins + after.Wins, Draws: before.Draws + after.Draws, Losses: before.Losses + after.Losses}); r.Score != want {
		t.Errorf("score %+v, want %+v: the games played before and now", r.Score, want)
	}
}

// scoreOf is A's score in games of a match between A and B.
func scoreOf(g env.Game, games []ArenaGame) Score {
	var s Score
	for _, rec := range games {
		switch {
		case rec.Outcome == "draw":
			s.Draws++
		case (rec.Outcome == g.PlayerName(0)) == (rec.Index%2 == 0):
			s.Wins++
		default:
			s.Losses++
		}
	}
	return s
}

func TestRunArenaRefusesBadPlayedGames(t *testing.T) {
	g, opts, full := playedMatch(t, 4)
	unfinished := full.Games[2]
	unfinished.Outcome = "unfinished"
	cases := []struct {
		name   string
		played []ArenaGame
		want   string
	}{
		{"twice", []ArenaGame{full.Games[1], full.Games[1]}, "twice"},
		{"outside", []ArenaGame{{Record: full.Games[0].Record, Index: 4}}, "outside"},
		{"unfinished", []ArenaGame{unfinished}, "unfinished"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := opts
			o.Played = c.played
			_, err := RunArena(context.Background(), g, named(t, "greedy"), named(t, "random"), o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
		})
	}
}

// An SPRT that the games played before already decide plays nothing more.
func TestRunArenaResumedSPRTDecidedPlaysNothing(t *testing.T) {
	g, opts, full := playedMatch(t, 100)
	var wins []ArenaGame
	for _, rec := range full.Games {
		if scoreOf(g, []ArenaGame{rec}).Wins == 1 {
			wins = append(wins, rec)
		}
	}
	if len(wins) < 30 {
		t.Fatalf("greedy won %d of 100 against random, want 30 or more for the SPRT to decide on", len(wins))
	}
	opts.Played = wins
	opts.SPRT = &SPRT{Elo0: 0, Elo1: 30, Alpha: 0.05, Beta: 0.05}
	played := 0
	opts.OnGame = func(ArenaGame) error { played++; return nil }
	r, err := RunArena(context.Background(), g, named(t, "greedy"), named(t, "random"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Score{Wins: len(wins)}); played != 0 || r.Decision != 1 || r.Score != want {
		t.Errorf("%d games played, decision %d, score %+v: want none, +1 and %+v", played, r.Decision, r.Score, want)
	}
}
