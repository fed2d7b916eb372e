package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/flipzero/flipzero/loop"
	"github.com/flipzero/flipzero/nn/onnx"
	"github.com/flipzero/flipzero/runfolder"
)

func runExport(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("export", "export --run DIR [--checkpoint N] --out FILE [--format flipzero|onnx]\n"+
		"       export --web DIR (--model FILE | --run DIR [--checkpoint N]) [--playouts N | --seconds S]\n\n"+
		"Writes one generation of a run (the newest by default) as a self-contained model\n"+
		"file: game, architecture, inference weights with batch norm folded in, and\n"+
		"metadata (training steps, positions seen, rating if measured, dates), without\n"+
		"the optimizer state. play, gtp, serve, analyze and arena take it. With --format\n"+
		"onnx, or an --out name ending .onnx, it writes the same network as an ONNX model\n"+
		"for other runtimes instead (docs/play.md: ONNX export). With --web it writes a\n"+
		"folder that any static file server hosts as it is: the play page of serve,\n"+
		"whose own engine (WebAssembly) plays the network in the visitor's browser\n"+
		"(docs/play.md: a bot as a web page).", io.out)
	runDir := fs.String("run", "", "run folder")
	gen := fs.Int("checkpoint", -1, "generation to export (default: the newest)")
	out := fs.String("out", "", "model file to write")
	format := fs.String("format", "", "flipzero (the model file flipzero plays with) or onnx (default: onnx for an --out name ending .onnx, else flipzero)")
	webFlags := addWebExportFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *webFlags.dir != "" {
		return exportWeb(webFlags, *runDir, *gen, *out, io)
	}
	if *runDir == "" || *out == "" {
		return usagef("--run and --out are required")
	}
	onnxName := strings.EqualFold(filepath.Ext(*out), ".onnx")
	switch {
	case *format == "":
		*format = "flipzero"
		if onnxName {
			*format = "onnx"
		}
	case *format == "flipzero" && onnxName:
		// onnxruntime would fail on it with "Protobuf parsing failed".
		return usagef("--out %s: a flipzero model file named .onnx; give --format onnx for an ONNX model, or another name", *out)
	case *format != "flipzero" && *format != "onnx":
		return usagef("--format %q, want flipzero or onnx", *format)
	}
	if err := checkRun(*runDir, false); err != nil {
		return err
	}
	run := runfolder.Folder(*runDir)
	var meta map[string]string
	var err error
	switch *format {
	case "flipzero":
		meta, err = loop.Export(run, *gen, *out, nil)
	case "onnx":
		meta, err = exportONNX(run, *gen, *out)
	}
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

// exportONNX writes generation gen of a run as an ONNX model: the same
// network and metadata as the model file flipzero plays with.
func exportONNX(run runfolder.Folder, gen int, out string) (map[string]string, error) {
	m, err := loop.LoadModel(run, gen, nil)
	if err != nil {
		return nil, err
	}
	m.Metadata["step"] = strconv.FormatInt(m.Step, 10)
	if err := onnx.WriteFile(out, m.Network.Layers(), m.Metadata); err != nil {
		return nil, err
	}
	return m.Metadata, nil
}
