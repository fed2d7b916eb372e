package arena

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/player"
)

// A one-player game (env.Solo, its result a score) has no opponent to
// play: each player plays the same deals (env.Deal: the chance outcomes
// fixed before the game, the solitaire's shuffled tokens), and players
// are compared by their mean score, with its interval, and deal by deal,
// where the luck of the deal cancels out.

// MaxDeals bounds a one-player match, whose scores are kept deal by deal
// for the paired comparisons: a million deals is days of play.
const MaxDeals = 1_000_000

// SoloOptions tunes a one-player match.
type SoloOptions struct {
	// Deals is the number of deals every player plays.
	Deals int
	// Workers is the number of goroutines; 0 means one per core.
	Workers int
	// PerWorker is the number of games each goroutine plays at once, so
	// that search players batch their evaluations; 0 chooses.
	PerWorker int
	// Seed fixes the deals (see DealSeed), and the players' random
	// choices too for the same Workers and PerWorker: each worker plays a
	// fixed share of the deals, so which seat and random stream meets
	// which deal does not depend on timing.
	Seed uint64
	// MaxPlies bounds a game, chance events included (default 10000): a
	// longer one is an error.
	MaxPlies int
	// Progress is called after each game with the games finished, over
	// all players; OnGame with each finished game. Both are called from
	// one goroutine at a time. An error from OnGame stops the match.
	Progress func(finished int)
	OnGame   func(SoloGame) error
}

// SoloGame is one game of a one-player match.
type SoloGame struct {
	env.Record
	// Deal is the deal's number, from 0; Player the player's index in the
	// match and Name its name.
	Deal   int
	Player int
	Name   string
	// Score is the final score in the game's units.
	Score float64
}

// Line is the record as arena files hold it: the moves joined by ";"
// (chance outcomes included, so the line replays the deal), the outcome
// ("score 17"), the game's name, then the player's name and "deal K",
// separated by tabs.
func (r SoloGame) Line() string {
	return r.Record.Line() + "\t" + r.Name + "\tdeal " + strconv.Itoa(r.Deal)
}

// SoloResult is what a one-player match produced.
type SoloResult struct {
	// Players are the players' names, in the order given.
	Players []string
	// Scores[i][k] is player i's final score on deal k; NaN when the game
	// was not played to its end.
	Scores [][]float64
	// Games holds every game that was started, by player, then deal; a
	// game cut short by an error has the outcome "unfinished".
	Games []SoloGame
}

// ScoreStats sums up scores, or deal-by-deal differences of scores.
type ScoreStats struct {
	N    int
	Mean float64
	// Low and High bound the mean's 95% interval (Student's t); NaN when
	// fewer than two values give no spread.
	Low, High float64
	SD        float64 // the sample standard deviation
	Min, Max  float64
}

// statsOf sums up the values that are not NaN.
func statsOf(values []float64) ScoreStats {
	s := ScoreStats{Min: math.Inf(1), Max: math.Inf(-1), Low: math.NaN(), High: math.NaN(), SD: math.NaN()}
	sum := 0.0
	for _, v := range values {
		if math.IsNaN(v) {
			continue
		}
		s.N++
		sum += v
		s.Min, s.Max = min(s.Min, v), max(s.Max, v)
	}
	if s.N == 0 {
		s.Mean, s.Min, s.Max = math.NaN(), math.NaN(), math.NaN()
		return s
	}
	s.Mean = sum / float64(s.N)
	if s.N < 2 {
		return s
	}
	ss := 0.0
	for _, v := range values {
		if !math.IsNaN(v) {
			ss += (v - s.Mean) * (v - s.Mean)
		}
	}
	s.SD = math.Sqrt(ss / float64(s.N-1))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(s.N - 1)}.Quantile(0.975)
	half := t * s.SD / math.Sqrt(float64(s.N))
	s.Low, s.High = s.Mean-half, s.Mean+half
	return s
}

// Stats sums up player i's scores over the deals.
func (r SoloResult) Stats(i int) ScoreStats { return statsOf(r.Scores[i]) }

// Difference sums up player i's score minus player j's, deal by deal,
// over the deals both finished: the paired comparison, whose interval is
// narrower than the two means' since each deal's luck cancels out.
func (r SoloResult) Difference(i, j int) ScoreStats {
	d := make([]float64, len(r.Scores[i]))
	for k := range d {
		d[k] = r.Scores[i][k] - r.Scores[j][k]
	}
	return statsOf(d)
}

