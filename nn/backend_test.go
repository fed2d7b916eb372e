package nn

import (
	"math"
	"testing"

	"github.com/flipzero/flipzero/env/envtest"
	"github.com/flipzero/flipzero/env/tictactoe"
)

// scripted is an inference whose outputs are a known function of its
// inputs: logit a of a position is its encoding's value a mod size times
// a+1, and its win/draw/loss (0.5+x, 0.2, 0.3−x) with x its first value
// over 10.
type scripted struct {
	actions, size, maxBatch int
	logits, wdl             []float32
	batches                 []int
}

func (s *scripted) MaxBatch() int { return s.maxBatch }

func (s *scripted) Forward(in []float32, n int) ([]float32, []float32, error) {
	s.batches = append(s.batches, n)
	for i := 0; i < n; i++ {
		pos := in[i*s.size : (i+1)*s.size]
		for a := 0; a < s.actions; a++ {
			s.logits[i*s.actions+a] = pos[a%s.size] * float32(a+1)
		}
		x := pos[0] / 10
		s.wdl[3*i], s.wdl[3*i+1], s.wdl[3*i+2] = 0.5+x, 0.2, 0.3-x
	}
	return s.logits[:n*s.actions], s.wdl[:3*n], nil
}

// TestBatchEvaluator: every backend's Evaluate encodes the states, runs
// them in batches of at most MaxBatch, and turns the logits into priors
// over the legal actions alone and the win/draw/loss into P(win) −
// P(loss), allocating nothing.
func TestBatchEvaluator(t *testing.T) {
	g := tictactoe.Game{}
	planes, h, w := g.EncodedShape()
	A, size := g.ActionSpace(), planes*h*w
	inf := &scripted{actions: A, size: size, maxBatch: 8, logits: make([]float32, 8*A), wdl: make([]float32, 24)}
	ev, err := NewBatchEvaluator(g, inf)
	if err != nil {
		t.Fatal(err)
	}
	states := envtest.RandomPositions(g, 37, 3)
	priors, values := make([]float32, len(states)*A), make([]float32, len(states))
	if err := ev.Evaluate(states, priors, values); err != nil {
		t.Fatal(err)
	}
	if want := []int{8, 8, 8, 8, 5}; len(inf.batches) != len(want) {
		t.Fatalf("batches %v, want %v", inf.batches, want)
	}
	enc := make([]float32, size)
	for i, s := range states {
		s.Encode(enc)
		legal := s.LegalActions(nil)
		sum := 0.0
		for _, a := range legal {
			sum += math.Exp(float64(enc[a%size] * float32(a+1)))
		}
		for a := 0; a < A; a++ {
			want := 0.0
			if s.IsLegal(a) {
				want = math.Exp(float64(enc[a%size]*float32(a+1))) / sum
			}
			if d := math.Abs(float64(priors[i*A+a]) - want); d > 1e-6 {
				t.Fatalf("state %d action %d: prior %g, want %g", i, a, priors[i*A+a], want)
			}
		}
		if want := 0.2 + float64(enc[0])/5; math.Abs(float64(values[i])-want) > 1e-6 {
			t.Fatalf("state %d: value %g, want %g", i, values[i], want)
		}
	}
	inf.batches = make([]int, 0, 64)
	if allocs := testing.AllocsPerRun(5, func() { ev.Evaluate(states, priors, values) }); allocs != 0 {
		t.Errorf("%v allocations per call", allocs)
	}
	if err := ev.Evaluate(states, priors[:A], values); err == nil {
		t.Error("priors too short for the states accepted")
	}
}
