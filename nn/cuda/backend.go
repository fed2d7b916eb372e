package cuda

import (
	"io"
	"strings"

	"github.com/flipzero/flipzero/nn"
)

// GPU is the CUDA backend: D's inference and training behind
// nn.Backend.
type GPU struct {
	D *Device
}

// Name says which GPU and libraries compute.
func (g GPU) Name() string { return g.mode() + " (" + g.D.Name() + ")" }

// Summary names the GPU alone, for the line every command starts with.
func (g GPU) Summary() string {
	gpu, _, _ := strings.Cut(g.D.Name(), ",")
	return g.mode() + " (" + gpu + ")"
}

// mode is the --device name of the GPU's precision.
func (g GPU) mode() string {
	if g.D.FP16() {
		return "cuda-fp16"
	}
	if g.D.TF32() {
		return "cuda-tf32"
	}
	return "cuda"
}

// NewInference uploads the snapshot's weights for batches of up to
// maxBatch positions.
func (g GPU) NewInference(f *nn.Folded, maxBatch int) (nn.Inference, error) {
	inf, err := g.D.NewInference(f.Layers(), maxBatch)
	if err != nil {
		return nil, err
	}
	return inf, nil
}

// Pipelines says that the GPU wants its inference gathered from every
// search worker into large batches, two in flight (nn.Multiplexed).
func (g GPU) Pipelines() int { return 2 }

// NewTraining uploads the network and the optimizer's momentum.
func (g GPU) NewTraining(s nn.TrainingState) (nn.Training, error) {
	if err := s.CheckVelocity(); err != nil {
		return nil, err
	}
	t, err := g.D.NewTrainer(s.Network, s.Config, s.Velocity)
	if err != nil {
		return nil, err
	}
	t.Resume(s.Steps)
	return t, nil
}

var _ interface {
	nn.Inference
	io.Closer
} = (*Inference)(nil)

var _ nn.Training = (*Trainer)(nil)
