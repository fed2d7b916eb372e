// Package selfplay plays self-play games: workers that each run many games
// at once in lockstep, their leaves gathered into one batch per worker for
// the network, and return every finished game with its training samples
// (full searches only, KataGo's playout cap) and outcome.
package selfplay

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/flipzero/flipzero/data"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/mcts"
)

// Search is how each self-play move is searched: the tree search's
// constants (the config's search section, documented in mcts.Config) and
// KataGo's playout cap randomization.
type Search struct {
	mcts.Config     `yaml:",inline"`
	mcts.PlayoutCap `yaml:",inline"`
}

// DefaultSearch is the search of the shipped configs: mcts's defaults with
// forced playouts, and a full search of 160 playouts on a quarter of the
// moves, 32 on the rest — KataGo's proportions, scaled to what two cores
// play in minutes.
func DefaultSearch() Search {
	c := mcts.DefaultConfig()
	c.ForcedPlayouts = true
	return Search{Config: c, PlayoutCap: mcts.PlayoutCap{Full: 160, Fast: 32, FullFraction: 0.25}}
}

// Validate names the first setting out of range by its key.
func (s Search) Validate() error {
	if err := s.Config.Validate(); err != nil {
		return err
	}
	if s.CPUCT <= 0 || s.CPUCT > 20 {
		return fmt.Errorf("cpuct: %v, must be in (0, 20]", s.CPUCT)
	}
	return s.PlayoutCap.Validate()
}

// Settings says how self-play games are played: the config's selfplay
// section.
type Settings struct {
	// Games is how many games a generation plays (default 128: enough
	// positions for a few dozen training steps on two cores).
	Games int `yaml:"games_per_generation"`
	// Concurrent games are in play at once per worker, their leaves
	// gathered into batches of BatchSize (defaults 64 and 32: a batch
	// fills from half the games while the others wait on it). A
	// generation's games are shared out so that every worker gets some.
	Concurrent int `yaml:"concurrent_games"`
	BatchSize  int `yaml:"batch_size"`
	// Workers run in parallel, each with its own evaluator (default 0:
	// one per core).
	Workers int `yaml:"workers"`
	// EvalCache is how many of the network's answers the workers'
	// evaluators remember between them, by position (a power of two; 0:
	// none), so that a position met again — a transposition, an opening
	// the generation's games share, a sibling of the last move's search —
	// costs no evaluation (lc0's and KataGo's NN cache). The answers are
	// the network's own, and a new network's replace them. Default 0
	// until a match at equal time decides: 2¹⁶ answered 38% of the
	// positions in Othello's self-play on two Zen 3 cores (a
	// generation's 128 games share their openings and transpose), 2% in
	// YINSH blitz's (docs/experiments.md).
	EvalCache int `yaml:"eval_cache"`
	// Ahead is how many generations the loop's self-play may play ahead
	// of its training: 0 plays a generation's games once the last has
	// trained (self-play and training take turns, each with every core);
	// 1 plays games continuously (PlayStream): the next generation's
	// while the last trains, so that neither waits for the other and the
	// cores the other leaves idle are used, each new network swapped in
	// as it is written, and no worker waits for a generation's slowest
	// game (default 0, the synchronous loop, until matches decide).
	// Workers on other machines always play ahead.
	Ahead int `yaml:"ahead"`
	// The move-choice temperature schedule (see mcts.Temperature) of
	// PUCT searches; a Gumbel search's move is already a sample and
	// takes no temperature unless GumbelTemperature.
	mcts.Temperature `yaml:",inline"`
	// GumbelTemperature scales a Gumbel search's root noise by the
	// temperature schedule, move by move (mcts.Tree.SetNoiseScale): the
	// move is then a sample at that temperature, so that late moves are
	// mostly the search's best and a game's result says more of the
	// positions before it. Default off: the paper's noise at every move.
	GumbelTemperature bool `yaml:"gumbel_temperature"`
	// A game is resigned when the mover's root value stays below
	// ResignThreshold (default -0.9; -1 never resigns) for ResignMoves
	// (default 3) consecutive moves; NoResignFraction of the games
	// (default 0.1, as AlphaGo Zero) never resign, to count false
	// resignations.
	ResignThreshold  float64 `yaml:"resign_threshold"`
	ResignMoves      int     `yaml:"resign_moves"`
	NoResignFraction float64 `yaml:"no_resign_fraction"`
	// SearchValueWeight mixes the search's root value into each sample's
	// value target: (1 − w)·outcome + w·root value (default 0: the
	// game's outcome alone). The outcome is right on average but noisy,
	// one late blunder flipping it for every move before; the root value
	// is steadier but only as good as the network. Oracle's AlphaZero
	// study of Connect Four found their average learned fastest.
	SearchValueWeight float64 `yaml:"search_value_weight"`
	// PolicySurpriseWeight is KataGo's policy surprise weighting: the
	// fraction of a game's sample weight given out in proportion to each
	// sample's policy surprise — KL(policy target ‖ the prior the search
	// started from), how far the search moved the network's opinion —
	// and the rest evenly, so that a game still weighs as many ordinary
	// samples as it has while the positions where the network was most
	// wrong are learned sooner (default 0: every sample weighs 1; KataGo
	// uses 0.5, which lost 30–4–66 to 0 in 50 minutes of Othello a core,
	// docs/experiments.md). KataGo writes such a sample down more often;
	// here its loss weighs more, which trains much the same without
	// growing the replay window. No sample weighs more than data.MaxWeight.
	PolicySurpriseWeight float64 `yaml:"policy_surprise_weight"`
	// ForkFraction is KataGo's forked games: each finished game sets
	// aside, with this probability, one of its searched positions (every
	// one as likely) with a move it did not play there, drawn by the
	// search's policy target; the worker's next game starts from it
	// instead of the start, so that about this fraction of the games
	// play out lines the network's own choices seldom reach again, each
	// a game of its own with its own result (default 0: every game from
	// the start; 0.25 was even with 0 over a core's hour of YINSH blitz,
	// 100–0–100, docs/experiments.md). A worker keeps its Concurrent
	// newest forks.
	ForkFraction float64 `yaml:"fork_fraction"`
	// Forks, where set, carries the forks from one PlayGames to the
	// next (a generation's games start from the last one's); without
	// it they last one call.
	Forks *Forks `yaml:"-"`
	// Progress, where set, hears after each round of a worker's searches
	// how many moves it searched and how many positions all workers have
	// had evaluated or answered from a cache so far (from several
	// goroutines at once): what a progress bar needs to move while the
	// games are still being played.
	Progress func(moves int, sofar Stats) `yaml:"-"`
}

