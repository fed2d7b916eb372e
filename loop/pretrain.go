package loop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/flipzero/flipzero/data"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/internal/atomicfile"
	"github.com/flipzero/flipzero/internal/progress"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/records"
	"github.com/flipzero/flipzero/runfolder"
)

// Pretraining makes a run's generation 0 from games already played
// rather than from nothing: game records (WTHOR, boardspace.net, a run's
// games/), each decision's move played as the policy target and the
// game's result as the value's, as Leela Zero and Leela Chess Zero first
// trained on people's games; or another run's own replay window, which
// trains a new architecture (more blocks, more filters, other heads) on
// what the old one played, KataGo's way of growing its network without
// starting over. Either way the run then goes on with flipzero loop like
// any other: the same trainer, optimizer state, step count, metrics file,
// status file and page.
//
// Pretraining's wall time is the run's first minutes on its clock (the
// metrics' run_seconds, a learning-rate schedule by minute): a records
// start is judged against a start from nothing at equal time on the
// machine, and a schedule sized for a run's hours passes its drops at the
// same point of them either way.

// Pretrained is what a pretrained generation 0 learned from, in its
// metrics line.
type Pretrained struct {
	// From is "records", or "run DIR" for another run's window.
	From string `json:"from"`
	// Games and Positions are what training drew from; Skipped, the
	// records left out (damaged, another game, illegal, no result).
	Games     int `json:"games,omitempty"`
	Positions int `json:"positions"`
	Skipped   int `json:"skipped,omitempty"`
	// Epochs is how many times over the positions training went.
	Epochs float64 `json:"epochs"`
	// Validation is the network's agreement with the held-out records:
	// a split of the records by year or file, or the records given as
	// held out.
	Validation *Agreement `json:"validation,omitempty"`
}

// PretrainOptions say what to train from, what to train, where it goes
// and when to stop.
type PretrainOptions struct {
	// ConfigPath is the config whose network, optimizer and batch size
	// are trained. A run folder with a config of its own keeps it (a
	// ConfigPath given must be the same); with FromRun it defaults to
	// that run's config.
	ConfigPath string
	// RunDir is the run whose generation 0 the network becomes: a new
	// one, or one with a config and no checkpoint yet. Out, when set,
	// also (or only) writes the network as a model file.
	RunDir string
	Out    string
	// Records are record files, folders of them and run folders to train
	// on (records.Load). Validation are records held out to measure the
	// training by; without them, ValidationFraction of Records is held
	// out by year or by file (records.Split).
	Records            []string
	Validation         []string
	ValidationFraction float64
	// Smoothing is the policy target's share of the moves not played
	// (records.NewPositions).
	Smoothing float64
	// FromRun trains on that run's replay window (its shards, the
	// searches' targets) instead of records; its shards then become the
	// new run's first window, so that the new network goes on where the
	// old one was.
	FromRun string
	// MaxDuration, MaxSteps and Epochs stop training at the first one
	// reached (0: no limit from it); one at least is set. An epoch is as
	// many samples as there are positions to train on.
	MaxDuration time.Duration
	MaxSteps    int
	Epochs      float64
	// ScheduleLimit is the time limit of the run that the pretraining
	// begins, the loop's, to which a schedule's minutes are fitted
	// (TrainConfig.FittedTo; 0: the minutes as written).
	ScheduleLimit time.Duration
	// ValidationPositions is how many held-out positions are measured
	// (0: 5,000).
	ValidationPositions int

	Games   Games
	Backend nn.Backend
	// Log receives notices and a line now and then; Progress, the bar.
	Log      io.Writer
	Progress io.Writer
	Seed     uint64
	// Started, when set, is called once the input is read, before
	// training starts.
	Started func()
}

// InputError is pretraining refused for what it was given: records with
// nothing to learn, a run that already has generations. It is the
// user's to fix.
type InputError struct{ Err error }

