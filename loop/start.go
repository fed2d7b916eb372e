package loop

import (
	"context"
	"fmt"
	"time"

	"github.com/flipzero/flipzero/runfolder"
)

// StartConfig has a new run begin from game records instead of from
// nothing: before its first generation of self-play the loop pretrains
// generation 0 on them, as flipzero pretrain does, so that one command
// runs a records start. At two hours on two cores such a start beat the
// start from nothing in both Othello (WTHOR) and YINSH (boardspace.net)
// (docs/records.md). Its time counts on the run's clock and against the
// loop's --minutes. Off unless Records is set; a run that already has a
// generation 0 (one resumed, or one pretrained by hand) ignores it.
type StartConfig struct {
	// Records are record files, folders or run folders to pretrain on
	// (records.Load); a relative path is from the folder the loop runs
	// in.
	Records []string `yaml:"records"`
	// Validation are records held out to measure pretraining by; without
	// them ValidationFraction of Records is held out, by year (WTHOR) or
	// by file.
	Validation         []string `yaml:"validation"`
	ValidationFraction float64  `yaml:"validation_fraction"`
	// Epochs and Minutes stop pretraining at the first reached (0: no
	// limit from it; with neither set, one epoch). Boardspace's 801 YINSH
	// games took three epochs in six minutes on two cores; all of WTHOR is
	// a seventh of an epoch in twenty.
	Epochs  float64 `yaml:"epochs"`
	Minutes float64 `yaml:"minutes"`
	// Smoothing is the policy target's share of the moves not played
	// (default 0.1: the move played is a strong hint, not the only move).
	Smoothing float64 `yaml:"smoothing"`
}

// DefaultStartConfig is off (no records) and, once records are given,
// holds 5% of them out and smooths the policy target by 0.1, as flipzero
// pretrain does.
func DefaultStartConfig() StartConfig {
	return StartConfig{ValidationFraction: 0.05, Smoothing: 0.1}
}

// Validate names the first setting out of range by its key.
func (s StartConfig) Validate() error {
	switch {
	case !(s.Epochs >= 0 && s.Epochs <= 1000):
		return fmt.Errorf("epochs: %v, must be in [0, 1000]", s.Epochs)
	case !(s.Minutes >= 0 && s.Minutes <= 100_000):
		return fmt.Errorf("minutes: %v, must be in [0, 100000]", s.Minutes)
	case !(s.ValidationFraction >= 0 && s.ValidationFraction < 1):
		return fmt.Errorf("validation_fraction: %v, must be in [0, 1)", s.ValidationFraction)
	case !(s.Smoothing >= 0 && s.Smoothing < 1):
		return fmt.Errorf("smoothing: %v, must be in [0, 1)", s.Smoothing)
	case len(s.Records) == 0 && len(s.Validation) > 0:
		return fmt.Errorf("validation: records held out, but no records to pretrain on")
	}
	for i, r := range s.Records {
		if r == "" {
			return fmt.Errorf("records[%d]: an empty path", i)
		}
	}
	for i, r := range s.Validation {
		if r == "" {
			return fmt.Errorf("validation[%d]: an empty path", i)
		}
	}
	return nil
}

// startFromRecords pretrains a new run's generation 0 when its config
// has a start section, and says how long that took; a run with a
// generation already, or without start records, takes no time. The
// pretraining stops at the loop's own time limit too.
func startFromRecords(ctx context.Context, run runfolder.Folder, cfg Config, opts LoopOptions) (time.Duration, error) {
	s := cfg.Start
	if len(s.Records) == 0 {
		return 0, nil
	}
	if gens, err := run.Generations(); err != nil || len(gens) > 0 {
		return 0, err
	}
	begun := time.Now()
	limit := time.Duration(s.Minutes * float64(time.Minute))
	if opts.Until > 0 && (limit == 0 || opts.Until < limit) {
		limit = opts.Until
	}
	epochs := s.Epochs
	if epochs == 0 && s.Minutes == 0 {
		epochs = 1
	}
	fraction := s.ValidationFraction
	if len(s.Validation) > 0 {
		fraction = 0
	}
	if opts.Log != nil {
		fmt.Fprintf(opts.Log, "run %s starts from records (the config's start section)\n", run)
	}
	err := Pretrain(ctx, PretrainOptions{
		RunDir: string(run), Records: s.Records, Validation: s.Validation, ValidationFraction: fraction,
		Smoothing: s.Smoothing, MaxDuration: limit, Epochs: epochs, ScheduleLimit: opts.Until,
		Games: opts.Games, Backend: opts.Backend, Log: opts.Log, Progress: opts.Progress, Seed: opts.Seed,
		Started: opts.Started,
	})
	if err != nil {
		return 0, fmt.Errorf("start: %w", err)
	}
	return time.Since(begun), nil
}