// maxEvalCache bounds EvalCache: its table of 72-byte slots (72 MiB at
// this bound, before the answers they hold) should not reach gigabytes by
// a typo, or by a config sent from another machine.
const maxEvalCache = 1 << 20

// DefaultSettings are the shipped configs' self-play settings.
func DefaultSettings() Settings {
	return Settings{
		Games: 128, Concurrent: 64, BatchSize: 32,
		Temperature:     mcts.Temperature{Start: 0.8, End: 0.2, HalfLife: 12},
		ResignThreshold: -0.9, ResignMoves: 3, NoResignFraction: 0.1,
	}
}

// gumbelNoiseScale is how much of a Gumbel search's root noise the move
// at ply gets: the temperature there with GumbelTemperature, else all.
func (s Settings) gumbelNoiseScale(ply int) float64 {
	if s.GumbelTemperature {
		return s.Temperature.At(ply)
	}
	return 1
}

// Validate names the first setting out of range by its key.
func (s Settings) Validate() error {
	switch {
	case s.Games < 1 || s.Games > 1_000_000:
		return fmt.Errorf("games_per_generation: %d, must be 1..1000000", s.Games)
	case s.Concurrent < 1 || s.Concurrent > 4096:
		return fmt.Errorf("concurrent_games: %d, must be 1..4096", s.Concurrent)
	case s.BatchSize < 1 || s.BatchSize > 1024:
		return fmt.Errorf("batch_size: %d, must be 1..1024", s.BatchSize)
	case s.Workers < 0 || s.Workers > 256:
		return fmt.Errorf("workers: %d, must be 0..256 (0: one per core)", s.Workers)
	case s.EvalCache < 0 || s.EvalCache > maxEvalCache || s.EvalCache&(s.EvalCache-1) != 0:
		return fmt.Errorf("eval_cache: %d, must be 0 (none) or a power of two up to %d", s.EvalCache, maxEvalCache)
	case s.Ahead < 0 || s.Ahead > 1:
		return fmt.Errorf("ahead: %d, must be 0 or 1 (generations self-play may play ahead of training)", s.Ahead)
	case !(s.ResignThreshold >= -1 && s.ResignThreshold <= 0):
		return fmt.Errorf("resign_threshold: %v, must be in [-1, 0] (-1: never resign)", s.ResignThreshold)
	case s.ResignMoves < 0:
		return fmt.Errorf("resign_moves: %d, must be 0 or more", s.ResignMoves)
	case !(s.NoResignFraction >= 0 && s.NoResignFraction <= 1):
		return fmt.Errorf("no_resign_fraction: %v, must be in [0, 1]", s.NoResignFraction)
	case !(s.SearchValueWeight >= 0 && s.SearchValueWeight <= 1):
		return fmt.Errorf("search_value_weight: %v, must be in [0, 1]", s.SearchValueWeight)
	case !(s.PolicySurpriseWeight >= 0 && s.PolicySurpriseWeight <= 1):
		return fmt.Errorf("policy_surprise_weight: %v, must be in [0, 1]", s.PolicySurpriseWeight)
	case !(s.ForkFraction >= 0 && s.ForkFraction <= 1):
		return fmt.Errorf("fork_fraction: %v, must be in [0, 1]", s.ForkFraction)
	}
	return s.Temperature.Validate()
}

