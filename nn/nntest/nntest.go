// Package nntest is the conformance suite of network backends, as
// env/envtest is of games: every architecture option and their
// combinations, on each game's shapes, run through a backend and checked
// against nn's reference — Gorgonia's own operations, which share no code
// with any backend's kernels. A backend's tests call Run; a backend added
// later gets the suite for free.
//
//	func TestConformance(t *testing.T) { nntest.Run(t, myBackend, nntest.Options{}) }
package nntest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/env/yinsh"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/cpu"
)

// Options tune the suite to a backend.
type Options struct {
	// InferenceTolerance bounds |backend − reference| of every logit and
	// win/draw/loss probability, relative to the largest reference value
	// (or 1 where that is smaller): default 1e-4, fp32's.
	InferenceTolerance float64
	// TrainingTolerance bounds, after one step, the losses and every
	// updated weight and running statistic the same way: default 1e-3.
	TrainingTolerance float64
	// Short runs one game (Othello) instead of three.
	Short bool
}

func (o Options) withDefaults() Options {
	if o.InferenceTolerance == 0 {
		o.InferenceTolerance = 1e-4
	}
	if o.TrainingTolerance == 0 {
		o.TrainingTolerance = 1e-3
	}
	return o
}

// Case is one architecture on one game.
type Case struct {
	Name   string
	Game   env.Game
	Config nn.Config
}

// Cases are, on each game, the plain network and each option — global
// pooling, the convolutional policy head (with a pass scored from the
// whole board in Othello and YINSH, none in tic-tac-toe), the ownership
// and score heads, several value filters, the soft policy head beside
// either policy head — and all of them at once but the soft policy head,
// on towers small enough to check in seconds.
func Cases(short bool) []Case {
	games := []struct {
		game            env.Game
		blocks, filters int
	}{{tictactoe.Game{}, 2, 8}, {othello.Othello(), 3, 16}, {yinsh.Full(), 2, 16}}
	if short {
		games = games[1:2]
	}
	var out []Case
	for _, g := range games {
		base := nn.DefaultConfig(g.game)
		base.Blocks, base.Filters = g.blocks, g.filters
		options := map[string]func(*nn.Config){
			"plain":         func(*nn.Config) {},
			"pooling":       func(c *nn.Config) { c.GlobalPooling = true },
			"conv-policy":   func(c *nn.Config) { c.PolicyHead, c.PolicyFilters = "conv", 8 },
			"aux-heads":     func(c *nn.Config) { c.Ownership, c.Score = true, true },
			"value-filters": func(c *nn.Config) { c.ValueFilters = 4 },
			"soft-policy":   func(c *nn.Config) { c.SoftPolicy = true },
			"soft-conv-policy": func(c *nn.Config) {
				c.GlobalPooling, c.PolicyHead, c.PolicyFilters, c.SoftPolicy = true, "conv", 8, true
			},
			"all": func(c *nn.Config) {
				c.GlobalPooling, c.PolicyHead, c.PolicyFilters = true, "conv", 8
				c.Ownership, c.Score, c.ValueFilters = true, true, 2
			},
		}
		names := make([]string, 0, len(options))
		for name := range options {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			cfg := base
			options[name](&cfg)
			out = append(out, Case{Name: g.game.Name() + "/" + name, Game: g.game, Config: cfg})
		}
	}
	return out
}

// Run checks the backend's inference, one training step, and a
// checkpoint's resumption across backends, for every case.
func Run(t *testing.T, b nn.Backend, o Options) {
	o = o.withDefaults()
	for _, c := range Cases(o.Short) {
		t.Run(c.Name, func(t *testing.T) {
			t.Run("inference", func(t *testing.T) { Inference(t, b, c, o) })
			t.Run("training", func(t *testing.T) { Training(t, b, c, o) })
			t.Run("resume", func(t *testing.T) { Resume(t, b, c, o) })
		})
	}
}

// Network is a network of the case with random weights, batch norms and
// biases, as training would leave them (Perturb).
func Network(t testing.TB, c Case, seed uint64) *nn.Network {
	t.Helper()
	net, err := nn.New(c.Game, c.Config, seed)
	if err != nil {
		t.Fatal(err)
	}
	Perturb(net, seed)
	return net
}

// Perturb gives a network's batch norms, biases and running statistics
// random values, as training would, so that folding and every bias are
// exercised (a new network's are zero or one).
func Perturb(net *nn.Network, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 2))
	for _, l := range net.Learnables() {
		for i := range l.Data {
			switch {
			case strings.HasSuffix(l.Name, ".gamma"):
				l.Data[i] = 0.5 + rng.Float32()
			case strings.HasSuffix(l.Name, ".beta"), strings.HasSuffix(l.Name, ".b"):
				l.Data[i] = rng.Float32() - 0.5
			}
		}
	}
	for _, s := range net.Statistics() {
		for i := range s.Data {
			if strings.HasSuffix(s.Name, ".var") {
				s.Data[i] = 0.5 + rng.Float32()
			} else {
				s.Data[i] = 0.2 * (rng.Float32() - 0.5)
			}
		}
	}
}

