package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/flipzero/flipzero/engine"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/onnx"
)

func runInfo(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("info", "info FILE\n\n"+
		"Prints what a model or checkpoint file holds: game, architecture, training\n"+
		"steps and metadata. The whole file is read and its checksum checked.", io.out)
	fs.takesFiles = true
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("want one model file, got %d arguments", fs.NArg())
	}
	path := fs.Arg(0)
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