// Versus counts, from player i's side, the deals where it scored more
// than player j (wins), as much (draws) and less (losses): the match as
// the match log and the rating fit take it.
func (r SoloResult) Versus(i, j int) Score {
	var s Score
	for k, a := range r.Scores[i] {
		b := r.Scores[j][k]
		switch {
		case math.IsNaN(a) || math.IsNaN(b):
		case a > b:
			s.Wins++
		case a == b:
			s.Draws++
		default:
			s.Losses++
		}
	}
	return s
}

// DealSeed is the seed of deal k of a match seeded by seed: the deal that
// env.NewDeal makes of it is the same for every player and every run.
func DealSeed(seed uint64, k int) uint64 {
	return rand.New(rand.NewPCG(seed, uint64(k))).Uint64()
}

// RunSolo plays opts.Deals deals of the one-player game g with each of
// players, every player on the same deals: each chance node is answered
// by the deal, which the players never see (they see the states, which
// hold only what is face up, and are told each outcome as it happens).
// On an error the result still holds the games played so far, and the
// ones cut short.
func RunSolo(ctx context.Context, g env.Game, players []player.Player, opts SoloOptions) (SoloResult, error) {
	if env.Players(g) != 1 {
		return SoloResult{}, fmt.Errorf("arena: %s is not a one-player game: play it with RunArena", g.Name())
	}
	if len(players) == 0 {
		return SoloResult{}, errors.New("arena: no players")
	}
	if opts.Deals < 1 || opts.Deals > MaxDeals {
		return SoloResult{}, fmt.Errorf("arena: %d deals, want 1 to %d", opts.Deals, MaxDeals)
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	opts.Workers = min(opts.Workers, opts.Deals)
	if opts.PerWorker <= 0 {
		opts.PerWorker = min((opts.Deals+opts.Workers-1)/opts.Workers, 8)
	}
	if opts.MaxPlies <= 0 {
		opts.MaxPlies = 10000
	}
	m := &soloMatch{game: g, opts: opts}
	m.result.Players = make([]string, len(players))
	m.result.Scores = make([][]float64, len(players))
	for i, p := range players {
		m.result.Players[i] = p.Name()
		m.result.Scores[i] = make([]float64, opts.Deals)
		for k := range m.result.Scores[i] {
			m.result.Scores[i][k] = math.NaN()
		}
	}
	var err error
	for i, p := range players {
		if err = m.play(ctx, i, p); err != nil {
			break
		}
	}
	sort.Slice(m.result.Games, func(a, b int) bool {
		x, y := m.result.Games[a], m.result.Games[b]
		return x.Player < y.Player || x.Player == y.Player && x.Deal < y.Deal
	})
	return m.result, err
}

// soloMatch is the state a one-player match's workers share.
type soloMatch struct {
	game env.Game
	opts SoloOptions

	mu       sync.Mutex
	shares   shares // the current player's deals
	stopped  bool
	finished int
	result   SoloResult
}

// play has player p, the match's player number i, play every deal.
func (m *soloMatch) play(ctx context.Context, i int, p player.Player) error {
	m.mu.Lock()
	m.shares = newShares(m.opts.Workers, m.opts.Deals)
	m.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, m.opts.Workers)
	for w := 0; w < m.opts.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = m.work(ctx, i, p, w)
		}()
	}
	wg.Wait()
	if total := len(m.result.Players) * m.opts.Deals; ctx.Err() != nil && m.finished < total {
		return stopped(ctx, errs, m.finished, total)
	}
	return errors.Join(errs...)
}

// take hands worker its next deal, if any (see shares).
func (m *soloMatch) take(worker int) (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return 0, false
	}
	return m.shares.take(worker)
}

func (m *soloMatch) stop() {
	m.mu.Lock()
	m.stopped = true
	m.mu.Unlock()
}

// done records a game; an unfinished one has no score.
func (m *soloMatch) done(rec SoloGame) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.result.Games = append(m.result.Games, rec)
	if rec.Outcome == "unfinished" {
		return nil
	}
	m.result.Scores[rec.Player][rec.Deal] = rec.Score
	m.finished++
	if m.opts.Progress != nil {
		m.opts.Progress(m.finished)
	}
	if m.opts.OnGame != nil {
		if err := m.opts.OnGame(rec); err != nil {
			m.stopped = true
			return err
		}
	}
	return nil
}

// soloTable is one game being played by a worker.
type soloTable struct {
	active bool
	state  env.State
	deal   env.Deal
	rec    SoloGame
}

