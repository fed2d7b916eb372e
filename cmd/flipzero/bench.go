package main

import (
	"context"
	"sort"
	"strings"
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
