package loop

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/records"
)

// EvalConfig has the loop measure its network on games played by people
// (or by another run) that it never trains on: how often the policy's
// first choice, or one of its first three, is the move played, and the
// value's error against the results (records.Agreement), every Every
// generations, into the metrics and onto the run's page. The losses say
// how well the network fits its own games; this says how its play
// compares with a fixed, outside standard, one that does not move as the
// run does. Off unless Records is set.
type EvalConfig struct {
	// Records are record files, folders or run folders, read as flipzero
	// pretrain reads them (records.Load); a relative path is from the
	// folder the loop runs in. For Othello, WTHOR's newest year
	// (WTH_2019.wtb), kept out of any pretraining.
	Records []string `yaml:"records"`
	// Every is how many generations apart the measurements are (default
	// 10; generation 0, a pretrained network, is measured too).
	Every int `yaml:"every"`
	// Positions is how many of the records' decisions are measured, the
	// same ones each time (default 5,000: a second or two on two cores,
	// and top-1 within about ±1.5%).
	Positions int `yaml:"positions"`
}

// Agreement is a network's agreement with held-out records, as a
// generation's metrics hold it.
type Agreement = records.Agreement

// DefaultEvalConfig measures every 10 generations, 5,000 positions, once
// records are given.
func DefaultEvalConfig() EvalConfig { return EvalConfig{Every: 10, Positions: 5000} }

// Validate names the first setting out of range by its key.
func (e EvalConfig) Validate() error {
	switch {
	case e.Every < 1 || e.Every > 1_000_000:
		return fmt.Errorf("every: %d, must be 1..1000000 generations", e.Every)
	case e.Positions < 1 || e.Positions > 10_000_000:
		return fmt.Errorf("positions: %d, must be 1..10000000", e.Positions)
	}
	for i, r := range e.Records {
		if r == "" {
			return fmt.Errorf("records[%d]: an empty path", i)
		}
	}
	return nil
}

// evalSeed fixes the positions measured, so that every generation, and
// every run measured on the same records, is measured on the same ones.
const evalSeed = 1

// heldOut is the records a run is measured on, read once.
type heldOut struct {
	cfg   EvalConfig
	game  env.Game
	games []records.Game
}

// loadHeldOut reads the config's held-out records, nil when there are
// none. A path that does not exist is the config's error; damaged files
// and records are reported and left out.
func loadHeldOut(ctx context.Context, cfg Config, g env.Game, logf func(string, ...any)) (*heldOut, error) {
	if len(cfg.Eval.Records) == 0 {
		return nil, nil
	}
	set, err := records.Load(ctx, g, cfg.Eval.Records, records.Options{Unfinished: true,
		Report: func(p string) { logf("eval.records: %s", p) }})
	if err != nil {
		return nil, ConfigError{fmt.Errorf("eval.records: %w", err)}
	}
	if set.Decisions() == 0 {
		return nil, ConfigError{fmt.Errorf("eval.records: no positions to measure in %v (%s)", cfg.Eval.Records, set.Summary())}
	}
	logf("measuring every %d generations on %d of the positions of %s", cfg.Eval.Every, min(cfg.Eval.Positions, set.Decisions()), set.Summary())
	return &heldOut{cfg: cfg.Eval, game: g, games: set.Games}, nil
}

// due says whether generation gen is measured.
func (h *heldOut) due(gen int) bool { return h != nil && gen%h.cfg.Every == 0 }

// measure evaluates net on the held-out positions with backend.
func (h *heldOut) measure(ctx context.Context, backend nn.Backend, net *nn.Folded) (*records.Agreement, error) {
	const batch = 256
	eval, err := nn.NewEvaluator(backend, net, batch)
	if err != nil {
		return nil, err
	}
	defer eval.Close()
	a, err := records.Measure(ctx, eval, h.game, h.games, records.MeasureOptions{MaxPositions: h.cfg.Positions, Batch: batch, Seed: evalSeed})
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// measureGeneration puts the network's agreement into a due generation's
// metrics. A failure to measure is logged, not the run's end: the
// measurement is a view of the run, like its page.
func (h *heldOut) measureGeneration(ctx context.Context, m *GenerationMetrics, backend nn.Backend, trainer nn.Training, average *nn.Network, logf func(string, ...any)) {
	if !h.due(m.Generation) {
		return
	}
	err := trainer.Sync()
	if err == nil {
		start := time.Now()
		m.Agreement, err = h.measure(ctx, backend, playing(trainer, average).Fold())
		m.EvalSeconds = time.Since(start).Seconds()
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		logf("generation %d: measuring on eval.records: %v", m.Generation, err)
	}
}

// agreementText is a generation's agreement for its log line.
func agreementText(m GenerationMetrics) string {
	if m.Agreement == nil {
		return ""
	}
	return ", held out " + m.Agreement.Short()
}
