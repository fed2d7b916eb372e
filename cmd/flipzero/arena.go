package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/flipzero/flipzero/arena"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/internal/atomicfile"
	"github.com/flipzero/flipzero/internal/progress"
	"github.com/flipzero/flipzero/loop"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/player"
	"github.com/flipzero/flipzero/runfolder"
)

const playerHelp = "random, greedy, perfect (tic-tac-toe), mcts:N, alphabeta:D, gtp:\"COMMAND ARGS\", or a model file"

// playerFlag reads a player's name, with search, its --X-search settings
// (empty: none), and checks that it can play g.
func playerFlag(flagName, name, search string, g env.Game, opts player.PlayerOptions) (player.Player, error) {
	if name == "" {
		return nil, usagef("--%s is required: %s", flagName, playerHelp)
	}
	p, err := player.ParsePlayer(name, opts)
	if err != nil {
		return nil, usageError{fmt.Errorf("--%s: %w", flagName, err)}
	}
	if p, err = withSearch(flagName, search, p); err != nil {
		return nil, err
	}
	// A player that cannot play the game says so before any game starts.
	seat, err := p.Seat(g, 1, 0)
	if err != nil {
		return nil, usageError{fmt.Errorf("--%s: %w", flagName, err)}
	}
	if err := seat.Close(); err != nil {
		return nil, fmt.Errorf("--%s: %w", flagName, err)
	}
	return p, nil
}

// withSearch gives a searching player (a network's, mcts:N) the search
// settings spec over its own, and names it by them too, so that a match
// can set a network against itself searching otherwise.
func withSearch(flagName, spec string, p player.Player) (player.Player, error) {
	if spec == "" {
		return p, nil
	}
	sp, ok := p.(*player.SearchPlayer)
	if !ok {
		return nil, usagef("--%s-search: %s does not search (network players and mcts:N do)", flagName, p.Name())
	}
	cfg, err := loop.ParseSearchSettings(spec, sp.Config)
	if err != nil {
		return nil, usageError{fmt.Errorf("--%s-search: %w", flagName, err)}
	}
	with := *sp
	with.Config = cfg
	with.Label = fmt.Sprintf("%s {%s}", sp.Label, strings.Trim(strings.TrimSpace(spec), "{}"))
	return &with, nil
}

// playerList is a flag that may be given several times, each a player.
type playerList []string

func (l *playerList) String() string { return strings.Join(*l, ", ") }
func (l *playerList) Set(v string) error {
	*l = append(*l, v)
	return nil
}

