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
	"github.com/flipzero/flipzero/mcts"
	"github.com/flipzero/flipzero/nn"
)

// measure plays the new network of generation gen against the self-play
// network (generation best) and against the config's baseline (and its
// policy alone against the baseline, with policy_match), records the
// matches in the run, rates the new network, and says whether it passes
// the gate.
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
	if env.Players(g) == 1 {
		return measureSolo(ctx, cfg, g, run, gen, []player.Player{newPlayer, oldPlayer, baseline}, m, report, status)
	}
	// The new network against the self-play network, then against the
	// baseline; with policy_match, its policy alone against the baseline.
	matches := [][2]player.Player{{newPlayer, oldPlayer}, {newPlayer, baseline}}
	if ac.PolicyMatch {
		matches = append(matches, [2]player.Player{policyPlayer(backend, gen, candidate), baseline})
	}
	scores := make([]arena.Score, len(matches))
	played := 0
	for i, match := range matches {
		a, b := match[0], match[1]
		bar := report.Start(ac.Games, fmt.Sprintf("%s vs %s", a.Name(), b.Name()))
		result, err := arena.RunArena(ctx, g, a, b, arena.ArenaOptions{
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
			A: a.Name(), B: b.Name(), Wins: s.Wins, Draws: s.Draws, Losses: s.Losses, Generation: gen}
		if err := arena.AppendMatch(run.Matches(), record); err != nil {
			return false, err
		}
		scores[i] = s
	}
	versusBest := scores[0]
	m.Baseline, m.BaselineResult = baseline.Name(), scoreCounts(scores[1])
	if ac.PolicyMatch {
		m.PolicyResult = scoreCounts(scores[2])
	}
	if err := rate(run, newPlayer.Name(), baseline.Name(), m); err != nil {
		return false, err
	}
	return ac.Gate == 0 || versusBest.Fraction() >= ac.Gate, nil
}

// policyPlayer is the network f of generation gen playing its policy
// alone: one playout, which takes the move the prior rates best, with no
// solver or endgame solve to help it.
func policyPlayer(backend nn.Backend, gen int, f *nn.Folded) player.Player {
	p := player.NetworkPlayer(backend, runfolder.GenerationName(gen)+" policy", f, 1)
	p.Config = mcts.PlayConfig()
	p.Config.Solver, p.Config.EndgameSolve = false, 0
	return p
}

// scoreCounts is a score as the metrics keep it: wins, draws, losses.
func scoreCounts(s arena.Score) *[3]int {
	return &[3]int{s.Wins, s.Draws, s.Losses}
}

// arenaGames is how many games measuring a generation plays: two matches
// (three with the policy's), or in a one-player game three players on
// the same deals.
func arenaGames(g env.Game, ac ArenaConfig) int {
	switch {
	case env.Players(g) == 1:
		return 3 * ac.Games
	case ac.PolicyMatch:
		return 3 * ac.Games
	}
	return 2 * ac.Games
}

// measureSolo is measure for a one-player game: the new network, the
// self-play network and the baseline play the same arena.games deals;
// the new network's comparisons with each, deal by deal, go to the match
// log and the ratings, its mean score to the metrics, and it passes the
// gate on its deal-by-deal score against the self-play network.
func measureSolo(ctx context.Context, cfg Config, g env.Game, run runfolder.Folder, gen int, players []player.Player,
	m *GenerationMetrics, report *progress.Reporter, status *statusFile) (promote bool, err error) {
	ac := cfg.Arena
	bar := report.Start(len(players)*ac.Games, fmt.Sprintf("gen %d on %d deals", gen, ac.Games))
	result, err := arena.RunSolo(ctx, g, players, arena.SoloOptions{
		Deals: ac.Games, Seed: uint64(gen),
		Progress: func(finished int) {
			bar.Add(1)
			status.progress(finished)
		},
	})
	bar.Close()
	if err != nil {
		return false, err
	}
	now := time.Now().UTC().Format(time.RFC3339)
	for j := 1; j < len(players); j++ {
		record := arena.SoloRecord(result, 0, j, g.Name(), now)
		record.Generation = gen
		if err := arena.AppendMatch(run.Matches(), record); err != nil {
			return false, err
		}
	}
	mean := result.Stats(0).Mean
	m.ArenaScore = &mean
	if err := rate(run, players[0].Name(), players[2].Name(), m); err != nil {
		return false, err
	}
	return ac.Gate == 0 || result.Versus(0, 1).Fraction() >= ac.Gate, nil
}

// rate fits ratings to every match of the run, anchored at random when it
// has played and otherwise at the baseline, and gives m the new network's.
func rate(run runfolder.Folder, newName, baseline string, m *GenerationMetrics) error {
	records, _, err := arena.ReadMatches(run.Matches())
	if err != nil {
		return err
	}
	ratings, err := arena.FitRatings(arena.Matches(records), arena.Anchor(records, baseline))
	if err == nil {
		for _, r := range ratings {
			if r.Player == newName {
				elo := r.Elo
				m.Rating = &elo
			}
		}
	}
	return nil
}
