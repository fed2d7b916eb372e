package nn_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/cpu"
	"github.com/flipzero/flipzero/nn/nntest"
)

// multiplexed is the CPU backend posing as one that wants its batches
// gathered, recording the batch sizes its inferences run and failing
// every batch once fail is set.
type multiplexed struct {
	nn.Backend
	mu         sync.Mutex
	batches    []int
	fail       bool
	reloadable bool
	// hold keeps each batch that long on the device, so that requests
	// queue behind it however the scheduler runs the workers.
	hold time.Duration
}

func (m *multiplexed) Pipelines() int { return 2 }

func (m *multiplexed) NewInference(f *nn.Folded, maxBatch int) (nn.Inference, error) {
	inf, err := m.Backend.NewInference(f, maxBatch)
	if m.reloadable {
		return reloading{recording{inf, m}}, err
	}
	return recording{inf, m}, err
}

type recording struct {
	nn.Inference
	m *multiplexed
}

// reloading is recording with the inner inference's Reload.
type reloading struct{ recording }

func (r reloading) Reload(f *nn.Folded) error { return r.Inference.(nn.Reloadable).Reload(f) }

func (r recording) Forward(in []float32, n int) ([]float32, []float32, error) {
	r.m.mu.Lock()
	r.m.batches = append(r.m.batches, n)
	fail, hold := r.m.fail, r.m.hold
	r.m.mu.Unlock()
	if fail {
		return nil, nil, errors.New("device lost")
	}
	time.Sleep(hold)
	return r.Inference.Forward(in, n)
}