// GameRecord is one finished self-play game.
type GameRecord struct {
	Samples []data.Sample // the full searches, with the game's outcome
	Moves   int           // decisions this game played (not chance events, nor a fork's)
	// Actions are the decisions in order, forced ones and chance
	// outcomes included, so that the game can be kept as a record and
	// replayed.
	Actions []int
	Winner  env.Player // env.NoPlayer for a draw
	// Result is the outcome as records write it: env.ResultName at the
	// end of the game ("black", "draw", "score 17"), the winner's name
	// after a resignation.
	Result string
	// Score is a one-player game's final score (env.Scorer) in the
	// game's units; 0 in other games.
	Score float64
	// Resigned: the game ended by resignation (Winner is the other side).
	Resigned bool
	// WouldResign is set in a game that was not allowed to resign when the
	// given player's value crossed the threshold; FalseResign then says
	// that player did not lose in the end.
	WouldResign bool
	FalseResign bool
	// Surprise sums the samples' policy surprise (policySurprise).
	Surprise float64
	// Forked is how many of Actions an earlier game chose, where the
	// game started from a fork (Settings.ForkFraction): the earlier
	// game's actions up to a position, then the move it did not play
	// there. 0 for a game from the start.
	Forked int
}

// Tally counts what finished games did, the same way wherever they were
// played: the loop's metrics and a worker's shards both add games through
// it, so that a statistic added here is added everywhere.
type Tally struct {
	Games int `json:"games"`
	Moves int `json:"moves"`
	// Results counts first-player wins, second-player wins and draws.
	Results [3]int `json:"results"`
	// Resigned counts the games a resignation ended; NoResign those
	// played out where one would have happened, FalseResign those of them
	// the resigning side drew or won.
	Resigned    int `json:"resigned"`
	NoResign    int `json:"no_resign"`
	FalseResign int `json:"false_resign"`
	// Score sums a one-player game's final scores.
	Score float64 `json:"score"`
	// Surprise sums the policy surprise of SurpriseSamples recorded
	// positions: KL(search's policy target ‖ network's prior), in nats,
	// how much the search still had to teach the network there.
	Surprise        float64 `json:"policy_surprise"`
	SurpriseSamples int     `json:"surprise_samples"`
	// Forked counts the games started from a fork.
	Forked int `json:"forked,omitempty"`
}

// Add counts one finished game.
func (t *Tally) Add(r GameRecord) {
	t.Games++
	t.Moves += r.Moves
	switch r.Winner {
	case 0, 1:
		t.Results[r.Winner]++
	default:
		t.Results[2]++
	}
	if r.Resigned {
		t.Resigned++
	}
	if r.WouldResign {
		t.NoResign++
		if r.FalseResign {
			t.FalseResign++
		}
	}
	t.Score += r.Score
	t.Surprise += r.Surprise
	t.SurpriseSamples += len(r.Samples)
	if r.Forked > 0 {
		t.Forked++
	}
}