func (e InputError) Error() string { return e.Err.Error() }
func (e InputError) Unwrap() error { return e.Err }

func inputErrorf(format string, args ...any) error {
	return InputError{fmt.Errorf(format, args...)}
}

// pretrainReportEvery is how often pretraining logs a line with the
// held-out agreement.
const pretrainReportEvery = 2 * time.Minute

// Pretrain trains a network from records or another run's window and
// writes it as generation 0 of a run, as a model file, or both.
func Pretrain(ctx context.Context, opts PretrainOptions) error {
	begun := time.Now()
	logf := func(format string, args ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, format+"\n", args...)
		}
	}
	if opts.Games == nil {
		opts.Games = games.Builtin()
	}
	if err := opts.check(); err != nil {
		return err
	}
	cfg, err := pretrainConfig(opts)
	if err != nil {
		return err
	}
	cfg.Train, _ = cfg.Train.FittedTo(opts.ScheduleLimit) // the loop that begins the run says how
	g, err := opts.Games.ByName(cfg.Game)
	if err != nil {
		return fmt.Errorf("config: game: %w", err)
	}
	src, err := loadPretrainSource(ctx, opts, cfg, g, logf)
	if err != nil {
		return err
	}
	// The config's held-out records measure a run's generations: a
	// model file alone has none.
	var eval *heldOut
	var run runfolder.Folder
	if opts.RunDir != "" {
		if eval, err = loadHeldOut(ctx, cfg, g, logf); err != nil {
			return err
		}
		run = runfolder.Folder(opts.RunDir)
		if _, err := prepareRun(run, LoopOptions{ConfigPath: opts.configPath(), Games: opts.Games}); err != nil {
			return err
		}
		if opts.FromRun != "" {
			n, err := carryWindow(runfolder.Folder(opts.FromRun), run)
			if err != nil {
				return err
			}
			logf("the window of %s (%d shard files) is the run's first window", opts.FromRun, n)
		}
	}
	if opts.Started != nil {
		opts.Started()
	}
	p := pretraining{opts: opts, cfg: cfg, game: g, src: src, eval: eval, run: run, begun: begun, logf: logf}
	return p.start(ctx)
}

// check refuses options that cannot be pretrained.
func (o *PretrainOptions) check() error {
	switch {
	case o.Backend == nil:
		return fmt.Errorf("pretrain: %w", errNoBackend)
	case o.RunDir == "" && o.Out == "":
		return inputErrorf("pretrain: nowhere to write the network: give a run folder, a model file, or both")
	case (len(o.Records) == 0) == (o.FromRun == ""):
		return inputErrorf("pretrain: give records to train on, or a run whose window to train on, not both")
	case o.MaxDuration <= 0 && o.MaxSteps <= 0 && o.Epochs <= 0:
		return inputErrorf("pretrain: no limit: give a time, a number of steps or of epochs")
	case o.MaxDuration < 0 || o.MaxSteps < 0 || o.Epochs < 0:
		return inputErrorf("pretrain: negative limits")
	case o.ConfigPath == "" && o.FromRun == "" && !(o.RunDir != "" && runfolder.Folder(o.RunDir).Exists()):
		return inputErrorf("pretrain: no config: give one for the network to train")
	}
	if o.RunDir != "" {
		run := runfolder.Folder(o.RunDir)
		if gens, err := run.Generations(); err == nil && len(gens) > 0 {
			return inputErrorf("pretrain: run %s already has generations (the newest %d): pretraining makes a run's generation 0; give a new run folder", run, gens[len(gens)-1])
		}
	}
	if o.FromRun != "" {
		if err := runfolder.Folder(o.FromRun).Check(); err != nil {
			return InputError{fmt.Errorf("pretrain: --from-run: %w", err)}
		}
		if filepath.Clean(o.FromRun) == filepath.Clean(o.RunDir) {
			return inputErrorf("pretrain: the new run must be another folder than %s, whose window it trains on", o.FromRun)
		}
	}
	return nil
}

