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
	// mcts.PlayConfig: no root noise, the solver on, Othello's endgame
	// solved exactly.
	Search mcts.Config
	// Backend computes a model's network; nn/device.Open chooses it by
	// name.
	Backend nn.Backend
	// Seed fixes the deals of a game with chance events: the engine's
	// games answer their chance nodes from env.NewDeal, game k from a
	// seed made of Seed and k, so the faces are hidden from the search
	// and from the person alike, and a decision taken back and played
	// again meets the same ones.
	Seed uint64
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
	// deal answers the current game's chance nodes; games counts the
	// games begun, for each one's deal.
	deal  env.Deal
	games uint64
}

// NewEngine makes an engine for g that searches with eval.
func NewEngine(g env.Game, eval mcts.Evaluator, opts EngineOptions) (*Engine, error) {
	if opts.Search == (mcts.Config{}) {
		opts.Search = mcts.PlayConfig()
	}
	if err := checkStrength(opts.Playouts, opts.MoveTime); err != nil {
		return nil, err
	}
	if err := opts.Search.Validate(); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	e := &Engine{game: g, eval: eval, opts: opts, state: g.NewState()}
	e.newDeal()
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
		search = mcts.PlayConfig()
	}
	if opts.Backend == nil {
		return nil, errors.New("engine: no compute backend given (nn/device.Open chooses one by name)")
	}
	eval, err := nn.NewEvaluator(opts.Backend, c.Network.Fold(), search.LeavesPerTree)
	if err == nil {
		err = eval.UseCache(nn.PlayCacheEntries)
	}
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	return NewEngine(g, eval, opts)
}

// Game is the game the engine plays.
func (e *Engine) Game() env.Game { return e.game }

// Options are the engine's settings: its strength and search.
func (e *Engine) Options() EngineOptions { return e.opts }

// SetStrength changes how hard the engine thinks from its next search
// on: playouts per decision, or, when moveTime is set, the time per
// decision instead.
func (e *Engine) SetStrength(playouts int, moveTime time.Duration) error {
	if err := checkStrength(playouts, moveTime); err != nil {
		return err
	}
	e.opts.Playouts, e.opts.MoveTime = playouts, moveTime
	return nil
}

func checkStrength(playouts int, moveTime time.Duration) error {
	if moveTime < 0 || (moveTime == 0 && playouts < 1) {
		return fmt.Errorf("engine: want playouts ≥ 1 or a positive time per move, got %d playouts and %v", playouts, moveTime)
	}
	return nil
}

// State is the current position; the caller must not change it.
func (e *Engine) State() env.State { return e.state }

// History lists the decisions played since the start, oldest first; the
// caller must not change it.
func (e *Engine) History() []int { return e.history }

// NewGame starts a new game from the start position, on a new deal.
func (e *Engine) NewGame() error {
	e.state = e.game.NewState()
	e.history = e.history[:0]
	e.newDeal()
	return e.tree.Reset(e.state)
}

func (e *Engine) newDeal() {
	e.deal = env.NewDeal(e.game, e.opts.Seed^e.games*0x9e3779b97f4a7c15)
	e.games++
}

// Chance plays the outcome the deal fixed for the chance node the game
// stands at, and returns it.
func (e *Engine) Chance() (int, error) {
	if !env.IsChance(e.state) {
		return 0, errors.New("no chance event is due")
	}
	a, ok := e.deal.Outcome(e.state)
	if !ok {
		return 0, fmt.Errorf("the deal has no outcome for this %s position", e.game.Name())
	}
	return a, e.Play(a)
}

// Chances plays chance outcomes until a decision is due or the game is
// over, and returns them in order.
func (e *Engine) Chances() ([]int, error) {
	var played []int
	for env.IsChance(e.state) {
		a, err := e.Chance()
		if err != nil {
			return played, err
		}
		played = append(played, a)
	}
	return played, nil
}

// LastDecision is the index in History of the last action a player
// chose (a chance outcome is nobody's choice), -1 when there is none;
// mine says whose choices count.
func (e *Engine) LastDecision(mine func(env.Player) bool) int {
	s := e.game.NewState()
	last := -1
	for i, a := range e.history {
		if !env.IsChance(s) && mine(s.ToMove()) {
			last = i
		}
		s.Apply(a)
	}
	return last
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
	Value float32
	// Proof is the best action's result when the search proved it.
	Proof    mcts.Proof
	Playouts int
	Elapsed  time.Duration
	// Candidates are the visited actions, most visited first.
	Candidates []Candidate
}

// Summary is the evaluation as people read it: the value for the side
// that searched, as a score in [-1, 1] and a rough win chance; in a
// one-player game the final score it expects, in the game's units.
func (a Analysis) Summary(g env.Game) string {
	if best, ok := ExpectedScore(g, a.Value); ok {
		return fmt.Sprintf("expects a score of %.1f of %g, %d playouts in %.1f s", best, MaxScore(g), a.Playouts, a.Elapsed.Seconds())
	}
	if a.Proof != mcts.Unproven {
		return fmt.Sprintf("a proven %v for %s, %d playouts in %.1f s", a.Proof, g.PlayerName(a.Mover), a.Playouts, a.Elapsed.Seconds())
	}
	return fmt.Sprintf("eval %+.2f for %s (~%.0f%%), %d playouts in %.1f s",
		a.Value, g.PlayerName(a.Mover), 50*(1+float64(a.Value)), a.Playouts, a.Elapsed.Seconds())
}

// MaxScore is a one-player game's best score (env.Scorer), 0 for other
// games.
func MaxScore(g env.Game) float64 {
	if sc, ok := g.NewState().(env.Scorer); ok {
		return sc.MaxScore()
	}
	return 0
}

// ExpectedScore turns a value in [-1, 1] back into a one-player game's
// score, undoing env.NormalizedScore; false for other games.
func ExpectedScore(g env.Game, value float32) (float64, bool) {
	best := MaxScore(g)
	if best <= 0 {
		return 0, false
	}
	return (float64(value) + 1) / 2 * best, true
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
			a.Value, a.Proof = c.Value, c.Proof
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
