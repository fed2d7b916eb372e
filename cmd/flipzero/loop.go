package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/flipzero/flipzero/loop"
	"github.com/flipzero/flipzero/runfolder"
)

func runLoop(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("loop", "loop --config configs/G.yaml --run runs/G [--generations N] [--minutes M]\n\n"+
		"Trains by self-play: generations of self-play games, training steps and a\n"+
		"checkpoint, everything kept under the run folder. Run it again on the same\n"+
		"folder to resume (the run's own copy of the config is used then).\n"+
		"Ctrl-C stops it; nothing on disk is ever half-written. A config's start\n"+
		"section has a new run pretrain its first network on game records first.\n\n"+
		"With --nats URL (or --serve-nats ADDR, a NATS server in this process) the\n"+
		"games come from workers on other machines (flipzero worker), and from\n"+
		"--local-workers in this one.", io.out)
	config := fs.String("config", "", "config file of a new run (e.g. configs/tictactoe.yaml)")
	runDir := fs.String("run", "", "run folder: created for a new run, resumed if it exists")
	generations := fs.Int("generations", 0, "stop after this many new generations (0: no limit)")
	minutes := fs.Float64("minutes", 0, "stop starting generations once the run's clock reaches this many minutes: its whole time, every stop and resume and a pretraining included, so that the same command resumes a stopped run to the same end; a config's train.schedule_minutes scales its learning-rate drops to it (0: no limit)")
	seed := addSeedFlag(fs, "random seed")
	quiet := fs.Bool("quiet", false, "no progress bars")
	dev := addDeviceFlag(fs)
	cf := addClusterFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := cf.validate(); err != nil {
		return err
	}
	if *runDir == "" {
		return usagef("--run is required")
	}
	if *generations < 0 || *minutes < 0 {
		return usagef("--generations and --minutes must not be negative")
	}
	if err := checkRun(*runDir, true); err != nil {
		return err
	}
	if *config == "" {
		if !runfolder.Folder(*runDir).Exists() {
			return usagef("--config is required to start a new run in %s", *runDir)
		}
	}
	backend, say, err := dev.open()
	if err != nil {
		return err
	}
	opts := loop.LoopOptions{
		Backend:        backend,
		ConfigPath:     *config,
		RunDir:         *runDir,
		MaxGenerations: *generations,
		Until:          time.Duration(*minutes * float64(time.Minute)),
		Log:            io.out,
		Progress:       io.err,
		Seed:           seed(),
		Started:        func() { say(io.err) },
	}
	if *quiet {
		opts.Progress = nil
	}
	if cf.enabled() {
		remote, stop, err := startCluster(ctx, cf, *runDir, backend, io)
		if err != nil {
			return err
		}
		defer stop()
		opts.Remote = remote
	}
	return loop.Loop(ctx, opts)
}

// checkRun refuses a --run that is not a run folder, in runfolder.Check's
// words, before a command fails on some file inside it. A command that
// may start a run there, or keeps a match log in any folder, passes
// orEmpty to accept a folder that holds no run yet.
func checkRun(dir string, orEmpty bool) error {
	err := runfolder.Folder(dir).Check()
	if err == nil || orEmpty && errors.Is(err, runfolder.ErrNoRun) {
		return nil
	}
	return usageError{fmt.Errorf("--run: %w", err)}
}

func runPlot(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("plot", "plot --run DIR [--out FILE]\n\nDraws the run's loss curves (and ratings, when measured) to a PNG.", io.out)
	runDir := fs.String("run", "", "run folder")
	out := fs.String("out", "", "PNG to write (default: DIR/plot.png)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *runDir == "" {
		return usagef("--run is required")
	}
	if err := checkRun(*runDir, false); err != nil {
		return err
	}
	if *out == "" {
		*out = runfolder.Folder(*runDir).Plot()
	}
	metrics, err := loop.ReadMetrics(runfolder.Folder(*runDir).Metrics())
	if err != nil && len(metrics) == 0 {
		return usageError{err}
	}
	if err := loop.PlotMetrics(metrics, *out); err != nil {
		return err
	}
	_, err = io.out.Write([]byte("wrote " + *out + "\n"))
	return err
}
