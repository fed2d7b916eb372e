package loop

import (
	"context"

	"github.com/flipzero/flipzero/runfolder"

	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/flipzero/flipzero/arena"
	"github.com/flipzero/flipzero/data"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/internal/atomicfile"
	"github.com/flipzero/flipzero/internal/progress"
	"github.com/flipzero/flipzero/nn"
)

// LoopOptions says which run to start or resume and when to stop.
type LoopOptions struct {
	// ConfigPath is the config of a new run. A run folder that has its
	// own config.yaml resumes with that one.
	ConfigPath string
	RunDir     string
	// Games resolves the config's game (nil: the built-in games).
	Games Games
	// Backend computes the network; nn/device.Open chooses it by name.
	Backend nn.Backend
	// MaxGenerations stops the run after this many new generations;
	// Until once the run's clock (its metrics' run_seconds: the time of
	// every invocation so far, pretraining's included) reaches this, so
	// that the same limit given again takes a stopped run to the end it
	// was started for, where a schedule's minutes expect it (0: no
	// limit).
	MaxGenerations int
	Until          time.Duration
	// Log receives one summary line per generation and notices; Progress
	// receives the progress of each phase: bars on a terminal, plain lines
	// elsewhere (nil: none).
	Log      io.Writer
	Progress io.Writer
	Seed     uint64
	// Remote, when set, is where each generation's games come from instead
	// of this process's self-play: workers elsewhere play them with the
	// network the loop publishes (the cluster package).
	Remote Remote
	// Started, when set, is called once the run's config and checkpoint
	// are read, before its first line: a run refused for its input says
	// only why.
	Started func()
}

func (o *LoopOptions) defaults() {
	if o.Games == nil {
		o.Games = games.Builtin()
	}
}

