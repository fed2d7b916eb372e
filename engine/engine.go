package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/mcts"
	"github.com/flipzero/flipzero/nn"
)

// Games finds a game by its registry name.
type Games interface {
	ByName(name string) (env.Game, error)
}

// LoadModel reads a checkpoint or exported model file, whatever game it
// plays: the game comes from the file's header and is looked up in reg
// (nil: the built-in games).
func LoadModel(path string, reg Games) (*nn.Checkpoint, env.Game, error) {
	if reg == nil {
		reg = games.Builtin()
	}
	info, err := nn.ReadInfo(path)
	if err != nil {
		return nil, nil, fmt.Errorf("model: %w", err)
	}
	g, err := reg.ByName(info.Game)
	if err != nil {
		return nil, nil, fmt.Errorf("model %s: %w", path, err)
	}
	c, err := nn.LoadCheckpoint(path, g)
	if err != nil {
		return nil, nil, fmt.Errorf("model: %w", err)
	}
	return c, g, nil
}

// EngineOptions says how hard the engine thinks.
type EngineOptions struct {
	// Playouts per decision; MoveTime, when set, is the time per decision
	// instead.
	Playouts int
	MoveTime time.Duration
	// Search is the search's settings; the zero value means
	// mcts.DefaultConfig without root noise.
	Search mcts.Config
	// Backend computes a model's network (nil: the CPU).
	Backend nn.Backend
}

// Engine is the bot that people play against: one game at a time, a
// search over an evaluator, the game's history so that decisions can be
// taken back. An Engine is used by one goroutine at a time.
type Engine struct {
	game    env.Game
	eval    mcts.Evaluator
	opts    EngineOptions
	state   env.State
	history []int
	tree    *mcts.Tree
	result  mcts.Result
}

// NewEngine makes an engine for g that searches with eval.
func NewEngine(g env.Game, eval mcts.Evaluator, opts EngineOptions) (*Engine, error) {
	if opts.Search == (mcts.Config{}) {
		opts.Search = mcts.DefaultConfig()
		opts.Search.DirichletWeight = 0
	}
	if opts.MoveTime < 0 || (opts.MoveTime == 0 && opts.Playouts < 1) {
		return nil, fmt.Errorf("engine: want playouts ≥ 1 or a positive time per move, got %d playouts and %v", opts.Playouts, opts.MoveTime)
	}
	if err := opts.Search.Validate(); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	e := &Engine{game: g, eval: eval, opts: opts, state: g.NewState()}
	tree, err := mcts.NewTree(opts.Search, e.state)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	e.tree = tree
	return e, nil
}

// NewModelEngine loads a checkpoint or model file and makes an engine
// that searches with its network, finding its game in reg (nil: the
// built-in games).
func NewModelEngine(path string, reg Games, opts EngineOptions) (*Engine, error) {
	c, g, err := LoadModel(path, reg)
	if err != nil {
		return nil, err
	}
	search := opts.Search
	if search == (mcts.Config{}) {
		search = mcts.DefaultConfig()
	}
	backend := opts.Backend
	if backend == nil {
		backend = nn.CPU()
	}
	eval, err := nn.NewEvaluator(backend, c.Network.Fold(), search.LeavesPerTree)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	return NewEngine(g, eval, opts)
}

// Game is the game the engine plays.
func (e *Engine) Game() env.Game { return e.game }

// State is the current position; the caller must not change it.
func (e *Engine) State() env.State { return e.state }

// History lists the decisions played since the start, oldest first; the
// caller must not change it.
func (e *Engine) History() []int { return e.history }

// NewGame starts a new game from the start position.
func (e *Engine) NewGame() error {
	e.state = e.game.NewState()
	e.history = e.history[:0]
	return e.tree.Reset(e.state)
}

// Play plays action, which must be legal, keeping what the search knows
// about the position it leads to.
func (e *Engine) Play(action int) error {
	if e.state.Terminal() {
		return errors.New("the game is over")
	}
	if !e.state.IsLegal(action) {
		return fmt.Errorf("%s is not legal here", e.game.FormatAction(action))
	}
	if err := e.tree.Advance(action); err != nil {
		return err
	}
	e.state.Apply(action)
	e.history = append(e.history, action)
	return nil
}

// PlayMove parses a move in the game's notation and plays it.
func (e *Engine) PlayMove(text string) (int, error) {
	action, err := env.ParseLegal(e.state, text)
	if err != nil {
		return 0, err
	}
	return action, e.Play(action)
}

