package cpu

import "github.com/flipzero/flipzero/nn"

// Backend is the backend that computes on the CPU: Gorgonia trains (with
// this package's own convolution and batch-norm operations), and the
// Evaluator infers (direct AVX-512 or AVX2 convolutions, or im2row and
// a matrix multiply).
func Backend() nn.Backend { return backend{} }

type backend struct{}

func (backend) Name() string { return "cpu (" + ConvInfo() + "; " + BLASInfo() + ")" }

// Summary names the backend in a few words, for the line every command
// starts with: the CPU and the kernels its convolutions run on.
func (backend) Summary() string {
	if arch, ok := directDefault(); ok {
		return "cpu (" + arch.name + ")"
	}
	return "cpu"
}

func (backend) NewInference(f *nn.Folded, maxBatch int) (nn.Inference, error) {
	return NewEvaluator(f, maxBatch)
}

func (backend) NewTraining(s nn.TrainingState) (nn.Training, error) {
	if err := s.CheckVelocity(); err != nil {
		return nil, err
	}
	t, err := NewTrainer(s.Network, s.Config)
	if err != nil {
		return nil, err
	}
	for i, v := range s.Velocity {
		copy(t.velocity[i], v)
	}
	t.steps = s.Steps
	return t, nil
}

// Velocity is the momentum buffer, parallel to Network().Learnables().
func (t *Trainer) Velocity() [][]float32 { return t.velocity }

// Sync does nothing: the Gorgonia trainer works on the network's own arrays.
func (t *Trainer) Sync() error { return nil }
