package main

import (
	"context"
	"errors"
	"fmt"

	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/loop"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/device"
	"github.com/flipzero/flipzero/selfplay"
)

// runBenchSelfPlay compares the network evaluations per second that
// self-play reaches with what the same network does alone at the same
// batch size on the same cores: the rest is the search's overhead.
func runBenchSelfPlay(ctx context.Context, args []string, io stdio) (err error) {
	fs := newFlags("bench selfplay", "bench selfplay --game G [--config FILE --model M --seconds S]\n\n"+
		"Prints network evaluations/s during self-play next to the same network's standalone\n"+
		"inference throughput at the same batch size and worker count.", io.out)
	gameName := fs.String("game", "", "game: "+strings.Join(games.Names(), ", "))
	configPath := fs.String("config", "", "run config (default: configs/<game>.yaml)")
	modelPath := fs.String("model", "", "model or checkpoint whose network plays (default: the config's architecture, untrained)")
	seconds := fs.Float64("seconds", 10, "how long to run each measurement")
	dev := addDeviceFlag(fs)
	profile := addProfileFlag(fs)
	workersFlag := fs.Int("workers", 0, "self-play workers (0: the config's)")
	concurrentFlag := fs.Int("concurrent", 0, "games per worker (0: the config's)")
	batchFlag := fs.Int("batch", 0, "evaluation batch per worker (0: the config's)")
	standaloneFlag := fs.Bool("standalone", true, "measure the network alone first, for the comparison")
	cacheFlag := fs.Int("cache", -1, "self-play's evaluation cache, answers the workers share (a power of two; 0: none; -1: the config's)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	stop, err := profileCPU(*profile)
	if err != nil {
		return err
	}
	defer stopProfile(stop, &err)
	var model *nn.Checkpoint
	if *modelPath != "" {
		if model, err = loadBenchModel(*modelPath, gameName); err != nil {
			return err
		}
	}
	g, err := gameFlag(*gameName)
	if err != nil {
		return err
	}
	if *configPath == "" {
		*configPath = filepath.Join("configs", g.Name()+".yaml")
	}
	cfg, err := loop.LoadConfig(*configPath, games.Builtin())
	if err != nil {
		return usageError{err}
	}
	if cfg.Game != g.Name() {
		return usagef("%s is a config for %s, not %s", *configPath, cfg.Game, g.Name())
	}
	if *seconds <= 0 {
		return usagef("--seconds must be positive")
	}
	budget := time.Duration(*seconds * float64(time.Second))
	settings := cfg.SelfPlay
	if *workersFlag < 0 || *concurrentFlag < 0 || *batchFlag < 0 {
		return usagef("--workers, --concurrent and --batch must not be negative")
	}
	if *workersFlag > 0 {
		settings.Workers = *workersFlag
	}
	if *concurrentFlag > 0 {
		settings.Concurrent = *concurrentFlag
	}
	if *batchFlag > 0 {
		settings.BatchSize = *batchFlag
	}
	if *cacheFlag != -1 {
		settings.EvalCache = *cacheFlag
	}
	if err := settings.Validate(); err != nil {
		return usageError{err}
	}
	backend, say, err := dev.open()
	if err != nil {
		return err
	}
	say(io.err)
	if settings.Workers == 0 {
		settings.Workers = runtime.NumCPU()
	}
	settings.Games = 1 << 30 // play until the time is up
	arch := cfg.Network
	var net *nn.Network
	if model != nil {
		net, arch = model.Network, model.Network.Config()
	} else if net, err = nn.New(g, arch, 1); err != nil {
		return err
	}
	folded := net.Fold()
	fmt.Fprintf(io.out, "%s: %v; %d workers, %d games each, batch %d, playouts %d/%d, cache %d\n", g.Name(), arch,
		settings.Workers, settings.Concurrent, settings.BatchSize, cfg.Search.Full, cfg.Search.Fast, settings.EvalCache)

	// The evaluators self-play uses: on a GPU, clients of one batching
	// server.
	evals, err := nn.NewEvaluators(backend, folded, settings.Workers, settings.BatchSize)
	if err != nil {
		return err
	}
	defer evals.Close()
	alone := 0.0
	if *standaloneFlag {
		if alone, err = standaloneRate(ctx, evals, g, settings.Workers, settings.BatchSize, budget); err != nil {
			return err
		}
		fmt.Fprintf(io.out, "standalone inference: %.0f positions/s (the backend's batches of up to %d)\n", alone, evals.Batch())
	}

	// Self-play's evaluators, with its cache (the standalone ones above
	// had none: they score the same positions over and over).
	if err := evals.SetCache(settings.EvalCache); err != nil {
		return err
	}
	playCtx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	played := 0
	start := time.Now()
	stats, err := selfplay.PlayGames(playCtx, g, cfg.Search, settings, 1, evals.New, func(selfplay.GameRecord) { played++ })
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	elapsed := time.Since(start).Seconds()
	inPlay := float64(stats.Evaluations) / elapsed
	fmt.Fprintf(io.out, "self-play: %.0f evaluations/s, %d games finished\n", inPlay, played)
	if settings.EvalCache > 0 {
		answered := stats.Evaluations + stats.Cached
		fmt.Fprintf(io.out, "the cache answered %.1f%% of the positions: %.0f positions/s in all\n",
			100*float64(stats.Cached)/float64(max(answered, 1)), float64(answered)/elapsed)
	}
	if alone > 0 {
		fmt.Fprintf(io.out, "self-play reaches %.1f%% of standalone inference\n", 100*inPlay/alone)
	}
	return nil
}

// standaloneRate is the positions/s workers evaluators of evals reach on
// batches of positions met in random games, each as fast as it can, for
// budget.
func standaloneRate(ctx context.Context, evals *nn.Evaluators, g env.Game, workers, batch int, budget time.Duration) (float64, error) {
	positions := env.RandomPositions(g, batch, 1, false)
	var standalone atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(budget)
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		eval, err := evals.New()
		if err != nil {
			return 0, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer device.Close(eval)
			priors := make([]float32, len(positions)*g.ActionSpace())
			values := make([]float32, len(positions))
			for time.Now().Before(deadline) && ctx.Err() == nil {
				if err := eval.Evaluate(positions, priors, values); err != nil {
					errs <- err
					return
				}
				standalone.Add(int64(len(positions)))
			}
		}()
	}
	start := time.Now()
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	return float64(standalone.Load()) / time.Since(start).Seconds(), nil
}
