package selfplay

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/flipzero/flipzero/data"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/mcts"
)

// PlaySettings says how self-play games are played.
type PlaySettings struct {
	Search      mcts.Config
	Cap         mcts.PlayoutCap
	Temperature mcts.Temperature
	// Games to play in all; Concurrent games per worker, whose leaves
	// are batched BatchSize at a time; Workers run in parallel, each with
	// its own evaluator.
	Games, Concurrent, BatchSize, Workers int
	// ResignThreshold, ResignMoves and NoResignFraction: see
	// SelfPlayConfig. A threshold of -1 or less never resigns.
	ResignThreshold  float64
	ResignMoves      int
	NoResignFraction float64
	Seed             uint64
}

// SettingsFrom turns a run config into play settings.
func SettingsFrom(cfg Config, seed uint64) PlaySettings {
	search := mcts.DefaultConfig()
	search.CPUCT = cfg.Search.CPuct
	search.FPUReduction = cfg.Search.FPUReduction
	search.RootFPUReduction = cfg.Search.FPUReductionRoot
	search.DirichletAlphaTotal = cfg.Search.DirichletAlphaTotal
	search.DirichletWeight = cfg.Search.NoiseWeight
	search.ForcedPlayouts = cfg.Search.ForcedPlayouts
	sp := cfg.SelfPlay
	return PlaySettings{
		Search: search,
		Cap: mcts.PlayoutCap{Full: cfg.Search.PlayoutsFull, Fast: cfg.Search.PlayoutsFast,
			FullFraction: cfg.Search.FullSearchFraction},
		Temperature:      mcts.Temperature{Start: sp.Temperature, End: sp.FinalTemperature, HalfLife: sp.TemperatureHalfLife},
		Games:            sp.GamesPerGeneration,
		Concurrent:       sp.ConcurrentGames,
		BatchSize:        sp.BatchSize,
		Workers:          sp.Workers,
		ResignThreshold:  sp.ResignThreshold,
		ResignMoves:      sp.ResignMoves,
		NoResignFraction: sp.NoResignFraction,
		Seed:             seed,
	}
}

// GameRecord is one finished self-play game.
type GameRecord struct {
	Samples []data.Sample // the full searches, with the game's outcome
	Moves   int           // decisions played
	Winner  env.Player    // env.NoPlayer for a draw
	// Resigned: the game ended by resignation (Winner is the other side).
	Resigned bool
	// WouldResign is set in a game that was not allowed to resign when the
	// given player's value crossed the threshold; FalseResign then says
	// that player did not lose in the end.
	WouldResign bool
	FalseResign bool
}

// Stats counts what a batch of self-play did.
type Stats struct {
	Evaluations int64 // positions the evaluators scored
}

// countingEvaluator counts the positions an evaluator scores.
type countingEvaluator struct {
	inner mcts.Evaluator
	count *atomic.Int64
}

func (c countingEvaluator) Evaluate(states []env.State, priors, values []float32) error {
	c.count.Add(int64(len(states)))
	return c.inner.Evaluate(states, priors, values)
}

