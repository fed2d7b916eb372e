package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/flipzero/flipzero/engine"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/loop"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/cpu"
	"github.com/flipzero/flipzero/nn/cuda"
)

func runBenchNN(ctx context.Context, args []string, io stdio) (err error) {
	fs := newFlags("bench nn", "bench nn --game G [--config FILE | --model FILE] [--batches 1,8,32,128 --seconds S --train-batch N --procs P --cpuprofile FILE]\n\n"+
		"Prints the machine's float32 matrix-multiply GFLOP/s, then for the game's default network (or\n"+
		"the config's, or a model's) positions/s, GFLOP/s and the fraction of that peak at each batch\n"+
		"size, how far evaluating in reduced precision moves its outputs from float32's, and training\n"+
		"samples/s.", io.out)
	gameName := fs.String("game", "", "game: "+strings.Join(games.Names(), ", ")+" (with --model: the model's)")
	configPath := fs.String("config", "", "run config whose network to measure (default: the game's default network)")
	modelPath := fs.String("model", "", "model or checkpoint file whose network to measure, trained weights and all")
	batchList := fs.String("batches", "1,8,32,128", "inference batch sizes, comma-separated (on a GPU, e.g. 1,64,256,2048)")
	seconds := fs.Float64("seconds", 3, "how long to run each measurement (split over trials)")
	trainBatch := fs.Int("train-batch", 128, "training batch size (0 skips training)")
	procs := fs.Int("procs", 1, "cores Go may use while measuring (the figures are per core at 1)")
	dev := addDeviceFlag(fs)
	profile := addProfileFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	stop, err := profileCPU(*profile)
	if err != nil {
		return err
	}
	defer stopProfile(stop, &err)
	var model *nn.Checkpoint
	if *modelPath != "" {
		if *configPath != "" {
			return usagef("--config and --model both name a network: give one")
		}
		if model, err = loadBenchModel(*modelPath, gameName); err != nil {
			return err
		}
	}
	g, err := gameFlag(*gameName)
	if err != nil {
		return err
	}
	batches, err := parseBatches(*batchList)
	if err != nil {
		return err
	}
	cfg := nn.DefaultConfig(g)
	if model != nil {
		cfg = model.Network.Config()
	}
	if *configPath != "" {
		run, err := loop.LoadConfig(*configPath, games.Builtin())
		if err != nil {
			return err
		}
		if run.Game != g.Name() {
			return usagef("%s is a config for %s, not %s", *configPath, run.Game, g.Name())
		}
		cfg = run.Network
	}
	if *seconds <= 0 || *procs < 1 || *trainBatch < 0 {
		return usagef("--seconds, --procs must be positive and --train-batch not negative")
	}
	budget := time.Duration(*seconds * float64(time.Second))
	backend, _, err := dev.open()
	if err != nil {
		return err
	}
	if gpu, ok := backend.(cuda.GPU); ok {
		return benchNNGPU(ctx, gpu, g, cfg, batches, *trainBatch, budget, io)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(*procs))

	net, err := nn.New(g, cfg, 1)
	if err != nil {
		return err
	}
	if model != nil {
		net = model.Network
	}
	conv := cpu.ConvInfo()
	if c, ok := backend.(interface{ ConvInfo() string }); ok {
		conv = c.ConvInfo()
	}
	fmt.Fprintf(io.out, "%s network: %v, %d parameters, %.1f MFLOP per position; convolutions %s; BLAS %s, GOMAXPROCS %d\n",
		g.Name(), cfg, net.Parameters(), net.FLOPsPerPosition()/1e6, conv, cpu.BLASInfo(), *procs)
	// Other work on the machine only slows a trial down, so each figure is
	// the best of several short trials. The peak is the better of a square
	// product and one shaped like a 64-filter 3×3 convolution (gonum's
	// kernel runs the latter faster).
	peak := 0.0
	for i := 0; i < benchTrials; i++ {
		peak = max(peak, cpu.MeasureMatMul(512, 512, 512, budget/benchTrials/2))
		peak = max(peak, cpu.MeasureMatMul(256, 64, 576, budget/benchTrials/2))
	}
	fmt.Fprintf(io.out, "matrix multiply peak: %.1f GFLOP/s (float32 512×512×512 and 256×64×576, one goroutine, best of %d)\n", peak, benchTrials)

	rng := rand.New(rand.NewPCG(1, 2))
	largest := max(batches[len(batches)-1], *trainBatch)
	positions := env.RandomPositions(g, largest, 1, false)
	folded := net.Fold()
	for _, batch := range batches {
		if err := ctx.Err(); err != nil {
			return err
		}
		ev, err := nn.NewEvaluator(backend, folded, batch)
		if err != nil {
			return err
		}
		states := positions[:batch]
		priors := make([]float32, batch*g.ActionSpace())
		values := make([]float32, batch)
		if err := ev.Evaluate(states, priors, values); err != nil { // warm-up
			return err
		}
		rate := 0.0
		for trial := 0; trial < benchTrials; trial++ {
			evaluated := 0
			start := time.Now()
			for evaluated == 0 || time.Since(start) < budget/benchTrials {
				if err := ev.Evaluate(states, priors, values); err != nil {
					return err
				}
				evaluated += batch
			}
			rate = max(rate, float64(evaluated)/time.Since(start).Seconds())
		}
		gflops := rate * net.FLOPsPerPosition() / 1e9
		fmt.Fprintf(io.out, "batch %4d: %8.0f positions/s  %6.1f GFLOP/s  %5.1f%% of peak\n", batch, rate, gflops, 100*gflops/peak)
	}
	note := cpu.SpeedNote()
	if b, ok := backend.(interface{ SpeedNote() string }); ok {
		note = b.SpeedNote()
	}
	if note != "" {
		fmt.Fprintf(io.out, "note: %s\n", note)
	}
	if err := printAgreement(backend, folded, env.RandomPositions(g, agreementPositions, 3, false), io); err != nil {
		return err
	}

	if *trainBatch == 0 {
		return nil
	}
	trainer, err := backend.NewTraining(nn.TrainingState{Network: net, Config: nn.DefaultTrainConfig()})
	if err != nil {
		return err
	}
	b := trainingBatch(g, positions[:*trainBatch], rng)
	if _, err := trainer.Step(b); err != nil { // builds the graph
		return err
	}
	steps := 0
	start := time.Now()
	for steps < 2 || time.Since(start) < budget {
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, err := trainer.Step(b); err != nil {
			return err
		}
		steps++
	}
	elapsed := time.Since(start).Seconds()
	precision, replicas := "", 1
	if b, ok := backend.(interface{ TrainInfo() string }); ok {
		precision = " (" + b.TrainInfo() + ")"
	}
	if r, ok := trainer.(interface{ Replicas(batch int) int }); ok {
		replicas = r.Replicas(*trainBatch)
	}
	fmt.Fprintf(io.out, "training batch %d%s: %.1f samples/s (%.2f steps/s, %d replicas)\n", *trainBatch, precision, float64(steps**trainBatch)/elapsed, float64(steps)/elapsed, replicas)
	return nil
}

