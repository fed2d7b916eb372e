package main

import (
	"bufio"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
)

func gameFlag(name string) (env.Game, error) {
	if name == "" {
		return nil, usagef("--game is required (one of %s)", strings.Join(games.Names(), ", "))
	}
	g, err := games.ByName(name)
	if err != nil {
		return nil, usageError{err}
	}
	return g, nil
}

// livePosition plays the --moves sequence and requires a game still going.
func livePosition(g env.Game, moves string) (env.State, error) {
	s, err := env.Play(g, moves)
	if err != nil {
		return nil, usageError{fmt.Errorf("--moves: %w", err)}
	}
	if s.Terminal() {
		return nil, usagef("--moves: the game is over (%s)", env.ResultName(s))
	}
	return s, nil
}

func runPerft(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("perft", "perft --game G --depth D [--moves SEQ]", io.out)
	gameName := fs.String("game", "", "game: "+strings.Join(games.Names(), ", "))
	depth := fs.Int("depth", 0, "deepest depth to count (1 or more)")
	moves := fs.String("moves", "", "moves played first, separated by ';'")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	g, err := gameFlag(*gameName)
	if err != nil {
		return err
	}
	if *depth < 1 {
		return usagef("--depth must be at least 1, got %d", *depth)
	}
	s, err := env.Play(g, *moves)
	if err != nil {
		return usageError{fmt.Errorf("--moves: %w", err)}
	}
	for d := 1; d <= *depth; d++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		start := time.Now()
		n := env.Perft(s, d)
		fmt.Fprintf(io.out, "%d %d %.3f\n", d, n, time.Since(start).Seconds())
	}
	return nil
}

func runMoves(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("moves", "moves --game G < sequences\n\nFor each input line (moves separated by ';', empty for the start) prints the\nlegal moves sorted and joined by ';', or \"over <result>\", or \"error: <why>\".", io.out)
	gameName := fs.String("game", "", "game: "+strings.Join(games.Names(), ", "))
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	g, err := gameFlag(*gameName)
	if err != nil {
		return err
	}
	in := bufio.NewScanner(io.in)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	out := bufio.NewWriter(io.out)
	defer out.Flush()
	buf := make([]int, 0, g.ActionSpace())
	for in.Scan() {
		if err := ctx.Err(); err != nil {
			return err
		}
		fmt.Fprintln(out, movesLine(g, in.Text(), buf))
	}
	if err := in.Err(); err != nil {
		return fmt.Errorf("reading standard input: %w", err)
	}
	return nil
}

// movesLine answers one input line of the moves command.
func movesLine(g env.Game, line string, buf []int) string {
	s, err := env.Play(g, strings.TrimRight(line, "\r"))
	if err != nil {
		return "error: " + oneLine(err)
	}
	if s.Terminal() {
		return "over " + env.ResultName(s)
	}
	legal := s.LegalActions(buf)
	texts := make([]string, len(legal))
	for i, a := range legal {
		texts[i] = g.FormatAction(a)
	}
	slices.Sort(texts)
	return strings.Join(texts, ";")
}
