package cpu

import (
	"fmt"
	"github.com/flipzero/flipzero/nn"
	"math"
	"runtime"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/env/tictactoe"
)

// TestOwnOpsMatchGorgonia trains two copies of a network side by side,
// one on the package's convolution (by im2col, or on each set of direct
// kernels) and batch norm, one on Gorgonia's, and checks the losses,
// every gradient, the running statistics and the weights after a few
// steps agree, with one core and with several.
func TestOwnOpsMatchGorgonia(t *testing.T) {
	cases := []struct {
		name  string
		game  env.Game
		cfg   nn.Config
		batch nn.Batch
	}{
		{"tictactoe", tictactoe.Game{}, tinyConfig, randomBatch(tictactoe.Game{}, 6, 4)},
		{"othello", fakeOthello, nn.Config{Blocks: 1, Filters: 8, PolicyFilters: 2, ValueFilters: 1, ValueHidden: 8}, fakeBatch(fakeOthello, 19, 2)},
		{"othello-aux", fakeOthello, nn.Config{Blocks: 1, Filters: 8, PolicyFilters: 2, ValueFilters: 1, ValueHidden: 8, Ownership: true, Score: true},
			withAux(fakeBatch(fakeOthello, 19, 2), 19, 64, 3)},
		{"othello-pooling-conv-policy", othello.Othello(), nn.Config{Blocks: 2, Filters: 8, PolicyFilters: 4, ValueFilters: 1, ValueHidden: 8, GlobalPooling: true, PolicyHead: "conv"},
			randomBatch(othello.Othello(), 17, 5)},
	}
	// The package's convolutions by im2col + GEMM, and on each set of
	// direct kernels of the architecture (skipped, saying so, where the
	// CPU lacks it).
	kernels := []*kernelSet{nil}
	for _, set := range float32Sets {
		kernels = append(kernels, &set)
	}
	for _, c := range cases {
		for _, procs := range []int{1, 3} {
			for _, k := range kernels {
				name := c.name + "/im2col"
				if k != nil {
					name = c.name + "/" + k.arch.name
				}
				name += fmt.Sprintf("/procs%d", procs)
				t.Run(name, func(t *testing.T) {
					if k == nil {
						testOwnOpsMatchGorgonia(t, c.game, c.cfg, c.batch, procs, nil)
						return
					}
					k.skipUnlessRun(t)
					testOwnOpsMatchGorgonia(t, c.game, c.cfg, c.batch, procs, &k.arch)
				})
			}
		}
	}
}

func testOwnOpsMatchGorgonia(t *testing.T, game env.Game, cfg nn.Config, batch nn.Batch, procs int, kernels *directArch) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	trainers := [2]*Trainer{}
	for i := range trainers {
		net, err := nn.New(game, cfg, 7)
		if err != nil {
			t.Fatal(err)
		}
		if trainers[i], err = NewTrainer(net, nn.DefaultTrainConfig()); err != nil {
			t.Fatal(err)
		}
	}
	own, ref := trainers[0], trainers[1]
	own.kernels = kernels
	ref.gorgoniaOps = true
	trainSideBySide(t, own, ref, batch, 3)
}

// trainSideBySide takes steps steps of got and want on the batch and
// checks that the losses, every gradient, the running statistics and,
// at the end, the weights agree.
func trainSideBySide(t *testing.T, got, want *Trainer, batch nn.Batch, steps int) {
	t.Helper()
	for step := 0; step < steps; step++ {
		l1, g1, err := got.gradients(batch)
		if err != nil {
			t.Fatal(err)
		}
		l2, g2, err := want.gradients(batch)
		if err != nil {
			t.Fatal(err)
		}
		if !near(l1.Policy, l2.Policy) || !near(l1.Value, l2.Value) || !near(l1.Ownership, l2.Ownership) || !near(l1.Score, l2.Score) {
			t.Fatalf("step %d: losses %+v, the reference's %+v", step, l1, l2)
		}
		for i, p := range got.net.Learnables() {
			compare(t, "gradient of "+p.Name, g1[i], g2[i])
		}
		for i, p := range got.net.Statistics() {
			compare(t, p.Name, p.Data, want.net.Statistics()[i].Data)
		}
		for _, tr := range []*Trainer{got, want} {
			if _, err := tr.Step(batch); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, p := range got.net.Learnables() {
		compare(t, fmt.Sprintf("%s after %d steps", p.Name, steps), p.Data, want.net.Learnables()[i].Data)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-4*(1+math.Abs(b)) }

func compare(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	scale := 0.0
	for _, v := range want {
		scale = max(scale, math.Abs(float64(v)))
	}
	for i := range got {
		if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*(1e-3+scale) && d > 1e-6 {
			t.Errorf("%s[%d] = %g, the reference's %g (largest %g)", what, i, got[i], want[i], scale)
			return
		}
	}
}