// benchNNGPU measures the network on the GPU: positions/s at each batch
// size and training samples/s.
func benchNNGPU(ctx context.Context, gpu cuda.GPU, g env.Game, cfg nn.Config, batches []int, trainBatch int, budget time.Duration, io stdio) error {
	net, err := nn.New(g, cfg, 1)
	if err != nil {
		return err
	}
	fmt.Fprintf(io.out, "%s network: %v, %d parameters, %.1f MFLOP per position; %s\n",
		g.Name(), cfg, net.Parameters(), net.FLOPsPerPosition()/1e6, gpu.Name())
	positions := env.RandomPositions(g, 64, 1, false)
	inputs := encodePositions(g, positions)
	layers := net.Fold().Layers()
	for _, batch := range batches {
		if err := ctx.Err(); err != nil {
			return err
		}
		r, err := cuda.BenchForward(gpu.D, layers, inputs, batch, budget)
		if err != nil {
			return err
		}
		fmt.Fprintf(io.out, "batch %4d: %9.0f positions/s  %7.1f TFLOP/s  (%s)\n", batch, r.PositionsPerSecond,
			r.PositionsPerSecond*net.FLOPsPerPosition()/1e12, r.Path)
	}
	if trainBatch == 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(1, 2))
	all := env.RandomPositions(g, trainBatch, 2, false)
	rate, err := cuda.BenchTrain(gpu.D, net, trainingBatch(g, all, rng), budget)
	if err != nil {
		return err
	}
	fmt.Fprintf(io.out, "training batch %d: %.0f samples/s\n", trainBatch, rate)
	return nil
}

// encodePositions encodes positions one after another.
func encodePositions(g env.Game, positions []env.State) []float32 {
	p, h, w := g.EncodedShape()
	out := make([]float32, len(positions)*p*h*w)
	for i, s := range positions {
		s.Encode(out[i*p*h*w : (i+1)*p*h*w])
	}
	return out
}

