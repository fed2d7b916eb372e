package nn

import (
	"math"
	"testing"

	"github.com/flipzero/flipzero/env/envtest"
	"github.com/flipzero/flipzero/env/othello"
)

// forwardOnly hides the CPU evaluator's own Evaluate, so that the batch
// evaluator is what turns its outputs into priors: the path a GPU
// backend's inference takes.
type forwardOnly struct{ inf Inference }

func (f forwardOnly) MaxBatch() int { return f.inf.MaxBatch() }
func (f forwardOnly) Forward(in []float32, n int) ([]float32, []float32, error) {
	return f.inf.Forward(in, n)
}

// TestBatchEvaluatorMatchesTheCPU: priors and values through any
// backend's Forward are those of the CPU evaluator.
func TestBatchEvaluatorMatchesTheCPU(t *testing.T) {
	g := othello.Othello()
	net, err := New(g, Config{Blocks: 1, Filters: 8, PolicyFilters: 2, ValueFilters: 1, ValueHidden: 8}, 5)
	if err != nil {
		t.Fatal(err)
	}
	perturbBatchNorm(net, 2)
	states := envtest.RandomPositions(g, 37, 3)
	A := g.ActionSpace()
	want := make([]float32, len(states)*A)
	wantV := make([]float32, len(states))
	cpu, err := CPU().NewInference(net.Fold(), 8)
	if err != nil {
		t.Fatal(err)
	}
	if err := cpu.(*Evaluator).Evaluate(states, want, wantV); err != nil {
		t.Fatal(err)
	}
	be, err := NewBatchEvaluator(g, forwardOnly{cpu})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, len(states)*A)
	gotV := make([]float32, len(states))
	if err := be.Evaluate(states, got, gotV); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if math.Abs(float64(got[i]-want[i])) > 1e-6 {
			t.Fatalf("prior %d: %g, want %g", i, got[i], want[i])
		}
	}
	for i := range wantV {
		if math.Abs(float64(gotV[i]-wantV[i])) > 1e-6 {
			t.Fatalf("value %d: %g, want %g", i, gotV[i], wantV[i])
		}
	}
	if raceEnabled && theBLAS().open != nil {
		return // purego's sync.Pool allocates at random under the race detector
	}
	if allocs := testing.AllocsPerRun(5, func() { be.Evaluate(states, got, gotV) }); allocs != 0 {
		t.Errorf("%v allocations per call", allocs)
	}
}

// TestCPUTrainingResumes: a trainer made from a checkpoint's velocity and
// step count goes on where the saved one stopped.
func TestCPUTrainingResumes(t *testing.T) {
	g := othello.Othello()
	cfg := Config{Blocks: 1, Filters: 4, PolicyFilters: 1, ValueFilters: 1, ValueHidden: 4}
	net, err := New(g, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	velocity := make([][]float32, len(net.Learnables()))
	for i, p := range net.Learnables() {
		velocity[i] = make([]float32, len(p.Data))
		velocity[i][0] = float32(i + 1)
	}
	tr, err := CPU().NewTraining(TrainingState{Network: net, Config: DefaultTrainConfig(), Velocity: velocity, Steps: 42})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Steps() != 42 || tr.Velocity()[3][0] != 4 || tr.Network() != net {
		t.Errorf("resumed at step %d with velocity[3][0] = %v", tr.Steps(), tr.Velocity()[3][0])
	}
	if _, err := CPU().NewTraining(TrainingState{Network: net, Config: DefaultTrainConfig(), Velocity: velocity[1:]}); err == nil {
		t.Error("momentum for the wrong number of arrays accepted")
	}
}
