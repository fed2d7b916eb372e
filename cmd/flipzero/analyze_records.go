package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/flipzero/flipzero/engine"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/records"
)

// wantsRecords says whether analyze's arguments ask for the agreement
// with records rather than a position's search.
func wantsRecords(args []string) bool {
	for _, a := range args {
		if a == "--records" || a == "-records" || strings.HasPrefix(a, "--records=") || strings.HasPrefix(a, "-records=") {
			return true
		}
	}
	return false
}

// runAnalyzeRecords measures a network's agreement with the moves and
// results of game records.
func runAnalyzeRecords(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("analyze", "analyze --records FILE… --model M [--positions N]\n\n"+
		"Measures the network's agreement with games played: how often the move played is\n"+
		"its policy's first choice (top-1) or among its first three (top-3), and the mean\n"+
		"squared error of its value against each game's result, over the records' positions,\n"+
		"each with a 95% interval from resampling whole games. Use records the network never\n"+
		"trained on. Records are WTHOR (.wtb), boardspace SGF (.sgf), flipzero's record lines\n"+
		"(.txt), folders of them and run folders; damaged files, records of another game and\n"+
		"illegal moves are named, counted and left out.", io.out)
	var recs fileList
	fs.Var(&recs, "records", "record files, folders or run folders (several may follow the flag)")
	model := fs.String("model", "", "model or checkpoint file whose network is measured")
	positions := fs.Int("positions", 0, "measure this many positions drawn at random (0: all)")
	seed := fs.Uint64("seed", 1, "seed of the positions drawn and of the intervals' resampling")
	dev := addDeviceFlag(fs)
	if err := parseFlags(fs, expandFileLists(args, "records")); err != nil {
		return err
	}
	switch {
	case len(recs) == 0:
		return usagef("--records is required")
	case *model == "":
		return usagef("--model is required: the network to measure")
	case *positions < 0:
		return usagef("--positions must not be negative, got %d", *positions)
	}
	ckpt, g, err := engine.LoadModel(*model, nil)
	if err != nil {
		return usageError{err}
	}
	set, err := records.Load(ctx, g, recs, records.Options{Unfinished: true,
		Report: func(p string) { fmt.Fprintf(io.err, "flipzero analyze: %s\n", p) }})
	if err != nil {
		return usageError{err}
	}
	if set.Decisions() == 0 {
		return usagef("no positions of %s to measure in the records (%s)", g.Name(), set.Summary())
	}
	backend, say, err := dev.open()
	if err != nil {
		return err
	}
	say(io.err)
	const batch = 256
	eval, err := nn.NewEvaluator(backend, ckpt.Network.Fold(), batch)
	if err != nil {
		return err
	}
	defer eval.Close()
	a, err := records.Measure(ctx, eval, g, set.Games, records.MeasureOptions{MaxPositions: *positions, Batch: batch, Seed: *seed})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(io.out, "%d positions of %d games; records: %s\n%s", a.Positions, a.Games, set.Summary(), a)
	return err
}