// Merge adds another tally's counts.
func (t *Tally) Merge(o Tally) {
	t.Games += o.Games
	t.Moves += o.Moves
	for i := range t.Results {
		t.Results[i] += o.Results[i]
	}
	t.Resigned += o.Resigned
	t.NoResign += o.NoResign
	t.FalseResign += o.FalseResign
	t.Score += o.Score
	t.Surprise += o.Surprise
	t.SurpriseSamples += o.SurpriseSamples
	t.Forked += o.Forked
}

// Stats counts what a batch of self-play did.
type Stats struct {
	Evaluations int64 // positions the network scored
	Cached      int64 // positions the evaluators' caches answered instead
}

// cacheCounter is an evaluator that answers some positions from a cache
// (an nn.BatchEvaluator with one): those cost no evaluation.
type cacheCounter interface {
	CacheStats() (hits, lookups int64)
}

// counters are a Stats that every worker adds to.
type counters struct {
	evaluations, cached atomic.Int64
}

func (c *counters) load() Stats {
	return Stats{Evaluations: c.evaluations.Load(), Cached: c.cached.Load()}
}

// countingEvaluator counts the positions an evaluator's network scores
// and those its cache answers.
type countingEvaluator struct {
	inner  mcts.Evaluator
	cache  cacheCounter // nil: none
	counts *counters
}

func newCountingEvaluator(inner mcts.Evaluator, counts *counters) countingEvaluator {
	c := countingEvaluator{inner: inner, counts: counts}
	c.cache, _ = inner.(cacheCounter)
	return c
}

func (c countingEvaluator) Evaluate(states []env.State, priors, values []float32) error {
	var before int64
	if c.cache != nil {
		before, _ = c.cache.CacheStats()
	}
	err := c.inner.Evaluate(states, priors, values)
	hits := int64(0)
	if c.cache != nil {
		after, _ := c.cache.CacheStats()
		hits = after - before
		c.counts.cached.Add(hits)
	}
	c.counts.evaluations.Add(int64(len(states)) - hits)
	return err
}

// WorkerCount is how many workers PlayGames runs: Workers (0: one per
// core), never more than there are games.
func (s Settings) WorkerCount() int {
	workers := s.Workers
	if workers < 1 {
		workers = runtime.NumCPU()
	}
	return max(1, min(workers, s.Games))
}

// PlayGames plays settings.Games games of g with settings.Workers workers
// (0: one per core), each with an evaluator from newEvaluator, handing
// every finished game to done as it ends (done is called from one
// goroutine at a time). The games are shared out evenly before play
// starts, so that every worker has its part to play whatever the
// generation's size, and a worker's games depend only on its seed.
func PlayGames[E mcts.Evaluator](ctx context.Context, g env.Game, search Search, settings Settings, seed uint64, newEvaluator func() (E, error), done func(GameRecord)) (Stats, error) {
	return play(ctx, g, search, settings, seed, newEvaluator, done, nil, nil)
}

// Gate says when a stream may start a game: Start takes one game to play
// if one may start now, and Changed returns a channel closed when that
// may have changed.
type Gate interface {
	Start() bool
	Changed() <-chan struct{}
}

// Stream is self-play that never waits for a round's slowest game
// (KataGo's): each worker keeps its share of the games in play, starting
// a new one as soon as one ends and the gate lets it, until its context
// ends. Between two rounds of its searches a worker lets Pause in, so
// that a new network can be swapped into the evaluators while they play.
type Stream struct {
	pause sync.RWMutex
}

// Pause runs f while every worker of the stream waits between two rounds
// of its searches: none is evaluating or moving until f returns.
func (st *Stream) Pause(f func() error) error {
	st.pause.Lock()
	defer st.pause.Unlock()
	return f()
}

// PlayStream plays games of g on st until ctx ends or a worker fails,
// starting each when gate lets it and handing it to done as it ends
// (from one goroutine at a time). Each of settings.Workers workers (0:
// one per core, never more than settings.Games) keeps up to
// settings.Concurrent games in play, and no more than its share of
// settings.Games, so that every worker has games to play. It returns
// ctx's error once ctx ends, or the first worker's.
func PlayStream[E mcts.Evaluator](ctx context.Context, st *Stream, g env.Game, search Search, settings Settings, seed uint64, newEvaluator func() (E, error), gate Gate, done func(GameRecord)) (Stats, error) {
	if gate == nil {
		return Stats{}, errors.New("self-play stream: no gate")
	}
	return play(ctx, g, search, settings, seed, newEvaluator, done, gate, &st.pause)
}

