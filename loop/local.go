package loop

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flipzero/flipzero/data"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/runfolder"
	"github.com/flipzero/flipzero/selfplay"
)

// localSelfPlay is the Remote of self-play on this machine: the same
// kind of source of games as the workers of other machines, so that the
// loop has one path. It plays each generation's games as one round with
// the newest network the loop has published, writes them to the
// generation's shard and game records, and hands them over when the loop
// collects that generation.
//
// It may play ahead: with ahead 1 it plays the next generation's games
// while the loop trains on the last, so that neither waits for the other
// (the games are then played by a network one generation older); with 0
// it plays a generation's games only once the loop asks for them. It
// never plays further ahead than that, the back-pressure that keeps the
// replay ratio: games no training would use for a while wait unplayed.
//
// With ahead 0 each generation is a round (selfplay.PlayGames), its games
// shared out among the workers as it starts. Playing ahead, it is one
// stream (selfplay.PlayStream): a worker whose game ends starts the next
// at once, of the next generation once this one's are all under way, so
// that no worker waits for a round's slowest game; each new network is
// swapped into the evaluators between two rounds of their searches, and
// a game belongs to the generation being filled when it ends.
type localSelfPlay struct {
	game    env.Game
	cfg     Config
	evals   *nn.Evaluators
	run     runfolder.Folder
	seed    uint64
	ahead   int
	stopped chan struct{} // closed when the playing goroutine returns
	// stream is the stream of games when playing ahead, else nil.
	stream *selfplay.Stream
	// forks carries the positions one generation's games set aside to
	// the next's (selfplay.fork_fraction); only the playing goroutine
	// touches it.
	forks selfplay.Forks

	mu      sync.Mutex
	changed chan struct{} // closed and replaced at every change below
	net     *nn.Folded    // the newest network published
	asked   int           // the newest generation the loop has asked for
	done    map[int]RemoteGames
	err     error // why the playing goroutine stopped
	// playing is the generation whose games are being played, and
	// moves, evaluations and cached (positions a cache answered) how far
	// its round has gone.
	playing     int
	moves       atomic.Int64
	evaluations atomic.Int64
	cached      atomic.Int64
	roundStart  time.Time
	// base is the stream's counts when the generation being played
	// began (0 in rounds, whose counts start at 0).
	base selfplay.Stats
	// finished is how each played round went, by generation.
	finished map[int]roundStats
	// saved are the generations whose games an earlier invocation of the
	// loop played and saved, read once at the start: they are taken as
	// they are, not played again.
	saved map[int]RemoteGames
}

// roundStats is how a generation's round went.
type roundStats struct {
	moves       int
	evaluations int64 // positions the network scored
	cached      int64 // positions the evaluation cache answered instead
	seconds     float64
}

// cacheShare is the share of the round's positions that the evaluation
// cache answered (0 without one).
func (r roundStats) cacheShare() float64 {
	if r.cached == 0 {
		return 0
	}
	return float64(r.cached) / float64(r.cached+r.evaluations)
}

// startLocalSelfPlay starts playing the generations after gen (the newest
// checkpoint's) once the first network is published; cancel ctx, then
// wait on stopped, to stop it.
func startLocalSelfPlay(ctx context.Context, g env.Game, cfg Config, evals *nn.Evaluators, run runfolder.Folder, seed uint64, gen int) *localSelfPlay {
	s := &localSelfPlay{
		game: g, cfg: cfg, evals: evals, run: run, seed: seed, ahead: cfg.SelfPlay.Ahead,
		stopped: make(chan struct{}), changed: make(chan struct{}),
		asked: gen, done: map[int]RemoteGames{}, finished: map[int]roundStats{}, saved: map[int]RemoteGames{},
	}
	for number := gen + 1; ; number++ {
		games, ok := savedGames(run, g, number)
		if !ok {
			break
		}
		s.saved[number] = games
	}
	play := s.play
	if s.ahead > 0 {
		s.stream = &selfplay.Stream{}
		play = s.playStream
	}
	go func() {
		defer close(s.stopped)
		err := play(ctx, gen+1)
		s.update(func() { s.err = err })
	}()
	return s
}

// update changes the source's state under its lock and wakes its waiters.
func (s *localSelfPlay) update(change func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	change()
	close(s.changed)
	s.changed = make(chan struct{})
}

