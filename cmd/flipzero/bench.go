package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strings"

	"github.com/flipzero/flipzero/internal/atomicfile"
)

// benchTargets are the things "flipzero bench" measures, each a function
// that reads its own flags.
func benchTargets() map[string]func(ctx context.Context, args []string, io stdio) error {
	return map[string]func(ctx context.Context, args []string, io stdio) error{
		"cluster":  runBenchCluster,
		"env":      runBenchEnv,
		"mcts":     runBenchMCTS,
		"nn":       runBenchNN,
		"selfplay": runBenchSelfPlay,
	}
}

func runBench(ctx context.Context, args []string, io stdio) error {
	targets := benchTargets()
	var names []string
	for name := range targets {
		names = append(names, name)
	}
	sort.Strings(names)
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			_, err := io.out.Write([]byte("Usage: flipzero bench <" + strings.Join(names, "|") + "> --game G [flags]\n"))
			return err
		}
		return usagef("want a target: flipzero bench <%s> --game G", strings.Join(names, "|"))
	}
	target, ok := targets[args[0]]
	if !ok {
		return usagef("unknown bench target %q (known: %s)", args[0], strings.Join(names, ", "))
	}
	return target(ctx, args[1:], io)
}

// addProfileFlag adds --cpuprofile to a bench target's flags.
func addProfileFlag(fs *flagSet) *string {
	return fs.String("cpuprofile", "", "write a CPU profile of the measurements to this file (read it with go tool pprof)")
}

// stopProfile ends a profile begun by profileCPU and, if the command
// itself succeeded, reports a failure to write it through *err.
func stopProfile(stop func() error, err *error) {
	if e := stop(); *err == nil {
		*err = e
	}
}

// profileCPU starts a CPU profile when path is set and returns what stops
// it and writes the profile to path, whole or not at all.
func profileCPU(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	// Fail before the measurements, not after them.
	if _, err := os.Stat(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("cpu profile %s: %w", path, err)
	}
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		return nil, fmt.Errorf("cpu profile %s: %w", path, err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := atomicfile.WriteBytes(path, buf.Bytes()); err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		return nil
	}, nil
}