func runArena(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("arena", "arena --game G --a PLAYER --b PLAYER --games N [flags]\n"+
		"       arena --game G --a PLAYER [--b PLAYER] [--player PLAYER]... --games N   (a one-player game)\n\n"+
		"Plays N games between A and B, colours alternating, each random opening played\n"+
		"from both sides, and prints A's score as W-D-L (wins, draws, losses), its\n"+
		"points per game and the Elo difference with a 95% interval. In a one-player\n"+
		"game (reversi-solitaire) every player plays the same N deals, and it prints\n"+
		"each player's mean score with its 95% interval and the first player's paired\n"+
		"difference, deal by deal, from each other one. A player is "+playerHelp+".", io.out)
	gameName := fs.String("game", "", "game: "+strings.Join(games.Names(), ", "))
	aName := fs.String("a", "", "player A")
	bName := fs.String("b", "", "player B (in a one-player game, optional)")
	aSearch := fs.String("a-search", "", "search settings of player A over its own, as in a config's search section: 'cpuct: 2, leaves_per_tree: 1'")
	bSearch := fs.String("b-search", "", "search settings of player B over its own")
	var more playerList
	fs.Var(&more, "player", "in a one-player game, a further player to play the same deals (may be repeated)")
	gamesN := fs.Int("games", 20, "games to play; in a one-player game, deals, each played by every player")
	playouts := fs.Int("playouts", 400, "playouts per move of network players")
	workers := fs.Int("workers", 0, "goroutines playing games (0: one per core)")
	concurrent := fs.Int("concurrent", 0, "games each goroutine plays at once, their searches batched (0: chosen)")
	openings := fs.Int("opening-plies", 0, "random moves that open each game (0: the game's default, -1: none)")
	seed := fs.Uint64("seed", 1, "seed of the openings (in a one-player game, the deals) and the players' random choices")
	useSPRT := fs.Bool("sprt", false, "stop early once a sequential probability ratio test decides")
	def := arena.DefaultSPRT()
	elo0 := fs.Float64("elo0", def.Elo0, "SPRT: Elo difference of the null hypothesis")
	elo1 := fs.Float64("elo1", def.Elo1, "SPRT: Elo difference of the alternative")
	alpha := fs.Float64("alpha", def.Alpha, "SPRT: false positive rate")
	beta := fs.Float64("beta", def.Beta, "SPRT: false negative rate")
	records := fs.String("records", "", "write every game's record to this file as it ends, one a line: moves, outcome, game, first player, second player")
	resume := fs.Bool("resume", false, "continue the match of the --records file, cut short: its games count and are not played again (two-player games)")
	runDir := fs.String("run", "", "add the match to this run's matches.jsonl, for flipzero ratings")
	showProgress := fs.Bool("progress", true, "show progress on standard error: a bar on a terminal, else a line every 30 s, for a log")
	dev := addDeviceFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	g, err := gameFlag(*gameName)
	if err != nil {
		return err
	}
	if *gamesN < 1 {
		return usagef("--games must be at least 1, got %d", *gamesN)
	}
	if *playouts < 1 {
		return usagef("--playouts must be at least 1, got %d", *playouts)
	}
	if *workers < 0 || *concurrent < 0 {
		return usagef("--workers and --concurrent must not be negative")
	}
	if *runDir != "" {
		if err := checkRun(*runDir, true); err != nil {
			return err
		}
	}
	popts := player.PlayerOptions{Playouts: *playouts, LoadNetwork: loadNetworkPlayer(g, dev, io.err)}
	if env.Players(g) == 1 {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		for _, name := range []string{"sprt", "elo0", "elo1", "alpha", "beta", "opening-plies"} {
			if set[name] {
				return usagef("--%s: %s is a one-player game, compared by scores on the same deals: no openings, no SPRT", name, g.Name())
			}
		}
		if *resume {
			return usagef("--resume: %s is a one-player game, whose matches start afresh", g.Name())
		}
		names := append([]string{*aName, *bName}, more...)
		return soloArena(ctx, g, names, popts, arena.SoloOptions{
			Deals: *gamesN, Workers: *workers, PerWorker: *concurrent, Seed: *seed,
		}, soloFlags{records: *records, runDir: *runDir, progress: *showProgress, search: [2]string{*aSearch, *bSearch}}, io)
	}
	if len(more) > 0 {
		return usagef("--player: %s is a two-player game: give --a and --b", g.Name())
	}
	a, err := playerFlag("a", *aName, *aSearch, g, popts)
	if err != nil {
		return err
	}
	b, err := playerFlag("b", *bName, *bSearch, g, popts)
	if err != nil {
		return err
	}
	if a.Name() == b.Name() {
		return usagef("--a and --b are the same player %s: nothing to measure", a.Name())
	}
	opts := arena.ArenaOptions{
		Games: *gamesN, Workers: *workers, PerWorker: *concurrent,
		OpeningPlies: *openings, Seed: *seed,
	}
	if *resume && *records == "" {
		return usagef("--resume needs --records: the file of the match to continue")
	}
	if *records != "" {
		if opts.Played, err = startRecords(*records, *resume, g, opts, a.Name(), b.Name(), io.err); err != nil {
			return err
		}
		opts.OnGame = func(rec arena.ArenaGame) error { return runfolder.AppendLines(*records, []string{rec.Line()}) }
	}
	if *useSPRT {
		t := arena.SPRT{Elo0: *elo0, Elo1: *elo1, Alpha: *alpha, Beta: *beta}
		if !(t.Elo1 > t.Elo0) || !(t.Alpha > 0 && t.Alpha < 1) || !(t.Beta > 0 && t.Beta < 1) {
			return usagef("--sprt needs elo1 > elo0 and alpha, beta strictly between 0 and 1")
		}
		opts.SPRT = &t
	}
	if *showProgress {
		task := progress.New(io.err).Start(*gamesN, a.Name()+" vs "+b.Name())
		task.Add(len(opts.Played))
		opts.Progress = func(_ int, s arena.Score) {
			task.Note(s.String())
			task.Add(1)
		}
		defer task.Close()
	}
	start := time.Now()
	result, runErr := arena.RunArena(ctx, g, a, b, opts)
	// The records, each appended as its game ended, are written again in
	// the games' order, with the games cut short (unfinished) and those
	// of an earlier part of the match.
	if *records != "" {
		if err := writeRecords(*records, result.Games); err != nil {
			return errors.Join(runErr, err)
		}
	}
	if runErr != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w; %s", runErr, resumeHint(*records, result.Score))
		}
		return runErr
	}
	printScore(io.out, g, a, b, result, opts.SPRT, time.Since(start))
	if len(opts.Played) > 0 {
		fmt.Fprintf(io.out, "(%d of them played before, resumed from %s)\n", len(opts.Played), *records)
	}
	if *runDir != "" {
		m := arena.MatchRecord{
			Time: time.Now().UTC().Format(time.RFC3339), Game: g.Name(), A: a.Name(), B: b.Name(),
			Wins: result.Score.Wins, Draws: result.Score.Draws, Losses: result.Score.Losses,
		}
		if err := arena.AppendMatch(runfolder.Folder(*runDir).Matches(), m); err != nil {
			return err
		}
	}
	return nil
}