// TestServerAnswersEachClientItsOwn: many workers evaluating through one
// batching server get what their own evaluators would give, and the
// server runs batches larger than any one worker's.
func TestServerAnswersEachClientItsOwn(t *testing.T) {
	g := othello.Othello()
	net := nntest.Network(t, nntest.Case{Game: g, Config: nn.DefaultConfig(g)}, 1)
	folded := net.Fold()
	// A batch held on the device for 20 ms: on a loaded machine
	// the workers' requests may otherwise never meet (a network this
	// small evaluates in less time than a worker takes to ask again).
	backend := &multiplexed{Backend: cpu.Backend(), hold: 20 * time.Millisecond}
	const workers, batch = 6, 5
	evals, err := nn.NewEvaluators(backend, folded, workers, batch)
	if err != nil {
		t.Fatal(err)
	}
	if evals.Batch() != workers*batch {
		t.Errorf("server batch %d, want %d", evals.Batch(), workers*batch)
	}
	actions := g.ActionSpace()
	// A row's answer may round differently in a batch of other rows
	// (OpenBLAS's Haswell kernels block a matrix by its height): the
	// server must answer within rounding of the worker's own evaluator,
	// and every other position's answer lies far outside that.
	const rounding = 1e-5
	positions := distinctPositions(t, folded, g, 40, 100*rounding)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		eval, err := evals.New()
		if err != nil {
			t.Fatal(err)
		}
		own, err := nn.NewEvaluator(cpu.Backend(), folded, batch)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer eval.Close()
			defer own.Close()
			priors, values := make([]float32, batch*actions), make([]float32, batch)
			wantP, wantV := make([]float32, batch*actions), make([]float32, batch)
			for round := 0; round < 20; round++ {
				n := 1 + (w+round)%batch
				states := positions[(w*7+round)%30:][:n]
				if err := eval.Evaluate(states, priors, values); err != nil {
					errs <- err
					return
				}
				if err := own.Evaluate(states, wantP, wantV); err != nil {
					errs <- err
					return
				}
				if d, _ := nntest.Diff(priors[:n*actions], wantP[:n*actions]); d > rounding {
					errs <- fmt.Errorf("priors differ from the worker's own evaluator's by %g", d)
					return
				}
				if d, _ := nntest.Diff(values[:n], wantV[:n]); d > rounding {
					errs <- fmt.Errorf("values differ from the worker's own evaluator's by %g", d)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := evals.Close(); err != nil {
		t.Fatal(err)
	}
	largest := 0
	for _, b := range backend.batches {
		largest = max(largest, b)
	}
	if largest <= batch {
		t.Errorf("largest batch run %d: the server never gathered more than one worker's %d", largest, batch)
	}
	t.Logf("%d batches, largest %d", len(backend.batches), largest)
}

// distinctPositions is n random positions whose priors differ pairwise
// by more than apart somewhere, so that an answer given to the wrong
// position shows.
func distinctPositions(t *testing.T, folded *nn.Folded, g env.Game, n int, apart float64) []env.State {
	t.Helper()
	candidates := env.RandomPositions(g, 20*n, 3, false)
	actions := g.ActionSpace()
	own, err := nn.NewEvaluator(cpu.Backend(), folded, len(candidates))
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	priors, values := make([]float32, len(candidates)*actions), make([]float32, len(candidates))
	if err := own.Evaluate(candidates, priors, values); err != nil {
		t.Fatal(err)
	}
	var kept []env.State
	var keptPriors [][]float32
	for i, s := range candidates {
		p := priors[i*actions:][:actions]
		if !slices.ContainsFunc(keptPriors, func(q []float32) bool { d, _ := nntest.Diff(p, q); return d <= apart }) {
			kept, keptPriors = append(kept, s), append(keptPriors, p)
		}
	}
	if len(kept) < n {
		t.Fatalf("%d of %d random positions have priors more than %g apart, want %d", len(kept), len(candidates), apart, n)
	}
	return kept[:n]
}

// TestServerReportsErrors: a failed batch fails every request in it
// with the backend's error, and a closed client refuses work.
func TestServerReportsErrors(t *testing.T) {
	g := othello.Othello()
	net := nntest.Network(t, nntest.Case{Game: g, Config: nn.DefaultConfig(g)}, 1)
	backend := &multiplexed{Backend: cpu.Backend(), fail: true}
	s, err := nn.NewServer(backend, net.Fold(), 8, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := s.Client(4)
	if err != nil {
		t.Fatal(err)
	}
	_, h, w := g.EncodedShape()
	planes, _, _ := g.EncodedShape()
	in := make([]float32, 2*planes*h*w)
	if _, _, err := c.Forward(in, 2); err == nil || !strings.Contains(err.Error(), "device lost") {
		t.Errorf("failed batch: %v", err)
	}
	if _, _, err := c.Forward(in[:1], 1); err == nil {
		t.Error("a batch of the wrong size was accepted")
	}
	if _, err := s.Client(9); err == nil {
		t.Error("a client larger than the server's batch was accepted")
	}
	c.Close()
	if _, _, err := c.Forward(in, 2); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("closed client: %v", err)
	}
	// A client still open when the server closes gets an error, not a
	// send on a closed queue.
	late, err := s.Client(4)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, _, err := late.Forward(in, 2); err == nil || !strings.Contains(err.Error(), "server: closed") {
		t.Errorf("a client of a closed server: %v", err)
	}
}

// TestEvaluatorsOnTheCPU: the CPU backend gets each worker its own
// inference, no server.
func TestEvaluatorsOnTheCPU(t *testing.T) {
	g := othello.Othello()
	net := nntest.Network(t, nntest.Case{Game: g, Config: nn.DefaultConfig(g)}, 1)
	evals, err := nn.NewEvaluators(cpu.Backend(), net.Fold(), 8, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer evals.Close()
	e, err := evals.New()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := e.Inference().(*cpu.Evaluator); !ok || evals.Batch() != 16 {
		t.Errorf("CPU inference %T of batch %d, want the CPU's own of 16", e.Inference(), evals.Batch())
	}
}

// TestEvaluatorsReload: after Reload, evaluators evaluate the new
// network, whether the server's inferences take its weights in place or
// the server starts anew.
func TestEvaluatorsReload(t *testing.T) {
	g := othello.Othello()
	c := nntest.Case{Game: g, Config: nn.DefaultConfig(g)}
	first, second := nntest.Network(t, c, 1).Fold(), nntest.Network(t, c, 2).Fold()
	states := env.RandomPositions(g, 4, 5, false)
	actions := g.ActionSpace()
	want, wantV := make([]float32, 4*actions), make([]float32, 4)
	own, err := nn.NewEvaluator(cpu.Backend(), second, 4)
	if err != nil {
		t.Fatal(err)
	}
	if err := own.Evaluate(states, want, wantV); err != nil {
		t.Fatal(err)
	}
	for _, reloadable := range []bool{true, false} {
		evals, err := nn.NewEvaluators(&multiplexed{Backend: cpu.Backend(), reloadable: reloadable}, first, 2, 4)
		if err != nil {
			t.Fatal(err)
		}
		got, gotV := make([]float32, 4*actions), make([]float32, 4)
		for round, f := range []*nn.Folded{first, second} {
			if round > 0 {
				if err := evals.Reload(f); err != nil {
					t.Fatalf("reloadable %v: %v", reloadable, err)
				}
			}
			e, err := evals.New()
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Evaluate(states, got, gotV); err != nil {
				t.Fatal(err)
			}
			e.Close()
		}
		if d, _ := nntest.Diff(got, want); d > 1e-6 {
			t.Errorf("reloadable %v: priors after Reload differ from the new network's by %g", reloadable, d)
		}
		evals.Close()
	}
	other := nn.DefaultConfig(g)
	other.Filters = 32
	small := nntest.Network(t, nntest.Case{Game: g, Config: other}, 3).Fold()
	ev, _ := cpu.NewEvaluator(first, 4)
	if err := ev.Reload(small); err == nil {
		t.Error("an evaluator took a network of another architecture")
	}
}

// TestEvaluatorsReloadOpenOnes: Reload reaches the evaluators already
// handed out — each its own inference on the CPU, the server's with a
// server that takes weights in place — and skips the closed ones; a
// server that cannot take them in place refuses while evaluators are
// open rather than leaving them on a closed server.
func TestEvaluatorsReloadOpenOnes(t *testing.T) {
	g := othello.Othello()
	c := nntest.Case{Game: g, Config: nn.DefaultConfig(g)}
	first, second := nntest.Network(t, c, 1).Fold(), nntest.Network(t, c, 2).Fold()
	states := env.RandomPositions(g, 4, 5, false)
	actions := g.ActionSpace()
	evaluate := func(e *nn.BatchEvaluator) []float32 {
		t.Helper()
		p, v := make([]float32, 4*actions), make([]float32, 4)
		if err := e.Evaluate(states, p, v); err != nil {
			t.Fatal(err)
		}
		return p
	}
	own, err := nn.NewEvaluator(cpu.Backend(), second, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := evaluate(own)
	for _, tc := range []struct {
		name    string
		backend nn.Backend
	}{
		{"cpu", cpu.Backend()},
		{"server", &multiplexed{Backend: cpu.Backend(), reloadable: true}},
	} {
		evals, err := nn.NewEvaluators(tc.backend, first, 2, 4)
		if err != nil {
			t.Fatal(err)
		}
		open, err := evals.New()
		if err != nil {
			t.Fatal(err)
		}
		closed, err := evals.New()
		if err != nil {
			t.Fatal(err)
		}
		before := evaluate(open)
		closed.Close()
		if err := evals.Reload(second); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		after := evaluate(open)
		if d, _ := nntest.Diff(after, want); d > 1e-6 {
			t.Errorf("%s: an open evaluator's priors after Reload differ from the new network's by %g", tc.name, d)
		}
		if d, _ := nntest.Diff(before, want); d < 1e-4 {
			t.Errorf("%s: the two networks agree (%g): the test tells nothing", tc.name, d)
		}
		open.Close()
		evals.Close()
	}
	evals, err := nn.NewEvaluators(&multiplexed{Backend: cpu.Backend()}, first, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer evals.Close()
	open, err := evals.New()
	if err != nil {
		t.Fatal(err)
	}
	if err := evals.Reload(second); err == nil || !strings.Contains(err.Error(), "open") {
		t.Errorf("a server that cannot reload in place, an evaluator open: Reload said %v", err)
	}
	open.Close()
	if err := evals.Reload(second); err != nil {
		t.Errorf("with every evaluator closed: %v", err)
	}
}

// TestEvaluatorsForgetClosedOnes: evaluators handed out and closed, over
// and over, are not kept (their buffers can go).
func TestEvaluatorsForgetClosedOnes(t *testing.T) {
	g := othello.Othello()
	net := nntest.Network(t, nntest.Case{Game: g, Config: nn.DefaultConfig(g)}, 1)
	evals, err := nn.NewEvaluators(cpu.Backend(), net.Fold(), 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer evals.Close()
	for range 50 {
		e, err := evals.New()
		if err != nil {
			t.Fatal(err)
		}
		e.Close()
	}
	if n := nn.OpenEvaluators(evals); n > 1 {
		t.Errorf("%d evaluators kept after 50 were handed out and closed, want at most the last", n)
	}
}

// TestEvaluatorsCacheForgetsOnReload: an evaluator's cache answers for
// the network it holds: after Reload, what it remembered of the last one
// goes, and the positions go to the new network.
func TestEvaluatorsCacheForgetsOnReload(t *testing.T) {
	g := othello.Othello()
	c := nntest.Case{Game: g, Config: nn.DefaultConfig(g)}
	first, second := nntest.Network(t, c, 1).Fold(), nntest.Network(t, c, 2).Fold()
	states := env.RandomPositions(g, 6, 5, false)
	actions := g.ActionSpace()
	want := map[*nn.Folded][]float32{}
	for _, f := range []*nn.Folded{first, second} {
		own, err := nn.NewEvaluator(cpu.Backend(), f, 8)
		if err != nil {
			t.Fatal(err)
		}
		want[f] = make([]float32, 6*actions)
		if err := own.Evaluate(states, want[f], make([]float32, 6)); err != nil {
			t.Fatal(err)
		}
	}
	for _, backend := range []nn.Backend{cpu.Backend(), &multiplexed{Backend: cpu.Backend(), reloadable: true}} {
		evals := cachedEvaluators(t, backend, first, 2, 1<<10)
		e, err := evals.New()
		if err != nil {
			t.Fatal(err)
		}
		got := make([]float32, 6*actions)
		for round, f := range []*nn.Folded{first, first, second, second} {
			if round == 2 {
				if err := evals.Reload(f); err != nil {
					t.Fatal(err)
				}
			}
			if err := e.Evaluate(states, got, make([]float32, 6)); err != nil {
				t.Fatal(err)
			}
			if d, _ := nntest.Diff(got, want[f]); d > 1e-5 {
				t.Errorf("%T, round %d: priors differ from the network's by %g", backend, round, d)
			}
		}
		if hits, lookups := e.CacheStats(); hits != 12 || lookups != 24 {
			t.Errorf("%T: %d hits of %d lookups, want 12 of 24 (the rounds after the first of each network)", backend, hits, lookups)
		}
		e.Close()
		evals.Close()
	}
	if err := (&nn.Evaluators{}).SetCache(5); err == nil {
		t.Error("a cache of 5 entries accepted")
	}
}

// cachedEvaluators serves f to workers evaluators of batches of 8 that
// share a cache of entries answers.
func cachedEvaluators(t *testing.T, backend nn.Backend, f *nn.Folded, workers, entries int) *nn.Evaluators {
	t.Helper()
	evals, err := nn.NewEvaluators(backend, f, workers, 8)
	if err != nil {
		t.Fatal(err)
	}
	if err := evals.SetCache(entries); err != nil {
		t.Fatal(err)
	}
	return evals
}

// TestEvaluatorsShareTheirCache: what one worker's evaluator scored
// answers another's, and workers on many goroutines read and write the
// one cache at once (run with -race) getting the network's answers.
func TestEvaluatorsShareTheirCache(t *testing.T) {
	g := othello.Othello()
	f := nntest.Network(t, nntest.Case{Game: g, Config: nn.DefaultConfig(g)}, 1).Fold()
	states := env.RandomPositions(g, 24, 9, false)
	actions := g.ActionSpace()
	own, err := nn.NewEvaluator(cpu.Backend(), f, 8)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float32, len(states)*actions)
	if err := own.Evaluate(states, want, make([]float32, len(states))); err != nil {
		t.Fatal(err)
	}
	evals := cachedEvaluators(t, cpu.Backend(), f, 4, 1<<12)
	first, err := evals.New()
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Evaluate(states[:12], make([]float32, 12*actions), make([]float32, 12)); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	workers := make([]*nn.BatchEvaluator, 4)
	for w := range workers {
		if workers[w], err = evals.New(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := make([]float32, len(states)*actions)
			for range 3 {
				if err := workers[w].Evaluate(states, got, make([]float32, len(states))); err != nil {
					t.Error(err)
					return
				}
				if d, _ := nntest.Diff(got, want); d > 1e-5 {
					t.Errorf("worker %d: priors differ from the network's by %g", w, d)
				}
			}
		}()
	}
	wg.Wait()
	// Every worker's first call found the first evaluator's twelve.
	for w, e := range workers {
		if hits, lookups := e.CacheStats(); hits < 12 || lookups != int64(3*len(states)) {
			t.Errorf("worker %d: %d hits of %d lookups, want at least 12 of %d", w, hits, lookups, 3*len(states))
		}
	}
}