// play runs the workers of PlayGames (gate nil: each its share of the
// games) or of PlayStream.
func play[E mcts.Evaluator](ctx context.Context, g env.Game, search Search, settings Settings, seed uint64, newEvaluator func() (E, error), done func(GameRecord), gate Gate, pause *sync.RWMutex) (Stats, error) {
	workers := settings.WorkerCount()
	var counts counters
	var mu sync.Mutex
	report := func(r GameRecord) {
		mu.Lock()
		defer mu.Unlock()
		done(r)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, workers)
	forks := settings.Forks
	if forks == nil {
		forks = &Forks{}
	}
	// Evaluators that hold device memory (a GPU's) give it back when the
	// games are over (each worker closes its own as it finishes; Close is
	// idempotent).
	var evals []mcts.Evaluator
	defer func() {
		for _, e := range evals {
			closeEvaluator(e, pause)
		}
	}()
	for w := 0; w < workers; w++ {
		eval, err := newEvaluator()
		if err == nil {
			evals = append(evals, eval)
		}
		if err != nil {
			cancel()
			for i := 0; i < w; i++ {
				<-errs
			}
			return Stats{}, fmt.Errorf("self-play: %w", err)
		}
		share := settings.Games / workers
		if w < settings.Games%workers {
			share++
		}
		worker := &worker{
			counts:     &counts,
			game:       g,
			search:     search,
			settings:   settings,
			eval:       newCountingEvaluator(eval, &counts),
			rng:        rand.New(rand.NewPCG(seed, uint64(w)+1)),
			left:       share,
			gate:       gate,
			pause:      pause,
			concurrent: settings.Concurrent,
			report:     report,
			solo:       env.Players(g) == 1,
			forks:      forks.queue(w),
		}
		worker.forks.limit = settings.Concurrent
		if gate != nil {
			worker.left = 0
			worker.concurrent = min(settings.Concurrent, share)
		}
		go func() {
			err := worker.run(ctx)
			if err != nil {
				cancel()
			}
			// A worker done with its games lets go of its evaluator at
			// once: a batching server then stops waiting for it.
			closeEvaluator(eval, pause)
			errs <- err
		}()
	}
	var firstErr error
	for w := 0; w < workers; w++ {
		if err := <-errs; err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return counts.load(), firstErr
}

// closeEvaluator closes an evaluator that holds resources, outside any
// pause of its stream (whose function may be reloading it).
func closeEvaluator(e any, pause *sync.RWMutex) {
	c, ok := e.(interface{ Close() error })
	if !ok {
		return
	}
	if pause != nil {
		pause.RLock()
		defer pause.RUnlock()
	}
	c.Close()
}

// slot is one game in progress in a worker.
type slot struct {
	tree      *mcts.Tree
	ply       int
	actions   []int
	pending   []pendingSample
	canResign bool
	// lowStreak counts, per player, consecutive moves with a root value
	// under the resignation threshold.
	lowStreak   [2]int
	wouldResign env.Player // -1 until a no-resign game passes the threshold
	full        bool
	// forked is how many of actions came from a fork (GameRecord.Forked),
	// forkPly how many decisions.
	forked, forkPly int
}

type pendingSample struct {
	sample data.Sample
	mover  env.Player
	value  float32 // the search's root value for the mover
	// surprise is KL(policy target ‖ prior) at the root, in nats.
	surprise float64
	// at is where the move played there lies in the game's actions; ply
	// counts the decisions before it.
	at, ply int
}

// worker plays games in lockstep: every round, each game in progress
// makes one search (all batched together) and one move.
type worker struct {
	// counts are what every worker's evaluator scored and had answered.
	counts   *counters
	game     env.Game
	search   Search
	settings Settings
	eval     mcts.Evaluator
	rng      *rand.Rand
	// left counts the games the worker has still to start; in a stream,
	// gate says instead when it may start one, and pause is held (read)
	// through each round of its searches and moves.
	left  int
	gate  Gate
	pause *sync.RWMutex
	// concurrent bounds its games in play at once.
	concurrent int
	report     func(GameRecord)
	legal      []int
	// chance is the result buffer for drawing a chance root's outcome.
	chance mcts.Result
	// solo: a one-player game, where nobody resigns (see resignCheck).
	solo bool
	// forks are the positions finished games set aside for the next
	// games to start from (Settings.ForkFraction).
	forks *forkQueue
}

// claim takes one of the worker's games to start, if it has one left
// (or, in a stream, if the gate lets one start now).
func (w *worker) claim() bool {
	if w.gate != nil {
		return w.gate.Start()
	}
	if w.left == 0 {
		return false
	}
	w.left--
	return true
}

// inPlay holds a worker's games in progress and the slots of ended ones
// kept for the next game a stream starts (their trees reused).
type inPlay struct {
	playing, idle []*slot
}

func (w *worker) run(ctx context.Context) error {
	batcher, err := mcts.NewBatcher(w.eval, w.settings.BatchSize)
	if err != nil {
		return err
	}
	var g inPlay
	if err := w.fill(&g); err != nil {
		return err
	}
	var r round
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if w.gate != nil {
			// A stream's worker starts what the gate allows, or waits for
			// it to allow something when it has nothing in play.
			changed := w.gate.Changed()
			if err := w.fill(&g); err != nil {
				return err
			}
			if len(g.playing) == 0 {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-changed:
				}
				continue
			}
		}
		if len(g.playing) == 0 {
			return nil
		}
		if w.pause != nil {
			w.pause.RLock()
		}
		err := w.round(ctx, batcher, &g, &r)
		if w.pause != nil {
			w.pause.RUnlock()
		}
		if err != nil {
			return err
		}
	}
}

