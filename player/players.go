package player

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/internal/suggest"
	"github.com/flipzero/flipzero/mcts"
)

// Resign is the move of a player that gives up: it loses the game.
const Resign = -1

// Player is one side of arena games, named as on the command line. It
// makes a Seat for each goroutine of the arena: the seat plays that
// goroutine's games, several at once, so that players that search can
// batch their evaluations across games.
type Player interface {
	Name() string
	// Seat prepares to play up to games games of g at once. seed makes
	// the seat's random choices repeatable.
	Seat(g env.Game, games int, seed uint64) (Seat, error)
}

// Seat plays one side of a goroutine's concurrent games, numbered
// 0..games-1. It is used by one goroutine at a time. An error that
// concerns one game only is a SlotError.
type Seat interface {
	// NewGame starts game slot at start.
	NewGame(ctx context.Context, slot int, start env.State) error
	// Moves chooses the move of each slots[i], whose position is
	// states[i] with this seat to move, into moves[i]: a legal action,
	// or Resign.
	Moves(ctx context.Context, slots []int, states []env.State, moves []int) error
	// Observe tells the seat of an action played in slot: every action,
	// the seat's own included, in order.
	Observe(ctx context.Context, slot int, action int) error
	// Close releases what the seat holds (engine processes).
	Close() error
}

// SlotError is a Seat's error that concerns one of its games only.
type SlotError struct {
	Slot int
	Err  error
}

func (e SlotError) Error() string { return e.Err.Error() }
func (e SlotError) Unwrap() error { return e.Err }

// Mover plays one game at a time: the shape of players that do not batch
// anything (engines over GTP, heuristics). PerGame makes a Player of
// one Mover per concurrent game.
type Mover interface {
	NewGame(ctx context.Context, start env.State) error
	Move(ctx context.Context, s env.State) (int, error)
	Observe(ctx context.Context, action int) error
	Close() error
}

// simplePlayer is a Player whose seats are one Mover per slot.
type simplePlayer struct {
	name string
	// check says whether the player can play g at all.
	check     func(g env.Game) error
	newPlayer func(g env.Game, seed uint64) (Mover, error)
}

func (p simplePlayer) Name() string { return p.name }

// PerGame is the Player named name whose seats run one Mover per game,
// each made by newMover with its own seed.
func PerGame(name string, newMover func(g env.Game, seed uint64) (Mover, error)) Player {
	return simplePlayer{name: name, newPlayer: newMover}
}

func (p simplePlayer) Seat(g env.Game, games int, seed uint64) (Seat, error) {
	if p.check != nil {
		if err := p.check(g); err != nil {
			return nil, fmt.Errorf("player %s: %w", p.name, err)
		}
	}
	seat := &perGameSeat{players: make([]Mover, games)}
	for i := range seat.players {
		gp, err := p.newPlayer(g, seed+uint64(i)*0x9e3779b97f4a7c15)
		if err != nil {
			seat.Close()
			return nil, fmt.Errorf("player %s: %w", p.name, err)
		}
		seat.players[i] = gp
	}
	return seat, nil
}

// perGameSeat asks each slot's player in turn.
type perGameSeat struct {
	players []Mover
}

func (s *perGameSeat) NewGame(ctx context.Context, slot int, start env.State) error {
	return s.players[slot].NewGame(ctx, start)
}

func (s *perGameSeat) Moves(ctx context.Context, slots []int, states []env.State, moves []int) error {
	for i, slot := range slots {
		m, err := s.players[slot].Move(ctx, states[i])
		if err != nil {
			return SlotError{Slot: slot, Err: err}
		}
		moves[i] = m
	}
	return nil
}

func (s *perGameSeat) Observe(ctx context.Context, slot int, action int) error {
	return s.players[slot].Observe(ctx, action)
}

func (s *perGameSeat) Close() error {
	var err error
	for _, p := range s.players {
		if p != nil {
			err = errors.Join(err, p.Close())
		}
	}
	return err
}

// stateless is the part of Mover that players who look only at the
// position do not need.
type stateless struct{}

func (stateless) NewGame(context.Context, env.State) error { return nil }
func (stateless) Observe(context.Context, int) error       { return nil }
func (stateless) Close() error                             { return nil }

