package cpu

import (
	"github.com/flipzero/flipzero/nn"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/envtest"
	"github.com/flipzero/flipzero/env/tictactoe"
)

// tinyConfig is small enough for finite differences and quick overfitting.
var tinyConfig = nn.Config{Blocks: 1, Filters: 6, PolicyFilters: 2, ValueFilters: 1, ValueHidden: 8}

// randomBatch builds n samples from non-terminal positions of g: random
// visit distributions over the legal actions and random outcomes.
func randomBatch(g env.Game, n int, seed uint64) nn.Batch {
	// Distinct positions, so that a network can fit every target.
	var states []env.State
	seen := map[string]bool{}
	for _, s := range envtest.RandomPositions(g, 8*n, seed) {
		if key := s.String(); !s.Terminal() && !seen[key] && len(states) < n {
			seen[key] = true
			states = append(states, s)
		}
	}
	return statesBatch(states, seed)
}

// fakeBatch is a batch of n random positions of a fake game.
func fakeBatch(g fakeGame, n int, seed uint64) nn.Batch {
	return statesBatch(g.randomStates(n, seed), seed)
}

// statesBatch gives non-terminal states random visit distributions over
// their legal actions, random outcomes and random weights.
func statesBatch(states []env.State, seed uint64) nn.Batch {
	rng := rand.New(rand.NewPCG(seed, 9))
	n := len(states)
	A := states[0].Game().ActionSpace()
	b := nn.Batch{
		Inputs:  encodeAll(states),
		Policy:  make([]float32, n*A),
		Legal:   make([]float32, n*A),
		Value:   make([]float32, n*3),
		Weights: make([]float32, n),
	}
	buf := make([]int, 0, A)
	for i, s := range states {
		sum := float32(0)
		for _, a := range s.LegalActions(buf) {
			b.Legal[i*A+a] = 1
			p := rng.Float32() + 0.01
			b.Policy[i*A+a] = p
			sum += p
		}
		for a := i * A; a < (i+1)*A; a++ {
			b.Policy[a] /= sum
		}
		b.Value[i*3+rng.IntN(3)] = 1
		b.Weights[i] = 0.5 + rng.Float32()
	}
	return b
}

// withAux gives a batch random auxiliary targets for every sample but the
// second, which has none.
func withAux(b nn.Batch, n, cells int, seed uint64) nn.Batch {
	rng := rand.New(rand.NewPCG(seed, 11))
	b.Ownership, b.Margin, b.Aux = make([]float32, n*cells), make([]float32, n), make([]float32, n)
	for i := 0; i < n; i++ {
		if i == 1 {
			continue
		}
		b.Aux[i] = 1
		b.Margin[i] = float32(rng.IntN(9)-4) / 4
		for c := i * cells; c < (i+1)*cells; c++ {
			b.Ownership[c] = float32(rng.IntN(3) - 1)
		}
	}
	return b
}

// auxShare is the share of a batch's weight on samples with auxiliary
// targets.
func auxShare(b nn.Batch) float64 {
	total, with := 0.0, 0.0
	for i := range b.Aux {
		total += float64(b.Weight(i))
		with += float64(b.Weight(i) * b.Aux[i])
	}
	return with / total
}

// auxConfig is tinyConfig with both auxiliary heads.
var auxConfig = func() nn.Config { c := tinyConfig; c.Ownership, c.Score = true, true; return c }()

// TestGradientsFiniteDifference compares Gorgonia's gradient of the
// training loss — policy, value and the auxiliary heads' weighted squared
// errors — with central differences, for entries of every learnable array
// of a tiny network with both auxiliary heads.
func TestGradientsFiniteDifference(t *testing.T) {
	checkFiniteDifference(t, tictactoe.Game{}, auxConfig, 6)
}

