package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/flipzero/flipzero/arena"
	"github.com/flipzero/flipzero/runfolder"
)

func runRatings(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("ratings", "ratings --run DIR [--game G] [--anchor PLAYER]\n\n"+
		"Fits maximum-likelihood Elo ratings (Bradley-Terry, a draw half a win) to every\n"+
		"match in DIR/matches.jsonl and prints one line per player, strongest first:\n"+
		"the rating with its 95% interval, the games played and their W-D-L (wins,\n"+
		"draws, losses).", io.out)
	runDir := fs.String("run", "", "the run's folder")
	anchor := fs.String("anchor", "random", "the player rated 0")
	gameName := fs.String("game", "", "rate only this game's matches (needed when the run holds several games)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *runDir == "" {
		return usagef("--run is required")
	}
	// A folder that only keeps the arena's match log is rated too.
	if err := checkRun(*runDir, true); err != nil {
		return err
	}
	run := runfolder.Folder(*runDir)
	records, skipped, err := arena.ReadMatches(run.Matches())
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return usagef("run %s has no matches yet (no %s)", *runDir, run.Matches())
		}
		return usageError{err}
	}

	games := map[string]bool{}
	var kept []arena.MatchRecord
	for _, r := range records {
		games[r.Game] = true
		if *gameName == "" || r.Game == *gameName {
			kept = append(kept, r)
		}
	}
	if *gameName == "" && len(games) > 1 {
		names := slices.Sorted(maps.Keys(games))
		return usagef("run %s holds matches of %s: choose one with --game", *runDir, strings.Join(names, ", "))
	}
	records = kept
	if len(records) == 0 {
		return usagef("run %s: %s holds no match to rate (%d lines that are not match records)", *runDir, run.Matches(), skipped)
	}
	if skipped > 0 {
		fmt.Fprintf(io.err, "flipzero ratings: %d lines of %s are not match records, left out\n", skipped, run.Matches())
	}
	ratings, err := arena.FitRatings(arena.Matches(records), *anchor)
	if err != nil {
		return usageError{err}
	}
	// Each player's games in all, from its side, in the form every score
	// is printed in.
	scores := map[string]arena.Score{}
	for _, r := range records {
		s := arena.Score{Wins: r.Wins, Draws: r.Draws, Losses: r.Losses}
		scores[r.A] = scores[r.A].Add(s)
		scores[r.B] = scores[r.B].Add(s.Reversed())
	}
	width := len("player")
	for _, r := range ratings {
		width = max(width, len(r.Player))
	}
	var out strings.Builder
	fmt.Fprintf(&out, "%-*s %6s %6s %6s %6s  %s\n", width, "player", "elo", "low", "high", "games", "W-D-L")
	for _, r := range ratings {
		fmt.Fprintf(&out, "%-*s %+6.0f %+6.0f %+6.0f %6d  %s\n", width, r.Player, r.Elo, r.Low, r.High, r.Games, scores[r.Player].Counts())
	}
	_, err = io.out.Write([]byte(out.String()))
	return err
}