// RandomPlayer plays a uniformly random legal move: the anchor of the
// ratings, at 0 Elo.
func RandomPlayer() Player {
	return simplePlayer{name: "random", newPlayer: func(g env.Game, seed uint64) (Mover, error) {
		return &randomMover{rng: rand.New(rand.NewPCG(seed, 1)), legal: make([]int, 0, g.ActionSpace())}, nil
	}}
}

type randomMover struct {
	stateless
	rng   *rand.Rand
	legal []int
}

func (r *randomMover) Move(_ context.Context, s env.State) (int, error) {
	r.legal = s.LegalActions(r.legal)
	return r.legal[r.rng.IntN(len(r.legal))], nil
}

// Heuristic is a state that scores itself for a player with a hand-written
// evaluation, larger being better for p. The greedy and alpha-beta
// players need it; the Othello and YINSH states provide it.
type Heuristic interface {
	Heuristic(p env.Player) float64
}

// winScore is the heuristic value of a won game: above any evaluation.
const winScore = 1e9

// heuristicValue is the value of s for p: the result when the game is
// over, else the game's heuristic.
func heuristicValue(s env.State, p env.Player) float64 {
	if s.Terminal() {
		return winScore * float64(env.Value(s, p))
	}
	return s.(Heuristic).Heuristic(p)
}

func needsHeuristic(g env.Game) error {
	if _, ok := g.NewState().(Heuristic); !ok {
		return fmt.Errorf("%s has no hand-written evaluation", g.Name())
	}
	return nil
}

// greedyValue is what the greedy player maximises after its move: a
// one-player game's score (env.Scorer), otherwise heuristicValue. The
// score is read right after the move, before any chance event it sets
// off: in the solitaire a placement captures only tokens already face
// up, so what it captures never depends on a face still hidden, and the
// greedy player plays what captures most now.
func greedyValue(s env.State, p env.Player) float64 {
	if sc, ok := s.(env.Scorer); ok {
		return sc.Score()
	}
	return heuristicValue(s, p)
}

func needsGreedyValue(g env.Game) error {
	if _, ok := g.NewState().(env.Scorer); ok {
		return nil
	}
	return needsHeuristic(g)
}

// GreedyPlayer plays the move whose resulting position the game's
// heuristic likes best (discs and mobility in Othello, rings and markers
// in YINSH), or in a one-player game the move that scores most at once
// (the solitaire's most tokens captured), ties broken at random.
func GreedyPlayer() Player {
	return simplePlayer{name: "greedy", check: needsGreedyValue, newPlayer: func(g env.Game, seed uint64) (Mover, error) {
		return &greedyMover{
			rng:   rand.New(rand.NewPCG(seed, 2)),
			legal: make([]int, 0, g.ActionSpace()),
			best:  make([]int, 0, g.ActionSpace()),
			child: g.NewState(),
		}, nil
	}}
}

type greedyMover struct {
	stateless
	rng         *rand.Rand
	legal, best []int
	child       env.State
}

func (gm *greedyMover) Move(_ context.Context, s env.State) (int, error) {
	me := s.ToMove()
	gm.legal = s.LegalActions(gm.legal)
	gm.best = gm.best[:0]
	bestValue := math.Inf(-1)
	for _, a := range gm.legal {
		gm.child.CopyFrom(s)
		gm.child.Apply(a)
		v := greedyValue(gm.child, me)
		switch {
		case v > bestValue:
			bestValue = v
			gm.best = append(gm.best[:0], a)
		case v == bestValue:
			gm.best = append(gm.best, a)
		}
	}
	return gm.best[gm.rng.IntN(len(gm.best))], nil
}

// PerfectPlayer plays a solved game (env.Solvable: tic-tac-toe)
// perfectly, choosing at random among the moves that keep the best result.
// Each seat solves the game once and shares the solver between its games.
func PerfectPlayer() Player { return perfectPlayer{} }

type perfectPlayer struct{}

func (perfectPlayer) Name() string { return "perfect" }

func (perfectPlayer) Seat(g env.Game, games int, seed uint64) (Seat, error) {
	solvable, ok := g.(env.Solvable)
	if !ok {
		return nil, fmt.Errorf("player perfect: only solved games have a perfect player, not %s", g.Name())
	}
	solver := solvable.Solve()
	return PerGame("perfect", func(g env.Game, seed uint64) (Mover, error) {
		return &perfectMover{solver: solver, rng: rand.New(rand.NewPCG(seed, 3)), best: make([]int, 0, g.ActionSpace())}, nil
	}).Seat(g, games, seed)
}