// Encode encodes states one after another.
func Encode(states []env.State) []float32 {
	p, h, w := states[0].Game().EncodedShape()
	size := p * h * w
	out := make([]float32, len(states)*size)
	for i, s := range states {
		s.Encode(out[i*size : (i+1)*size])
	}
	return out
}

// Inference compares the backend's forward pass with Gorgonia's on real
// positions, at a full batch and at a partial one, twice (a second call
// must not see the first's scratch).
func Inference(t testing.TB, b nn.Backend, c Case, o Options) {
	o = o.withDefaults()
	net := Network(t, c, 3)
	const maxBatch = 6
	inputs := Encode(env.RandomPositions(c.Game, maxBatch, 5, false))
	size := len(inputs) / maxBatch
	inf, err := b.NewInference(net.Fold(), maxBatch)
	if err != nil {
		t.Fatalf("%s: %v", b.Name(), err)
	}
	defer closeIfCloser(t, inf)
	for _, count := range []int{maxBatch, 3, maxBatch} {
		in := inputs[:count*size]
		wantLogits, wantWDL, err := cpu.GorgoniaForward(net, in, count)
		if err != nil {
			t.Fatal(err)
		}
		logits, wdl, err := inf.Forward(in, count)
		if err != nil {
			t.Fatalf("batch %d: %v", count, err)
		}
		if len(logits) != len(wantLogits) || len(wdl) != len(wantWDL) {
			t.Fatalf("batch %d: %d logits and %d probabilities, want %d and %d", count, len(logits), len(wdl), len(wantLogits), len(wantWDL))
		}
		for _, x := range []struct {
			what      string
			got, want []float32
		}{{"policy logits", logits, wantLogits}, {"win/draw/loss", wdl, wantWDL}} {
			d, scale := Diff(x.got, x.want)
			if scale < 1e-2 && x.what == "policy logits" {
				t.Errorf("batch %d: logits all near zero (max %g): the comparison proves little", count, scale)
			}
			if d > o.InferenceTolerance*max(1, scale) {
				t.Errorf("batch %d: %s differ from Gorgonia's by %g (largest %g)", count, x.what, d, scale)
			}
		}
	}
}

// Diff is the largest |got − want| and the largest |want|.
func Diff(got, want []float32) (diff, scale float64) {
	for i := range want {
		diff = max(diff, math.Abs(float64(got[i]-want[i])))
		scale = max(scale, math.Abs(float64(want[i])))
	}
	return diff, scale
}

// Batch is a training batch of real positions with random search
// targets over their legal actions, random outcomes, sample weights and,
// for half the samples, auxiliary targets.
func Batch(g env.Game, n int, seed uint64) nn.Batch {
	rng := rand.New(rand.NewPCG(seed, 1))
	states := env.RandomPositions(g, n, seed, false)
	actions := g.ActionSpace()
	_, h, w := g.EncodedShape()
	cells := h * w
	b := nn.Batch{
		Inputs: Encode(states), Policy: make([]float32, n*actions), Legal: make([]float32, n*actions),
		Value: make([]float32, n*3), Weights: make([]float32, n),
		Ownership: make([]float32, n*cells), Margin: make([]float32, n), Aux: make([]float32, n),
	}
	var buf []int
	for i, s := range states {
		buf = s.LegalActions(buf)
		sum := float32(0)
		for _, a := range buf {
			b.Legal[i*actions+a] = 1
			v := rng.Float32()
			b.Policy[i*actions+a] = v
			sum += v
		}
		for _, a := range buf {
			b.Policy[i*actions+a] /= sum
		}
		b.Value[i*3+rng.IntN(3)] = 1
		b.Weights[i] = 0.5 + rng.Float32()
		if i%2 == 0 {
			b.Aux[i] = 1
			b.Margin[i] = 2*rng.Float32() - 1
			for c := i * cells; c < (i+1)*cells; c++ {
				b.Ownership[c] = float32(rng.IntN(3) - 1)
			}
		}
	}
	return b
}