// errNoBackend is a caller's mistake: every place that computes a
// network is told which backend computes it.
var errNoBackend = errors.New("no compute backend given (nn/device.Open chooses one by name)")

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
	opts.defaults()
	if opts.Backend == nil {
		return fmt.Errorf("loop: %w", errNoBackend)
	}
	run := runfolder.Folder(opts.RunDir)
	cfg, err := prepareRun(run, opts)
	if err != nil {
		return err
	}
	var fitted string // the schedule scaled to the run's time limit
	cfg.Train, fitted = cfg.Train.FittedTo(opts.Until)
	g, err := opts.Games.ByName(cfg.Game)
	if err != nil {
		return fmt.Errorf("config: game: %w", err)
	}
	took, err := startFromRecords(ctx, run, cfg, opts)
	switch {
	case (err != nil || took > 0) && ctx.Err() != nil:
		return nil // a stopped pretraining keeps what it trained as generation 0
	case err != nil:
		return err
	case took > 0:
		opts.Started = nil // the pretraining said it; its time is on the run's clock
	}
	trainer, average, gen, err := loadNewestCheckpoint(run, g, cfg, opts, logf)
	if err != nil {
		return err
	}
	replay, err := data.LoadReplay(run.Data(), g, cfg.Window, func(err error) {
		logf("skipping damaged training data: %v", err)
	})
	if err != nil {
		return err
	}
	heldOut, err := loadHeldOut(ctx, cfg, g, logf)
	if err != nil {
		logf("%v; the run goes on without measuring on them", err)
	}
	if opts.Started != nil {
		opts.Started()
	}
	logf("run %s: %s, %v on %s, generation %d, step %d, %d samples in the window of %d",
		opts.RunDir, g.Name(), trainer.Network().Config(), opts.Backend.Name(), gen, trainer.Steps(), replay.Len(), replay.Total())
	if fitted != "" {
		logf("%s", fitted)
	}

	// The network that plays self-play: the newest, unless gating kept an
	// older one.
	// The last generation's metrics, read once: the network gating kept,
	// the run's clock, how long its games are.
	var last *GenerationMetrics
	ms, _ := ReadMetrics(run.Metrics())
	if len(ms) > 0 {
		last = &ms[len(ms)-1]
	}
	checks := checkLog{history: ms}
	if last != nil && last.Generation < gen {
		// The checkpoint is written before the generation's arena and
		// metrics line: a stop in between keeps its training, not its line.
		logf("generation %d was stopped after its checkpoint, before its metrics line; its line is missing", gen)
	}
	// A loop killed while playing a generation's games left its status
	// at self-play; they are played again, and a person asks where the
	// moves went.
	if st, err := ReadStatus(run.Status()); err == nil && st.Generation == gen+1 && st.Phase == PhaseSelfPlay && st.Unit == "moves" && st.Done > 0 {
		if _, saved := savedGames(run, g, gen+1); !saved {
			logf("the run was stopped during generation %d%s", gen+1, lostMoves(gen+1, st.Done, "about "))
		}
	}
	best := gen
	if cfg.Arena.Gate > 0 && last != nil && last.Best < gen {
		best = last.Best
	}
	player, err := selfPlayNetwork(run, g, trainer, average, gen, best)
	if err != nil {
		return err
	}

	// The games come from the workers of other machines, or from this
	// machine's self-play, one more source of the same kind. Its
	// evaluators live as long as the run: a GPU's batching server keeps
	// the algorithms and graphs it prepared for each batch size and takes
	// each new network's weights in place.
	source := opts.Remote
	var local *localSelfPlay
	if source == nil {
		evals, err := nn.NewEvaluators(opts.Backend, player, cfg.SelfPlay.WorkerCount(), cfg.SelfPlay.BatchSize)
		if err != nil {
			return err
		}
		if err := evals.SetCache(cfg.SelfPlay.EvalCache); err != nil {
			evals.Close()
			return err
		}
		playCtx, stopPlaying := context.WithCancel(ctx)
		local = startLocalSelfPlay(playCtx, g, cfg, evals, run, opts.Seed, gen)
		defer func() {
			stopPlaying()
			<-local.stopped
			evals.Close()
		}()
		source = local
	}

	report := progress.New(opts.Progress)
	status := newStatusFile(run.Status())
	beatCtx, stopBeat := context.WithCancel(ctx)
	beating := make(chan struct{})
	go func() { status.heartbeat(beatCtx); close(beating) }()
	defer func() {
		stopBeat()
		<-beating
		status.phase(status.s.Generation, PhaseStopped, 0, "")
	}()
	rng := rand.New(rand.NewPCG(opts.Seed, uint64(gen)))
	runStart := time.Now()
	// The run's clock (its metrics' run_seconds, a schedule's minutes)
	// goes on from where the last invocation stopped.
	runBegan := runStart
	if last != nil {
		runBegan = runStart.Add(-time.Duration(last.RunSeconds * float64(time.Second)))
	}
	for done := 0; opts.MaxGenerations == 0 || done < opts.MaxGenerations; done++ {
		if clock := time.Since(runBegan); opts.Until > 0 && clock >= opts.Until {
			logf("time limit reached: the run's clock is at %.1f minutes, the limit %.1f (it counts the run's whole time, every stop and resume)", clock.Minutes(), opts.Until.Minutes())
			break
		}
		if err := ctx.Err(); err != nil {
			break
		}
		gen++
		m, err := runGeneration(ctx, generation{
			number: gen, cfg: cfg, game: g, trainer: trainer, average: average, replay: replay, player: player,
			run: run, backend: opts.Backend, rng: rng, progress: report, status: status,
			source: source, playerGen: best,
			runBegan: runBegan, movesPerGame: movesPerGame(g, last),
		})
		if err != nil {
			if ctx.Err() != nil {
				lost := ""
				if local != nil {
					lost = local.lostAtStop(gen, status.current().Phase)
				}
				logf("stopped during generation %d%s; the run resumes from generation %d", gen, lost, gen-1)
				return nil
			}
			return fmt.Errorf("generation %d: %w", gen, err)
		}
		m.Best = gen
		if cfg.Arena.Games > 0 {
			if err := trainer.Sync(); err != nil {
				return err
			}
			arenaStart := time.Now()
			status.phase(gen, PhaseArena, arenaGames(g, cfg.Arena), "games")
			promote, err := measure(ctx, cfg, g, opts.Backend, run, gen, best, playing(trainer, average).Fold(), player, &m, report, status)
			m.ArenaSeconds = time.Since(arenaStart).Seconds()
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
			if err := trainer.Sync(); err != nil {
				return err
			}
			best, player = gen, playing(trainer, average).Fold()
		}
		heldOut.measureGeneration(ctx, &m, opts.Backend, trainer, average, logf)
		m.RunSeconds = time.Since(runBegan).Seconds()
		if err := AppendMetrics(run.Metrics(), m); err != nil {
			return err
		}
		last = &m
		aux := ""
		if m.OwnershipLoss > 0 || m.ScoreLoss > 0 {
			aux = fmt.Sprintf(" ownership %.3f score %.3f", m.OwnershipLoss, m.ScoreLoss)
		}
		if m.SoftPolicyLoss > 0 {
			aux += fmt.Sprintf(" soft policy %.3f", m.SoftPolicyLoss)
		}
		aux += agreementText(m)
		played := fmt.Sprintf("%d games, %d positions (%.0f/s), %.0f evals/s", m.Games, m.Positions, m.PositionsS, m.EvalsS) + cacheText(m.CacheShare)
		if m.PolicySurprise != nil {
			played += fmt.Sprintf(", surprise %.3f", *m.PolicySurprise)
		}
		if m.Reused {
			played = fmt.Sprintf("%d games, %d positions, saved before the last stop and not played again", m.Games, m.Positions)
		}
		logf("gen %d: %s, %d steps (step %d) policy %.3f value %.3f%s%s, %.0f s",
			m.Generation, played, m.Steps, m.Step, m.PolicyLoss, m.ValueLoss, aux, versusBaseline(m, cfg.Arena.Playouts), m.Seconds)
		for _, c := range checks.add(m) {
			logf("check: %s", c.Text)
		}
	}
	return nil
}

