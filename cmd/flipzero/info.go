package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/flipzero/flipzero/engine"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/loop"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/onnx"
	"github.com/flipzero/flipzero/runfolder"
)

func runInfo(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("info", "info FILE|RUN\n\n"+
		"Prints what a model or checkpoint file holds: game, architecture, training\n"+
		"steps and metadata. The whole file is read and its checksum checked.\n"+
		"Given a run folder, sums up its metrics: how far and how fast it went,\n"+
		"what its network learned, and the signs of a run going wrong.", io.out)
	fs.takesFiles = true
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("want one model file, got %d arguments", fs.NArg())
	}
	path := fs.Arg(0)
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return printRunInfo(io, runfolder.Folder(path))
	}
	info, err := nn.ReadInfo(path)
	if errors.Is(err, nn.ErrNotNetwork) {
		if oi, oerr := onnx.ReadInfo(path); oerr == nil {
			return printONNXInfo(io, path, oi)
		}
	}
	if err != nil {
		return usageError{err}
	}
	ckpt, _, err := engine.LoadModel(path, nil)
	if err != nil {
		return usageError{err}
	}
	kind := "model"
	switch {
	case info.Folded:
		kind = "exported model (batch norm folded)"
	case info.Averaged:
		kind = "checkpoint (averaged weights, which play, and the trained weights with optimizer state)"
	case info.Optimizer:
		kind = "checkpoint (with optimizer state)"
	}
	var b strings.Builder
	line := func(key, format string, args ...any) {
		fmt.Fprintf(&b, "%-15s%s\n", key+":", fmt.Sprintf(format, args...))
	}
	line("file", "%s", path)
	line("kind", "%s, format version %d, %d bytes, checksum ok", kind, info.Version, info.Size)
	line("game", "%s", info.Game)
	line("architecture", "%v", info.Arch)
	line("parameters", "%d", ckpt.Network.Parameters())
	line("steps", "%d", info.Step)
	line("created", "%s", info.Created.UTC().Format(time.RFC3339))
	keys := make([]string, 0, len(info.Metadata))
	for k := range info.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		line(k, "%s", info.Metadata[k])
	}
	_, err = io.out.Write([]byte(b.String()))
	return err
}

// printONNXInfo prints what an ONNX model holds: flipzero's exports say
// their game, architecture and training in their metadata.
func printONNXInfo(io stdio, path string, info onnx.Info) error {
	var b strings.Builder
	line := func(key, format string, args ...any) {
		fmt.Fprintf(&b, "%-15s%s\n", key+":", fmt.Sprintf(format, args...))
	}
	line("file", "%s", path)
	line("kind", "ONNX model by %s, IR version %d, opset %d", info.Producer, info.IRVersion, info.Opset)
	line("inputs", "%s", strings.Join(info.Inputs, ", "))
	line("outputs", "%s", strings.Join(info.Outputs, ", "))
	line("parameters", "%d", info.Parameters)
	for _, k := range info.MetadataKeys() {
		line(k, "%s", info.Metadata[k])
	}
	_, err := io.out.Write([]byte(b.String()))
	return err
}

// printRunInfo prints a run folder's report (loop.Report): what a person
// looks for first in a run, without its page.
func printRunInfo(io stdio, run runfolder.Folder) error {
	if err := run.Check(); err != nil {
		return usageError{err}
	}
	raw, err := os.ReadFile(run.Config())
	if err != nil {
		return usageError{fmt.Errorf("run config: %w", err)}
	}
	game, _, err := loop.Summary(raw, games.Builtin())
	if err != nil {
		return usageError{fmt.Errorf("%s: %w", run.Config(), err)}
	}
	ms, err := loop.ReadMetrics(run.Metrics())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return usageError{err}
	}
	var b strings.Builder
	line := func(key, format string, args ...any) {
		if key != "" {
			key += ":"
		}
		fmt.Fprintf(&b, "%-15s%s\n", key, fmt.Sprintf(format, args...))
	}
	line("run", "%s", run)
	line("game", "%s", game)
	writeReport(line, loop.NewReport(ms))
	_, err = io.out.Write([]byte(b.String()))
	return err
}

// writeReport writes a run's report a line a subject.
func writeReport(line func(key, format string, args ...any), r loop.Report) {
	if p := r.Pretrained; p != nil {
		line("start", "generation 0 pretrained from %s: %d steps over %d positions", p.From, r.PretrainSteps, p.Positions)
	}
	if r.Generation == 0 {
		line("generations", "none yet")
		return
	}
	line("generations", "%d in %s (median %.1f s a generation)", r.Generation, time.Duration(r.Seconds*float64(time.Second)).Round(time.Second), r.MedianSeconds)
	line("self-play", "%d games, %d positions; %.1f positions a game over the first generations, %.1f over the last", r.Games, r.Positions, r.FirstPositionsPerGame, r.LastPositionsPerGame)
	if r.EvalsS > 0 {
		line("", "%.0f evaluations/s (median), %.0f%% answered by the cache at the end", r.EvalsS, 100*r.CacheShare)
	}
	line("training", "%d steps, %.0f%% of the time, %.0f samples/s (median); learning rate %g", r.Steps-r.PretrainSteps, 100*r.TrainShare, r.TrainS, r.LearningRate)
	line("losses", "policy %.3f -> %.3f, value %.3f -> %.3f (first and last %d generations)", r.FirstLosses[0], r.LastLosses[0], r.FirstLosses[1], r.LastLosses[1], loop.ReportSpan)
	if r.Resigned > 0 || r.NoResign > 0 {
		line("resignations", "%d of %d games; %d of %d played out past one were not lost", r.Resigned, r.Games, r.FalseResign, r.NoResign)
	}
	if a := r.Agreement; a != nil {
		line("held out", "top-1 %.1f%% [%.1f, %.1f], top-3 %.1f%% at generation %d (%d positions)", 100*a.Top1.Value, 100*a.Top1.Low, 100*a.Top1.High, 100*a.Top3.Value, r.AgreementGeneration, a.Positions)
	}
	if r.ArenaGeneration > 0 {
		text := fmt.Sprintf("generation %d", r.ArenaGeneration)
		if r.Rating != nil {
			text += fmt.Sprintf(": rated %+.0f", *r.Rating)
		}
		if res := r.BaselineResult; res != nil {
			text += fmt.Sprintf("; %d-%d-%d against %s", res[0], res[1], res[2], r.Baseline)
		}
		line("arena", "%s", text)
	}
	if len(r.Checks) == 0 {
		line("checks", "passed: false resignations within 5%% of the games played out, no stretch of slow training")
	}
	for _, c := range r.Checks {
		line("check", "%s", c.Text)
	}
}
