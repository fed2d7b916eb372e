package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/flipzero/flipzero/arena"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/internal/atomicfile"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/player"
	"github.com/flipzero/flipzero/runfolder"
)

const playerHelp = "random, greedy, perfect (tic-tac-toe), mcts:N, alphabeta:D, gtp:\"COMMAND ARGS\", or a model file"

// playerFlag reads a player's name and checks that it can play g.
func playerFlag(flagName, name string, g env.Game, opts player.PlayerOptions) (player.Player, error) {
	if name == "" {
		return nil, usagef("--%s is required: %s", flagName, playerHelp)
	}
	p, err := player.ParsePlayer(name, opts)
	if err != nil {
		return nil, usageError{fmt.Errorf("--%s: %w", flagName, err)}
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

func runArena(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("arena", "arena --game G --a PLAYER --b PLAYER --games N [flags]\n\n"+
		"Plays N games between A and B, colours alternating, each random opening played\n"+
		"from both sides, and prints A's wins, draws and losses, its score and the Elo\n"+
		"difference with a 95% interval. A player is "+playerHelp+".", io.out)
	gameName := fs.String("game", "", "game: "+strings.Join(games.Names(), ", "))
	aName := fs.String("a", "", "player A")
	bName := fs.String("b", "", "player B")
	gamesN := fs.Int("games", 20, "games to play")
	playouts := fs.Int("playouts", 400, "playouts per move of network players")
	workers := fs.Int("workers", 0, "goroutines playing games (0: one per core)")
	concurrent := fs.Int("concurrent", 0, "games each goroutine plays at once, their searches batched (0: chosen)")
	openings := fs.Int("opening-plies", 0, "random moves that open each game (0: the game's default, -1: none)")
	seed := fs.Uint64("seed", 1, "seed of the openings and the players' random choices")
	useSPRT := fs.Bool("sprt", false, "stop early once a sequential probability ratio test decides")
	def := arena.DefaultSPRT()
	elo0 := fs.Float64("elo0", def.Elo0, "SPRT: Elo difference of the null hypothesis")
	elo1 := fs.Float64("elo1", def.Elo1, "SPRT: Elo difference of the alternative")
	alpha := fs.Float64("alpha", def.Alpha, "SPRT: false positive rate")
	beta := fs.Float64("beta", def.Beta, "SPRT: false negative rate")
	records := fs.String("records", "", "write every game's record to this file, one a line: moves, outcome, game, first player, second player")
	runDir := fs.String("run", "", "add the match to this run's matches.jsonl, for flipzero ratings")
	progress := fs.Bool("progress", true, "show a progress bar when standard error is a terminal")
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
	popts := player.PlayerOptions{Playouts: *playouts, LoadNetwork: loadNetworkPlayer(g, dev, io.err)}
	a, err := playerFlag("a", *aName, g, popts)
	if err != nil {
		return err
	}
	b, err := playerFlag("b", *bName, g, popts)
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
	if *useSPRT {
		t := arena.SPRT{Elo0: *elo0, Elo1: *elo1, Alpha: *alpha, Beta: *beta}
		if !(t.Elo1 > t.Elo0) || !(t.Alpha > 0 && t.Alpha < 1) || !(t.Beta > 0 && t.Beta < 1) {
			return usagef("--sprt needs elo1 > elo0 and alpha, beta strictly between 0 and 1")
		}
		opts.SPRT = &t
	}
	if *progress && isTerminal(io.err) {
		bar := progressbar.NewOptions(*gamesN,
			progressbar.OptionSetWriter(io.err),
			progressbar.OptionSetDescription(a.Name()+" vs "+b.Name()),
			progressbar.OptionShowCount(),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish(),
		)
		opts.Progress = func(done int, s arena.Score) {
			bar.Set(done)
			bar.Describe(fmt.Sprintf("%s vs %s  +%d =%d -%d", a.Name(), b.Name(), s.Wins, s.Draws, s.Losses))
		}
		defer bar.Finish()
	}
	start := time.Now()
	result, runErr := arena.RunArena(ctx, g, a, b, opts)
	// The records are written even when the match was cut short: the games
	// played so far are worth keeping.
	if *records != "" {
		if err := writeRecords(*records, result.Games); err != nil {
			return errors.Join(runErr, err)
		}
	}
	if runErr != nil {
		return runErr
	}
	printScore(io.out, g, a, b, result, opts.SPRT, time.Since(start))
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

func printScore(w io.Writer, g env.Game, a, b player.Player, r arena.ArenaResult, sprt *arena.SPRT, took time.Duration) {
	s := r.Score
	elo, low, high := s.Elo()
	fmt.Fprintf(w, "%s vs %s in %s: %d games in %.1f s\n", a.Name(), b.Name(), g.Name(), s.Games(), took.Seconds())
	fmt.Fprintf(w, "wins %d draws %d losses %d\n", s.Wins, s.Draws, s.Losses)
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

func writeRecords(path string, games []arena.ArenaGame) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		for _, rec := range games {
			if _, err := fmt.Fprintln(w, rec.Line()); err != nil {
				return err
			}
		}
		return nil
	})
}

// isTerminal reports whether w is a terminal, where a progress bar helps
// rather than fills a log.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
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