// versusBaseline is the generation's result against the arena's
// baseline, for its line: ", vs perfect W-D-L 0-20-0: no loss to perfect
// play in 20 games"; with the policy's match, the search's result at
// playouts first, then the policy's, which the verdict is about: ", vs
// perfect W-D-L 0-20-0 with 32 playouts, 0-14-6 by the policy alone".
func versusBaseline(m GenerationMetrics, playouts int) string {
	r := m.BaselineResult
	if r == nil {
		return ""
	}
	if p := m.PolicyResult; p != nil {
		return fmt.Sprintf(", vs %s %s with %d playouts, %s by the policy alone%s",
			m.Baseline, scoreOf(*r), playouts, scoreOf(*p).Counts(), noLossToPerfectPlay(m.Baseline, *p))
	}
	return fmt.Sprintf(", vs %s %s%s", m.Baseline, scoreOf(*r), noLossToPerfectPlay(m.Baseline, *r))
}

// scoreOf is a result as the metrics keep it (wins, draws, losses) as a
// score.
func scoreOf(r [3]int) arena.Score { return arena.Score{Wins: r[0], Draws: r[1], Losses: r[2]} }

// noLossToPerfectPlay is the verdict on a result against the perfect
// player, when it has no loss: the pipeline's proof in tic-tac-toe.
func noLossToPerfectPlay(baseline string, r [3]int) string {
	if baseline != "perfect" || r[2] > 0 {
		return ""
	}
	return fmt.Sprintf(": no loss to perfect play in %d games", r[0]+r[1]+r[2])
}