// PlayGames plays settings.Games games of g with settings.Workers workers
// (each with an evaluator from newEvaluator), handing every finished game
// to done as it ends (done is called from one goroutine at a time).
func PlayGames(ctx context.Context, g env.Game, settings PlaySettings, newEvaluator func() (mcts.Evaluator, error), done func(GameRecord)) (Stats, error) {
	if settings.Workers < 1 {
		settings.Workers = 1
	}
	var remaining atomic.Int64
	remaining.Store(int64(settings.Games))
	var evaluations atomic.Int64
	var mu sync.Mutex
	report := func(r GameRecord) {
		mu.Lock()
		defer mu.Unlock()
		done(r)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, settings.Workers)
	for w := 0; w < settings.Workers; w++ {
		eval, err := newEvaluator()
		if err != nil {
			return Stats{}, fmt.Errorf("self-play: %w", err)
		}
		worker := &worker{
			game:     g,
			settings: settings,
			eval:     countingEvaluator{eval, &evaluations},
			rng:      rand.New(rand.NewPCG(settings.Seed, uint64(w)+1)),
			claim: func() bool {
				return remaining.Add(-1) >= 0
			},
			report: report,
		}
		go func() {
			err := worker.run(ctx)
			if err != nil {
				cancel()
			}
			errs <- err
		}()
	}
	var firstErr error
	for w := 0; w < settings.Workers; w++ {
		if err := <-errs; err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return Stats{Evaluations: evaluations.Load()}, firstErr
}

// slot is one game in progress in a worker.
type slot struct {
	tree      *mcts.Tree
	ply       int
	pending   []pendingSample
	canResign bool
	// lowStreak counts, per player, consecutive moves with a root value
	// under the resignation threshold.
	lowStreak   [2]int
	wouldResign env.Player // -1 until a no-resign game passes the threshold
	full        bool
}

type pendingSample struct {
	sample data.Sample
	mover  env.Player
}

// worker plays games in lockstep: every round, each game in progress
// makes one search (all batched together) and one move.
type worker struct {
	game     env.Game
	settings PlaySettings
	eval     mcts.Evaluator
	rng      *rand.Rand
	claim    func() bool
	report   func(GameRecord)
	legal    []int
}

func (w *worker) run(ctx context.Context) error {
	batcher, err := mcts.NewBatcher(w.eval, w.settings.BatchSize)
	if err != nil {
		return err
	}
	start := w.game.NewState()
	var slots []*slot
	newGame := func(s *slot) error {
		if err := s.tree.Reset(start); err != nil {
			return err
		}
		*s = slot{tree: s.tree, pending: s.pending[:0], wouldResign: env.NoPlayer,
			canResign: w.rng.Float64() >= w.settings.NoResignFraction}
		return nil
	}
	for i := 0; i < w.settings.Concurrent && w.claim(); i++ {
		tree, err := mcts.NewTree(w.settings.Search, start)
		if err != nil {
			return err
		}
		s := &slot{tree: tree}
		if err := newGame(s); err != nil {
			return err
		}
		slots = append(slots, s)
	}
	trees := make([]*mcts.Tree, 0, len(slots))
	playouts := make([]int, 0, len(slots))
	var result mcts.Result
	planes, h, wd := w.game.EncodedShape()
	for len(slots) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		// Forced moves (a single legal action: passes, forced removals)
		// need no search and teach nothing: play them at once.
		active := slots[:0]
		for _, s := range slots {
			ended, err := w.playForced(s)
			if err != nil {
				return err
			}
			if !ended {
				active = append(active, s)
				continue
			}
			if w.claim() {
				if err := newGame(s); err != nil {
					return err
				}
				active = append(active, s)
			}
		}
		slots = active
		if len(slots) == 0 {
			break
		}
		trees, playouts = trees[:0], playouts[:0]
		for _, s := range slots {
			n, full := w.settings.Cap.Draw(w.rng)
			s.full = full
			if full {
				s.tree.SetNoise(w.rng)
			} else {
				s.tree.SetNoise(nil)
			}
			trees = append(trees, s.tree)
			playouts = append(playouts, n)
		}
		if err := batcher.Search(ctx, trees, playouts); err != nil {
			return err
		}
		kept := slots[:0]
		for _, s := range slots {
			root := s.tree.Root()
			s.tree.Result(&result)
			mover := root.ToMove()
			if s.full {
				smp := data.Sample{Planes: make([]float32, planes*h*wd), Weight: 1}
				root.Encode(smp.Planes)
				for _, c := range result.Children {
					smp.Legal = append(smp.Legal, int32(c.Action))
					smp.Policy = append(smp.Policy, result.Policy[c.Action])
				}
				s.pending = append(s.pending, pendingSample{smp, mover})
			}
			if resigned := w.resignCheck(s, mover, result.Value); resigned {
				w.finish(s, mover.Other(), true)
				if !w.claim() {
					continue
				}
				if err := newGame(s); err != nil {
					return err
				}
				kept = append(kept, s)
				continue
			}
			action := result.Choose(w.settings.Temperature.At(s.ply), w.rng)
			if err := s.tree.Advance(action); err != nil {
				return err
			}
			s.ply++
			kept = append(kept, s)
		}
		slots = kept
	}
	return nil
}

// playForced plays the root's only legal action while there is just one,
// and reports whether the game ended (reporting it).
func (w *worker) playForced(s *slot) (ended bool, err error) {
	for {
		root := s.tree.Root()
		if root.Terminal() {
			w.finish(s, root.Winner(), false)
			return true, nil
		}
		w.legal = root.LegalActions(w.legal)
		if len(w.legal) != 1 {
			return false, nil
		}
		if err := s.tree.Advance(w.legal[0]); err != nil {
			return false, err
		}
		s.ply++
	}
}

// resignCheck updates the resignation streaks and says whether the mover
// resigns now.
func (w *worker) resignCheck(s *slot, mover env.Player, value float32) bool {
	if w.settings.ResignThreshold <= -1 || w.settings.ResignMoves < 1 {
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
func (w *worker) finish(s *slot, winner env.Player, resigned bool) {
	r := GameRecord{Moves: s.ply, Winner: winner, Resigned: resigned}
	r.Samples = make([]data.Sample, len(s.pending))
	for i, p := range s.pending {
		smp := p.sample
		switch winner {
		case env.NoPlayer:
			smp.Outcome = 0
		case p.mover:
			smp.Outcome = 1
		default:
			smp.Outcome = -1
		}
		r.Samples[i] = smp
	}
	if s.wouldResign != env.NoPlayer {
		r.WouldResign = true
		r.FalseResign = winner != s.wouldResign.Other()
	}
	w.report(r)
}
