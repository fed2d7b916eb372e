package arena

import (
	"context"
	"errors"
	"fmt"
	"github.com/flipzero/flipzero/player"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/flipzero/flipzero/env"
)

// ArenaOptions tunes a match.
type ArenaOptions struct {
	// Games is the number of games to play. Game 2k has A move first and
	// game 2k+1 B, both from the same opening.
	Games int
	// Workers is the number of goroutines; 0 means one per core.
	Workers int
	// PerWorker is the number of games each goroutine plays at once, so
	// that search players batch their evaluations; 0 chooses.
	PerWorker int
	// OpeningPlies is the number of random moves each opening starts
	// with: 0 takes DefaultOpeningPlies, a negative number none.
	OpeningPlies int
	// Seed makes the openings repeatable, and the players' random
	// choices too for the same Workers and PerWorker: each worker plays
	// a fixed share of the games (see shares), so which seat and
	// random stream meets which game does not depend on timing. An SPRT
	// that stops the match early still does.
	Seed uint64
	// SPRT, when set, stops starting new games once the test decides; the
	// games under way are played out.
	SPRT *SPRT
	// MaxPlies bounds a game (default 10000): a longer one is an error.
	MaxPlies int
	// Progress is called after each game with the games finished and the
	// score so far; OnGame with each finished game's record. Both are
	// called from one goroutine at a time. An error from OnGame stops the
	// match.
	Progress func(finished int, s Score)
	OnGame   func(ArenaGame) error
	// Played are the finished games of an earlier part of this match,
	// with their Index (Place gives it): a resumed match counts them and
	// plays the rest. The players' random choices then differ from an
	// uninterrupted match's, as the workers meet other games.
	Played []ArenaGame
}

// ArenaGame is one arena game.
type ArenaGame struct {
	env.Record
	// Index is the game's number in the match, from 0.
	Index int
	// Players are the names of the first and the second player.
	Players [2]string
	// OpeningPlies is how many of Moves were the random opening.
	OpeningPlies int
	// Resigned is the player who resigned, NoPlayer if none did.
	Resigned env.Player
}

// Line is the record as arena files hold it: the moves joined by ";", the
// outcome and the game's name (as "flipzero convert" prints a record),
// then the first and the second player's names, separated by tabs.
func (r ArenaGame) Line() string {
	return r.Record.Line() + "\t" + r.Players[0] + "\t" + r.Players[1]
}

// ArenaResult is what a match produced, from A's side.
type ArenaResult struct {
	Score Score
	// Games holds every game that was started, in order of Index; a game
	// cut short by an error has the outcome "unfinished".
	Games []ArenaGame
	// Decision is the SPRT's verdict when it stopped the match early: +1
	// A is better, -1 it is not; 0 otherwise.
	Decision int
}

// DefaultOpeningPlies is the number of random first moves that vary a
// game's openings: a few in Othello, two ring placements in YINSH, one
// mark in tic-tac-toe.
func DefaultOpeningPlies(g env.Game) int {
	switch name := g.Name(); {
	case strings.HasPrefix(name, "yinsh"):
		return 2
	case name == "tictactoe":
		return 1
	default:
		return 4
	}
}

// Opening returns the random moves opening k starts with: plies legal
// moves drawn from seed and k, stopping early rather than ending the game.
func Opening(g env.Game, plies int, seed uint64, k int) []int {
	rng := rand.New(rand.NewPCG(seed, uint64(k)))
	s := g.NewState()
	legal := make([]int, 0, g.ActionSpace())
	var moves []int
	for len(moves) < plies {
		legal = s.LegalActions(legal)
		a := legal[rng.IntN(len(legal))]
		next := s.Clone()
		next.Apply(a)
		if next.Terminal() {
			break
		}
		s = next
		moves = append(moves, a)
	}
	return moves
}