// soloFlags are the arena's flags a one-player match uses beyond its
// players and options.
type soloFlags struct {
	records, runDir string
	progress        bool
	// search is --a-search and --b-search.
	search [2]string
}

// soloArena plays a one-player match: every named player (--a, --b, then
// each --player; an empty --b is left out) on the same deals.
func soloArena(ctx context.Context, g env.Game, names []string, popts player.PlayerOptions, opts arena.SoloOptions, f soloFlags, io stdio) error {
	if names[0] == "" {
		return usagef("--a is required: %s", playerHelp)
	}
	if opts.Deals > arena.MaxDeals {
		return usagef("--games: %d deals, at most %d", opts.Deals, arena.MaxDeals)
	}
	var players []player.Player
	seen := map[string]bool{}
	for i, name := range names {
		flagName, search := "player", ""
		if i < len(f.search) {
			search = f.search[i]
		}
		switch i {
		case 0:
			flagName = "a"
		case 1:
			flagName = "b"
			if name == "" {
				if search != "" {
					return usagef("--b-search: there is no --b to search with it")
				}
				continue
			}
		}
		p, err := playerFlag(flagName, name, search, g, popts)
		if err != nil {
			return err
		}
		if seen[p.Name()] {
			return usagef("--%s: %s is already playing: list each player once", flagName, p.Name())
		}
		seen[p.Name()] = true
		players = append(players, p)
	}
	if f.runDir != "" && len(players) < 2 {
		return usagef("--run: the match log compares players: give at least two")
	}
	total := len(players) * opts.Deals
	if f.progress {
		task := progress.New(io.err).Start(total, fmt.Sprintf("%d players × %d deals", len(players), opts.Deals))
		opts.Progress = func(int) { task.Add(1) }
		defer task.Close()
	}
	start := time.Now()
	result, runErr := arena.RunSolo(ctx, g, players, opts)
	if f.records != "" {
		lines := make([]string, len(result.Games))
		for i, rec := range result.Games {
			lines[i] = rec.Line()
		}
		if err := writeLines(f.records, lines); err != nil {
			return errors.Join(runErr, err)
		}
	}
	if runErr != nil {
		return runErr
	}
	printSolo(io.out, g, result, time.Since(start))
	if f.runDir != "" {
		now := time.Now().UTC().Format(time.RFC3339)
		for j := 1; j < len(players); j++ {
			if err := arena.AppendMatch(runfolder.Folder(f.runDir).Matches(), arena.SoloRecord(result, 0, j, g.Name(), now)); err != nil {
				return err
			}
		}
	}
	return nil
}