// benchTrials is how many trials each speed figure is the best of.
const benchTrials = 3

func parseBatches(list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 4096 {
			return nil, usagef("--batches: %q is not a batch size 1..4096", f)
		}
		if len(out) > 0 && n <= out[len(out)-1] {
			return nil, usagef("--batches: sizes must increase, %d after %d", n, out[len(out)-1])
		}
		out = append(out, n)
	}
	return out, nil
}

// trainingBatch makes a batch of the positions with a random visit
// distribution over the legal actions and a random outcome: the shapes
// and the work of real training data.
func trainingBatch(g env.Game, positions []env.State, rng *rand.Rand) nn.Batch {
	planes, h, w := g.EncodedShape()
	size, actions := planes*h*w, g.ActionSpace()
	n := len(positions)
	b := nn.Batch{
		Inputs: make([]float32, n*size),
		Policy: make([]float32, n*actions),
		Legal:  make([]float32, n*actions),
		Value:  make([]float32, n*3),
	}
	buf := make([]int, 0, actions)
	for i, s := range positions {
		s.Encode(b.Inputs[i*size : (i+1)*size])
		legal := s.LegalActions(buf)
		for _, a := range legal {
			b.Legal[i*actions+a] = 1
			b.Policy[i*actions+a] = 1 / float32(len(legal))
		}
		b.Value[i*3+rng.IntN(3)] = 1
	}
	return b
}

// agreementPositions is how many positions of random play the reduced
// precision's outputs are compared with float32's on.
const agreementPositions = 256

// printAgreement evaluates positions with backend and with the CPU in
// float32 and prints how far apart their outputs are: the largest move
// of a move's probability, the mean of a position's policy moved (L1),
// the largest move of the value. Nothing where backend evaluates in
// float32 too (the outputs are the same).
func printAgreement(backend nn.Backend, folded *nn.Folded, positions []env.State, io stdio) error {
	const batch = 32
	outputs := func(b nn.Backend) ([]float32, []float32, error) {
		ev, err := nn.NewEvaluator(b, folded, batch)
		if err != nil {
			return nil, nil, err
		}
		actions := folded.Game().ActionSpace()
		priors, values := make([]float32, len(positions)*actions), make([]float32, len(positions))
		for lo := 0; lo < len(positions); lo += batch {
			hi := min(lo+batch, len(positions))
			if err := ev.Evaluate(positions[lo:hi], priors[lo*actions:hi*actions], values[lo:hi]); err != nil {
				return nil, nil, err
			}
		}
		return priors, values, nil
	}
	priors, values, err := outputs(backend)
	if err != nil {
		return err
	}
	wantPriors, wantValues, err := outputs(cpu.Backend())
	if err != nil {
		return err
	}
	a := compareOutputs(priors, values, wantPriors, wantValues)
	if a.priorMax == 0 && a.valueMax == 0 {
		return nil
	}
	fmt.Fprintf(io.out, "against float32 on %d positions of random play: a move's probability moved by up to %.4f, a policy by %.4f (L1) on average, the value by up to %.4f\n",
		len(positions), a.priorMax, a.policyL1, a.valueMax)
	return nil
}

// agreement is how far one evaluation's outputs are from another's.
type agreement struct{ priorMax, policyL1, valueMax float64 }

// compareOutputs measures priors and values (one a position) against
// want's.
func compareOutputs(priors, values, wantPriors, wantValues []float32) agreement {
	var a agreement
	actions := len(priors) / len(values)
	for i := range priors {
		d := math.Abs(float64(priors[i] - wantPriors[i]))
		a.priorMax = max(a.priorMax, d)
		a.policyL1 += d
	}
	a.policyL1 /= float64(len(priors) / actions)
	for i := range values {
		a.valueMax = max(a.valueMax, math.Abs(float64(values[i]-wantValues[i])))
	}
	return a
}

// loadBenchModel loads a bench's --model, whose game becomes *gameName;
// a --game naming another game is a usage error.
func loadBenchModel(path string, gameName *string) (*nn.Checkpoint, error) {
	m, g, err := engine.LoadModel(path, nil)
	if err != nil {
		return nil, usageError{err}
	}
	if *gameName != "" && *gameName != g.Name() {
		return nil, usagef("--game %s, but the model %s plays %s", *gameName, path, g.Name())
	}
	*gameName = g.Name()
	return m, nil
}