type perfectMover struct {
	stateless
	solver env.Solver
	rng    *rand.Rand
	best   []int
}

func (pm *perfectMover) Move(_ context.Context, s env.State) (int, error) {
	pm.best = pm.solver.PerfectActions(s, pm.best)
	return pm.best[pm.rng.IntN(len(pm.best))], nil
}

// AlphaBetaPlayer searches depth decisions ahead with alpha-beta over the
// game's heuristic: the classical bot of game sites.
func AlphaBetaPlayer(depth int) Player {
	return simplePlayer{
		name:  "alphabeta:" + strconv.Itoa(depth),
		check: needsHeuristic,
		newPlayer: func(g env.Game, seed uint64) (Mover, error) {
			return &alphaBetaMover{search: NewAlphaBeta(g, depth), rng: rand.New(rand.NewPCG(seed, 4))}, nil
		},
	}
}

type alphaBetaMover struct {
	stateless
	search *AlphaBeta
	rng    *rand.Rand
}

func (am *alphaBetaMover) Move(ctx context.Context, s env.State) (int, error) {
	return am.search.Best(ctx, s, am.rng)
}

// SearchPlayer is a PUCT search player: the rollout search (mcts:N) or a
// network's. Each seat's games are searched in lockstep through one
// mcts.Batcher, so a network sees batches as large as the seat's games
// times the search's leaves per tree.
type SearchPlayer struct {
	Label    string
	Playouts int
	Config   mcts.Config
	// NewEvaluator makes the evaluator of one seat, for batches of up
	// to maxBatch positions, with seed for any randomness it has.
	NewEvaluator func(g env.Game, maxBatch int, seed uint64) (mcts.Evaluator, error)
}

// RolloutPlayer is pure MCTS with playouts simulations per move, each
// leaf valued by one random game.
func RolloutPlayer(playouts int) *SearchPlayer {
	return &SearchPlayer{
		Label:    "mcts:" + strconv.Itoa(playouts),
		Playouts: playouts,
		Config:   mcts.RolloutConfig(),
		NewEvaluator: func(_ env.Game, _ int, seed uint64) (mcts.Evaluator, error) {
			return mcts.NewRollout(1, rand.New(rand.NewPCG(seed, 5)))
		},
	}
}

func (p *SearchPlayer) Name() string { return p.Label }

func (p *SearchPlayer) Seat(g env.Game, games int, seed uint64) (Seat, error) {
	if p.Playouts < 1 {
		return nil, fmt.Errorf("player %s: %d playouts, want at least 1", p.Label, p.Playouts)
	}
	if err := p.Config.Validate(); err != nil {
		return nil, fmt.Errorf("player %s: %w", p.Label, err)
	}
	batch := games * p.Config.LeavesPerTree
	eval, err := p.NewEvaluator(g, batch, seed)
	if err != nil {
		return nil, fmt.Errorf("player %s: %w", p.Label, err)
	}
	batcher, err := mcts.NewBatcher(eval, batch)
	if err != nil {
		return nil, fmt.Errorf("player %s: %w", p.Label, err)
	}
	return &searchSeat{
		player:  p,
		eval:    eval,
		batcher: batcher,
		trees:   make([]*mcts.Tree, games),
		legal:   make([]int, 0, g.ActionSpace()),
	}, nil
}

// searchSeat keeps one tree per slot, reused from move to move.
type searchSeat struct {
	player   *SearchPlayer
	eval     mcts.Evaluator
	batcher  *mcts.Batcher
	trees    []*mcts.Tree
	legal    []int
	searched []*mcts.Tree
	targets  []int
	owners   []int
	result   mcts.Result
}

func (s *searchSeat) NewGame(_ context.Context, slot int, start env.State) error {
	if s.trees[slot] == nil {
		t, err := mcts.NewTree(s.player.Config, start)
		if err != nil {
			return fmt.Errorf("player %s: %w", s.player.Label, err)
		}
		s.trees[slot] = t
		return nil
	}
	return s.trees[slot].Reset(start)
}