// configPath is the config the run starts with: the one given, or the
// old run's.
func (o *PretrainOptions) configPath() string {
	if o.ConfigPath == "" && o.FromRun != "" {
		return runfolder.Folder(o.FromRun).Config()
	}
	return o.ConfigPath
}

// pretrainConfig reads the config to train with: the run's own where it
// has one, else the one given (or the old run's).
func pretrainConfig(opts PretrainOptions) (Config, error) {
	path := opts.configPath()
	if path == "" {
		path = runfolder.Folder(opts.RunDir).Config()
	}
	cfg, err := LoadConfig(path, opts.Games)
	if err != nil {
		return Config{}, err
	}
	if opts.FromRun != "" {
		old, err := LoadConfig(runfolder.Folder(opts.FromRun).Config(), opts.Games)
		if err != nil {
			return Config{}, err
		}
		if old.Game != cfg.Game {
			return Config{}, inputErrorf("pretrain: run %s plays %s, the config %s", opts.FromRun, old.Game, cfg.Game)
		}
	}
	return cfg, nil
}

// sampleSource is where a training batch's samples come from: the
// replay window, or the positions of game records.
type sampleSource interface {
	Sample(rng *rand.Rand) *data.Sample
}

// pretrainSource is what pretraining draws its batches from, and what
// it measures the network on.
type pretrainSource struct {
	samples sampleSource
	// positions is how many samples there are to draw from.
	positions int
	// samplesTotal is the run's samples so far: the old run's window
	// carried over, or 0 from records.
	samplesTotal int
	held         []records.Game
	pretrained   Pretrained
}

// loadPretrainSource reads the records (and the held-out ones), or the
// old run's window.
func loadPretrainSource(ctx context.Context, opts PretrainOptions, cfg Config, g env.Game, logf func(string, ...any)) (*pretrainSource, error) {
	var src pretrainSource
	if len(opts.Validation) > 0 {
		held, err := loadRecords(ctx, g, opts.Validation, true, "held-out records", logf)
		if err != nil {
			return nil, err
		}
		src.held = held.Games
	}
	if opts.FromRun != "" {
		old := runfolder.Folder(opts.FromRun)
		replay, err := data.LoadReplay(old.Data(), g, cfg.Window, func(err error) {
			logf("skipping damaged training data of %s: %v", old, err)
		})
		if err != nil {
			return nil, err
		}
		if replay.Len() == 0 {
			return nil, inputErrorf("pretrain: run %s has no training data in %s", old, old.Data())
		}
		logf("training on the window of %s: %d of its %d positions", old, replay.Len(), replay.Total())
		src.samples, src.positions, src.samplesTotal = replay, replay.Len(), replay.Total()
		src.pretrained = Pretrained{From: "run " + string(old), Positions: replay.Len()}
		return &src, nil
	}
	set, err := loadRecords(ctx, g, opts.Records, false, "records", logf)
	if err != nil {
		return nil, err
	}
	train := set.Games
	if len(opts.Validation) == 0 {
		var held []records.Game
		train, held = records.Split(set.Games, opts.ValidationFraction)
		src.held = held
		if len(held) > 0 {
			logf("held out of training: %s", records.Describe(held))
		}
	}
	positions, err := records.NewPositions(g, train, opts.Smoothing)
	if err != nil {
		return nil, InputError{fmt.Errorf("pretrain: %w", err)}
	}
	src.samples, src.positions = positions, positions.Len()
	src.pretrained = Pretrained{From: "records", Games: len(train), Positions: positions.Len(), Skipped: set.Skipped.Total()}
	return &src, nil
}