// checkFiniteDifference compares the gradient of a network of cfg on a
// batch of n positions of g (with auxiliary targets) with central
// differences.
func checkFiniteDifference(t *testing.T, g env.Game, cfg nn.Config, n int) {
	t.Helper()
	net, err := nn.New(g, cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTrainer(net, nn.DefaultTrainConfig())
	if err != nil {
		t.Fatal(err)
	}
	_, h, w := g.EncodedShape()
	b := withAux(randomBatch(g, n, 4), n, h*w, 4)
	// The actions without a cell (a pass) learn only where one is legal:
	// the first sample says its first such action is, with some of the
	// policy's mass.
	if pm, ok := g.(env.PolicyMap); ok {
		for a := 0; a < g.ActionSpace(); a++ {
			if _, _, onBoard := pm.PolicyCell(a); !onBoard {
				for k := range g.ActionSpace() {
					b.Policy[k] *= 0.75
				}
				b.Legal[a], b.Policy[a] = 1, 0.25
				break
			}
		}
	}
	share := auxShare(b)
	tc := tr.cfg
	loss := func() float64 {
		l, _, err := tr.gradients(b)
		if err != nil {
			t.Fatal(err)
		}
		return l.Policy + l.Value + share*(tc.OwnershipWeight*l.Ownership+tc.ScoreWeight*l.Score)
	}
	l, grads, err := tr.gradients(b)
	if err != nil {
		t.Fatal(err)
	}
	if (cfg.Ownership && !(l.Ownership > 0.1)) || (cfg.Score && !(l.Score > 0.01)) {
		t.Fatalf("auxiliary losses %g and %g: the heads are not in the loss", l.Ownership, l.Score)
	}
	analytic := make([][]float32, len(grads))
	for i := range grads {
		analytic[i] = append([]float32(nil), grads[i]...)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	const step = 1e-3
	checked, bad := 0, 0
	for pi, p := range net.Learnables() {
		for trial := 0; trial < 8; trial++ {
			j := rng.IntN(len(p.Data))
			v := p.Data[j]
			p.Data[j] = v + step
			plus := loss()
			p.Data[j] = v - step
			minus := loss()
			p.Data[j] = v
			numeric := (plus - minus) / (2 * step)
			got := float64(analytic[pi][j])
			checked++
			if math.Abs(numeric-got) > 2e-3+0.05*math.Abs(numeric) {
				bad++
				t.Logf("%s[%d]: gradient %.6f, finite difference %.6f", p.Name, j, got, numeric)
			}
		}
	}
	// A ReLU switching inside ±step, or a pooled maximum changing cell,
	// can spoil an odd difference; a wrong gradient spoils many.
	if bad > checked/20 {
		t.Errorf("%d of %d gradient entries disagree with finite differences", bad, checked)
	}
	// Every array is reached by the loss: a layer cut off from it would
	// pass the comparison above with zeros on both sides.
	for pi, a := range analytic {
		if maxAbsDiff(a, make([]float32, len(a))) == 0 {
			t.Errorf("%s gets no gradient", net.Learnables()[pi].Name)
		}
	}
}

// TestOverfit trains a tiny network on 64 fixed samples until it has
// learned them: the policy loss falls to near the targets' entropy and the
// value loss near zero.
func TestOverfit(t *testing.T) {
	g := tictactoe.Game{}
	net, tr := tinyTrainer(t, g, 1)
	b := randomBatch(g, 64, 8)
	b.Weights = nil
	// Sharpen the targets to one action each, so that a network that has
	// learned them has a cross-entropy near zero.
	A := g.ActionSpace()
	for i := 0; i < 64; i++ {
		best := i * A
		for a := i * A; a < (i+1)*A; a++ {
			if b.Policy[a] > b.Policy[best] {
				best = a
			}
		}
		for a := i * A; a < (i+1)*A; a++ {
			b.Policy[a] = 0
		}
		b.Policy[best] = 1
	}
	first, err := tr.Step(b)
	if err != nil {
		t.Fatal(err)
	}
	var last nn.Losses
	for step := 0; step < 150; step++ {
		if last, err = tr.Step(b); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("losses: first %+v, last %+v", first, last)
	if last.Policy > 0.1 || last.Value > 0.1 {
		t.Errorf("after 150 steps policy loss %.3f, value loss %.3f; want both below 0.1 (started at %.3f, %.3f)",
			last.Policy, last.Value, first.Policy, first.Value)
	}
	if tr.Steps() != 151 {
		t.Errorf("Steps() = %d, want 151", tr.Steps())
	}
	// The running statistics have followed the batch: inference on the
	// same samples gives nearly the trained answers.
	ev, err := NewEvaluator(net.Fold(), 64)
	if err != nil {
		t.Fatal(err)
	}
	logits, wdl, err := ev.Forward(b.Inputs, 64)
	if err != nil {
		t.Fatal(err)
	}
	right := 0
	for i := 0; i < 64; i++ {
		best, bestV := 0, 0
		for a := 0; a < A; a++ {
			if b.Legal[i*A+a] == 1 && logits[i*A+a] > logits[i*A+best] || b.Legal[i*A+best] == 0 {
				best = a
			}
			if b.Policy[i*A+a] == 1 {
				bestV = a
			}
		}
		k := 0
		for j := 1; j < 3; j++ {
			if wdl[i*3+j] > wdl[i*3+k] {
				k = j
			}
		}
		if best == bestV && b.Value[i*3+k] == 1 {
			right++
		}
	}
	if right < 56 {
		t.Errorf("inference with running statistics gets %d of 64 samples right, want at least 56", right)
	}
}

func TestStepRejectsBadBatches(t *testing.T) {
	g := tictactoe.Game{}
	net, err := nn.New(g, tinyConfig, 1)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTrainer(net, nn.DefaultTrainConfig())
	if err != nil {
		t.Fatal(err)
	}
	good := randomBatch(g, 4, 1)
	tests := []struct {
		name   string
		change func(b *nn.Batch)
		want   string
	}{
		{"short inputs", func(b *nn.Batch) { b.Inputs = b.Inputs[:len(b.Inputs)-1] }, "input values"},
		{"short policy", func(b *nn.Batch) { b.Policy = b.Policy[:9] }, "policy values"},
		{"short mask", func(b *nn.Batch) { b.Legal = b.Legal[1:] }, "legal-mask"},
		{"short value", func(b *nn.Batch) { b.Value = b.Value[:3] }, "value targets"},
		{"weights", func(b *nn.Batch) { b.Weights = b.Weights[:1] }, "sample weights"},
		{"negative weight", func(b *nn.Batch) { b.Weights[2] = -1 }, "weight"},
		{"zero weights", func(b *nn.Batch) { clear(b.Weights) }, "sum to zero"},
		{"illegal target", func(b *nn.Batch) {
			for a := range 9 {
				if b.Legal[a] == 0 {
					b.Policy[a] = 0.5
					return
				}
			}
			b.Legal[0], b.Policy[0] = 0, 0.5
		}, "illegal action"},
		{"bad mask", func(b *nn.Batch) { b.Legal[3] = 0.5 }, "legal mask"},
		{"nan value", func(b *nn.Batch) { b.Value[0] = float32(math.NaN()) }, "value target"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := nn.Batch{
				Inputs:  append([]float32(nil), good.Inputs...),
				Policy:  append([]float32(nil), good.Policy...),
				Legal:   append([]float32(nil), good.Legal...),
				Value:   append([]float32(nil), good.Value...),
				Weights: append([]float32(nil), good.Weights...),
			}
			tc.change(&b)
			before := append([]float32(nil), net.Learnables()[0].Data...)
			_, err := tr.Step(b)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
			if maxAbsDiff(before, net.Learnables()[0].Data) != 0 {
				t.Error("a rejected batch changed the weights")
			}
		})
	}
	if _, err := tr.Step(good); err != nil {
		t.Errorf("good batch: %v", err)
	}
}

// TestValueLearnsRealOutcomes: trained on real-valued outcomes (a
// one-player game's normalised scores) through nn.WDLTarget, the value head's
// P(win) − P(loss) comes to each position's outcome.
func TestValueLearnsRealOutcomes(t *testing.T) {
	g := tictactoe.Game{}
	net, tr := tinyTrainer(t, g, 2)
	const n = 32
	b := randomBatch(g, n, 11)
	b.Weights = nil
	z := make([]float32, n)
	for i := range z {
		z[i] = float32(i)/float32(n-1)*1.8 - 0.9 // -0.9 .. 0.9, no ends
		b.Value[3*i], b.Value[3*i+1], b.Value[3*i+2] = nn.WDLTarget(z[i])
	}
	for step := 0; step < 300; step++ {
		if _, err := tr.Step(b); err != nil {
			t.Fatal(err)
		}
	}
	ev, err := NewEvaluator(net.Fold(), n)
	if err != nil {
		t.Fatal(err)
	}
	_, wdl, err := ev.Forward(b.Inputs, n)
	if err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for i := range z {
		v := wdl[3*i] - wdl[3*i+2]
		worst = max(worst, math.Abs(float64(v-z[i])))
	}
	if worst > 0.15 {
		t.Errorf("the value head misses a real-valued outcome by %.3f, want within 0.15", worst)
	}
}

// tinyTrainer is a small tic-tac-toe network and its trainer, at a high
// learning rate and no weight decay, so that a test learns a few samples
// quickly.
func tinyTrainer(t *testing.T, g tictactoe.Game, seed uint64) (*nn.Network, *Trainer) {
	t.Helper()
	net, err := nn.New(g, nn.Config{Blocks: 1, Filters: 16, PolicyFilters: 4, ValueFilters: 2, ValueHidden: 32}, seed)
	if err != nil {
		t.Fatal(err)
	}
	cfg := nn.DefaultTrainConfig()
	cfg.LearningRate = 0.05
	cfg.WeightDecay = 0
	tr, err := NewTrainer(net, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return net, tr
}
