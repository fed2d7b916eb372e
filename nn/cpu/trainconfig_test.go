package cpu

import (
	"testing"

	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/nn"
)

// TestSetLearningRate: a valid rate takes effect, an invalid one is
// refused and leaves the rate as it was.
func TestSetLearningRate(t *testing.T) {
	net, _ := nn.New(tictactoe.Game{}, tinyConfig, 1)
	tr, err := NewTrainer(net, nn.DefaultTrainConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.SetLearningRate(0.005); err != nil || tr.Config().LearningRate != 0.005 {
		t.Errorf("SetLearningRate(0.005): %v, rate now %g", err, tr.Config().LearningRate)
	}
	if err := tr.SetLearningRate(-1); err == nil || tr.Config().LearningRate != 0.005 {
		t.Errorf("SetLearningRate(-1): %v, rate now %g", err, tr.Config().LearningRate)
	}
}

// TestLearningRateScalesStep: with zero momentum and decay, a step moves
// each weight by exactly −rate × gradient.
func TestLearningRateScalesStep(t *testing.T) {
	g := tictactoe.Game{}
	b := randomBatch(g, 8, 2)
	moved := func(rate float64) []float32 {
		net, _ := nn.New(g, tinyConfig, 5)
		cfg := nn.TrainConfig{LearningRate: rate, BatchNormMomentum: 0.1}
		tr, err := NewTrainer(net, cfg)
		if err != nil {
			t.Fatal(err)
		}
		weights := net.Learnables()[net.Describe().PolicyFC.W].Data
		before := append([]float32(nil), weights...)
		if _, err := tr.Step(b); err != nil {
			t.Fatal(err)
		}
		for i := range before {
			before[i] = weights[i] - before[i]
		}
		return before
	}
	small, large := moved(0.01), moved(0.03)
	nonzero := 0
	for i := range small {
		if small[i] != 0 {
			nonzero++
		}
		if d := large[i] - 3*small[i]; d > 1e-5 || d < -1e-5 {
			t.Fatalf("weight %d moved %g at rate 0.03 and %g at rate 0.01", i, large[i], small[i])
		}
	}
	if nonzero == 0 {
		t.Error("no weight moved")
	}
}
