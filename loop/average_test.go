package loop

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/cpu"
	"github.com/flipzero/flipzero/runfolder"
)

// networkValues lists every weight and statistic of a network in order.
func networkValues(n *nn.Network) []float32 {
	var out []float32
	for _, ts := range [][]nn.Tensor{n.Learnables(), n.Statistics()} {
		for _, t := range ts {
			out = append(out, t.Data...)
		}
	}
	return out
}

// TestLoopAveragesWeights: with train.average_half_life set, the first
// trained generation's checkpoint plays the trained weights themselves,
// and the next one, after a resume, plays the previous average moved
// toward the new weights by the half-life's share of the generation's
// steps, while its trainer keeps the trained weights.
func TestLoopAveragesWeights(t *testing.T) {
	const halfLife = 20
	config := writeTinyConfig(t, fmt.Sprintf("average_half_life: %d", halfLife))
	run := filepath.Join(t.TempDir(), "run")
	for gen := 0; gen < 2; gen++ {
		if err := Loop(context.Background(), LoopOptions{Backend: cpu.Backend(), ConfigPath: config, RunDir: run, MaxGenerations: 1, Seed: 5}); err != nil {
			t.Fatal(err)
		}
	}
	folder := runfolder.Folder(run)
	load := func(gen int) *nn.Checkpoint {
		c, err := nn.LoadCheckpoint(folder.Checkpoint(gen), tictactoe.Game{})
		if err != nil {
			t.Fatal(err)
		}
		if c.Training == nil || c.Training.Network == c.Network {
			t.Fatalf("generation %d: the checkpoint holds no average beside the trained weights", gen)
		}
		return c
	}
	first, second := load(1), load(2)
	ms, err := ReadMetrics(folder.Metrics())
	if err != nil || len(ms) != 2 || ms[0].Steps == 0 || ms[1].Steps == 0 {
		t.Fatalf("metrics %+v, %v: want two generations that trained", ms, err)
	}
	if d := maxDiff(networkValues(first.Network), networkValues(first.Training.Network)); d != 0 {
		t.Errorf("generation 1 (the first training): the average differs from the trained weights by %g", d)
	}
	share, err := nn.AverageShare(ms[1].Steps, halfLife)
	if err != nil {
		t.Fatal(err)
	}
	prev, trained, got := networkValues(first.Network), networkValues(second.Training.Network), networkValues(second.Network)
	want := make([]float32, len(prev))
	for i := range prev {
		want[i] = prev[i] + float32(share)*(trained[i]-prev[i])
	}
	if d := maxDiff(got, want); d > 1e-6 {
		t.Errorf("generation 2: the average is off the expected one by %g (share %.3f of %d steps)", d, share, ms[1].Steps)
	}
	if d := maxDiff(got, trained); d == 0 {
		t.Error("generation 2: the average is the trained weights; it should lag them")
	}
}

func maxDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	m := 0.0
	for i := range a {
		m = max(m, math.Abs(float64(a[i]-b[i])))
	}
	return m
}
