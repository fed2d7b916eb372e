package loop

import (
	"context"
	"fmt"

	"github.com/flipzero/flipzero/data"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/selfplay"
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
	// The games' counts; of stored games, their number alone.
	selfplay.Tally
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
	positions := 0
	var tally selfplay.Tally
	err := gen.remote.Collect(ctx, gen.number, quota, func(b RemoteGames) {
		if !b.Stored {
			gen.replay.Add(b.Samples)
			b.Positions = len(b.Samples)
		}
		positions += b.Positions
		tally.Merge(b.Tally)
		bar.Add(b.Games)
		gen.status.progress(tally.Games)
	})
	if err != nil {
		return 0, err
	}
	m.Positions = positions
	m.count(tally, gen.game)
	return positions, nil
}
