package selfplay

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/mcts"
)

// countGate lets a stream start games while fewer than limit have
// started; raise opens it further.
type countGate struct {
	mu             sync.Mutex
	started, limit int
	changed        chan struct{}
}

func newCountGate(limit int) *countGate {
	return &countGate{limit: limit, changed: make(chan struct{})}
}

func (g *countGate) Start() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.started >= g.limit {
		return false
	}
	g.started++
	return true
}

func (g *countGate) Changed() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.changed
}

func (g *countGate) raise(by int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.limit += by
	close(g.changed)
	g.changed = make(chan struct{})
}

// activeUniform is the uniform evaluator counting the calls in progress
// in active and the positions scored in n.
type activeUniform struct{ active, n *atomic.Int64 }

func (a activeUniform) Evaluate(states []env.State, priors, values []float32) error {
	a.active.Add(1)
	defer a.active.Add(-1)
	a.n.Add(int64(len(states)))
	time.Sleep(200 * time.Microsecond) // long enough for a pause to find one in progress
	return mcts.Uniform{}.Evaluate(states, priors, values)
}

// TestStreamPlaysWhatTheGateLets: a stream plays exactly the games its
// gate lets start, goes on when the gate opens again, finds no
// evaluation in progress during a pause, and stops with its context.
func TestStreamPlaysWhatTheGateLets(t *testing.T) {
	search := DefaultSearch()
	search.Full, search.Fast = 8, 4
	settings := DefaultSettings()
	settings.Workers, settings.Games, settings.Concurrent, settings.BatchSize = 3, 12, 64, 4
	gate := newCountGate(10)
	var active, evaluated atomic.Int64
	var st Stream
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ended := make(chan GameRecord, 100)
	var stats Stats
	var err error
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		stats, err = PlayStream(ctx, &st, tictactoe.Game{}, search, settings, 1, func() (mcts.Evaluator, error) {
			return activeUniform{&active, &evaluated}, nil
		}, gate, func(r GameRecord) { ended <- r })
	}()
	wait := func(games int) {
		t.Helper()
		for i := 0; i < games; i++ {
			select {
			case r := <-ended:
				if r.Moves < 5 || len(r.Actions) < 5 {
					t.Errorf("a game of %d moves (%d actions)", r.Moves, len(r.Actions))
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("%d of %d games ended", i, games)
			}
		}
	}
	wait(10)
	gate.raise(20)
	wait(1) // games are in play again
	check := func() {
		if n := active.Load(); n != 0 {
			t.Errorf("%d evaluations in progress during a pause", n)
		}
	}
	for range 10 {
		if err := st.Pause(func() error {
			check()
			time.Sleep(2 * time.Millisecond) // a worker not held would evaluate meanwhile
			check()
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	wait(19)
	select {
	case r := <-ended:
		t.Errorf("a game beyond the gate's 30 ended (%d moves)", r.Moves)
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	<-finished
	if !errors.Is(err, context.Canceled) {
		t.Errorf("stream stopped with %v, want its context's error", err)
	}
	if stats.Evaluations != evaluated.Load() || stats.Evaluations == 0 {
		t.Errorf("stats count %d evaluations, the evaluators %d", stats.Evaluations, evaluated.Load())
	}
	wantErr := errors.New("reload failed")
	if err := st.Pause(func() error { return wantErr }); err != wantErr {
		t.Errorf("a pause returned %v, want its function's error", err)
	}
}

// barrierUniform is the uniform evaluator whose first call waits until
// every worker's evaluator has made its first (or a few seconds pass),
// so that no worker plays on before all have games.
type barrierUniform struct {
	first   *sync.Once
	arrive  func()
	release <-chan struct{}
	n       *atomic.Int64
}

func (b barrierUniform) Evaluate(states []env.State, priors, values []float32) error {
	b.first.Do(func() {
		b.arrive()
		select {
		case <-b.release:
		case <-time.After(3 * time.Second):
		}
	})
	b.n.Add(int64(len(states)))
	return mcts.Uniform{}.Evaluate(states, priors, values)
}

// TestStreamSharesGamesAmongWorkers: each worker keeps no more than its
// share of a generation's games in play, so that a generation's games
// are spread over every worker. The first worker to start holds its
// games until every worker has some: one that took them all would leave
// the others none.
func TestStreamSharesGamesAmongWorkers(t *testing.T) {
	const workers = 4
	search := DefaultSearch()
	search.Full, search.Fast = 8, 4
	settings := DefaultSettings()
	settings.Workers, settings.Games, settings.Concurrent, settings.BatchSize = workers, 8, 64, 8
	gate := newCountGate(8)
	var mu sync.Mutex
	var counts []*atomic.Int64
	arrived := 0
	release := make(chan struct{})
	arrive := func() {
		mu.Lock()
		defer mu.Unlock()
		if arrived++; arrived == workers {
			close(release)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	played := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		PlayStream(ctx, &Stream{}, tictactoe.Game{}, search, settings, 1, func() (mcts.Evaluator, error) {
			mu.Lock()
			defer mu.Unlock()
			n := new(atomic.Int64)
			counts = append(counts, n)
			return barrierUniform{&sync.Once{}, arrive, release, n}, nil
		}, gate, func(GameRecord) {
			if played++; played == 8 {
				cancel()
			}
		})
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("the stream did not play its 8 games")
	}
	busy := 0
	for _, n := range counts {
		if n.Load() > 0 {
			busy++
		}
	}
	if busy != workers {
		t.Errorf("%d of %d workers evaluated positions, want all %d", busy, len(counts), workers)
	}
}

func TestStreamNeedsAGate(t *testing.T) {
	_, err := PlayStream(context.Background(), &Stream{}, tictactoe.Game{}, DefaultSearch(), DefaultSettings(), 1,
		func() (mcts.Evaluator, error) { return mcts.Uniform{}, nil }, nil, func(GameRecord) {})
	if err == nil {
		t.Error("a stream without a gate started")
	}
}
