package cpu

import (
	"github.com/flipzero/flipzero/nn"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/flipzero/flipzero/env/envtest"
	"github.com/flipzero/flipzero/env/tictactoe"
)

// TestEvaluate checks the search-facing contract: priors are a
// distribution over the legal actions, values are P(win) − P(loss), and
// any number of states works, in batches of the evaluator's size or not.
func TestEvaluate(t *testing.T) {
	g := tictactoe.Game{}
	net, err := nn.New(g, tinyConfig, 4)
	if err != nil {
		t.Fatal(err)
	}
	perturbBatchNorm(net, 1)
	states := envtest.RandomPositions(g, 23, 2)
	A := g.ActionSpace()
	ref, err := NewEvaluator(net.Fold(), len(states))
	if err != nil {
		t.Fatal(err)
	}
	logits, wdl, err := ref.Forward(encodeAll(states), len(states))
	if err != nil {
		t.Fatal(err)
	}
	for _, maxBatch := range []int{1, 4, 8, 23, 64} {
		ev, err := nn.NewEvaluator(Backend(), net.Fold(), maxBatch)
		if err != nil {
			t.Fatal(err)
		}
		priors := make([]float32, len(states)*A)
		for i := range priors {
			priors[i] = -7 // must all be overwritten
		}
		values := make([]float32, len(states))
		if err := ev.Evaluate(states, priors, values); err != nil {
			t.Fatal(err)
		}
		buf := make([]int, 0, A)
		for i, s := range states {
			legal := s.LegalActions(buf)
			p := priors[i*A : (i+1)*A]
			sum := 0.0
			for a, v := range p {
				if !s.IsLegal(a) && v != 0 {
					t.Fatalf("batch %d, state %d: prior %g on illegal action %d", maxBatch, i, v, a)
				}
				sum += float64(v)
			}
			if len(legal) > 0 && math.Abs(sum-1) > 1e-5 {
				t.Errorf("batch %d, state %d: priors sum to %g", maxBatch, i, sum)
			}
			// The prior ratio of two legal actions is exp of the logit difference.
			if len(legal) >= 2 {
				a, b := legal[0], legal[len(legal)-1]
				want := math.Exp(float64(logits[i*A+a] - logits[i*A+b]))
				if got := float64(p[a] / p[b]); math.Abs(got-want) > 1e-4*want {
					t.Errorf("batch %d, state %d: prior ratio %g, want %g", maxBatch, i, got, want)
				}
			}
			if want := wdl[i*3] - wdl[i*3+2]; math.Abs(float64(values[i]-want)) > 1e-6 {
				t.Errorf("batch %d, state %d: value %g, want %g", maxBatch, i, values[i], want)
			}
		}
	}
	ev, _ := NewEvaluator(net.Fold(), 4)
	if _, _, err := ev.Forward(make([]float32, 27*5), 5); err == nil {
		t.Error("forward beyond the maximum batch: no error")
	}
	if _, err := NewEvaluator(net.Fold(), 0); err == nil {
		t.Error("evaluator of batch 0: no error")
	}
}

// TestEvaluatorsConcurrent runs evaluators over one shared snapshot from
// several goroutines; they must agree with a lone evaluator (and the race
// detector must stay quiet).
func TestEvaluatorsConcurrent(t *testing.T) {
	g := fakeOthello
	net, err := nn.New(g, nn.Config{Blocks: 2, Filters: 16, PolicyFilters: 2, ValueFilters: 1, ValueHidden: 16}, 9)
	if err != nil {
		t.Fatal(err)
	}
	folded := net.Fold()
	states := g.randomStates(24, 4)
	A := g.ActionSpace()
	lone, _ := nn.NewEvaluator(Backend(), folded, 8)
	wantPriors := make([]float32, len(states)*A)
	wantValues := make([]float32, len(states))
	if err := lone.Evaluate(states, wantPriors, wantValues); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ev, err := nn.NewEvaluator(Backend(), folded, 8)
			if err != nil {
				errs <- err.Error()
				return
			}
			priors := make([]float32, len(states)*A)
			values := make([]float32, len(states))
			for round := 0; round < 5; round++ {
				if err := ev.Evaluate(states, priors, values); err != nil {
					errs <- err.Error()
					return
				}
				if maxAbsDiff(priors, wantPriors) != 0 || maxAbsDiff(values, wantValues) != 0 {
					errs <- "outputs differ from a lone evaluator's"
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestEvaluateAllocatesNothing: after the first call, evaluation reuses
// the evaluator's buffers.
func TestEvaluateAllocatesNothing(t *testing.T) {
	skipAllocTestUnderRace(t)
	g := fakeOthello
	net, err := nn.New(g, nn.Config{Blocks: 1, Filters: 16, PolicyFilters: 2, ValueFilters: 1, ValueHidden: 16}, 1)
	if err != nil {
		t.Fatal(err)
	}
	states := g.randomStates(32, 1)
	priors := make([]float32, 32*g.ActionSpace())
	values := make([]float32, 32)
	for _, path := range convPaths() {
		t.Run(path.name, func(t *testing.T) {
			path.skipUnlessRun(t)
			inf, _ := newEvaluator(net.Fold(), 32, path.arch, path.direct)
			ev, _ := nn.NewBatchEvaluator(g, inf)
			allocs := testing.AllocsPerRun(5, func() {
				if err := ev.Evaluate(states, priors, values); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("%s: Evaluate allocates %g times per call", path.name, allocs)
			}
		})
	}
}

var _ nn.Inference = (*Evaluator)(nil)

func TestEvaluateRejectsOtherGames(t *testing.T) {
	net, err := nn.New(tictactoe.Game{}, tinyConfig, 1)
	if err != nil {
		t.Fatal(err)
	}
	ev, _ := nn.NewEvaluator(Backend(), net.Fold(), 4)
	states := fakeOthello.randomStates(2, 1)
	err = ev.Evaluate(states, make([]float32, 2*65), make([]float32, 2))
	if err == nil || !strings.Contains(err.Error(), "fake-othello") {
		t.Errorf("error %v, want one naming the other game", err)
	}
}
