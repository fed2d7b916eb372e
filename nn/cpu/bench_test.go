package cpu

import (
	"fmt"
	"github.com/flipzero/flipzero/nn"
	"math/rand/v2"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/envtest"
	"github.com/flipzero/flipzero/env/othello"

	G "gorgonia.org/gorgonia"
)

// Speed benchmarks on the default networks for Othello and for YINSH's
// shape. Run with
// -benchmem: the evaluator allocates nothing per call.

func BenchmarkMatMul(b *testing.B) {
	const n = 512
	a := make([]float32, n*n)
	m := make([]float32, n*n)
	c := make([]float32, n*n)
	// Nonzero: gonum skips the work of zero entries.
	for i := range a {
		a[i], m[i] = float32(i%7)+1, float32(i%5)+1
	}
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sgemm(n, n, n, a, n, m, n, c, n)
	}
	b.StopTimer()
	b.ReportMetric(2*n*n*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	b.ReportMetric(2*n*n*n*float64(b.N)/(cpuTime()-cpu0).Seconds()/1e9, "GFLOP/cpu-s")
}

func BenchmarkEvaluate(b *testing.B) {
	games := []struct {
		game   env.Game
		states func(n int) []env.State
	}{
		{othello.Othello(), func(n int) []env.State { return envtest.RandomPositions(othello.Othello(), n, 1) }},
		{fakeYinsh, func(n int) []env.State { return fakeYinsh.randomStates(n, 1) }},
	}
	for _, tg := range games {
		g := tg.game
		net, err := nn.New(g, nn.DefaultConfig(g), 1)
		if err != nil {
			b.Fatal(err)
		}
		for _, batch := range []int{1, 8, 32, 128} {
			b.Run(fmt.Sprintf("%s/batch%d", g.Name(), batch), func(b *testing.B) {
				ev, _ := nn.NewEvaluator(Backend(), net.Fold(), batch)
				states := tg.states(batch)
				priors := make([]float32, batch*g.ActionSpace())
				values := make([]float32, batch)
				cpu0 := cpuTime()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := ev.Evaluate(states, priors, values); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				positions := float64(b.N*batch) / b.Elapsed().Seconds()
				b.ReportMetric(positions, "positions/s")
				b.ReportMetric(positions*net.FLOPsPerPosition()/1e9, "GFLOP/s")
				b.ReportMetric(float64(b.N*batch)*net.FLOPsPerPosition()/(cpuTime()-cpu0).Seconds()/1e9, "GFLOP/cpu-s")
			})
		}
	}
}

func BenchmarkGorgoniaForward(b *testing.B) {
	g := othello.Othello()
	net, err := nn.New(g, nn.DefaultConfig(g), 1)
	if err != nil {
		b.Fatal(err)
	}
	const batch = 32
	gr, err := buildGraph(net, batch, graphOptions{})
	if err != nil {
		b.Fatal(err)
	}
	f := gorgoniaForward{gr: gr, vm: G.NewTapeMachine(gr.g, G.EvalMode())}
	defer f.vm.Close()
	inputs := encodeAll(envtest.RandomPositions(g, batch, 1))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := f.run(inputs); err != nil {
			b.Fatal(err)
		}
	}
	positions := float64(b.N*batch) / b.Elapsed().Seconds()
	b.ReportMetric(positions, "positions/s")
	b.ReportMetric(positions*net.FLOPsPerPosition()/1e9, "GFLOP/s")
}

// BenchmarkTrainStep reports samples/s, and samples per CPU-second of
// the process, which other work on a shared machine disturbs less.
func BenchmarkTrainStep(b *testing.B) {
	for _, g := range []fakeGame{fakeOthello, fakeYinsh} {
		b.Run(g.Name(), func(b *testing.B) {
			net, err := nn.New(g, nn.DefaultConfig(g), 1)
			if err != nil {
				b.Fatal(err)
			}
			tr, err := NewTrainer(net, nn.DefaultTrainConfig())
			if err != nil {
				b.Fatal(err)
			}
			batch := fakeBatch(g, 128, 1)
			if _, err := tr.Step(batch); err != nil { // builds the graph
				b.Fatal(err)
			}
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := tr.Step(batch); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N*128)/b.Elapsed().Seconds(), "samples/s")
			b.ReportMetric(float64(b.N*128)/(cpuTime()-cpu0).Seconds(), "samples/cpu-s")
		})
	}
}

