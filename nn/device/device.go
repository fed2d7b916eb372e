// Package device chooses what computes the network — the CPU, or an
// NVIDIA GPU through CUDA — by the name the command line's --device takes,
// and adapts the CUDA backend to nn.Backend, so that the loop, the arena
// and the engine never know which they have.
package device

import (
	"fmt"
	"io"
	"strings"

	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/cpu"
	"github.com/flipzero/flipzero/nn/cuda"
)

// Choices are the devices Open takes, as a flag's help lists them.
const Choices = "auto, cpu or cuda"

// Open returns the backend named: "cpu"; "cuda", an error naming the
// library or the GPU that is missing when it cannot start; or "auto", the
// GPU when a CUDA driver and GPU answer and the CPU otherwise, with why in
// note. The GPU runs every architecture the CPU does.
func Open(name string) (backend nn.Backend, note string, err error) {
	switch name {
	case "cpu":
		return cpu.Backend(), "", nil
	case "cuda", "auto":
		d, err := cuda.Open()
		if err == nil {
			return GPU{D: d}, "", nil
		}
		if name == "cuda" {
			return nil, "", fmt.Errorf("--device cuda: %w", err)
		}
		return cpu.Backend(), "no GPU: " + err.Error(), nil
	}
	return nil, "", fmt.Errorf("--device %q: want %s", name, Choices)
}

// GPU is the CUDA backend as an nn.Backend.
type GPU struct {
	D *cuda.Device
}

// Name says which GPU and libraries compute.
func (g GPU) Name() string { return "cuda (" + g.D.Name() + ")" }

// Summary names the GPU alone, for the line every command starts with.
func (g GPU) Summary() string {
	gpu, _, _ := strings.Cut(g.D.Name(), ",")
	return "cuda (" + gpu + ")"
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
} = (*cuda.Inference)(nil)

var _ nn.Training = (*cuda.Trainer)(nil)

// Close releases what a backend's object holds on its device (GPU memory),
// if it holds anything.
func Close(x any) error {
	if c, ok := x.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
