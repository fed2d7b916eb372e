package cuda

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/env/yinsh"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/cpu"
	"github.com/flipzero/flipzero/nn/nntest"
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

func maxDiff(a, b []float32) float64 {
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}

// TestGPUForwardMatchesCPU compares the GPU with nn's CPU evaluator on
// real positions, through each path, at batch sizes that run exactly and
// padded to a bucket, eagerly (a plan's first call) and through the
// captured graph (later calls, fed other positions).
func TestGPUForwardMatchesCPU(t *testing.T) {
	d := openGPU(t)
	for _, a := range shippedArchitectures() {
		g := a.game
		net, err := nn.New(g, a.cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		nntest.Perturb(net, 8)
		folded := net.Fold()
		const maxBatch = 300
		states := env.RandomPositions(g, 2*maxBatch, 5, false)
		inputs := nntest.Encode(states)
		size := len(inputs) / len(states)
		ref, err := cpu.NewEvaluator(folded, maxBatch)
		if err != nil {
			t.Fatal(err)
		}
		type call struct {
			count       int
			in          []float32
			logits, wdl []float32
		}
		var calls []call
		for _, count := range []int{1, 7, 256, 300} {
			for round := range 3 {
				in := inputs[round*count%maxBatch*size:][:count*size]
				logits, wdl, err := ref.Forward(in, count)
				if err != nil {
					t.Fatal(err)
				}
				calls = append(calls, call{count, in, append([]float32(nil), logits...), append([]float32(nil), wdl...)})
			}
		}
		for _, tc := range []struct {
			only path
			mode precision
		}{{cudnnPath, fp32}, {gemmPath, fp32}, {nhwcPath, fp32}, {nhwcPath, tf32}, {halfPath, fp16}, {anyPath, fp32}, {anyPath, tf32}, {anyPath, fp16}} {
			tc.mode.set(d)
			inf, err := d.NewInference(folded.Layers(), maxBatch)
			if err != nil {
				t.Fatalf("%s: %v", g.Name(), err)
			}
			inf.only = tc.only
			worst, largest := 0.0, 0.0
			for _, c := range calls {
				logits, wdl, err := inf.Forward(c.in, c.count)
				if err != nil {
					t.Fatalf("%s %v batch %d: %v", g.Name(), tc.only, c.count, err)
				}
				if len(logits) != len(c.logits) || len(wdl) != len(c.wdl) {
					t.Fatalf("%s batch %d: %d logits and %d wdl, want %d and %d", g.Name(), c.count, len(logits), len(wdl), len(c.logits), len(c.wdl))
				}
				for _, x := range [][2][]float32{{logits, c.logits}, {wdl, c.wdl}} {
					dd, scale := nntest.Diff(x[0], x[1])
					worst, largest = max(worst, dd/max(1, scale)), max(largest, scale)
				}
			}
			chosen := ""
			for n, p := range inf.plans {
				chosen += fmt.Sprintf(" %d:%v", n, p.path)
				if p.captureErr != nil || p.exec == 0 {
					t.Errorf("%s batch %d: no CUDA graph: %v", g.Name(), n, p.captureErr)
				}
				if tc.only != anyPath && p.path != tc.only {
					t.Errorf("%s batch %d ran the %v path, want %v", g.Name(), n, p.path, tc.only)
				}
			}
			t.Logf("%s %v path, %v: max |GPU−CPU| / max(1, largest) %.3g (largest %.3g); paths%s", a.name, tc.only, tc.mode, worst, largest, chosen)
			if bound := tc.mode.tolerance(); worst > bound {
				t.Errorf("%s %v path, %v: GPU and CPU differ by %g, more than %g", g.Name(), tc.only, tc.mode, worst, bound)
			}
			if err := inf.Close(); err != nil {
				t.Fatal(err)
			}
		}
		fp32.set(d)
	}
}

// precision is what a test has the device multiply in.
type precision int

const (
	fp32 precision = iota
	tf32
	fp16
)

func (p precision) String() string { return [...]string{"float32", "TF32", "float16"}[p] }

// set makes the device's inferences and trainers made from now on
// multiply in p.
func (p precision) set(d *Device) {
	d.SetFP16(false)
	d.SetTF32(p == tf32)
	if p == fp16 {
		d.SetFP16(true)
	}
}

// tolerance is how far p's outputs may be from float32's, over the
// largest.
func (p precision) tolerance() float64 {
	return [...]float64{1e-4, TF32Tolerance, FP16Tolerance}[p]
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
		inputs := nntest.Encode(env.RandomPositions(g, 512, 9, false))
		for _, mode := range []precision{fp32, tf32, fp16} {
			mode.set(d)
			for _, batch := range []int{1, 64, 256, 2048} {
				r, err := BenchForward(d, l, inputs, batch, *benchTime)
				if err != nil {
					t.Fatalf("%s batch %d: %v", g.Name(), batch, err)
				}
				if r.PositionsPerSecond <= 0 || r.Batch != batch {
					t.Fatalf("%s batch %d: %+v", g.Name(), batch, r)
				}
				t.Logf("%s %v batch %4d: %9.0f positions/s (%s)", g.Name(), mode, batch, r.PositionsPerSecond, r.Path)
			}
		}
		fp32.set(d)
	}
}