// BenchmarkTowerConv times one 3×3 tower convolution of 64 filters over
// a batch of 32 Othello boards on each direct kernel set this CPU runs,
// the int8 sets with their inputs' quantization: the kernels alone,
// without the rest of the network (BenchmarkEvaluate).
func BenchmarkTowerConv(b *testing.B) {
	const filters, batch = 64, 32
	sh := shape{planes: filters, height: 8, width: 8}
	rng := rand.New(rand.NewPCG(1, 2))
	fc := foldedConv{kernel: 3, in: filters, out: filters, w: make([]float32, 9*filters*filters, 9*filters*filters+weightSlack), b: make([]float32, filters, filters+weightSlack)}
	for i := range fc.w {
		fc.w[i] = float32(rng.NormFloat64() * 0.05)
	}
	sets := append(append(append([]directArch(nil), directArchs()...), directBF16Archs()...), directInt8Archs()...)
	for _, arch := range sets {
		b.Run(arch.name, func(b *testing.B) {
			g := newDirectGeom(arch, sh, batch)
			src := make([]float32, g.pixels(batch)*filters)
			for _, p := range g.pix {
				for j := range filters {
					src[int(p)*filters+j] = float32(max(0, rng.NormFloat64()))
				}
			}
			dst := make([]float32, len(src))
			n := len(g.pix)
			var run func()
			switch {
			case arch.int8:
				c := newInt8Conv(fc)
				q := quantized{make([]uint8, len(src)), make([]float32, g.pixels(batch)), make([]float32, g.pixels(batch))}
				run = func() {
					quantizePixels(q, src, g.pix, sh.cells(), filters, nil, 0, false, arch.byteInputs)
					g.convInt8(c, q, false, dst, nil, 0, n, true, false)
				}
			case arch.bf16:
				c := newBF16Conv(fc)
				half := make([]uint16, g.halfPixels(batch)*filters)
				run = func() {
					roundPixelsBF16(half, src, g.pix, filters)
					g.convBF16(&c, half, dst, nil, 0, n, true, false)
				}
			default:
				run = func() { g.conv(&fc, src, dst, nil, 0, n, true, false) }
			}
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				run()
			}
			b.StopTimer()
			macs := float64(b.N) * float64(n) * 9 * filters * filters
			b.ReportMetric(macs/b.Elapsed().Seconds()/1e9, "GMAC/s")
			b.ReportMetric(macs/(cpuTime()-cpu0).Seconds()/1e9, "GMAC/cpu-s")
		})
	}
}

// BenchmarkTrainConv times a training graph's 3×3 tower convolution, 64
// filters over a batch of 128 boards of Othello's and YINSH's sizes, on
// one core: its forward pass (the input gradient's is the same work)
// and its weight gradient, directly and by Winograd, on the fastest
// float32 kernels this CPU runs. GMAC/s counts the direct convolution's
// products, so that the two compare.
func BenchmarkTrainConv(b *testing.B) {
	const filters, batch = 64, 128
	archs := directArchs()
	if len(archs) == 0 {
		b.Skip("no direct kernels on this CPU")
	}
	for _, side := range []int{8, 11} {
		sh := shape{height: side, width: side}
		rng := rand.New(rand.NewPCG(1, 2))
		x := randomRow(rng, batch*filters*sh.cells())
		dy := randomRow(rng, batch*filters*sh.cells())
		w := randomRow(rng, filters*filters*9)
		y := make([]float32, len(x))
		dw := make([]float32, len(w))
		g := convGeom{name: "conv", kernel: 3, in: filters, out: filters, height: side, width: side}
		pack := func(dst []float32) { g.packWeights(w, dst, false) }
		for _, winograd := range []bool{false, true} {
			if winograd && !winogradKernels() {
				continue
			}
			arch := archs[0]
			arch.winograd = winograd
			method := "direct"
			if winograd {
				method = "winograd"
			}
			var dt directTrain
			var dg directWeightGrad
			var wg winogradWeightGrad
			cols := scratch(nil, g.k()*g.groupImages()*g.cells(), 1)
			for _, pass := range []struct {
				name string
				run  func()
			}{
				{"forward", func() { dt.run(arch, sh, 3, filters, filters, batch, 1, x, y, pack) }},
				{"weightgrad", func() {
					if winograd {
						wg.run(arch, sh, filters, filters, batch, 1, x, dy, dw)
					} else {
						dg.run(arch, g, batch, 1, x, dy, dw, cols)
					}
				}},
			} {
				b.Run(fmt.Sprintf("%dx%d/%s/%s", side, side, pass.name, method), func(b *testing.B) {
					pass.run()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						pass.run()
					}
					b.StopTimer()
					macs := float64(b.N) * batch * float64(sh.cells()) * 9 * filters * filters
					b.ReportMetric(macs/b.Elapsed().Seconds()/1e9, "GMAC/s")
				})
			}
		}
	}
}
