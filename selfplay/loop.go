package selfplay

import (
	"context"

	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/flipzero/flipzero/data"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/internal/atomicfile"
	"github.com/flipzero/flipzero/mcts"
	"github.com/flipzero/flipzero/nn"
)

// LoopOptions says which run to start or resume and when to stop.
type LoopOptions struct {
	// ConfigPath is the config of a new run. A run folder that has its
	// own config.yaml resumes with that one.
	ConfigPath string
	RunDir     string
	// MaxGenerations and MaxDuration stop the run after this many new
	// generations or this much time (0: no limit).
	MaxGenerations int
	MaxDuration    time.Duration
	// Log receives one summary line per generation and notices; Progress
	// receives the progress bars (nil: none).
	Log      io.Writer
	Progress io.Writer
	Seed     uint64
}

// Run layout, inside the run folder.
const (
	runConfigName = "config.yaml"
	modelsDir     = "models"
	dataDir       = "data"
	metricsName   = "metrics.jsonl"
)

var checkpointName = regexp.MustCompile(`^gen-(\d{6})\.ckpt$`)

func checkpointPath(runDir string, gen int) string {
	return filepath.Join(runDir, modelsDir, fmt.Sprintf("gen-%06d.ckpt", gen))
}

func shardPath(runDir string, gen int) string {
	return filepath.Join(runDir, dataDir, fmt.Sprintf("gen-%06d.shard", gen))
}

// Loop runs the training loop: generations of self-play, training and a
// checkpoint, until a limit is reached or ctx is cancelled. Everything it
// writes is complete or absent, so a run killed at any moment resumes
// from its newest checkpoint, losing at most the generation in progress.
func Loop(ctx context.Context, opts LoopOptions) error {
	logf := func(format string, args ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, format+"\n", args...)
		}
	}
	cfg, err := prepareRun(opts)
	if err != nil {
		return err
	}
	g, err := games.ByName(cfg.Game)
	if err != nil {
		return fmt.Errorf("config: game: %w", err)
	}
	trainer, gen, err := loadNewestCheckpoint(opts.RunDir, g, cfg, opts.Seed, logf)
	if err != nil {
		return err
	}
	windowCfg := data.WindowConfig(cfg.Window)
	replay, err := data.LoadReplay(filepath.Join(opts.RunDir, dataDir), g, windowCfg, func(err error) {
		logf("skipping damaged training data: %v", err)
	})
	if err != nil {
		return err
	}
	logf("run %s: %s, %v, generation %d, step %d, %d samples in the window of %d",
		opts.RunDir, g.Name(), trainer.Network().Config(), gen, trainer.Steps(), replay.Len(), replay.Total())

	// The network that plays self-play: the newest, unless gating kept an
	// older one.
	best := gen
	if ms, _ := ReadMetrics(filepath.Join(opts.RunDir, metricsName)); cfg.Arena.Gate > 0 && len(ms) > 0 && ms[len(ms)-1].Best < gen {
		best = ms[len(ms)-1].Best
	}
	player, err := selfPlayNetwork(opts.RunDir, g, trainer, gen, best)
	if err != nil {
		return err
	}

	rng := rand.New(rand.NewPCG(opts.Seed, uint64(gen)))
	runStart := time.Now()
	priorSeconds := lastRunSeconds(opts.RunDir)
	for done := 0; opts.MaxGenerations == 0 || done < opts.MaxGenerations; done++ {
		if opts.MaxDuration > 0 && time.Since(runStart) >= opts.MaxDuration {
			logf("time limit reached")
			break
		}
		if err := ctx.Err(); err != nil {
			break
		}
		gen++
		m, err := runGeneration(ctx, generation{
			number: gen, cfg: cfg, game: g, trainer: trainer, replay: replay, player: player,
			runDir: opts.RunDir, rng: rng, progress: opts.Progress, seed: opts.Seed,
		})
		if err != nil {
			if ctx.Err() != nil {
				logf("stopped during generation %d; the run resumes from generation %d", gen, gen-1)
				return nil
			}
			return fmt.Errorf("generation %d: %w", gen, err)
		}
		m.Best = gen
		if cfg.Arena.Games > 0 {
			promote, err := measure(ctx, cfg, g, opts.RunDir, gen, best, trainer.Network().Fold(), player, &m, opts.Progress)
			if err != nil {
				if ctx.Err() != nil {
					logf("stopped while measuring generation %d; its checkpoint is kept", gen)
					return nil
				}
				return fmt.Errorf("generation %d: arena: %w", gen, err)
			}
			if !promote {
				m.Best = best
			}
		}
		if m.Best == gen {
			best, player = gen, trainer.Network().Fold()
		}
		m.RunSeconds = priorSeconds + time.Since(runStart).Seconds()
		if err := AppendMetrics(filepath.Join(opts.RunDir, metricsName), m); err != nil {
			return err
		}
		logf("gen %d: %d games, %d positions (%.0f/s), %.0f evals/s, %d steps (step %d) policy %.3f value %.3f, %.0f s",
			m.Generation, m.Games, m.Positions, m.PositionsS, m.EvalsS, m.Steps, m.Step, m.PolicyLoss, m.ValueLoss, m.Seconds)
	}
	return nil
}