// RunArena plays a match of opts.Games games between a and b in game g,
// colours alternating and every opening played from both sides. On an
// error the result still holds the games played so far, and the one cut
// short.
func RunArena(ctx context.Context, g env.Game, a, b player.Player, opts ArenaOptions) (ArenaResult, error) {
	if env.Players(g) == 1 {
		return ArenaResult{}, fmt.Errorf("arena: %s is a one-player game: play it with RunSolo", g.Name())
	}
	if opts.Games < 1 {
		return ArenaResult{}, fmt.Errorf("arena: %d games, want at least 1", opts.Games)
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	opts.Workers = min(opts.Workers, opts.Games)
	if opts.PerWorker <= 0 {
		opts.PerWorker = min((opts.Games+opts.Workers-1)/opts.Workers, 8)
	}
	opts.OpeningPlies = openingPlies(g, opts.OpeningPlies)
	if opts.MaxPlies <= 0 {
		opts.MaxPlies = 10000
	}
	m := &match{game: g, players: [2]player.Player{a, b}, opts: opts, shares: newShares(opts.Workers, opts.Games)}
	if err := m.resume(opts.Played); err != nil {
		return ArenaResult{}, err
	}
	var wg sync.WaitGroup
	errs := make([]error, opts.Workers)
	for w := 0; w < opts.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = m.work(ctx, w)
		}()
	}
	wg.Wait()
	sort.Slice(m.result.Games, func(i, j int) bool { return m.result.Games[i].Index < m.result.Games[j].Index })
	if ctx.Err() != nil && m.result.Decision == 0 && m.result.Score.Games() < opts.Games {
		return m.result, stopped(ctx, errs, m.result.Score.Games(), opts.Games)
	}
	return m.result, errors.Join(errs...)
}

// stopped is a match's error when ctx ends it: one line saying how far it
// got, in place of each worker's report of the same stop (every game under
// way ends in "context canceled"); an error of another cause is kept.
func stopped(ctx context.Context, errs []error, finished, total int) error {
	cause := context.Cause(ctx)
	err := fmt.Errorf("arena: stopped after %d of %d games: %w", finished, total, cause)
	if cause != ctx.Err() {
		err = fmt.Errorf("%w (%w)", err, ctx.Err())
	}
	kept := []error{err}
	for _, e := range errs {
		if e != nil && !errors.Is(e, ctx.Err()) {
			kept = append(kept, e)
		}
	}
	return errors.Join(kept...)
}

// openingPlies is the number of random moves each opening starts with for
// the option's value: 0 the game's default, a negative number none.
func openingPlies(g env.Game, option int) int {
	switch {
	case option == 0:
		return DefaultOpeningPlies(g)
	case option < 0:
		return 0
	}
	return option
}

// resume counts the games played before and takes them out of the
// workers' shares.
func (m *match) resume(played []ArenaGame) error {
	for _, rec := range played {
		k := rec.Index
		switch {
		case k < 0 || k >= m.opts.Games:
			return fmt.Errorf("arena: a game played before has number %d, outside the match's %d", k+1, m.opts.Games)
		case m.shares.played[k]:
			return fmt.Errorf("arena: game %d was played before twice", k+1)
		case rec.Outcome == "unfinished":
			return fmt.Errorf("arena: game %d, played before, is unfinished: play it again instead", k+1)
		}
		m.shares.played[k] = true
		m.result.Games = append(m.result.Games, rec)
		m.count(rec, k%2 == 0)
	}
	m.shares.skipPlayed()
	if m.opts.SPRT != nil {
		if d := m.opts.SPRT.Decide(m.result.Score); d != 0 {
			m.result.Decision, m.stopped = d, true
		}
	}
	return nil
}

// match is the state the workers share.
type match struct {
	game    env.Game
	players [2]player.Player // A, B
	opts    ArenaOptions

	mu       sync.Mutex
	shares   shares
	stopped  bool // by the SPRT, an error or OnGame
	finished int
	result   ArenaResult
}

// shares deals a match's games (or deals) out to its workers: worker w
// plays w, w+workers, w+2·workers and so on, in order. Handing games to
// whichever worker frees up first would balance the load a little better
// at the end, but the games a seat meets would then depend on timing, and
// so would its random choices. Its owner's mutex guards it.
type shares struct {
	next   []int  // each worker's next game
	played []bool // games played before (a resumed match): skipped
	total  int
}

func newShares(workers, total int) shares {
	s := shares{next: make([]int, workers), played: make([]bool, total), total: total}
	for w := range s.next {
		s.next[w] = w
	}
	return s
}