// fill starts games in free slots while the worker may start them.
func (w *worker) fill(g *inPlay) error {
	for len(g.playing) < w.concurrent && w.claim() {
		var s *slot
		if n := len(g.idle); n > 0 {
			s, g.idle = g.idle[n-1], g.idle[:n-1]
		} else {
			tree, err := mcts.NewTree(w.search.Config, w.game.NewState())
			if err != nil {
				return err
			}
			s = &slot{tree: tree}
		}
		if err := w.newGame(s); err != nil {
			return err
		}
		g.playing = append(g.playing, s)
	}
	return nil
}

// newGame resets s to a new game: from the oldest fork the worker holds,
// or else from the start.
func (w *worker) newGame(s *slot) error {
	start := w.game.NewState()
	f, _ := w.forks.pop() // none: the zero fork, the start
	for _, a := range f.actions {
		start.Apply(a)
	}
	if err := s.tree.Reset(start); err != nil {
		return err
	}
	*s = slot{tree: s.tree, pending: s.pending[:0], actions: append(s.actions[:0], f.actions...),
		ply: f.ply, forked: len(f.actions), forkPly: f.ply,
		wouldResign: env.NoPlayer, canResign: w.rng.Float64() >= w.settings.NoResignFraction}
	return nil
}

// next gives an ended game's slot its next game, if the worker may start
// one, and says whether it did; else the slot waits among the idle.
func (w *worker) next(g *inPlay, s *slot) (bool, error) {
	if !w.claim() {
		g.idle = append(g.idle, s)
		return false, nil
	}
	return true, w.newGame(s)
}

// round is a worker's buffers for one round of its games.
type round struct {
	trees    []*mcts.Tree
	playouts []int
	result   mcts.Result
}