// prepareRun creates the run folder for a new run, or reads the config of
// the run being resumed.
func prepareRun(opts LoopOptions) (Config, error) {
	runConfig := filepath.Join(opts.RunDir, runConfigName)
	if _, err := os.Stat(runConfig); err == nil {
		removeStaleTemporaries(opts.RunDir)
		return LoadConfig(runConfig)
	}
	if opts.ConfigPath == "" {
		return Config{}, fmt.Errorf("%s is not a run folder (no %s): give a config to start a run", opts.RunDir, runConfigName)
	}
	cfg, err := LoadConfig(opts.ConfigPath)
	if err != nil {
		return Config{}, err
	}
	raw, err := os.ReadFile(opts.ConfigPath)
	if err != nil {
		return Config{}, err
	}
	for _, dir := range []string{opts.RunDir, filepath.Join(opts.RunDir, modelsDir), filepath.Join(opts.RunDir, dataDir)} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return Config{}, fmt.Errorf("create run folder: %w", err)
		}
	}
	if err := atomicfile.WriteBytes(runConfig, raw); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// removeStaleTemporaries deletes the temporary files of writes that a
// kill interrupted: they were never renamed into place, so nothing needs
// them.
func removeStaleTemporaries(runDir string) {
	for _, dir := range []string{runDir, filepath.Join(runDir, modelsDir), filepath.Join(runDir, dataDir)} {
		stale, _ := filepath.Glob(filepath.Join(dir, ".*.tmp*"))
		for _, path := range stale {
			os.Remove(path)
		}
	}
}

// loadNewestCheckpoint resumes from the newest readable checkpoint, or
// starts a new network and saves it as generation 0.
func loadNewestCheckpoint(runDir string, g env.Game, cfg Config, seed uint64, logf func(string, ...any)) (*nn.Trainer, int, error) {
	arch := nn.DefaultConfig(g)
	arch.Blocks, arch.Filters = cfg.Network.Blocks, cfg.Network.Filters
	entries, err := os.ReadDir(filepath.Join(runDir, modelsDir))
	if err != nil {
		return nil, 0, fmt.Errorf("run folder: %w", err)
	}
	var gens []int
	for _, e := range entries {
		if m := checkpointName.FindStringSubmatch(e.Name()); m != nil {
			n, _ := strconv.Atoi(m[1])
			gens = append(gens, n)
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(gens)))
	for _, gen := range gens {
		ckpt, err := nn.LoadCheckpointAs(checkpointPath(runDir, gen), g, arch)
		if err != nil {
			logf("skipping checkpoint: %v", err)
			continue
		}
		if ckpt.Trainer == nil {
			logf("skipping checkpoint %s: it has no optimizer state", checkpointPath(runDir, gen))
			continue
		}
		return ckpt.Trainer, gen, nil
	}
	net, err := nn.New(g, arch, seed)
	if err != nil {
		return nil, 0, err
	}
	tc := nn.DefaultTrainConfig()
	tc.LearningRate = cfg.Train.LearningRateAt(0)
	tc.Momentum = cfg.Train.Momentum
	tc.WeightDecay = cfg.Train.WeightDecay
	trainer, err := nn.NewTrainer(net, tc)
	if err != nil {
		return nil, 0, err
	}
	if err := nn.SaveCheckpoint(checkpointPath(runDir, 0), trainer, map[string]string{"generation": "0"}); err != nil {
		return nil, 0, err
	}
	return trainer, 0, nil
}