// take returns worker's next game, if it has one left.
func (s *shares) take(worker int) (int, bool) {
	k := s.next[worker]
	if k >= s.total {
		return 0, false
	}
	s.next[worker] += len(s.next)
	s.skip(worker)
	return k, true
}

// skip moves worker's next game past those played before.
func (s *shares) skip(worker int) {
	for s.next[worker] < s.total && s.played[s.next[worker]] {
		s.next[worker] += len(s.next)
	}
}

// skipPlayed moves every worker's next game past those played before.
func (s *shares) skipPlayed() {
	for w := range s.next {
		s.skip(w)
	}
}

func (s *shares) left(worker int) bool { return s.next[worker] < s.total }

// take hands worker its next game, if any (see shares).
func (m *match) take(worker int) (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return 0, false
	}
	return m.shares.take(worker)
}

func (m *match) stop() {
	m.mu.Lock()
	m.stopped = true
	m.mu.Unlock()
}

func (m *match) isStopped() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stopped
}

// done records a game; an unfinished one does not count in the score.
func (m *match) done(rec ArenaGame, aFirst bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.result.Games = append(m.result.Games, rec)
	if rec.Outcome == "unfinished" {
		return nil
	}
	m.count(rec, aFirst)
	if m.opts.Progress != nil {
		m.opts.Progress(m.finished, m.result.Score)
	}
	if m.opts.SPRT != nil && !m.stopped {
		if d := m.opts.SPRT.Decide(m.result.Score); d != 0 {
			m.result.Decision = d
			m.stopped = true
		}
	}
	if m.opts.OnGame != nil {
		if err := m.opts.OnGame(rec); err != nil {
			m.stopped = true
			return err
		}
	}
	return nil
}

// count adds a finished game to the score.
func (m *match) count(rec ArenaGame, aFirst bool) {
	var winner env.Player = env.NoPlayer
	switch rec.Outcome {
	case m.game.PlayerName(0):
		winner = 0
	case m.game.PlayerName(1):
		winner = 1
	}
	aSide := env.Player(1)
	if aFirst {
		aSide = 0
	}
	switch winner {
	case env.NoPlayer:
		m.result.Score.Draws++
	case aSide:
		m.result.Score.Wins++
	default:
		m.result.Score.Losses++
	}
	m.finished++
}

// table is one game being played by a worker.
type table struct {
	active bool
	aFirst bool
	state  env.State
	rec    ArenaGame
}

// work plays games in lockstep until none is left: each round, every
// game's mover among A and B chooses its move, A's games together and
// then B's.
func (m *match) work(ctx context.Context, worker int) (err error) {
	n := m.opts.PerWorker
	var seats [2]player.Seat
	for side, p := range m.players {
		seed := m.opts.Seed ^ (uint64(worker)*2+uint64(side)+1)*0x9e3779b97f4a7c15
		seat, err := p.Seat(m.game, n, seed)
		if err != nil {
			m.stop()
			return fmt.Errorf("arena: %w", err)
		}
		seats[side] = seat
		defer func() {
			if cerr := seat.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("arena: closing %s: %w", p.Name(), cerr)
			}
		}()
	}
	tables := make([]table, n)
	// On an error, the games under way are kept as unfinished.
	defer func() {
		if err == nil {
			return
		}
		m.stop()
		for i := range tables {
			if tables[i].active {
				tables[i].rec.Outcome = "unfinished"
				m.done(tables[i].rec, tables[i].aFirst)
			}
		}
	}()
	var slots []int
	var states []env.State
	var moves []int
	legal := make([]int, 0, m.game.ActionSpace())
	for {
		for i := range tables {
			if tables[i].active {
				continue
			}
			index, ok := m.take(worker)
			if !ok {
				continue
			}
			if err := m.start(ctx, seats, &tables[i], i, index); err != nil {
				return err
			}
		}
		// Not every player looks at ctx (greedy, random): the match does.
		if err := ctx.Err(); err != nil && slices.ContainsFunc(tables, func(t table) bool { return t.active }) {
			return err
		}
		anyActive := false
		for side := range seats {
			slots, states, moves = slots[:0], states[:0], moves[:0]
			for i := range tables {
				t := &tables[i]
				if t.active && m.sideToMove(t) == side {
					slots = append(slots, i)
					states = append(states, t.state)
					moves = append(moves, 0)
				}
			}
			if len(slots) == 0 {
				continue
			}
			anyActive = true
			if err := seats[side].Moves(ctx, slots, states, moves); err != nil {
				var se player.SlotError
				if errors.As(err, &se) && se.Slot >= 0 && se.Slot < n {
					return fmt.Errorf("arena: game %d: %s: %w", tables[se.Slot].rec.Index+1, m.players[side].Name(), err)
				}
				return fmt.Errorf("arena: %s: %w", m.players[side].Name(), err)
			}
			for k, i := range slots {
				if err := m.play(ctx, seats, &tables[i], i, moves[k], legal); err != nil {
					return err
				}
			}
		}
		if !anyActive {
			if m.isStopped() || !m.anyLeft(worker) {
				return nil
			}
		}
	}
}