// loadRecords reads records, logging each file's problems and a summary
// of what was used and left out.
func loadRecords(ctx context.Context, g env.Game, paths []string, unfinished bool, what string, logf func(string, ...any)) (*records.Set, error) {
	set, err := records.Load(ctx, g, paths, records.Options{Unfinished: unfinished, Report: func(p string) { logf("%s", p) }})
	if err != nil {
		return nil, InputError{fmt.Errorf("pretrain: %w", err)}
	}
	logf("%s: %s", what, set.Summary())
	if set.Decisions() == 0 {
		return nil, inputErrorf("pretrain: no %s positions of %s to use in %v", what, g.Name(), paths)
	}
	return set, nil
}

// carryWindow links (or where it cannot, copies) the old run's shards
// into the new run's data folder, named so that they sort before the new
// run's own generations, oldest first as they were: the new run's window
// starts as the old one's was, and its total counts the old samples, so
// the window keeps its size. It returns how many were carried.
func carryWindow(old, run runfolder.Folder) (int, error) {
	paths, err := filepath.Glob(filepath.Join(old.Data(), "*.shard"))
	if err != nil {
		return 0, err
	}
	sort.Strings(paths)
	for _, p := range paths {
		dst := filepath.Join(run.Data(), runfolder.GenerationName(0)+"-from-"+filepath.Base(p))
		if _, err := os.Stat(dst); err == nil {
			continue
		}
		if os.Link(p, dst) == nil {
			continue
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return 0, fmt.Errorf("carry the window of %s: %w", old, err)
		}
		if err := atomicfile.WriteBytes(dst, raw); err != nil {
			return 0, fmt.Errorf("carry the window of %s: %w", old, err)
		}
	}
	return len(paths), nil
}

// pretraining is one pretraining under way.
type pretraining struct {
	opts  PretrainOptions
	cfg   Config
	game  env.Game
	src   *pretrainSource
	eval  *heldOut
	run   runfolder.Folder // "" when only a model file is written
	begun time.Time
	logf  func(string, ...any)
}

// stepLimit is the steps the limits allow (0: only the time limits).
func (p *pretraining) stepLimit() int {
	limit := p.opts.MaxSteps
	if p.opts.Epochs > 0 {
		epochs := int(math.Ceil(p.opts.Epochs * float64(p.src.positions) / float64(p.cfg.Train.BatchSize)))
		if limit == 0 || epochs < limit {
			limit = max(1, epochs)
		}
	}
	return limit
}

func (p *pretraining) start(ctx context.Context) error {
	net, err := nn.New(p.game, p.cfg.Network, p.opts.Seed)
	if err != nil {
		return err
	}
	net.NeutralHeads()
	trainer, err := p.opts.Backend.NewTraining(nn.TrainingState{Network: net, Config: p.cfg.Train.Optimizer(0, 0)})
	if err != nil {
		return err
	}
	var status *statusFile
	if p.run != "" {
		status = newStatusFile(p.run.Status())
		beatCtx, stopBeat := context.WithCancel(ctx)
		beating := make(chan struct{})
		go func() { status.heartbeat(beatCtx); close(beating) }()
		defer func() {
			stopBeat()
			<-beating
			status.phase(0, PhaseStopped, 0, "")
		}()
	}
	p.logf("pretraining %s %v on %s: %d positions, batches of %d, %s",
		p.game.Name(), trainer.Network().Config(), p.opts.Backend.Name(), p.src.positions, p.cfg.Train.BatchSize, p.limits())
	m, err := p.train(ctx, trainer, status)
	if err != nil {
		return err
	}
	return p.finish(ctx, trainer, m)
}

// limits says when training stops, for the log.
func (p *pretraining) limits() string {
	text := ""
	if n := p.stepLimit(); n > 0 {
		text = fmt.Sprintf("up to %d steps", n)
	}
	if d := p.opts.MaxDuration; d > 0 {
		if text != "" {
			text += " or "
		}
		text += fmt.Sprintf("%.4g minutes", d.Minutes())
	}
	return text
}

