package cpu

import (
	"github.com/flipzero/flipzero/nn"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/envtest"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/env/othello"
)

// testGame is a game and random positions of it.
type testGame struct {
	game   env.Game
	states func(n int, seed uint64) []env.State
}

// testGames are every registered game, with random positions from random
// play, and fake games with the shapes of games whose engines live
// elsewhere.
func testGames(t *testing.T) []testGame {
	var out []testGame
	for _, name := range games.Names() {
		g, err := games.ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, testGame{g, func(n int, seed uint64) []env.State { return envtest.RandomPositions(g, n, seed) }})
	}
	for _, g := range []fakeGame{fakeOthello, fakeYinsh} {
		out = append(out, testGame{g, g.randomStates})
	}
	return out
}

// perturbBatchNorm gives every batch norm random scales, offsets and
// running statistics, so that folding them is really exercised.
func perturbBatchNorm(n *nn.Network, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	learn, stats := n.Learnables(), n.Statistics()
	for _, c := range n.Describe().Convs() {
		for i := 0; i < c.Out; i++ {
			learn[c.Gamma].Data[i] = float32(0.5 + rng.Float64())
			learn[c.Beta].Data[i] = float32(rng.NormFloat64() * 0.2)
			stats[c.Mean].Data[i] = float32(rng.NormFloat64() * 0.3)
			stats[c.Variance].Data[i] = float32(0.5 + 2*rng.Float64())
		}
	}
}

func encodeAll(states []env.State) []float32 {
	p, h, w := states[0].Game().EncodedShape()
	size := p * h * w
	out := make([]float32, len(states)*size)
	for i, s := range states {
		s.Encode(out[i*size : (i+1)*size])
	}
	return out
}

// probabilities runs n with arch's kernels on count encoded positions
// and returns their policies' probabilities, then their win/draw/loss.
func probabilities(t *testing.T, n *nn.Network, arch directArch, inputs []float32, count int) []float32 {
	t.Helper()
	ev, err := newEvaluator(n.Fold(), 8, arch, true)
	if err != nil {
		t.Fatal(err)
	}
	logits, wdl, err := ev.Forward(inputs, count)
	if err != nil {
		t.Fatal(err)
	}
	actions := len(logits) / count
	for b := 0; b < count; b++ {
		softmaxInPlace(logits[b*actions : (b+1)*actions])
	}
	return append(append([]float32(nil), logits...), wdl...)
}

func maxAbsDiff(a, b []float32) float64 {
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}

// convPath is one of the evaluator's ways to convolve.
type convPath struct {
	name   string
	arch   directArch
	direct bool
	set    kernelSet // of a direct path
}

// convPaths are the evaluator's ways to convolve: im2row, and each
// float32 kernel set of the architecture (skipUnlessRun skips those the
// CPU lacks).
func convPaths() []convPath {
	paths := []convPath{{name: "im2row"}}
	for _, set := range float32Sets {
		paths = append(paths, convPath{"direct " + set.arch.name, set.arch, true, set})
	}
	return paths
}

// skipUnlessRun skips t, saying why, where the path is a kernel set this
// CPU lacks.
func (p convPath) skipUnlessRun(t *testing.T) {
	t.Helper()
	if p.direct {
		p.set.skipUnlessRun(t)
	}
}

