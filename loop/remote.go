package loop

import (
	"context"
	"fmt"

	"github.com/flipzero/flipzero/data"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/nn"
)

// Remote is a source of self-play games played elsewhere: the loop
// publishes the network to play with and collects a generation's games,
// which the source has already written to the run folder's data folder
// (so a restarted loop finds them in its window) before handing them over.
type Remote interface {
	// Publish makes net, the network of generation gen, the one the
	// workers play with. Publishing the same generation again is cheap.
	Publish(ctx context.Context, gen int, net *nn.Folded) error
	// Collect gathers the games of generation number until quota games
	// have been received, counting those a previous run of the loop
	// already received, and hands each batch to add as it arrives.
	Collect(ctx context.Context, number, quota int, add func(RemoteGames)) error
}

// RemoteGames is a batch of games received from a worker.
type RemoteGames struct {
	Samples []data.Sample
	Games   int
	Moves   int
	// Results counts first-player wins, second-player wins and draws.
	Results [3]int
	// Resigned, NoResign and FalseResign count resignations as the
	// metrics do; Score sums a one-player game's final scores.
	Resigned, NoResign, FalseResign int
	Score                           float64
	// Stored marks games a previous run of the loop received: their
	// samples are already in the window loaded from the run folder, and
	// Samples is empty; Positions says how many there were.
	Stored    bool
	Positions int
}

// collectRemote is selfPlay for games played elsewhere: it publishes the
// self-play network, then adds the generation's games to the window as
// they arrive. It returns how many new samples the generation has.
func collectRemote(ctx context.Context, gen generation, m *GenerationMetrics) (int, error) {
	if err := gen.remote.Publish(ctx, gen.playerGen, gen.player); err != nil {
		return 0, fmt.Errorf("publish the network: %w", err)
	}
	quota := gen.cfg.SelfPlay.Games
	bar := gen.progress.Start(quota, fmt.Sprintf("gen %d games from workers", gen.number))
	defer bar.Close()
	positions, scoreSum := 0, 0.0
	err := gen.remote.Collect(ctx, gen.number, quota, func(b RemoteGames) {
		if !b.Stored {
			gen.replay.Add(b.Samples)
			b.Positions = len(b.Samples)
		}
		positions += b.Positions
		m.Games += b.Games
		m.Moves += b.Moves
		for i, r := range b.Results {
			m.Results[i] += r
		}
		m.Resigned += b.Resigned
		m.NoResign += b.NoResign
		m.FalseResign += b.FalseResign
		scoreSum += b.Score
		bar.Add(b.Games)
		gen.status.progress(m.Games)
	})
	if err != nil {
		return 0, err
	}
	m.Positions = positions
	if _, scored := gen.game.NewState().(env.Scorer); scored && m.Games > 0 {
		mean := scoreSum / float64(m.Games)
		m.Score = &mean
	}
	return positions, nil
}