// printSolo prints a one-player match: a line per player, its mean score
// with the 95% interval, and a line per comparison of the first player
// with another, their paired difference.
func printSolo(w io.Writer, g env.Game, r arena.SoloResult, took time.Duration) {
	deals := len(r.Scores[0])
	best := g.NewState().(env.Scorer).MaxScore()
	fmt.Fprintf(w, "%s: %s, each played by %s, in %.1f s\n", g.Name(), count(deals, "deal"), count(len(r.Players), "player"), took.Seconds())
	for i, name := range r.Players {
		s := r.Stats(i)
		full := 0
		for _, v := range r.Scores[i] {
			if v == best {
				full++
			}
		}
		fmt.Fprintf(w, "%s: mean score %.3f %s, min %g, max %g; the best score, %g, in %s\n",
			name, s.Mean, interval(s, false), s.Min, s.Max, best, count(full, "deal"))
	}
	for j := 1; j < len(r.Players); j++ {
		d, v := r.Difference(0, j), r.Versus(0, j)
		fmt.Fprintf(w, "%s minus %s: %+.3f %s per deal, paired over %s; deal by deal %s (ahead, level, behind)\n",
			r.Players[0], r.Players[j], d.Mean+0, interval(d, true), count(d.N, "deal"), v)
	}
}

// count writes n things: "1 deal", "3 deals".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// interval writes a 95% interval, or says there is none.
func interval(s arena.ScoreStats, signed bool) string {
	if math.IsNaN(s.Low) {
		return "(no interval from one deal)"
	}
	if signed {
		return fmt.Sprintf("[%+.3f, %+.3f]", s.Low+0, s.High+0)
	}
	return fmt.Sprintf("[%.3f, %.3f]", s.Low, s.High)
}

func printScore(w io.Writer, g env.Game, a, b player.Player, r arena.ArenaResult, sprt *arena.SPRT, took time.Duration) {
	s := r.Score
	elo, low, high := s.Elo()
	fmt.Fprintf(w, "%s vs %s in %s: %d games in %.1f s\n", a.Name(), b.Name(), g.Name(), s.Games(), took.Seconds())
	fmt.Fprintf(w, "%s %s\n", a.Name(), s)
	fmt.Fprintf(w, "score %.4f\n", s.Fraction())
	switch n := float64(s.Games()); {
	case s.Wins == s.Games():
		// The variance of a perfect score is zero, so the usual interval
		// is empty: bound the score instead by the exact binomial, the
		// lowest win rate under which winning every game has a 5% chance.
		fmt.Fprintf(w, "elo > %+.0f (every game won; 95%% bound)\n", eloOfScore(math.Pow(0.05, 1/n)))
	case s.Losses == s.Games():
		fmt.Fprintf(w, "elo < %+.0f (every game lost; 95%% bound)\n", -eloOfScore(math.Pow(0.05, 1/n)))
	default:
		// Adding zero turns a negative zero into zero.
		fmt.Fprintf(w, "elo %+.0f [%+.0f, %+.0f]\n", elo+0, low+0, high+0)
	}
	if sprt != nil {
		verdict := "undecided"
		switch r.Decision {
		case 1:
			verdict = fmt.Sprintf("accepted H1: A is better by %g Elo", sprt.Elo1)
		case -1:
			verdict = fmt.Sprintf("accepted H0: A is not better than %g Elo", sprt.Elo0)
		}
		fmt.Fprintf(w, "sprt %s (LLR %.2f)\n", verdict, sprt.LLR(s))
	}
}

