package loop

import (
	"context"
	"fmt"
	"time"

	"github.com/flipzero/flipzero/arena"
	"github.com/flipzero/flipzero/internal/progress"
	"github.com/flipzero/flipzero/player"
	"github.com/flipzero/flipzero/runfolder"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/nn"
)

// measure plays the new network of generation gen against the self-play
// network (generation best) and against the config's baseline, records
// both matches in the run, rates the new network, and says whether it
// passes the gate.
func measure(ctx context.Context, cfg Config, g env.Game, backend nn.Backend, run runfolder.Folder, gen, best int,
	candidate, incumbent *nn.Folded, m *GenerationMetrics, report *progress.Reporter, status *statusFile) (promote bool, err error) {
	ac := cfg.Arena
	newPlayer := player.NetworkPlayer(backend, runfolder.GenerationName(gen), candidate, ac.Playouts)
	newPlayer.Config = cfg.Search.Config
	oldPlayer := player.NetworkPlayer(backend, runfolder.GenerationName(best), incumbent, ac.Playouts)
	oldPlayer.Config = cfg.Search.Config
	baseline, err := player.ParsePlayer(ac.Baseline, player.PlayerOptions{})
	if err != nil {
		return false, err
	}
	var versusBest arena.Score
	played := 0
	for i, opponent := range []player.Player{oldPlayer, baseline} {
		bar := report.Start(ac.Games, fmt.Sprintf("gen %d vs %s", gen, opponent.Name()))
		result, err := arena.RunArena(ctx, g, newPlayer, opponent, arena.ArenaOptions{
			Games: ac.Games, Seed: uint64(gen)*2 + uint64(i),
			Progress: func(int, arena.Score) {
				bar.Add(1)
				played++
				status.progress(played)
			},
		})
		bar.Close()
		if err != nil {
			return false, err
		}
		s := result.Score
		record := arena.MatchRecord{Time: time.Now().UTC().Format(time.RFC3339), Game: g.Name(),
			A: newPlayer.Name(), B: opponent.Name(), Wins: s.Wins, Draws: s.Draws, Losses: s.Losses, Generation: gen}
		if err := arena.AppendMatch(run.Matches(), record); err != nil {
			return false, err
		}
		if i == 0 {
			versusBest = s
		}
	}
	records, err := arena.ReadMatches(run.Matches())
	if err != nil {
		return false, err
	}
	anchor := "random"
	if !playedBy(records, anchor) {
		anchor = baseline.Name()
	}
	ratings, err := arena.FitRatings(arena.Matches(records), anchor)
	if err == nil {
		for _, r := range ratings {
			if r.Player == newPlayer.Name() {
				elo := r.Elo
				m.Rating = &elo
			}
		}
	}
	return ac.Gate == 0 || versusBest.Fraction() >= ac.Gate, nil
}

func playedBy(records []arena.MatchRecord, name string) bool {
	for _, r := range records {
		if r.A == name || r.B == name {
			return true
		}
	}
	return false
}