// lossAverage follows the losses as training goes: an exponential
// moving average over about the last lossHalfLife steps, so that a
// report says where the network is rather than where it began.
type lossAverage struct {
	policy, value, ownership, score, soft float64
	started                               bool
}

const lossHalfLife = 100

func (l *lossAverage) add(x nn.Losses) {
	if !l.started {
		l.policy, l.value, l.ownership, l.score, l.soft = x.Policy, x.Value, x.Ownership, x.Score, x.SoftPolicy
		l.started = true
		return
	}
	k := 1 - math.Exp2(-1.0/lossHalfLife)
	l.policy += k * (x.Policy - l.policy)
	l.value += k * (x.Value - l.value)
	l.ownership += k * (x.Ownership - l.ownership)
	l.score += k * (x.Score - l.score)
	l.soft += k * (x.SoftPolicy - l.soft)
}

// train takes the steps until a limit or ctx stops it, and returns the
// generation's metrics so far. A stop by ctx keeps what was trained; a
// stop before the first step is an error.
func (p *pretraining) train(ctx context.Context, trainer nn.Training, status *statusFile) (GenerationMetrics, error) {
	tc := p.cfg.Train
	limit := p.stepLimit()
	report := progress.New(p.opts.Progress)
	var bar *progress.Task
	if limit > 0 {
		bar = report.Start(limit, "pretraining")
	} else {
		bar = report.StartEstimate(max(1, int(p.opts.MaxDuration.Seconds())), "pretraining (seconds)")
	}
	defer bar.Close()
	if status != nil {
		status.phase(0, PhaseTraining, limit, "steps")
	}
	batch := newBatchBuilder(p.game, tc.BatchSize)
	rng := rand.New(rand.NewPCG(p.opts.Seed, 0x9e7a))
	start := time.Now()
	lastReport, lastSecond := start, 0
	var avg lossAverage
	var m GenerationMetrics
	steps := 0
	for ; limit == 0 || steps < limit; steps++ {
		if ctx.Err() != nil || p.opts.MaxDuration > 0 && time.Since(p.begun) >= p.opts.MaxDuration {
			break
		}
		lr := tc.LearningRateAt(int(trainer.Steps()), time.Since(p.begun).Minutes())
		if err := trainer.SetLearningRate(lr); err != nil {
			return m, err
		}
		losses, err := trainer.Step(batch.fill(p.src.samples, rng))
		if err != nil {
			return m, fmt.Errorf("pretrain: step %d: %w", steps+1, err)
		}
		avg.add(losses)
		m.LR = lr
		if limit > 0 {
			bar.Add(1)
		} else if s := int(time.Since(p.begun).Seconds()); s > lastSecond {
			bar.Add(s - lastSecond)
			lastSecond = s
		}
		if status != nil {
			status.progress(steps + 1)
		}
		if time.Since(lastReport) >= pretrainReportEvery {
			lastReport = time.Now()
			p.report(ctx, trainer, steps+1, avg)
		}
	}
	if steps == 0 {
		if err := ctx.Err(); err != nil {
			return m, err
		}
		return m, errors.New("pretrain: stopped before the first step")
	}
	m.Steps = steps
	m.Step = int(trainer.Steps())
	m.PolicyLoss, m.ValueLoss = avg.policy, avg.value
	m.OwnershipLoss, m.ScoreLoss, m.SoftPolicyLoss = avg.ownership, avg.score, avg.soft
	m.TrainSeconds = time.Since(start).Seconds()
	if m.TrainSeconds > 0 {
		m.TrainS = float64(steps*tc.BatchSize) / m.TrainSeconds
	}
	return m, nil
}

// report logs a line on the training so far: the losses and the held-out
// agreement.
func (p *pretraining) report(ctx context.Context, trainer nn.Training, steps int, avg lossAverage) {
	line := fmt.Sprintf("pretrain: step %d, policy %.3f value %.3f", steps, avg.policy, avg.value)
	if len(p.src.held) > 0 {
		if a, err := p.validate(ctx, trainer, nil); err == nil {
			line += ", held out " + a.Short()
		}
	}
	p.logf("%s", line)
}