// lostAtStop says what a stop during generation gen lost of self-play:
// the moves of its own games, stopped while it played them, or of the
// next generation's, played ahead while it trained or was measured.
// Games an earlier invocation saved are not lost.
func (s *localSelfPlay) lostAtStop(gen int, phase string) string {
	if phase == PhaseSelfPlay {
		if s.reuses(gen) {
			return ""
		}
		return lostMoves(gen, s.progress(gen).moves, "")
	}
	if s.ahead == 0 || s.reuses(gen+1) {
		return ""
	}
	if moves := s.progress(gen + 1).moves; moves > 0 {
		return fmt.Sprintf(", while generation %d's games were played ahead; their %d moves are lost: a generation's games are saved only together, once all have ended",
			gen+1, moves)
	}
	return ""
}

// lostMoves says that generation gen's self-play stopped after
// (about) moves, and why they are played again: a generation's games
// are saved together, once all have ended, so that a shard is whole.
func lostMoves(gen, moves int, about string) string {
	if moves <= 0 {
		return "'s self-play, before its first move"
	}
	return fmt.Sprintf("'s self-play after %s%d moves, which are lost: a generation's games are saved only together, once all have ended, so generation %d's are played again from the start",
		about, moves, gen)
}

// movesPerGame is what a game of the run is expected to make: the last
// generation's mean, or the board's cells.
func movesPerGame(g env.Game, last *GenerationMetrics) int {
	if last != nil && last.Games > 0 && last.Moves > 0 {
		return max(1, last.Moves/last.Games)
	}
	_, h, w := g.EncodedShape()
	return h * w
}

// prepareRun creates the run folder for a new run, or reads the config of
// the run being resumed.
func prepareRun(run runfolder.Folder, opts LoopOptions) (Config, error) {
	if run.Exists() {
		run.RemoveStaleTemporaries()
		own, err := LoadConfig(run.Config(), opts.Games)
		if err != nil || opts.ConfigPath == "" {
			return own, err
		}
		// A config given for an existing run must be the run's own: one
		// silently ignored would mislead, and one applied would change a
		// run's game or network under its checkpoints.
		given, err := LoadConfig(opts.ConfigPath, opts.Games)
		if err != nil {
			return Config{}, err
		}
		if key, ours, theirs, differs := FirstDifference(own, given); differs {
			return Config{}, ConfigError{fmt.Errorf("%s differs from the config of run %s at %s (%s there, %s given): a run resumes with its own config; leave --config out to resume, or give a new run folder",
				opts.ConfigPath, run, key, ours, theirs)}
		}
		return own, nil
	}
	if opts.ConfigPath == "" {
		return Config{}, fmt.Errorf("%s is not a run folder (no %s): give a config to start a run", run, filepath.Base(run.Config()))
	}
	cfg, err := LoadConfig(opts.ConfigPath, opts.Games)
	if err != nil {
		return Config{}, err
	}
	raw, err := os.ReadFile(opts.ConfigPath)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	if err := run.Create(); err != nil {
		return Config{}, err
	}
	if err := atomicfile.WriteBytes(run.Config(), raw); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// loadNewestCheckpoint resumes from the newest readable checkpoint, or
// starts a new network and saves it as generation 0. With weight
// averaging on it returns the average too (nil when off): the
// checkpoint's, or where it has none, a copy of the trained weights.
func loadNewestCheckpoint(run runfolder.Folder, g env.Game, cfg Config, opts LoopOptions, logf func(string, ...any)) (nn.Training, *nn.Network, int, error) {
	averaging := cfg.Train.AverageHalfLife > 0
	gens, err := run.Generations()
	if err != nil {
		return nil, nil, 0, err
	}
	for i := len(gens) - 1; i >= 0; i-- {
		path := run.Checkpoint(gens[i])
		ckpt, err := nn.LoadCheckpointAs(path, g, cfg.Network)
		if errors.Is(err, nn.ErrWrongEncoding) {
			// Not damage: the whole run predates the game's encoding, and
			// starting over here would overwrite its files.
			return nil, nil, 0, fmt.Errorf("run %s was trained on an older encoding of %s, which this program no longer reads; start a new run: %w", string(run), g.Name(), err)
		}
		if err != nil {
			logf("skipping checkpoint: %v", err)
			continue
		}
		if ckpt.Training == nil {
			logf("skipping checkpoint %s: it has no optimizer state", path)
			continue
		}
		trained := ckpt.Training.Network
		var average *nn.Network
		switch {
		case averaging && trained != ckpt.Network:
			average = ckpt.Network
		case averaging:
			average = trained.Clone()
		}
		t, err := opts.Backend.NewTraining(*ckpt.Training)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("checkpoint %s: %w", path, err)
		}
		return t, average, gens[i], nil
	}
	net, err := nn.New(g, cfg.Network, opts.Seed)
	if err != nil {
		return nil, nil, 0, err
	}
	net.NeutralHeads()
	var average *nn.Network
	if averaging {
		average = net.Clone()
	}
	trainer, err := opts.Backend.NewTraining(nn.TrainingState{Network: net, Config: cfg.Train.Optimizer(0, 0)})
	if err != nil {
		return nil, nil, 0, err
	}
	if err := nn.SaveAveragedCheckpoint(run.Checkpoint(0), trainer, average, map[string]string{"generation": "0"}); err != nil {
		return nil, nil, 0, err
	}
	return trainer, average, 0, nil
}