func (m *match) anyLeft(worker int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.shares.left(worker)
}

// sideToMove is 0 when A is to move at t, 1 for B.
func (m *match) sideToMove(t *table) int {
	first := t.state.ToMove() == 0
	if first == t.aFirst {
		return 0
	}
	return 1
}

// start sets up game index at table slot: the opening, told to both seats.
func (m *match) start(ctx context.Context, seats [2]player.Seat, t *table, slot, index int) error {
	*t = table{active: true, aFirst: index%2 == 0, state: m.game.NewState()}
	t.rec = ArenaGame{
		Record:   env.Record{Game: m.game.Name(), Outcome: "unfinished"},
		Index:    index,
		Resigned: env.NoPlayer,
	}
	t.rec.Players = [2]string{m.players[0].Name(), m.players[1].Name()}
	if !t.aFirst {
		t.rec.Players[0], t.rec.Players[1] = t.rec.Players[1], t.rec.Players[0]
	}
	for side, seat := range seats {
		if err := seat.NewGame(ctx, slot, t.state); err != nil {
			return fmt.Errorf("arena: game %d: %s: %w", index+1, m.players[side].Name(), err)
		}
	}
	opening := Opening(m.game, m.opts.OpeningPlies, m.opts.Seed, index/2)
	t.rec.OpeningPlies = len(opening)
	for _, a := range opening {
		if err := m.apply(ctx, seats, t, slot, a); err != nil {
			return err
		}
	}
	return nil
}

// play plays the move chosen at table t, checking it first.
func (m *match) play(ctx context.Context, seats [2]player.Seat, t *table, slot, action int, legal []int) error {
	mover := t.state.ToMove()
	name := t.rec.Players[mover]
	if action == player.Resign {
		t.rec.Resigned = mover
		t.rec.Outcome = m.game.PlayerName(mover.Other())
		t.active = false
		return m.done(t.rec, t.aFirst)
	}
	if action < 0 || action >= m.game.ActionSpace() || !t.state.IsLegal(action) {
		legal = t.state.LegalActions(legal)
		names := make([]string, len(legal))
		for i, a := range legal {
			names[i] = m.game.FormatAction(a)
		}
		return fmt.Errorf("arena: game %d: %s chose %s, not one of the legal moves %s",
			t.rec.Index+1, name, m.game.FormatAction(action), strings.Join(names, ";"))
	}
	if len(t.rec.Moves) >= m.opts.MaxPlies {
		return fmt.Errorf("arena: game %d still running after %d plies", t.rec.Index+1, m.opts.MaxPlies)
	}
	return m.apply(ctx, seats, t, slot, action)
}

// apply plays a legal action, tells both seats, and ends the game when it
// is over.
func (m *match) apply(ctx context.Context, seats [2]player.Seat, t *table, slot, action int) error {
	t.state.Apply(action)
	t.rec.Moves = append(t.rec.Moves, m.game.FormatAction(action))
	for side, seat := range seats {
		if err := seat.Observe(ctx, slot, action); err != nil {
			return fmt.Errorf("arena: game %d: %s: %w", t.rec.Index+1, m.players[side].Name(), err)
		}
	}
	if t.state.Terminal() {
		t.rec.Outcome = env.ResultName(t.state)
		t.active = false
		return m.done(t.rec, t.aFirst)
	}
	return nil
}