// wait blocks until ready holds (checked under the lock) or ctx ends.
func (s *localSelfPlay) wait(ctx context.Context, ready func() bool) error {
	for {
		s.mu.Lock()
		ok, changed := ready(), s.changed
		s.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

// Publish makes net the network of the rounds that start from now on;
// in a stream, of the games in play from their next move.
func (s *localSelfPlay) Publish(_ context.Context, _ int, net *nn.Folded) error {
	s.mu.Lock()
	same := s.net == net
	s.mu.Unlock()
	if same {
		return nil
	}
	if s.stream != nil {
		if err := s.stream.Pause(func() error { return s.evals.Reload(net) }); err != nil {
			return fmt.Errorf("self-play network: %w", err)
		}
	}
	s.update(func() { s.net = net })
	return nil
}

// Collect hands over generation number's games once they are played.
func (s *localSelfPlay) Collect(ctx context.Context, number, quota int, add func(RemoteGames)) error {
	s.update(func() { s.asked = max(s.asked, number) })
	var games RemoteGames
	var played bool
	var failed error
	if err := s.wait(ctx, func() bool {
		games, played = s.done[number]
		failed = s.err
		return played || failed != nil
	}); err != nil {
		return err
	}
	if !played {
		return failed
	}
	s.update(func() {
		delete(s.done, number)
		delete(s.finished, number-1)
	})
	add(games)
	return nil
}

// progress says how far generation number's round has gone: moves
// played, positions evaluated and for how long; zero before it starts.
func (s *localSelfPlay) progress(number int) roundStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.finished[number]; ok {
		return r
	}
	if s.playing != number {
		return roundStats{}
	}
	return roundStats{int(s.moves.Load()), s.evaluations.Load() - s.base.Evaluations, s.cached.Load() - s.base.Cached,
		time.Since(s.roundStart).Seconds()}
}

// count keeps what a self-play call has done so far (Settings.Progress).
func (s *localSelfPlay) count(moves int, sofar selfplay.Stats) {
	s.moves.Add(int64(moves))
	s.evaluations.Store(sofar.Evaluations)
	s.cached.Store(sofar.Cached)
}

// play plays the rounds of generation first and after, each once the
// loop has asked for the generation ahead of it (or for it, with ahead
// 0) and a network is published.
func (s *localSelfPlay) play(ctx context.Context, first int) error {
	for number := first; ; number++ {
		var net *nn.Folded
		if err := s.wait(ctx, func() bool {
			net = s.net
			return net != nil && number <= s.asked+s.ahead
		}); err != nil {
			return err
		}
		games, err := s.round(ctx, number, net)
		if err != nil {
			return err
		}
		s.update(func() { s.done[number] = games })
	}
}

// reuses says whether generation number's games are those an earlier
// invocation saved, to be taken as they are.
func (s *localSelfPlay) reuses(number int) bool {
	_, ok := s.saved[number]
	return ok
}

// savedGames is generation number's games as an earlier invocation of
// the loop saved them: its shard, whose presence says they are whole
// (its positions are in the window loaded from the run folder), and its
// game records, written before it, which count them. ok is false where
// the generation has no readable shard.
func savedGames(run runfolder.Folder, g env.Game, number int) (games RemoteGames, ok bool) {
	n, err := data.ShardSamples(run.Shard(number), g)
	if err != nil {
		return RemoteGames{}, false
	}
	games = RemoteGames{Stored: true, Positions: n}
	// Runs from before the game records had none to count.
	if lines, _, err := ReadGames(run.GameRecords(number), math.MaxInt, maxSavedRecordsBytes); err == nil {
		games.Tally = tallyRecords(g, lines)
	}
	return games, true
}

// maxSavedRecordsBytes bounds what is read of a generation's game
// records: tens of thousands of long games.
const maxSavedRecordsBytes = 256 << 20

// tallyRecords counts games from their record lines, as selfplay.Tally
// counts them when they are played: the games, their moves, and the
// results by winner (a one-player game's by score, its best a win).
// What a line does not keep (resignations, surprise) is not counted.
func tallyRecords(g env.Game, lines []GameLine) selfplay.Tally {
	var t selfplay.Tally
	best := math.Inf(1)
	if sc, ok := g.NewState().(env.Scorer); ok {
		best = sc.MaxScore()
	}
	for _, l := range lines {
		t.Games++
		t.Moves += len(l.Moves)
		if text, scored := strings.CutPrefix(l.Outcome, "score "); scored {
			if score, err := strconv.ParseFloat(text, 64); err == nil {
				t.Score += score
				if score >= best {
					t.Results[0]++
				} else {
					t.Results[2]++
				}
				continue
			}
		}
		switch l.Outcome {
		case g.PlayerName(0):
			t.Results[0]++
		case g.PlayerName(1):
			t.Results[1]++
		default:
			t.Results[2]++
		}
	}
	return t
}

// round plays generation number's games with net and writes them to the
// run folder: its game records, then its shard, whose presence says the
// generation's games are whole. Games an earlier invocation saved are
// taken as they are.
func (s *localSelfPlay) round(ctx context.Context, number int, net *nn.Folded) (RemoteGames, error) {
	if games, ok := s.saved[number]; ok {
		return games, nil
	}
	settings := s.cfg.SelfPlay
	settings.Forks = &s.forks
	s.update(func() {
		s.playing, s.roundStart = number, time.Now()
		s.moves.Store(0)
		s.evaluations.Store(0)
		s.cached.Store(0)
	})
	settings.Progress = s.count
	if err := s.evals.Reload(net); err != nil {
		return RemoteGames{}, err
	}
	var games RemoteGames
	var records []string
	seed := s.seed ^ uint64(number)*0x9e3779b97f4a7c15
	stats, err := selfplay.PlayGames(ctx, s.game, s.cfg.Search, settings, seed, s.evals.New, func(r selfplay.GameRecord) {
		games.Samples = append(games.Samples, r.Samples...)
		records = append(records, FormatGame(s.game, r))
		games.Add(r)
	})
	if err != nil {
		return RemoteGames{}, err
	}
	if err := s.store(number, &games, records); err != nil {
		return RemoteGames{}, err
	}
	s.update(func() {
		s.finished[number] = roundStats{int(s.moves.Load()), stats.Evaluations, stats.Cached, time.Since(s.roundStart).Seconds()}
	})
	return games, nil
}

// store writes generation number's games to the run folder: its game
// records, then its shard, whose presence says the generation's games are
// whole.
func (s *localSelfPlay) store(number int, games *RemoteGames, records []string) error {
	if err := os.MkdirAll(s.run.Games(), 0o755); err != nil {
		return fmt.Errorf("games: %w", err)
	}
	if err := writeGames(s.run.GameRecords(number), records); err != nil {
		return err
	}
	if err := data.WriteShard(s.run.Shard(number), s.game, games.Samples); err != nil {
		return err
	}
	games.Positions = len(games.Samples)
	return nil
}