// playing is the network that plays: the average of the trained weights
// where the run keeps one, else the trained weights (after Sync).
func playing(t nn.Training, average *nn.Network) *nn.Network {
	if average != nil {
		return average
	}
	return t.Network()
}

// updateAverage moves the average toward the trained weights after a
// generation's steps; the first steps of a run replace it, so that the
// untrained network's weights linger in no average.
func updateAverage(gen generation, steps int) error {
	if gen.average == nil || steps == 0 {
		return nil
	}
	if err := gen.trainer.Sync(); err != nil {
		return err
	}
	share := 1.0
	if gen.trainer.Steps() > int64(steps) {
		s, err := nn.AverageShare(steps, gen.cfg.Train.AverageHalfLife)
		if err != nil {
			return err
		}
		share = s
	}
	return gen.average.MoveToward(gen.trainer.Network(), share)
}

// selfPlayNetwork is the network that plays the next generation's games:
// the trainer's (or its average), or the checkpoint of generation best
// when gating kept it.
func selfPlayNetwork(run runfolder.Folder, g env.Game, trainer nn.Training, average *nn.Network, gen, best int) (*nn.Folded, error) {
	if best == gen {
		if err := trainer.Sync(); err != nil {
			return nil, err
		}
		return playing(trainer, average).Fold(), nil
	}
	ckpt, err := nn.LoadCheckpoint(run.Checkpoint(best), g)
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
	trainer  nn.Training
	average  *nn.Network // the average of the trained weights; nil: none
	player   *nn.Folded  // the network that plays the games
	replay   *data.Replay
	run      runfolder.Folder
	backend  nn.Backend
	rng      *rand.Rand
	progress *progress.Reporter
	status   *statusFile
	// source supplies the games: this machine's self-play or the
	// workers of other machines; playerGen is the generation of player,
	// which the workers are told.
	source    Remote
	playerGen int
	// runBegan is when the run would have begun had it never stopped:
	// the clock of a schedule in minutes.
	runBegan time.Time
	// movesPerGame is how many moves a game is expected to make: the
	// last generation's mean, or the board's cells before there is one.
	movesPerGame int
}

