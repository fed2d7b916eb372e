package device

import (
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/cuda"
)

func TestOpen(t *testing.T) {
	if b, note, err := Open("cpu"); err != nil || note != "" || !strings.HasPrefix(b.Name(), "cpu") {
		t.Errorf("cpu: %v, %q, %v", b, note, err)
	}
	if _, _, err := Open("tpu"); err == nil || !strings.Contains(err.Error(), "tpu") {
		t.Errorf("tpu: error %v, want one naming it", err)
	}
	d, gpuErr := cuda.Open()
	if gpuErr == nil {
		d.Close()
		b, _, err := Open("auto")
		if err != nil || !strings.HasPrefix(b.Name(), "cuda") {
			t.Errorf("auto with a GPU: %v, %v", b, err)
		}
		return
	}
	// No GPU here: auto falls back to the CPU and says why; cuda refuses
	// in one line naming what is missing.
	b, note, err := Open("auto")
	if err != nil || !strings.HasPrefix(b.Name(), "cpu") || !strings.Contains(note, gpuErr.Error()) {
		t.Errorf("auto without a GPU: %v, %q, %v; want the CPU and why (%v)", b, note, err, gpuErr)
	}
	_, _, err = Open("cuda")
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "lib") {
		t.Errorf("cuda without a GPU: error %v, want one line naming the library", err)
	}
}

// TestGPUTrainsAuxiliaryHeadsOnTheCPU: a network with heads that only
// training uses trains on the CPU whatever the device (the GPU trainer
// refuses it), without touching the GPU.
func TestGPUTrainsAuxiliaryHeadsOnTheCPU(t *testing.T) {
	g := tictactoe.Game{}
	cfg := nn.DefaultConfig(g)
	cfg.Ownership = true
	net, err := nn.New(g, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := GPU{}.NewTraining(net, nn.DefaultTrainConfig(), nil, 7)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tr.(*nn.Trainer); !ok || tr.Steps() != 7 {
		t.Errorf("training is %T at step %d, want the CPU's at step 7", tr, tr.Steps())
	}
}

// TestAutoRunsOnTheCPUWhatTheGPUCannot: with --device auto, a network with
// parts the CUDA backend lacks (global pooling, a convolutional policy
// head) plays and trains on the CPU: the CUDA backend refuses it
// (cuda.ErrArchitecture) before touching the GPU.
func TestAutoRunsOnTheCPUWhatTheGPUCannot(t *testing.T) {
	g := tictactoe.Game{}
	for _, change := range []func(*nn.Config){
		func(c *nn.Config) { c.PolicyHead = "conv" },
		func(c *nn.Config) { c.GlobalPooling = true },
	} {
		cfg := nn.DefaultConfig(g)
		change(&cfg)
		net, err := nn.New(g, cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		auto := GPU{CPUFallback: true}
		inf, err := auto.NewInference(net.Fold(), 4)
		if err != nil {
			t.Fatalf("%v: %v", cfg, err)
		}
		if _, ok := inf.(*nn.Evaluator); !ok {
			t.Errorf("%v: inference is %T, want the CPU's", cfg, inf)
		}
		tr, err := auto.NewTraining(net, nn.DefaultTrainConfig(), nil, 3)
		if err != nil {
			t.Fatalf("%v: %v", cfg, err)
		}
		if _, ok := tr.(*nn.Trainer); !ok || tr.Steps() != 3 {
			t.Errorf("%v: training is %T at step %d, want the CPU's at step 3", cfg, tr, tr.Steps())
		}
	}
}