// work plays deals with a seat of player i until none is left: each
// round, chance nodes are answered from each game's deal and every game
// waiting on a decision gets it from the seat, all in one call.
func (m *soloMatch) work(ctx context.Context, i int, p player.Player, worker int) (err error) {
	n := m.opts.PerWorker
	seed := m.opts.Seed ^ (uint64(worker)*64+uint64(i)+1)*0x9e3779b97f4a7c15
	seat, err := p.Seat(m.game, n, seed)
	if err != nil {
		m.stop()
		return fmt.Errorf("arena: %w", err)
	}
	defer func() {
		if cerr := seat.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("arena: closing %s: %w", p.Name(), cerr)
		}
	}()
	tables := make([]soloTable, n)
	defer func() {
		if err == nil {
			return
		}
		m.stop()
		for k := range tables {
			if tables[k].active {
				tables[k].rec.Outcome = "unfinished"
				m.done(tables[k].rec)
			}
		}
	}()
	var slots []int
	var states []env.State
	var moves []int
	legal := make([]int, 0, m.game.ActionSpace())
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		slots, states, moves = slots[:0], states[:0], moves[:0]
		for k := range tables {
			t := &tables[k]
			if !t.active {
				deal, ok := m.take(worker)
				if !ok {
					continue
				}
				*t = soloTable{active: true, state: m.game.NewState(), deal: env.NewDeal(m.game, DealSeed(m.opts.Seed, deal)),
					rec: SoloGame{Record: env.Record{Game: m.game.Name(), Outcome: "unfinished"}, Deal: deal, Player: i, Name: p.Name()}}
				if err := seat.NewGame(ctx, k, t.state); err != nil {
					return fmt.Errorf("arena: deal %d: %s: %w", deal+1, p.Name(), err)
				}
			}
			if err := m.deal(ctx, seat, t, k); err != nil {
				return err
			}
			if t.active {
				slots = append(slots, k)
				states = append(states, t.state)
				moves = append(moves, 0)
			}
		}
		if len(slots) == 0 {
			return nil
		}
		if err := seat.Moves(ctx, slots, states, moves); err != nil {
			var se player.SlotError
			if errors.As(err, &se) && se.Slot >= 0 && se.Slot < n {
				return fmt.Errorf("arena: deal %d: %s: %w", tables[se.Slot].rec.Deal+1, p.Name(), err)
			}
			return fmt.Errorf("arena: %s: %w", p.Name(), err)
		}
		for x, k := range slots {
			t := &tables[k]
			a := moves[x]
			if a == player.Resign || a < 0 || a >= m.game.ActionSpace() || !t.state.IsLegal(a) {
				legal = t.state.LegalActions(legal)
				names := make([]string, len(legal))
				for y, l := range legal {
					names[y] = m.game.FormatAction(l)
				}
				return fmt.Errorf("arena: deal %d: %s chose %s, not one of the legal moves %s",
					t.rec.Deal+1, p.Name(), m.game.FormatAction(a), strings.Join(names, ";"))
			}
			if err := m.apply(ctx, seat, t, k, a); err != nil {
				return err
			}
		}
	}
}

// deal answers t's chance nodes from its deal until a decision or the end.
func (m *soloMatch) deal(ctx context.Context, seat player.Seat, t *soloTable, slot int) error {
	for t.active && env.IsChance(t.state) {
		a, ok := t.deal.Outcome(t.state)
		if !ok || !t.state.IsLegal(a) {
			return fmt.Errorf("arena: deal %d: the deal has no legal outcome for a chance node of %s", t.rec.Deal+1, m.game.Name())
		}
		if err := m.apply(ctx, seat, t, slot, a); err != nil {
			return err
		}
	}
	return nil
}

// apply plays a legal action, tells the seat, and ends the game when it
// is over.
func (m *soloMatch) apply(ctx context.Context, seat player.Seat, t *soloTable, slot, action int) error {
	if len(t.rec.Moves) >= m.opts.MaxPlies {
		return fmt.Errorf("arena: deal %d still running after %d plies", t.rec.Deal+1, m.opts.MaxPlies)
	}
	t.state.Apply(action)
	t.rec.Moves = append(t.rec.Moves, m.game.FormatAction(action))
	if err := seat.Observe(ctx, slot, action); err != nil {
		return fmt.Errorf("arena: deal %d: %s: %w", t.rec.Deal+1, t.rec.Name, err)
	}
	if t.state.Terminal() {
		t.rec.Outcome = env.ResultName(t.state)
		t.rec.Score = float64(env.Value(t.state, 0))
		if sc, ok := t.state.(env.Scorer); ok {
			t.rec.Score = sc.Score()
		}
		t.active = false
		return m.done(t.rec)
	}
	return nil
}