func (s *searchSeat) Moves(ctx context.Context, slots []int, states []env.State, moves []int) error {
	s.searched, s.targets, s.owners = s.searched[:0], s.targets[:0], s.owners[:0]
	for i, slot := range slots {
		// A forced move needs no search.
		if s.legal = states[i].LegalActions(s.legal); len(s.legal) == 1 {
			moves[i] = s.legal[0]
			continue
		}
		s.searched = append(s.searched, s.trees[slot])
		s.targets = append(s.targets, s.player.Playouts)
		s.owners = append(s.owners, i)
	}
	if err := s.batcher.Search(ctx, s.searched, s.targets); err != nil {
		return fmt.Errorf("player %s: %w", s.player.Label, err)
	}
	for k, t := range s.searched {
		t.Result(&s.result)
		moves[s.owners[k]] = s.result.Best
	}
	return nil
}

func (s *searchSeat) Observe(_ context.Context, slot int, action int) error {
	if err := s.trees[slot].Advance(action); err != nil {
		return fmt.Errorf("player %s: %w", s.player.Label, err)
	}
	return nil
}

// Close gives back what the evaluator holds on a device (GPU memory).
func (s *searchSeat) Close() error {
	if c, ok := s.eval.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// PlayerOptions holds what ParsePlayer needs beyond the name.
type PlayerOptions struct {
	// Playouts per move of a network player.
	Playouts int
	// LoadNetwork makes a network player from a checkpoint or model file;
	// nil when this build cannot load networks.
	LoadNetwork func(path string, playouts int) (Player, error)
}

// ParsePlayer reads a player's name: random, greedy, perfect, mcts:N,
// alphabeta:D, gtp:COMMAND ARGS, or the path of a checkpoint or model
// file.
func ParsePlayer(name string, opts PlayerOptions) (Player, error) {
	kind, arg, hasArg := strings.Cut(name, ":")
	number := func() (int, error) {
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("player %q: want %s:N with N a whole number ≥ 1", name, kind)
		}
		return n, nil
	}
	switch {
	case name == "random":
		return RandomPlayer(), nil
	case name == "greedy":
		return GreedyPlayer(), nil
	case name == "perfect":
		return PerfectPlayer(), nil
	case kind == "mcts" && hasArg:
		n, err := number()
		if err != nil {
			return nil, err
		}
		return RolloutPlayer(n), nil
	case kind == "alphabeta" && hasArg:
		n, err := number()
		if err != nil {
			return nil, err
		}
		return AlphaBetaPlayer(n), nil
	case kind == "gtp" && hasArg:
		return GTPPlayer(arg)
	}
	if opts.LoadNetwork == nil {
		return nil, unknownPlayer(name, "not one of")
	}
	// A name that is no file is a slip in a kind's name at least as often
	// as a missing model: the kinds say more than "no such file". A file
	// that is there but does not load keeps its own error.
	if _, err := os.Stat(name); errors.Is(err, fs.ErrNotExist) {
		return nil, unknownPlayer(name, "no such model file, nor one of")
	}
	return opts.LoadNetwork(name, opts.Playouts)
}

// playerKinds are the players ParsePlayer knows by name, as a command
// line writes them.
func playerKinds() []string {
	return []string{"random", "greedy", "perfect", "mcts:N", "alphabeta:D", "gtp:COMMAND"}
}

// unknownPlayer is the error for a name that is no player: what it is
// not, the kinds of player, and the kind it was likely meant to be.
func unknownPlayer(name, isNot string) error {
	kinds := playerKinds()
	msg := fmt.Sprintf("unknown player %q: %s %s", name, isNot, strings.Join(kinds, ", "))
	if guess, ok := nearestKind(name, kinds); ok {
		msg += "; did you mean " + guess + "?"
	}
	return errors.New(msg)
}

// nearestKind is the kind of player name was likely meant to be, by the
// part before its colon: mcst:100 for mcts:N, greddy for greedy, mcts
// without its number for mcts:N, random:3 for random.
func nearestKind(name string, kinds []string) (string, bool) {
	typed, _, _ := strings.Cut(name, ":")
	bare := make([]string, len(kinds))
	for i, k := range kinds {
		bare[i], _, _ = strings.Cut(k, ":")
		if bare[i] == typed {
			return k, true
		}
	}
	guess, ok := suggest.Nearest(typed, bare)
	if !ok {
		return "", false
	}
	return kinds[slices.Index(bare, guess)], true
}