// TestEvaluatorMatchesGorgonia checks the fast forward pass, both ways
// of convolving, against Gorgonia's on random positions of every game.
func TestEvaluatorMatchesGorgonia(t *testing.T) {
	for _, tg := range testGames(t) {
		t.Run(tg.game.Name(), func(t *testing.T) {
			cfg := nn.DefaultConfig(tg.game)
			if testing.Short() {
				cfg.Blocks = 1
			}
			n, err := nn.New(tg.game, cfg, 11)
			if err != nil {
				t.Fatal(err)
			}
			perturbBatchNorm(n, 5)
			const count = 5
			states := tg.states(count, 21)
			inputs := encodeAll(states)
			wantLogits, wantWDL, err := GorgoniaForward(n, inputs, count)
			if err != nil {
				t.Fatal(err)
			}
			for _, path := range convPaths() {
				t.Run(path.name, func(t *testing.T) {
					path.skipUnlessRun(t)
					ev, err := newEvaluator(n.Fold(), 8, path.arch, path.direct)
					if err != nil {
						t.Fatal(err)
					}
					logits, wdl, err := ev.Forward(inputs, count)
					if err != nil {
						t.Fatal(err)
					}
					if d := maxAbsDiff(logits, wantLogits); d > 1e-4 || len(logits) != len(wantLogits) {
						t.Errorf("%s: policy logits differ by %g (len %d vs %d)", path.name, d, len(logits), len(wantLogits))
					}
					if d := maxAbsDiff(wdl, wantWDL); d > 1e-4 || len(wdl) != len(wantWDL) {
						t.Errorf("%s: value probabilities differ by %g", path.name, d)
					}
					// Both against the definition written as plain loops.
					size := len(inputs) / count
					naiveLogits, naiveWDL := naiveForward(n, inputs[:size])
					if d := maxAbsDiff(naiveLogits, logits[:len(naiveLogits)]); d > 1e-4 {
						t.Errorf("%s: policy logits differ from the plain-loop definition by %g", path.name, d)
					}
					if d := maxAbsDiff(naiveWDL, wdl[:3]); d > 1e-4 {
						t.Errorf("%s: value probabilities differ from the plain-loop definition by %g", path.name, d)
					}
				})
			}
			spread := 0.0
			for _, v := range wantLogits {
				spread = max(spread, math.Abs(float64(v)))
			}
			if spread < 1e-2 {
				t.Errorf("logits all near zero (max |logit| %g): the comparison proves nothing", spread)
			}
		})
	}
}

// TestEvaluatorReload: an evaluator reloaded with another network of the
// same shape, on each way of convolving, evaluates as one made for it —
// whatever it keeps of a network besides the weights (Winograd's
// transformed tower) follows.
func TestEvaluatorReload(t *testing.T) {
	g := othello.Othello()
	cfg := nn.Config{Blocks: 2, Filters: 16, PolicyFilters: 2, ValueFilters: 1, ValueHidden: 8, GlobalPooling: true}
	first, err := nn.New(g, cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	second, err := nn.New(g, cfg, 4)
	if err != nil {
		t.Fatal(err)
	}
	perturbBatchNorm(second, 6)
	const count = 4
	inputs := encodeAll(envtest.RandomPositions(g, count, 9))
	for _, path := range convPaths() {
		t.Run(path.name, func(t *testing.T) {
			path.skipUnlessRun(t)
			_, wantLogits, wantWDL := evaluateOn(t, path, second, inputs, count)
			ev, before, _ := evaluateOn(t, path, first, inputs, count)
			if maxAbsDiff(before, wantLogits) < 1e-3 {
				t.Fatal("the two networks' logits agree: the reload would prove nothing")
			}
			if err := ev.Reload(second.Fold()); err != nil {
				t.Fatal(err)
			}
			logits, wdl, err := ev.Forward(inputs, count)
			if err != nil {
				t.Fatal(err)
			}
			if d := maxAbsDiff(logits, wantLogits); d > 1e-5 {
				t.Errorf("logits after Reload differ from a fresh evaluator's by %g", d)
			}
			if d := maxAbsDiff(wdl, wantWDL); d > 1e-5 {
				t.Errorf("value after Reload differs from a fresh evaluator's by %g", d)
			}
		})
	}
}

// evaluateOn makes an evaluator of net that convolves by path and
// returns it with its outputs for inputs.
func evaluateOn(t *testing.T, path convPath, net *nn.Network, inputs []float32, count int) (*Evaluator, []float32, []float32) {
	t.Helper()
	ev, err := newEvaluator(net.Fold(), count, path.arch, path.direct)
	if err != nil {
		t.Fatal(err)
	}
	logits, wdl, err := ev.Forward(inputs, count)
	if err != nil {
		t.Fatal(err)
	}
	return ev, logits, wdl
}