func runGeneration(ctx context.Context, gen generation) (GenerationMetrics, error) {
	start := time.Now()
	m := GenerationMetrics{Generation: gen.number, Time: start.UTC().Format(time.RFC3339)}
	newSamples, err := collect(ctx, gen, &m)
	if err != nil {
		return m, err
	}
	m.SelfPlaySeconds = time.Since(start).Seconds()
	trainStart := time.Now()
	if err := train(ctx, gen, newSamples, &m); err != nil {
		return m, err
	}
	if err := updateAverage(gen, m.Steps); err != nil {
		return m, err
	}
	meta := map[string]string{
		"generation":    strconv.Itoa(gen.number),
		"samples_total": strconv.Itoa(gen.replay.Total()),
	}
	if err := nn.SaveAveragedCheckpoint(gen.run.Checkpoint(gen.number), gen.trainer, gen.average, meta); err != nil {
		return m, err
	}
	m.TrainSeconds = time.Since(trainStart).Seconds()
	m.Samples = gen.replay.Total()
	m.Window = gen.replay.Len()
	m.Seconds = time.Since(start).Seconds()
	return m, nil
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
	bar := gen.progress.Start(steps, fmt.Sprintf("gen %d training", gen.number))
	gen.status.phase(gen.number, PhaseTraining, steps, "steps")
	defer bar.Close()
	start := time.Now()
	var policySum, valueSum, ownershipSum, scoreSum, softSum float64
	for i := 0; i < steps; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		lr := tc.LearningRateAt(int(gen.trainer.Steps()), time.Since(gen.runBegan).Minutes())
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
		ownershipSum += losses.Ownership
		scoreSum += losses.Score
		softSum += losses.SoftPolicy
		m.LR = lr
		bar.Add(1)
		gen.status.progress(i + 1)
	}
	m.Steps = steps
	m.Step = int(gen.trainer.Steps())
	m.PolicyLoss = policySum / float64(steps)
	m.ValueLoss = valueSum / float64(steps)
	m.OwnershipLoss = ownershipSum / float64(steps)
	m.ScoreLoss = scoreSum / float64(steps)
	m.SoftPolicyLoss = softSum / float64(steps)
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
	cells   int
	scratch data.Sample
	batch   nn.Batch
}

func newBatchBuilder(g env.Game, size int) *batchBuilder {
	p, h, w := g.EncodedShape()
	a := g.ActionSpace()
	return &batchBuilder{
		aug: data.NewAugmenter(g), size: size, actions: a, planes: p * h * w, cells: h * w,
		batch: nn.Batch{
			Inputs:    make([]float32, size*p*h*w),
			Policy:    make([]float32, size*a),
			Legal:     make([]float32, size*a),
			Value:     make([]float32, size*3),
			Weights:   make([]float32, size),
			Ownership: make([]float32, size*h*w),
			Margin:    make([]float32, size),
			Aux:       make([]float32, size),
		},
	}
}

func (bb *batchBuilder) fill(replay sampleSource, rng *rand.Rand) nn.Batch {
	b := bb.batch
	clear(b.Policy)
	clear(b.Legal)
	for i := 0; i < bb.size; i++ {
		src := replay.Sample(rng)
		s := &bb.scratch
		bb.aug.Transform(s, src, rng.IntN(bb.aug.Symmetries()))
		copy(b.Inputs[i*bb.planes:(i+1)*bb.planes], s.Planes)
		for k, a := range s.Legal {
			b.Policy[i*bb.actions+int(a)] = s.Policy[k]
			b.Legal[i*bb.actions+int(a)] = 1
		}
		b.Value[i*3], b.Value[i*3+1], b.Value[i*3+2] = nn.WDLTarget(s.Outcome)
		b.Weights[i] = s.Weight
		owned := b.Ownership[i*bb.cells : (i+1)*bb.cells]
		b.Aux[i], b.Margin[i] = 0, 0
		clear(owned)
		if s.HasOwnership() {
			b.Aux[i], b.Margin[i] = 1, s.Margin
			for c, o := range s.Ownership {
				owned[c] = float32(o)
			}
		}
	}
	return b
}