// validate measures the network on the held-out records.
func (p *pretraining) validate(ctx context.Context, trainer nn.Training, average *nn.Network) (*Agreement, error) {
	if err := trainer.Sync(); err != nil {
		return nil, err
	}
	h := heldOut{cfg: EvalConfig{Every: 1, Positions: p.opts.ValidationPositions}, game: p.game, games: p.src.held}
	if h.cfg.Positions <= 0 {
		h.cfg.Positions = DefaultEvalConfig().Positions
	}
	return h.measure(ctx, p.opts.Backend, playing(trainer, average).Fold())
}

// finish measures the trained network and writes it: generation 0's
// checkpoint and metrics line, and the model file.
func (p *pretraining) finish(ctx context.Context, trainer nn.Training, m GenerationMetrics) error {
	stopped := ctx.Err() != nil
	// What was trained is written even when the run is being stopped.
	ctx = context.WithoutCancel(ctx)
	if err := trainer.Sync(); err != nil {
		return err
	}
	var average *nn.Network
	if p.cfg.Train.AverageHalfLife > 0 {
		average = trainer.Network().Clone()
	}
	pre := p.src.pretrained
	pre.Epochs = float64(m.Steps*p.cfg.Train.BatchSize) / float64(p.src.positions)
	if len(p.src.held) > 0 && !stopped {
		a, err := p.validate(ctx, trainer, average)
		if err != nil {
			return err
		}
		pre.Validation = a
		p.logf("held out: %s", a.Short())
	}
	m.Pretrained = &pre
	if p.run != "" {
		if err := p.writeGeneration(ctx, trainer, average, m, stopped); err != nil {
			return err
		}
	}
	if p.opts.Out != "" {
		meta := map[string]string{"generation": "0", "pretrained": pre.From}
		if err := nn.SaveFolded(p.opts.Out, playing(trainer, average).Fold(), trainer.Steps(), meta); err != nil {
			return err
		}
		p.logf("wrote %s", p.opts.Out)
	}
	p.logf("pretrained: %d steps (%.2f epochs of %d positions), policy %.3f value %.3f, %.0f s",
		m.Steps, pre.Epochs, pre.Positions, m.PolicyLoss, m.ValueLoss, time.Since(p.begun).Seconds())
	return nil
}

// writeGeneration writes the run's generation 0: its checkpoint, then
// its metrics line, as the loop writes a generation.
func (p *pretraining) writeGeneration(ctx context.Context, trainer nn.Training, average *nn.Network, m GenerationMetrics, stopped bool) error {
	meta := map[string]string{
		"generation":    "0",
		"samples_total": strconv.Itoa(p.src.samplesTotal),
		"pretrained":    m.Pretrained.From,
	}
	if err := nn.SaveAveragedCheckpoint(p.run.Checkpoint(0), trainer, average, meta); err != nil {
		return err
	}
	if p.eval.due(0) && !stopped {
		start := time.Now()
		a, err := p.eval.measure(ctx, p.opts.Backend, playing(trainer, average).Fold())
		if err != nil {
			return err
		}
		m.Agreement, m.EvalSeconds = a, time.Since(start).Seconds()
		p.logf("eval.records: %s", a.Short())
	}
	now := time.Now()
	m.Generation = 0
	m.Time = p.begun.UTC().Format(time.RFC3339)
	m.Seconds = now.Sub(p.begun).Seconds()
	m.RunSeconds = m.Seconds
	m.Samples = p.src.samplesTotal
	if p.opts.FromRun != "" {
		m.Window = p.src.positions
	}
	if err := AppendMetrics(p.run.Metrics(), m); err != nil {
		return err
	}
	p.logf("wrote generation 0 of %s", p.run)
	return nil
}
