package cuda

import (
	"flag"
	"math"
	"testing"
	"time"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/env/yinsh"
	"github.com/flipzero/flipzero/nn"
)

var benchTime = flag.Duration("cuda.benchtime", 2*time.Second, "how long TestGPUBench measures each batch size")

func openGPU(t *testing.T) *Device {
	t.Helper()
	d, err := Open()
	if err != nil {
		t.Skip("no CUDA GPU: " + err.Error())
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	})
	t.Log(d.Name())
	return d
}

func encode(states []env.State) []float32 {
	p, h, w := states[0].Game().EncodedShape()
	size := p * h * w
	out := make([]float32, len(states)*size)
	for i, s := range states {
		s.Encode(out[i*size : (i+1)*size])
	}
	return out
}

func maxDiff(a, b []float32) float64 {
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}

// TestGPUForwardMatchesCPU compares the GPU with nn's CPU evaluator on
// real positions, at batch sizes that run exactly, padded to a bucket,
// eagerly (a plan's first call) and through the captured graph (later
// calls, fed other positions).
func TestGPUForwardMatchesCPU(t *testing.T) {
	d := openGPU(t)
	for _, g := range []env.Game{othello.Othello(), yinsh.Full()} {
		net, err := nn.New(g, nn.DefaultConfig(g), 3)
		if err != nil {
			t.Fatal(err)
		}
		folded := net.Fold()
		const maxBatch = 300
		states := env.RandomPositions(g, 2*maxBatch, 5, false)
		inputs := encode(states)
		size := len(inputs) / len(states)
		cpu, err := folded.NewEvaluator(maxBatch)
		if err != nil {
			t.Fatal(err)
		}
		for _, tf32 := range []bool{false, true} {
			d.SetTF32(tf32)
			inf, err := d.NewInference(folded.Layers(), maxBatch)
			if err != nil {
				t.Fatalf("%s: %v", g.Name(), err)
			}
			worst := 0.0
			for _, count := range []int{1, 7, 256, 300} {
				for round := range 3 {
					in := inputs[round*count%maxBatch*size:][:count*size]
					logits, wdl, err := inf.Forward(in, count)
					if err != nil {
						t.Fatalf("%s batch %d: %v", g.Name(), count, err)
					}
					wantLogits, wantWDL, err := cpu.Forward(in, count)
					if err != nil {
						t.Fatal(err)
					}
					if len(logits) != len(wantLogits) || len(wdl) != len(wantWDL) {
						t.Fatalf("%s batch %d: %d logits and %d wdl, want %d and %d", g.Name(), count, len(logits), len(wdl), len(wantLogits), len(wantWDL))
					}
					worst = max(worst, maxDiff(logits, wantLogits), maxDiff(wdl, wantWDL))
				}
			}
			t.Logf("%s tf32=%v: max |GPU−CPU| %.3g", g.Name(), tf32, worst)
			if !tf32 && worst > 1e-3 {
				t.Errorf("%s: GPU and CPU differ by %g", g.Name(), worst)
			}
			for n, p := range inf.plans {
				if p.captureErr != nil || p.exec == 0 {
					t.Errorf("%s batch %d: no CUDA graph: %v", g.Name(), n, p.captureErr)
				}
			}
			if err := inf.Close(); err != nil {
				t.Fatal(err)
			}
		}
		d.SetTF32(false)
	}
}

// TestGPUBench prints positions per second at the batch sizes of the
// project's GPU targets.
func TestGPUBench(t *testing.T) {
	d := openGPU(t)
	for _, g := range []env.Game{othello.Othello(), yinsh.Full()} {
		net, err := nn.New(g, nn.DefaultConfig(g), 3)
		if err != nil {
			t.Fatal(err)
		}
		l := net.Fold().Layers()
		inputs := encode(env.RandomPositions(g, 512, 9, false))
		for _, tf32 := range []bool{false, true} {
			d.SetTF32(tf32)
			for _, batch := range []int{1, 64, 256, 2048} {
				rate, err := BenchForward(d, l, inputs, batch, *benchTime)
				if err != nil {
					t.Fatalf("%s batch %d: %v", g.Name(), batch, err)
				}
				if rate <= 0 {
					t.Fatalf("%s batch %d: rate %g", g.Name(), batch, rate)
				}
				t.Logf("%s tf32=%v batch %4d: %9.0f positions/s", g.Name(), tf32, batch, rate)
			}
		}
		d.SetTF32(false)
	}
}
