package cpu_test

import (
	"testing"

	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/cpu"
	"github.com/flipzero/flipzero/nn/nntest"
)

// TestCPUConformance runs the backend conformance suite on the CPU
// backend: its direct or im2row inference and its own training
// operations against Gorgonia's.
func TestCPUConformance(t *testing.T) {
	nntest.Run(t, cpu.Backend(), nntest.Options{Short: testing.Short()})
}

// TestCPUTrainingResumes: a trainer made from a checkpoint's velocity and
// step count goes on where the saved one stopped.
func TestCPUTrainingResumes(t *testing.T) {
	g := othello.Othello()
	cfg := nn.Config{Blocks: 1, Filters: 4, PolicyFilters: 1, ValueFilters: 1, ValueHidden: 4}
	net, err := nn.New(g, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	velocity := make([][]float32, len(net.Learnables()))
	for i, p := range net.Learnables() {
		velocity[i] = make([]float32, len(p.Data))
		velocity[i][0] = float32(i + 1)
	}
	tr, err := cpu.Backend().NewTraining(nn.TrainingState{Network: net, Config: nn.DefaultTrainConfig(), Velocity: velocity, Steps: 42})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Steps() != 42 || tr.Velocity()[3][0] != 4 || tr.Network() != net {
		t.Errorf("resumed at step %d with velocity[3][0] = %v", tr.Steps(), tr.Velocity()[3][0])
	}
	if _, err := cpu.Backend().NewTraining(nn.TrainingState{Network: net, Config: nn.DefaultTrainConfig(), Velocity: velocity[1:]}); err == nil {
		t.Error("momentum for the wrong number of arrays accepted")
	}
}