// Training takes the same step with the backend and with Gorgonia's
// reference trainer from the same network and compares the losses, the
// updated weights and the running statistics.
func Training(t testing.TB, b nn.Backend, c Case, o Options) {
	o = o.withDefaults()
	refNet, net := Network(t, c, 4), Network(t, c, 4)
	cfg := nn.DefaultTrainConfig()
	ref, err := cpu.NewReferenceTrainer(refNet, cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := b.NewTraining(nn.TrainingState{Network: net, Config: cfg})
	if err != nil {
		t.Fatalf("%s: %v", b.Name(), err)
	}
	defer closeIfCloser(t, tr)
	batch := Batch(c.Game, 12, 10)
	want, err := ref.Step(batch)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tr.Step(batch)
	if err != nil {
		t.Fatalf("%s: %v", b.Name(), err)
	}
	if err := tr.Sync(); err != nil {
		t.Fatal(err)
	}
	for _, l := range []struct {
		name      string
		got, want float64
	}{{"policy", got.Policy, want.Policy}, {"value", got.Value, want.Value}, {"ownership", got.Ownership, want.Ownership},
		{"score", got.Score, want.Score}, {"soft policy", got.SoftPolicy, want.SoftPolicy}, {"L2", got.L2, want.L2},
		{"total", got.Total, want.Total}} {
		if math.Abs(l.got-l.want) > o.TrainingTolerance*math.Max(1, math.Abs(l.want)) {
			t.Errorf("%s loss %g, reference %g", l.name, l.got, l.want)
		}
	}
	if c.Config.Ownership && want.Ownership == 0 || c.Config.Score && want.Score == 0 {
		t.Errorf("reference auxiliary losses %g and %g: the batch teaches the heads nothing", want.Ownership, want.Score)
	}
	if c.Config.SoftPolicy != (want.SoftPolicy > 0) {
		t.Errorf("reference soft policy loss %g with soft_policy %v", want.SoftPolicy, c.Config.SoftPolicy)
	}
	if tr.Steps() != 1 {
		t.Errorf("%d steps counted, want 1", tr.Steps())
	}
	CompareArrays(t, "weights", net.Learnables(), refNet.Learnables(), o.TrainingTolerance)
	CompareArrays(t, "running statistics", net.Statistics(), refNet.Statistics(), o.TrainingTolerance)
	moved, _ := Diff(net.Learnables()[0].Data, Network(t, c, 4).Learnables()[0].Data)
	if moved == 0 {
		t.Error("the step left the stem's weights unchanged")
	}
}

// CompareArrays fails the test where an array differs from the
// reference's by more than tol, relative to the array's largest value
// (or 1).
func CompareArrays(t testing.TB, what string, got, want []nn.Tensor, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d arrays, want %d", what, len(got), len(want))
	}
	worst, where := 0.0, ""
	for i := range want {
		d, scale := Diff(got[i].Data, want[i].Data)
		if r := d / max(1, scale); r > worst {
			worst, where = r, want[i].Name
		}
	}
	if worst > tol {
		t.Errorf("%s differ from the reference's by %g at %s", what, worst, where)
	}
}

// Resume trains a step on the backend, saves a checkpoint, resumes it on
// the CPU and takes a second step there, and compares the result with
// two steps of the CPU alone: the checkpoint carries the backend's
// weights, statistics and optimizer state. Then the other way round: a
// CPU checkpoint resumed on the backend.
func Resume(t testing.TB, b nn.Backend, c Case, o Options) {
	o = o.withDefaults()
	cfg := nn.DefaultTrainConfig()
	batches := []nn.Batch{Batch(c.Game, 8, 20), Batch(c.Game, 8, 21)}
	// Two steps on the CPU alone.
	cpuNet := Network(t, c, 6)
	alone, err := cpu.Backend().NewTraining(nn.TrainingState{Network: cpuNet, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	for _, batch := range batches {
		if _, err := alone.Step(batch); err != nil {
			t.Fatal(err)
		}
	}
	for _, order := range []struct {
		name          string
		first, second nn.Backend
	}{{b.Name() + " then cpu", b, cpu.Backend()}, {"cpu then " + b.Name(), cpu.Backend(), b}} {
		net := Network(t, c, 6)
		first, err := order.first.NewTraining(nn.TrainingState{Network: net, Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := first.Step(batches[0]); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "step1.ckpt")
		if err := first.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := nn.SaveCheckpoint(path, first, nil); err != nil {
			t.Fatal(err)
		}
		closeIfCloser(t, first)
		ck, err := nn.LoadCheckpoint(path, c.Game)
		if err != nil {
			t.Fatal(err)
		}
		if ck.Training == nil || ck.Step != 1 {
			t.Fatalf("%s: checkpoint without optimizer state, or at step %d", order.name, ck.Step)
		}
		second, err := order.second.NewTraining(*ck.Training)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := second.Step(batches[1]); err != nil {
			t.Fatal(err)
		}
		if err := second.Sync(); err != nil {
			t.Fatal(err)
		}
		if second.Steps() != 2 {
			t.Errorf("%s: %d steps after resuming at 1", order.name, second.Steps())
		}
		CompareArrays(t, fmt.Sprintf("%s: weights", order.name), second.Network().Learnables(), cpuNet.Learnables(), o.TrainingTolerance)
		CompareArrays(t, fmt.Sprintf("%s: momentum", order.name), asTensors(second.Velocity()), asTensors(alone.Velocity()), o.TrainingTolerance)
		closeIfCloser(t, second)
	}
}

func asTensors(v [][]float32) []nn.Tensor {
	out := make([]nn.Tensor, len(v))
	for i, d := range v {
		out[i] = nn.Tensor{Name: fmt.Sprintf("array %d", i), Data: d}
	}
	return out
}

// closeIfCloser releases what a backend's object holds on its device.
func closeIfCloser(t testing.TB, x any) {
	if c, ok := x.(interface{ Close() error }); ok {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	}
}