// architecture is a network on a game.
type architecture struct {
	name string
	game env.Game
	cfg  nn.Config
}

// shippedArchitectures are the default networks and those of the
// shipped configs: Othello's ownership and score heads (the tower runs
// as the plain one in inference), YINSH's global pooling and
// convolutional policy head, and Othello with both (its pass scored from
// the whole board).
func shippedArchitectures() []architecture {
	oth, yin := othello.Othello(), yinsh.Full()
	aux := nn.DefaultConfig(oth)
	aux.Ownership, aux.Score = true, true
	blitz := nn.DefaultConfig(yin)
	blitz.PolicyHead, blitz.PolicyFilters, blitz.GlobalPooling = "conv", 32, true
	both := nn.DefaultConfig(oth)
	both.PolicyHead, both.PolicyFilters, both.GlobalPooling = "conv", 32, true
	return []architecture{
		{"othello", oth, nn.DefaultConfig(oth)}, {"othello aux heads", oth, aux},
		{"yinsh", yin, nn.DefaultConfig(yin)}, {"yinsh pooling conv-policy", yin, blitz},
		{"othello pooling conv-policy", oth, both},
	}
}

// TestGPUReload: an inference that has planned and captured its batch
// sizes takes another network's weights in place and then computes that
// network, through the same graphs; a network of another architecture is
// refused.
func TestGPUReload(t *testing.T) {
	d := openGPU(t)
	for _, a := range shippedArchitectures() {
		g := a.game
		first, second := nntest.Network(t, nntest.Case{Game: g, Config: a.cfg}, 1), nntest.Network(t, nntest.Case{Game: g, Config: a.cfg}, 2)
		inputs := nntest.Encode(env.RandomPositions(g, 300, 5, false))
		size := len(inputs) / 300
		inf, err := d.NewInference(first.Fold().Layers(), 300)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{7, 300} {
			if _, _, err := inf.Forward(inputs[:n*size], n); err != nil {
				t.Fatal(err)
			}
		}
		if err := inf.Reload(second.Fold()); err != nil {
			t.Fatalf("%s: %v", a.name, err)
		}
		ref, err := cpu.NewEvaluator(second.Fold(), 300)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{7, 300} {
			want, _, err := ref.Forward(inputs[:n*size], n)
			if err != nil {
				t.Fatal(err)
			}
			want = append([]float32(nil), want...)
			got, _, err := inf.Forward(inputs[:n*size], n)
			if err != nil {
				t.Fatal(err)
			}
			if dd, scale := nntest.Diff(got, want); dd > 1e-4*max(1, scale) {
				t.Errorf("%s batch %d after reload: logits differ from the new network's by %g (largest %g)", a.name, n, dd, scale)
			}
		}
		other := a.cfg
		other.Filters = 32
		small, err := nn.New(g, other, 3)
		if err != nil {
			t.Fatal(err)
		}
		if err := inf.Reload(small.Fold()); !errors.Is(err, ErrOtherArchitecture) {
			t.Errorf("%s: reloading a network of 32 filters: %v", a.name, err)
		}
		inf.Close()
	}
}

// TestGPUConformance runs the backend conformance suite on the GPU,
// where there is one: every architecture option's inference within 1e-4
// of Gorgonia's, one training step within 1e-3, checkpoints resumed
// across the CPU and the GPU.
func TestGPUConformance(t *testing.T) {
	d, err := Open()
	if err != nil {
		t.Skip("no CUDA GPU: " + err.Error())
	}
	defer d.Close()
	t.Log(d.Name())
	nntest.Run(t, GPU{D: d}, nntest.Options{})
}