func lastRunSeconds(runDir string) float64 {
	ms, _ := ReadMetrics(filepath.Join(runDir, metricsName))
	if len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].RunSeconds
}

// selfPlayNetwork is the network that plays the next generation's games:
// the trainer's, or the checkpoint of generation best when gating kept it.
func selfPlayNetwork(runDir string, g env.Game, trainer *nn.Trainer, gen, best int) (*nn.Folded, error) {
	if best == gen {
		return trainer.Network().Fold(), nil
	}
	ckpt, err := nn.LoadCheckpoint(checkpointPath(runDir, best), g)
	if err != nil {
		return nil, fmt.Errorf("the self-play network: %w", err)
	}
	return ckpt.Network.Fold(), nil
}

// generation is what one generation of the loop works with.
type generation struct {
	number   int
	cfg      Config
	game     env.Game
	trainer  *nn.Trainer
	player   *nn.Folded // the network that plays the games
	replay   *data.Replay
	runDir   string
	rng      *rand.Rand
	progress io.Writer
	seed     uint64
}

func newBar(w io.Writer, total int, what string) *progressbar.ProgressBar {
	if w == nil {
		w = io.Discard
	}
	return progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}

func runGeneration(ctx context.Context, gen generation) (GenerationMetrics, error) {
	start := time.Now()
	m := GenerationMetrics{Generation: gen.number, Time: start.UTC().Format(time.RFC3339)}
	shard := shardPath(gen.runDir, gen.number)
	var newSamples int
	if n, err := data.ShardSamples(shard, gen.game); err == nil {
		// The previous run wrote this generation's games and was stopped
		// before its checkpoint: the games are already in the window.
		newSamples = n
		m.Positions = n
	} else {
		samples, err := selfPlay(ctx, gen, &m)
		if err != nil {
			return m, err
		}
		if err := data.WriteShard(shard, gen.game, samples); err != nil {
			return m, err
		}
		gen.replay.Add(samples)
		newSamples = len(samples)
	}
	playSeconds := time.Since(start).Seconds()
	if playSeconds > 0 {
		m.PositionsS = float64(m.Positions) / playSeconds
	}
	if err := train(ctx, gen, newSamples, &m); err != nil {
		return m, err
	}
	meta := map[string]string{
		"generation":    strconv.Itoa(gen.number),
		"samples_total": strconv.Itoa(gen.replay.Total()),
	}
	if err := nn.SaveCheckpoint(checkpointPath(gen.runDir, gen.number), gen.trainer, meta); err != nil {
		return m, err
	}
	m.Samples = gen.replay.Total()
	m.Window = gen.replay.Len()
	m.Seconds = time.Since(start).Seconds()
	return m, nil
}

