package selfplay

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/nn"
)

func generationName(gen int) string { return fmt.Sprintf("gen-%06d", gen) }

// measure plays the new network of generation gen against the self-play
// network (generation best) and against the config's baseline, records
// both matches in the run, rates the new network, and says whether it
// passes the gate.
func measure(ctx context.Context, cfg Config, g env.Game, runDir string, gen, best int,
	candidate, incumbent *nn.Folded, m *GenerationMetrics, progress io.Writer) (promote bool, err error) {
	ac := cfg.Arena
	search := SettingsFrom(cfg, 0).Search
	newPlayer := NetworkPlayer(generationName(gen), candidate, ac.Playouts)
	newPlayer.Config = search
	oldPlayer := NetworkPlayer(generationName(best), incumbent, ac.Playouts)
	oldPlayer.Config = search
	baseline, err := ParsePlayer(ac.Baseline, PlayerOptions{})
	if err != nil {
		return false, err
	}
	var versusBest Score
	for i, opponent := range []Player{oldPlayer, baseline} {
		bar := newBar(progress, ac.Games, fmt.Sprintf("gen %d vs %s", gen, opponent.Name()))
		result, err := RunArena(ctx, g, newPlayer, opponent, ArenaOptions{
			Games: ac.Games, Seed: uint64(gen)*2 + uint64(i),
			Progress: func(int, Score) { bar.Add(1) },
		})
		bar.Close()
		if err != nil {
			return false, err
		}
		s := result.Score
		record := MatchRecord{Time: time.Now().UTC().Format(time.RFC3339), Game: g.Name(),
			A: newPlayer.Name(), B: opponent.Name(), Wins: s.Wins, Draws: s.Draws, Losses: s.Losses, Generation: gen}
		if err := AppendMatch(runDir, record); err != nil {
			return false, err
		}
		if i == 0 {
			versusBest = s
		}
	}
	records, err := ReadMatches(runDir)
	if err != nil {
		return false, err
	}
	anchor := "random"
	if !playedBy(records, anchor) {
		anchor = baseline.Name()
	}
	ratings, err := FitRatings(Matches(records), anchor)
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

func playedBy(records []MatchRecord, player string) bool {
	for _, r := range records {
		if r.A == player || r.B == player {
			return true
		}
	}
	return false
}
