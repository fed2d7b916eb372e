package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/loop"
	"github.com/flipzero/flipzero/runfolder"
)

func runPretrain(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("pretrain", "pretrain --game G --records FILE… --run R [--minutes M | --steps N | --epochs E]\n"+
		"       pretrain --from-run OLD --config NEW.yaml --run NEW [--minutes M | --steps N | --epochs E]\n\n"+
		"Trains a network before any self-play and writes it as generation 0 of a new run\n"+
		"(and, with --out, as a model file), from which flipzero loop --run R goes on.\n\n"+
		"From game records: WTHOR files (.wtb), boardspace.net SGF files (.sgf), flipzero's\n"+
		"record lines (what convert prints, .txt), folders of them and run folders (their\n"+
		"games/). The policy learns the move played (smoothed), the value the game's result,\n"+
		"the ownership and score heads the final board; positions under every symmetry. A\n"+
		"share of the records (--validation-fraction, by year or by file) or the records of\n"+
		"--validation are held out and the network measured on them (top-1, top-3, value error).\n"+
		"Damaged files, records of another game, illegal moves and records without a result\n"+
		"are named, counted and left out.\n\n"+
		"From another run (--from-run): a new architecture (--config) trained on that run's\n"+
		"replay window, whose shards become the new run's first window: the run goes on\n"+
		"with a grown network. Pretraining's time counts on the new run's clock.", io.out)
	gameName := fs.String("game", "", "game of the records, for its shipped config configs/G.yaml when --config is not given: "+strings.Join(games.Names(), ", "))
	config := fs.String("config", "", "config whose network and optimizer are trained (default: configs/G.yaml; with --from-run, that run's)")
	var recs, held fileList
	fs.Var(&recs, "records", "record files, folders or run folders to train on (several may follow the flag)")
	fs.Var(&held, "validation", "records held out to measure by, instead of a share of --records")
	fraction := fs.Float64("validation-fraction", 0.05, "share of --records held out, by year (WTHOR) or by file (0: none)")
	smoothing := fs.Float64("smoothing", 0.1, "policy target's share of the moves not played")
	fromRun := fs.String("from-run", "", "train on this run's replay window instead of records")
	runDir := fs.String("run", "", "new run folder whose generation 0 the network becomes")
	out := fs.String("out", "", "also (or, without --run, only) write the network as a model file")
	minutes := fs.Float64("minutes", 0, "stop after this many minutes")
	steps := fs.Int("steps", 0, "stop after this many training steps")
	epochs := fs.Float64("epochs", 0, "stop after this many passes over the positions (default 1 when no limit is given)")
	positions := fs.Int("validation-positions", 5000, "held-out positions measured")
	seed := addSeedFlag(fs, "random seed")
	quiet := fs.Bool("quiet", false, "no progress bars")
	dev := addDeviceFlag(fs)
	if err := parseFlags(fs, expandFileLists(args, "records", "validation")); err != nil {
		return err
	}
	switch {
	case *runDir == "" && *out == "":
		return usagef("--run or --out is required: where the network goes")
	case len(recs) == 0 && *fromRun == "":
		return usagef("--records or --from-run is required: what to train on")
	case len(recs) > 0 && *fromRun != "":
		return usagef("--records and --from-run: give one")
	case *minutes < 0 || *steps < 0 || *epochs < 0:
		return usagef("--minutes, --steps and --epochs must not be negative")
	case !(*fraction >= 0 && *fraction < 1):
		return usagef("--validation-fraction must be in [0, 1), got %v", *fraction)
	case !(*smoothing >= 0 && *smoothing < 1):
		return usagef("--smoothing must be in [0, 1), got %v", *smoothing)
	case *positions < 1:
		return usagef("--validation-positions must be at least 1, got %d", *positions)
	}
	if *runDir != "" {
		if err := checkRun(*runDir, true); err != nil {
			return err
		}
	}
	cfg, err := pretrainConfigPath(*config, *gameName, *runDir, *fromRun)
	if err != nil {
		return err
	}
	if *minutes == 0 && *steps == 0 && *epochs == 0 {
		*epochs = 1
	}
	backend, say, err := dev.open()
	if err != nil {
		return err
	}
	opts := loop.PretrainOptions{
		ConfigPath: cfg, RunDir: *runDir, Out: *out,
		Records: recs, Validation: held, ValidationFraction: *fraction, Smoothing: *smoothing,
		FromRun: *fromRun, MaxDuration: time.Duration(*minutes * float64(time.Minute)), MaxSteps: *steps, Epochs: *epochs,
		ValidationPositions: *positions,
		Backend:             backend, Log: io.out, Progress: io.err, Seed: seed(),
		Started: func() { say(io.err) },
	}
	if *quiet {
		opts.Progress = nil
	}
	err = loop.Pretrain(ctx, opts)
	var in loop.InputError
	if errors.As(err, &in) {
		return usageError{err}
	}
	if err == nil && *runDir != "" {
		// Said here, not by loop.Pretrain: a config's start section
		// pretrains inside the loop, which goes on by itself.
		fmt.Fprintf(io.out, "flipzero loop --run %s goes on from it\n", *runDir)
	}
	return err
}

// pretrainConfigPath is the config to pretrain with: --config, else the
// run's own or the old run's (loop.Pretrain reads those), else the
// game's shipped config.
func pretrainConfigPath(config, gameName, runDir, fromRun string) (string, error) {
	if config != "" {
		if gameName != "" {
			cfg, err := loop.LoadConfig(config, games.Builtin())
			if err != nil {
				return "", err
			}
			if cfg.Game != gameName {
				return "", usagef("--game %s, but the config %s is for %s", gameName, config, cfg.Game)
			}
		}
		return config, nil
	}
	if fromRun != "" || runDir != "" && runfolder.Folder(runDir).Exists() {
		return "", nil
	}
	if gameName == "" {
		return "", usagef("--game or --config is required: the network to train")
	}
	if _, err := gameFlag(gameName); err != nil {
		return "", err
	}
	shipped := filepath.Join("configs", gameName+".yaml")
	if _, err := os.Stat(shipped); err != nil {
		return "", usagef("no config: %s is not here (run from flipzero's folder, or give --config)", shipped)
	}
	return shipped, nil
}

// fileList is a flag that takes several files: repeated, or, as
// expandFileLists arranges, followed by them.
type fileList []string

func (l *fileList) String() string { return strings.Join(*l, " ") }

func (l *fileList) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// expandFileLists rewrites "--records a b c --run R" as "--records a
// --records b --records c --run R" for each named list flag, so that a
// shell's glob can follow the flag with other flags after it: the flag
// package stops at the first argument that is not a flag.
func expandFileLists(args []string, names ...string) []string {
	list := map[string]bool{}
	for _, n := range names {
		list["-"+n], list["--"+n] = true, true
	}
	var out []string
	for i := 0; i < len(args); i++ {
		name := args[i]
		out = append(out, name)
		if !list[name] || i+1 >= len(args) {
			continue
		}
		i++
		out = append(out, args[i])
		for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			i++
			out = append(out, name, args[i])
		}
	}
	return out
}