// round plays one move in each of the worker's games: what needs no
// decision at once, then one search of every game's root, all batched
// together, and the moves they choose.
func (w *worker) round(ctx context.Context, batcher *mcts.Batcher, g *inPlay, r *round) error {
	// Chance outcomes and forced moves (a single legal action: passes,
	// forced removals) need no search and teach nothing: play them at
	// once.
	active := g.playing[:0]
	for _, s := range g.playing {
		ended, err := w.playForced(s)
		if err != nil {
			return err
		}
		if !ended {
			active = append(active, s)
			continue
		}
		if again, err := w.next(g, s); err != nil {
			return err
		} else if again {
			active = append(active, s)
		}
	}
	g.playing = active
	if len(g.playing) == 0 {
		return nil
	}
	r.trees, r.playouts = r.trees[:0], r.playouts[:0]
	for _, s := range g.playing {
		n, full := w.search.PlayoutCap.Draw(w.rng)
		s.full = full
		// A Gumbel search's noise is how the game explores: every move
		// gets it, and its result's move is already a sample.
		if full || w.search.Mode == mcts.Gumbel {
			s.tree.SetNoise(w.rng)
		} else {
			s.tree.SetNoise(nil)
		}
		s.tree.SetNoiseScale(w.settings.gumbelNoiseScale(s.ply))
		r.trees = append(r.trees, s.tree)
		r.playouts = append(r.playouts, n)
	}
	if err := batcher.Search(ctx, r.trees, r.playouts); err != nil {
		return err
	}
	if w.settings.Progress != nil {
		w.settings.Progress(len(r.trees), w.counts.load())
	}
	planes, h, wd := w.game.EncodedShape()
	kept := g.playing[:0]
	for _, s := range g.playing {
		root := s.tree.Root()
		s.tree.Result(&r.result)
		mover := root.ToMove()
		if s.full {
			smp := data.Sample{Planes: make([]float32, planes*h*wd), Weight: 1}
			root.Encode(smp.Planes)
			// The visit distribution, or with Gumbel the improved policy
			// softmax(logits + σ(completed Q)).
			for _, c := range r.result.Children {
				smp.Legal = append(smp.Legal, int32(c.Action))
				smp.Policy = append(smp.Policy, r.result.Policy[c.Action])
			}
			s.pending = append(s.pending, pendingSample{smp, mover, r.result.Value, policySurprise(&r.result), len(s.actions), s.ply})
		}
		if resigned := w.resignCheck(s, mover, r.result.Value); resigned {
			w.finish(s, mover.Other(), true)
			if again, err := w.next(g, s); err != nil {
				return err
			} else if again {
				kept = append(kept, s)
			}
			continue
		}
		action := r.result.Choose(w.settings.Temperature.At(s.ply), w.rng)
		if err := s.tree.Advance(action); err != nil {
			return err
		}
		s.actions = append(s.actions, action)
		s.ply++
		kept = append(kept, s)
	}
	g.playing = kept
	return nil
}

// playForced plays what needs no decision until a decision does, and
// reports whether the game ended (reporting it): at a chance root an
// outcome drawn by its probability — nobody decides there, so the
// position is never a sample, and the state holds no hidden faces to
// draw from, only their odds — and elsewhere the root's only legal
// action while there is just one.
func (w *worker) playForced(s *slot) (ended bool, err error) {
	for {
		root := s.tree.Root()
		if root.Terminal() {
			w.finish(s, root.Winner(), false)
			return true, nil
		}
		if env.IsChance(root) {
			s.tree.Result(&w.chance)
			if !w.chance.Chance || len(w.chance.Children) == 0 {
				return false, fmt.Errorf("self-play: a %s chance node without outcomes", w.game.Name())
			}
			a := w.chance.Choose(0, w.rng)
			if err := s.tree.Advance(a); err != nil {
				return false, err
			}
			// Not a ply: the temperature schedule counts decisions.
			s.actions = append(s.actions, a)
			continue
		}
		w.legal = root.LegalActions(w.legal)
		if len(w.legal) != 1 {
			return false, nil
		}
		if err := s.tree.Advance(w.legal[0]); err != nil {
			return false, err
		}
		s.actions = append(s.actions, w.legal[0])
		s.ply++
	}
}

// resignCheck updates the resignation streaks and says whether the mover
// resigns now.
//
// A one-player game is never resigned: its low value is a low expected
// score, still worth playing for, and there is nobody to resign to.
func (w *worker) resignCheck(s *slot, mover env.Player, value float32) bool {
	if w.solo || w.settings.ResignThreshold <= -1 || w.settings.ResignMoves < 1 {
		return false
	}
	if float64(value) < w.settings.ResignThreshold {
		s.lowStreak[mover]++
	} else {
		s.lowStreak[mover] = 0
	}
	if s.lowStreak[mover] < w.settings.ResignMoves {
		return false
	}
	if s.canResign {
		return true
	}
	if s.wouldResign == env.NoPlayer {
		s.wouldResign = mover
	}
	return false
}