// eloOfScore is the Elo difference at which the expected score is score.
func eloOfScore(score float64) float64 {
	return -400 * math.Log10(1/score-1)
}

// maxRecordsBytes bounds what is read of a match's records file: a
// million games of a few hundred bytes.
const maxRecordsBytes = 1 << 30

// startRecords readies a two-player match's records file, to which each
// game is appended as it ends. Without resume the file must be absent or
// empty, so that no earlier match's games are lost; with it, the
// finished games there are this match's played before (each placed at
// its number), and the file is written again with them alone. A line that
// is not a game (one a crash cut short) is left out and said so on log;
// a game of another match is an error.
func startRecords(path string, resume bool, g env.Game, opts arena.ArenaOptions, a, b string, log io.Writer) ([]arena.ArenaGame, error) {
	read, skipped, err := runfolder.ReadRecords(path, maxRecordsBytes, runfolder.Start, func(line []byte) (arena.ArenaGame, error) {
		return arena.ParseGame(g, string(line))
	})
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("--records: %w", err)
	case !resume && len(read)+skipped > 0:
		return nil, usagef("--records %s holds %s already: --resume to continue that match, or name another file", path, count(len(read)+skipped, "line"))
	}
	var finished []arena.ArenaGame
	for _, rec := range read {
		if rec.Outcome != "unfinished" {
			finished = append(finished, rec)
		}
	}
	played, err := arena.Place(g, opts, a, b, finished)
	if pe := (arena.PlaceError{}); errors.As(err, &pe) {
		rec := finished[pe.Game]
		return nil, usagef("--records %s: the game %s: %v", path, strings.Join(rec.Moves[:min(len(rec.Moves), 6)], ";")+"…", pe.Err)
	}
	if skipped > 0 {
		fmt.Fprintf(log, "flipzero arena: %s of %s are no game of %s (cut short by a crash?): left out\n", count(skipped, "line"), path, g.Name())
	}
	sort.Slice(played, func(i, j int) bool { return played[i].Index < played[j].Index })
	if err := writeRecords(path, played); err != nil {
		return nil, err
	}
	if len(played) > 0 {
		// Said before the first new game ends, which may be minutes away.
		fmt.Fprintf(log, "flipzero arena: resuming from %s: %d of the %d games played before, %d to play\n", path, len(played), opts.Games, opts.Games-len(played))
	}
	return played, nil
}

func writeRecords(path string, games []arena.ArenaGame) error {
	lines := make([]string, len(games))
	for i, rec := range games {
		lines[i] = rec.Line()
	}
	return writeLines(path, lines)
}

// writeLines writes a record file atomically, one record a line.
func writeLines(path string, lines []string) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		for _, l := range lines {
			if _, err := fmt.Fprintln(w, l); err != nil {
				return err
			}
		}
		return nil
	})
}

// loadNetworkPlayer loads checkpoint and model files of g as players on
// the device asked for, started when the first network is loaded.
func loadNetworkPlayer(g env.Game, dev deviceFlag, log io.Writer) func(path string, playouts int) (player.Player, error) {
	var backend nn.Backend
	var say func(io.Writer)
	return func(path string, playouts int) (player.Player, error) {
		if backend == nil {
			b, s, err := dev.open()
			if err != nil {
				return nil, err
			}
			backend, say = b, s
		}
		p, err := player.LoadNetworkPlayer(backend, path, g, playouts)
		if err != nil {
			return nil, usageError{err}
		}
		if say != nil {
			say(log)
			say = nil
		}
		return p, nil
	}
}

// resumeHint says, when a match is stopped, what it had scored and where
// its finished games are to go on from.
func resumeHint(records string, s arena.Score) string {
	if records == "" {
		return s.String() + " so far, not kept (--records keeps a match's games, --resume plays the rest)"
	}
	return s.String() + " so far, the games in " + records + ": the same command with --resume plays the rest"
}
