package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/flipzero/flipzero/loop"
	"github.com/flipzero/flipzero/runfolder"
)

func runExport(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("export", "export --run DIR [--checkpoint N] --out FILE\n\n"+
		"Writes one generation of a run (the newest by default) as a self-contained model\n"+
		"file: game, architecture, inference weights with batch norm folded in, and\n"+
		"metadata (training steps, positions seen, rating if measured, dates), without\n"+
		"the optimizer state. play, gtp, serve, analyze and arena take it.", io.out)
	runDir := fs.String("run", "", "run folder")
	gen := fs.Int("checkpoint", -1, "generation to export (default: the newest)")
	out := fs.String("out", "", "model file to write")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *runDir == "" || *out == "" {
		return usagef("--run and --out are required")
	}
	meta, err := loop.Export(runfolder.Folder(*runDir), *gen, *out, nil)
	if err != nil {
		return usageError{err}
	}
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "wrote %s:", *out)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%s", k, meta[k])
	}
	_, err = fmt.Fprintln(io.out, b.String())
	return err
}
