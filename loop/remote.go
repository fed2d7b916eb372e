package loop

import (
	"context"
	"fmt"
	"time"

	"github.com/flipzero/flipzero/data"
	"github.com/flipzero/flipzero/internal/progress"
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

// collect publishes the self-play network, then adds the generation's
// games to the window as its source hands them over. It returns how many
// new samples the generation has.
func collect(ctx context.Context, gen generation, m *GenerationMetrics) (int, error) {
	if err := gen.source.Publish(ctx, gen.playerGen, gen.player); err != nil {
		return 0, fmt.Errorf("publish the network: %w", err)
	}
	quota := gen.cfg.SelfPlay.Games
	start := time.Now()
	// This machine's self-play reports its moves as it plays them;
	// workers elsewhere, their games as they arrive.
	local, _ := gen.source.(*localSelfPlay)
	reused := local != nil && local.reuses(gen.number)
	var bar *progress.Task
	switch {
	case reused:
		// Nothing is played: the generation's line says where its games
		// came from, and no bar counts moves that are not made.
		gen.status.phase(gen.number, PhaseSelfPlay, 0, "")
	case local != nil:
		gen.status.phase(gen.number, PhaseSelfPlay, quota*gen.movesPerGame, "moves")
		// The games move in lockstep and end together, so the bar counts
		// moves, of as many as the last generation's games made.
		bar = gen.progress.StartEstimate(quota*gen.movesPerGame, fmt.Sprintf("gen %d self-play moves", gen.number))
		defer bar.Close()
		// Deferred after Close, so run before it: the round's last moves
		// reach the bar before it closes.
		stop := followRound(gen, local, bar)
		defer stop()
	default:
		gen.status.phase(gen.number, PhaseSelfPlay, quota, "games")
		bar = gen.progress.Start(quota, fmt.Sprintf("gen %d games from workers", gen.number))
		defer bar.Close()
	}
	positions := 0
	var tally selfplay.Tally
	err := gen.source.Collect(ctx, gen.number, quota, func(b RemoteGames) {
		if !b.Stored {
			gen.replay.Add(b.Samples)
			b.Positions = len(b.Samples)
		}
		positions += b.Positions
		tally.Merge(b.Tally)
		if local == nil {
			bar.Add(b.Games)
			gen.status.progress(tally.Games)
		}
	})
	if err != nil {
		return 0, err
	}
	m.Positions = positions
	m.Reused = reused
	m.count(tally, gen.game)
	switch {
	case local == nil:
		if s := time.Since(start).Seconds(); s > 0 {
			m.PositionsS = float64(positions) / s
		}
	case !m.Reused:
		// The round's own speed: it may have begun while the last
		// generation trained.
		r := local.progress(gen.number)
		if r.seconds > 0 {
			m.PositionsS = float64(positions) / r.seconds
			m.EvalsS = float64(r.evaluations) / r.seconds
		}
		m.CacheShare = r.cacheShare()
	}
	return positions, nil
}

// evaluationRate is a round's network evaluations a second, for its
// progress bar, with the share its evaluation cache answered.
func evaluationRate(r roundStats) string {
	return fmt.Sprintf("%.0f evaluations/s", float64(r.evaluations)/r.seconds) + cacheText(r.cacheShare())
}

// cacheText is what the progress bar and the log line add to the
// network's rate: the share of positions the cache answered, if any.
func cacheText(share float64) string {
	if share <= 0 {
		return ""
	}
	return fmt.Sprintf(" and %.0f%% answered by the cache", 100*share)
}

// followRound moves bar and the status with this machine's round of
// generation gen's games until stop is called.
func followRound(gen generation, local *localSelfPlay, bar *progress.Task) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		shown := 0
		show := func() {
			r := local.progress(gen.number)
			if r.moves > shown {
				bar.Add(r.moves - shown)
				gen.status.progress(r.moves)
				shown = r.moves
			}
			if r.seconds > 0 {
				bar.Note(evaluationRate(r))
			}
		}
		for {
			show()
			select {
			case <-done:
				show() // the round's last moves, however short it was
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