// selfPlay plays the generation's games with the current network.
func selfPlay(ctx context.Context, gen generation, m *GenerationMetrics) ([]data.Sample, error) {
	settings := SettingsFrom(gen.cfg, gen.seed^uint64(gen.number)*0x9e3779b97f4a7c15)
	if settings.Workers == 0 {
		settings.Workers = runtime.NumCPU()
	}
	folded := gen.player
	bar := newBar(gen.progress, settings.Games, fmt.Sprintf("gen %d self-play", gen.number))
	defer bar.Close()
	var samples []data.Sample
	start := time.Now()
	stats, err := PlayGames(ctx, gen.game, settings, func() (mcts.Evaluator, error) {
		return folded.NewEvaluator(settings.BatchSize)
	}, func(r GameRecord) {
		samples = append(samples, r.Samples...)
		m.Games++
		m.Moves += r.Moves
		switch r.Winner {
		case 0, 1:
			m.Results[r.Winner]++
		default:
			m.Results[2]++
		}
		if r.Resigned {
			m.Resigned++
		}
		if r.WouldResign {
			m.NoResign++
			if r.FalseResign {
				m.FalseResign++
			}
		}
		bar.Add(1)
	})
	if err != nil {
		return nil, err
	}
	m.Positions = len(samples)
	if s := time.Since(start).Seconds(); s > 0 {
		m.EvalsS = float64(stats.Evaluations) / s
	}
	return samples, nil
}

// train takes the generation's training steps: enough that each new
// sample is used ReplayRatio times on average.
func train(ctx context.Context, gen generation, newSamples int, m *GenerationMetrics) error {
	tc := gen.cfg.Train
	if gen.replay.Len() < tc.MinSamples || newSamples == 0 {
		m.Step = int(gen.trainer.Steps())
		return nil
	}
	steps := int(math.Ceil(float64(newSamples) * tc.ReplayRatio / float64(tc.BatchSize)))
	batch := newBatchBuilder(gen.game, tc.BatchSize)
	bar := newBar(gen.progress, steps, fmt.Sprintf("gen %d training", gen.number))
	defer bar.Close()
	start := time.Now()
	var policySum, valueSum float64
	for i := 0; i < steps; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		lr := tc.LearningRateAt(int(gen.trainer.Steps()))
		if err := gen.trainer.SetLearningRate(lr); err != nil {
			return err
		}
		b := batch.fill(gen.replay, gen.rng)
		losses, err := gen.trainer.Step(b)
		if err != nil {
			return err
		}
		policySum += losses.Policy
		valueSum += losses.Value
		m.LR = lr
		bar.Add(1)
	}
	m.Steps = steps
	m.Step = int(gen.trainer.Steps())
	m.PolicyLoss = policySum / float64(steps)
	m.ValueLoss = valueSum / float64(steps)
	if s := time.Since(start).Seconds(); s > 0 {
		m.TrainS = float64(steps*tc.BatchSize) / s
	}
	return nil
}

// batchBuilder assembles training batches from the window, each sample
// under a random symmetry, reusing its buffers.
type batchBuilder struct {
	aug     *data.Augmenter
	size    int
	actions int
	planes  int
	scratch data.Sample
	batch   nn.Batch
}

func newBatchBuilder(g env.Game, size int) *batchBuilder {
	p, h, w := g.EncodedShape()
	a := g.ActionSpace()
	return &batchBuilder{
		aug: data.NewAugmenter(g), size: size, actions: a, planes: p * h * w,
		batch: nn.Batch{
			Inputs:  make([]float32, size*p*h*w),
			Policy:  make([]float32, size*a),
			Legal:   make([]float32, size*a),
			Value:   make([]float32, size*3),
			Weights: make([]float32, size),
		},
	}
}

func (bb *batchBuilder) fill(replay *data.Replay, rng *rand.Rand) nn.Batch {
	b := bb.batch
	clear(b.Policy)
	clear(b.Legal)
	clear(b.Value)
	for i := 0; i < bb.size; i++ {
		src := replay.Sample(rng)
		s := &bb.scratch
		bb.aug.Transform(s, src, rng.IntN(bb.aug.Symmetries()))
		copy(b.Inputs[i*bb.planes:(i+1)*bb.planes], s.Planes)
		for k, a := range s.Legal {
			b.Policy[i*bb.actions+int(a)] = s.Policy[k]
			b.Legal[i*bb.actions+int(a)] = 1
		}
		b.Value[i*3+int(1-s.Outcome)] = 1 // win, draw, loss
		b.Weights[i] = s.Weight
	}
	return b
}
