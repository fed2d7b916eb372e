package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/flipzero/flipzero/cluster"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/loop"
	"github.com/flipzero/flipzero/runfolder"
)

// runBenchCluster measures self-play spread over NATS on one machine: a
// trainer and workers (each its own connection, as if on its own
// machine) over a server on loopback.
func runBenchCluster(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("bench cluster", "bench cluster [--config FILE] [--workers N] [--minutes M] [--nats URL]\n\n"+
		"Runs a trainer and N workers over a NATS server on loopback (embedded unless\n"+
		"--nats names one) and prints shards/s, bytes/s, the lag from each network's\n"+
		"publication to its first use by every worker, and whether the positions the\n"+
		"workers sent match the positions trained on.", io.out)
	configPath := fs.String("config", "configs/tictactoe.yaml", "run config")
	workers := fs.Int("workers", 4, "workers, each one self-play goroutine with its own connection")
	minutes := fs.Float64("minutes", 10, "how long the trainer runs")
	url := fs.String("nats", "", "an outside NATS server with JetStream on loopback (default: embedded)")
	runDir := fs.String("run", "", "run folder to keep (default: a temporary one)")
	dev := addDeviceFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *workers < 1 || *minutes <= 0 {
		return usagef("--workers and --minutes must be positive")
	}
	if _, err := loop.LoadConfig(*configPath, games.Builtin()); err != nil {
		return usageError{err}
	}
	backend, say, err := dev.open()
	if err != nil {
		return err
	}
	say(io.err)
	if *runDir == "" {
		dir, err := os.MkdirTemp("", "flipzero-bench-cluster-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		*runDir = filepath.Join(dir, "bench")
	}
	// Its own name, so that benchmarks sharing a server do not meet.
	name := fmt.Sprintf("bench-%d-%d", os.Getpid(), time.Now().Unix())
	if *url == "" {
		srv, err := cluster.Serve(cluster.ServerOptions{Addr: "127.0.0.1:0", StoreDir: runfolder.Folder(*runDir).NATS()})
		if err != nil {
			return err
		}
		defer func() { srv.Shutdown(); srv.WaitForShutdown() }()
		*url = srv.ClientURL()
	}
	tc, err := cluster.Connect(cluster.ConnectOptions{URL: *url, Name: "bench trainer"})
	if err != nil {
		return err
	}
	defer tc.Close()
	trainer, err := cluster.NewTrainer(tc, cluster.TrainerOptions{
		Run: runfolder.Folder(*runDir), Name: name, Games: games.Builtin(), MaxStale: 1, Version: versionLine(), Log: io.err,
	})
	if err != nil {
		return err
	}

	var mu sync.Mutex
	firstUse := map[int][]time.Duration{} // generation -> each worker's lag
	sentShards, sentSamples := 0, 0
	wctx, stopWorkers := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i := 0; i < *workers; i++ {
		nc, err := cluster.Connect(cluster.ConnectOptions{URL: *url, Name: fmt.Sprint("bench worker ", i)})
		if err != nil {
			stopWorkers()
			return err
		}
		defer nc.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := cluster.RunWorker(wctx, nc, cluster.WorkerOptions{
				Name: name, Games: games.Builtin(), Workers: 1, ID: fmt.Sprint("w", i), Version: versionLine(), Backend: backend,
				Seed: uint64(i + 1),
				OnNetwork: func(gen int, lag time.Duration) {
					mu.Lock()
					firstUse[gen] = append(firstUse[gen], lag)
					mu.Unlock()
				},
				OnShard: func(_ string, _, samples int) {
					mu.Lock()
					sentShards++
					sentSamples += samples
					mu.Unlock()
				},
			})
			if err != nil && wctx.Err() == nil {
				fmt.Fprintf(io.err, "worker %d: %v\n", i, err)
			}
		}()
	}
	start := time.Now()
	err = loop.Loop(ctx, loop.LoopOptions{
		ConfigPath: *configPath, RunDir: *runDir, Until: time.Duration(*minutes * float64(time.Minute)),
		Remote: trainer, Log: io.err, Seed: 1, Backend: backend,
	})
	elapsed := time.Since(start)
	stopWorkers()
	wg.Wait()
	if err != nil {
		return err
	}
	queued, err := cluster.Queued(context.Background(), tc, name)
	if err != nil {
		return err
	}
	received, err := runfolder.Folder(*runDir).ReceivedShards()
	if err != nil {
		return err
	}
	for _, r := range received {
		delete(queued, r.ID) // stored; its redelivery is to be dropped
	}
	queuedShards, queuedSamples := len(queued), 0
	for _, n := range queued {
		queuedSamples += n
	}
	ms, err := loop.ReadMetrics(runfolder.Folder(*runDir).Metrics())
	if err != nil {
		return err
	}
	trained := 0
	for _, m := range ms {
		trained += m.Positions
	}
	st := trainer.Stats()
	secs := elapsed.Seconds()
	w := io.out
	fmt.Fprintf(w, "%d workers, %s, %.0f s: %d generations\n", *workers, *configPath, secs, len(ms))
	fmt.Fprintf(w, "sent by the workers: %d shards (%.2f/s), %d positions (%.0f/s)\n",
		sentShards, float64(sentShards)/secs, sentSamples, float64(sentSamples)/secs)
	fmt.Fprintf(w, "stored by the trainer: %d shards (%.2f/s), %d bytes (%.0f bytes/s), %d positions (%.0f/s)\n",
		st.Shards, float64(st.Shards)/secs, st.Bytes, float64(st.Bytes)/secs, st.Samples, float64(st.Samples)/secs)
	var lags []time.Duration
	mu.Lock()
	for gen, l := range firstUse {
		if gen == 0 || len(l) < *workers {
			continue // the first network waits for the workers to start; a last one some never used
		}
		lags = append(lags, maxDuration(l))
	}
	mu.Unlock()
	sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
	if len(lags) > 0 {
		var sum time.Duration
		for _, l := range lags {
			sum += l
		}
		fmt.Fprintf(w, "lag from publication to use by every worker, over %d networks: mean %.2f s, median %.2f s, max %.2f s\n",
			len(lags), (sum / time.Duration(len(lags))).Seconds(), lags[len(lags)/2].Seconds(), lags[len(lags)-1].Seconds())
	}
	fmt.Fprintf(w, "positions: sent %d = stored %d + refused as stale %d + still queued %d; trained on %d\n",
		sentSamples, st.Samples, st.RefusedSamples, queuedSamples, trained)
	fmt.Fprintf(w, "shards: sent %d = stored %d + refused %d + queued %d; duplicates dropped %d\n",
		sentShards, st.Shards, st.Refused, queuedShards, st.Duplicates)
	if sentSamples == st.Samples+st.RefusedSamples+queuedSamples && trained == st.Samples {
		fmt.Fprintln(w, "every position sent was stored once and trained on once, or refused, or is still queued: counts match")
	} else {
		fmt.Fprintln(w, "COUNTS DIFFER")
	}
	return nil
}

func maxDuration(ds []time.Duration) time.Duration {
	m := ds[0]
	for _, d := range ds[1:] {
		m = max(m, d)
	}
	return m
}