// finish gives every recorded position its outcome and reports the game.
// A game played to its end gives each mover env.Value of the final
// position: the win, draw or loss, or a one-player game's normalised
// score, which is what the search backs up from the game's end and the
// value head is trained towards. A resigned game gives the win to the
// other side. Settings.SearchValueWeight mixes in the search's value.
func (w *worker) finish(s *slot, winner env.Player, resigned bool) {
	// The slot's actions are reused by its next game: the record gets
	// its own copy.
	r := GameRecord{Moves: s.ply - s.forkPly, Actions: append([]int(nil), s.actions...), Winner: winner, Resigned: resigned, Forked: s.forked}
	final := s.tree.Root()
	if resigned {
		r.Result = w.game.PlayerName(winner)
	} else {
		r.Result = env.ResultName(final)
		if sc, ok := final.(env.Scorer); ok {
			r.Score = sc.Score()
		}
	}
	// The auxiliary targets come from the final position, which a
	// resigned game never reached.
	var owned [2][]int8
	var margin [2]float32
	if o, ok := final.(env.Ownership); ok && !resigned {
		owned, margin = ownership(o, w.game)
	}
	r.Samples = make([]data.Sample, len(s.pending))
	for _, p := range s.pending {
		r.Surprise += p.surprise
	}
	meanSurprise := r.Surprise / float64(max(len(s.pending), 1))
	for i, p := range s.pending {
		smp := p.sample
		switch {
		case !resigned:
			smp.Outcome = env.Value(final, p.mover)
		case winner == p.mover:
			smp.Outcome = 1
		default:
			smp.Outcome = -1
		}
		if mix := float32(w.settings.SearchValueWeight); mix > 0 {
			smp.Outcome = (1-mix)*smp.Outcome + mix*max(-1, min(1, p.value))
		}
		if owned[0] != nil && p.mover >= 0 && p.mover <= 1 {
			smp.Ownership, smp.Margin = owned[p.mover], margin[p.mover]
		}
		if f := w.settings.PolicySurpriseWeight; f > 0 && meanSurprise > 0 {
			smp.Weight = surpriseWeight(p.surprise, meanSurprise, f)
		}
		r.Samples[i] = smp
	}
	if s.wouldResign != env.NoPlayer {
		r.WouldResign = true
		r.FalseResign = winner != s.wouldResign.Other()
	}
	if f := w.settings.ForkFraction; f > 0 && w.rng.Float64() < f {
		if fk, ok := setAside(w.game, s.actions, s.pending, w.rng); ok {
			w.forks.push(fk)
		}
	}
	w.report(r)
}

const (
	surprisePriorFloor = 1e-8
	// MaxPolicySurprise bounds one position's policy surprise:
	// ln(1/surprisePriorFloor) ≈ 18.42 nats, and a little for a policy
	// target that sums to a hair over one.
	MaxPolicySurprise = 18.5
)

// policySurprise is how far a search moved the root's policy from the
// prior it started from: KL(target ‖ prior) over the legal actions, in
// nats. The prior is the one the search used, noise included, as
// KataGo's; a Gumbel search's noise leaves the prior as the network gave
// it. A prior under surprisePriorFloor counts as that, so that one
// unlikely move the search liked cannot make the surprise infinite.
func policySurprise(r *mcts.Result) float64 {
	kl := 0.0
	for _, c := range r.Children {
		if p := float64(r.Policy[c.Action]); p > 0 {
			kl += p * math.Log(p/max(float64(c.Prior), surprisePriorFloor))
		}
	}
	// A prior summing to a little more than one can make it a hair
	// negative.
	return max(kl, 0)
}

// surpriseWeight is a sample's weight under policy surprise weighting
// with fraction f, given its game's mean surprise: 1 − f evenly and f in
// proportion to its surprise, so that the game's weights add up to its
// number of samples (unless one would pass data.MaxWeight).
func surpriseWeight(surprise, meanSurprise, f float64) float32 {
	return float32(min(data.MaxWeight, (1-f)+f*surprise/meanSurprise))
}

// ownership is a final position's auxiliary targets from each player's
// point of view; the game's samples share them.
func ownership(o env.Ownership, g env.Game) (owned [2][]int8, margin [2]float32) {
	_, h, w := g.EncodedShape()
	cells := make([]float32, h*w)
	for p := range owned {
		o.Ownership(env.Player(p), cells)
		owned[p] = make([]int8, len(cells))
		for c, v := range cells {
			owned[p][c] = int8(max(-1, min(1, math.Round(float64(v)))))
		}
		margin[p] = max(-1, min(1, o.ScoreMargin(env.Player(p))))
	}
	return owned, margin
}