// Undo takes back the last decision; false when there is none.
func (e *Engine) Undo() (bool, error) {
	if len(e.history) == 0 {
		return false, nil
	}
	e.history = e.history[:len(e.history)-1]
	s := e.game.NewState()
	for _, a := range e.history {
		s.Apply(a)
	}
	e.state = s
	return true, e.tree.Reset(s)
}

// Candidate is one action the search looked at.
type Candidate struct {
	Action int
	Move   string
	Visits int
	// Value is the action's mean value for the mover, in [-1, 1]; NaN
	// when it was not visited.
	Value float32
	Prior float32
}

// Analysis is what one search found.
type Analysis struct {
	// Mover is the player to decide; Best the action the engine plays.
	Mover env.Player
	Best  int
	Move  string
	// Value is the expected result for Mover in [-1, 1], the best action's
	// mean value.
	Value    float32
	Playouts int
	Elapsed  time.Duration
	// Candidates are the visited actions, most visited first.
	Candidates []Candidate
}

// Summary is the evaluation as people read it: the value for the side
// that searched, as a score in [-1, 1] and a rough win chance.
func (a Analysis) Summary(g env.Game) string {
	return fmt.Sprintf("eval %+.2f for %s (~%.0f%%), %d playouts in %.1f s",
		a.Value, g.PlayerName(a.Mover), 50*(1+float64(a.Value)), a.Playouts, a.Elapsed.Seconds())
}

// ValueFor is the analysis's value from player p's point of view.
func (a Analysis) ValueFor(p env.Player) float32 {
	if p == a.Mover {
		return a.Value
	}
	return -a.Value
}

// Analyze searches the current position without playing.
func (e *Engine) Analyze(ctx context.Context) (Analysis, error) {
	if e.state.Terminal() {
		return Analysis{}, errors.New("the game is over")
	}
	start := time.Now()
	if err := e.search(ctx); err != nil {
		return Analysis{}, err
	}
	e.tree.Result(&e.result)
	r := &e.result
	a := Analysis{Mover: r.Mover, Best: r.Best, Move: e.game.FormatAction(r.Best), Value: r.Value,
		Playouts: r.Playouts, Elapsed: time.Since(start)}
	for _, c := range r.Children {
		if c.Visits == 0 {
			continue
		}
		a.Candidates = append(a.Candidates, Candidate{Action: c.Action, Move: e.game.FormatAction(c.Action),
			Visits: c.Visits, Value: c.Value, Prior: c.Prior})
		if c.Action == r.Best {
			a.Value = c.Value
		}
	}
	slices.SortStableFunc(a.Candidates, func(x, y Candidate) int { return cmp.Compare(y.Visits, x.Visits) })
	return a, nil
}

// GenMove searches the current position and plays the best action.
func (e *Engine) GenMove(ctx context.Context) (Analysis, error) {
	a, err := e.Analyze(ctx)
	if err != nil {
		return a, err
	}
	return a, e.Play(a.Best)
}

// Decide is GenMove as a protocol server wants it: the action played and
// a line about its evaluation.
func (e *Engine) Decide(ctx context.Context) (int, string, error) {
	a, err := e.GenMove(ctx)
	if err != nil {
		return 0, "", err
	}
	return a.Best, a.Summary(e.game), nil
}

// timeSliceFirst is the playouts of the first slice of a timed search;
// later slices are sized from the speed measured so far.
const timeSliceFirst = 16

// search runs the search the options ask for. A timed search grows the
// tree slice by slice until its time is up; it always finishes at least
// one playout, so that it has a move to give.
func (e *Engine) search(ctx context.Context) error {
	if e.opts.MoveTime <= 0 {
		return e.tree.Search(ctx, e.eval, e.opts.Playouts)
	}
	start := time.Now()
	deadline, cancel := context.WithTimeout(ctx, e.opts.MoveTime)
	defer cancel()
	target := e.tree.Playouts() + timeSliceFirst
	for {
		err := e.tree.Search(deadline, e.eval, target)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				return err
			}
			break
		}
		elapsed := time.Since(start)
		if elapsed >= e.opts.MoveTime {
			break
		}
		// Aim the next slice at about a quarter of the time left.
		done := max(e.tree.Playouts(), 1)
		rate := float64(done) / max(elapsed.Seconds(), 1e-6)
		left := (e.opts.MoveTime - elapsed).Seconds()
		target += max(timeSliceFirst, int(math.Min(rate*left/4, 1<<20)))
	}
	if e.tree.Playouts() == 0 {
		return e.tree.Search(ctx, e.eval, 1)
	}
	return nil
}
