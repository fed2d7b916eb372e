package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/flipzero/flipzero/data"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/loop"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/selfplay"
)

// WorkerOptions configure a self-play worker.
type WorkerOptions struct {
	Name  string // the run's name on the server
	Games loop.Games
	// Workers is how many self-play workers (goroutines, each with its
	// own evaluator) play (0: one per core).
	Workers int
	// Backend computes the network; nn/device.Open chooses it by name.
	Backend nn.Backend
	// ID names this worker in the trainer's log (default host-pid).
	ID      string
	Version string
	Seed    uint64
	Log     io.Writer
	// OnNetwork, when set, is told each time the worker starts playing
	// with a new network, and how long after its publication.
	OnNetwork func(gen int, lag time.Duration)
	// OnShard, when set, is told each shard the server has accepted.
	OnShard func(id string, games, samples int)
}

// ErrIncompatible is a run this worker cannot play for: another wire
// format or a game it does not know.
var ErrIncompatible = errors.New("incompatible run")

// RunWorker plays self-play games for a run until ctx is cancelled: it
// fetches the published network, plays rounds of games with it, publishes
// each round's games as shards and picks up each new network between
// rounds (stopping a round early when the network playing it has become
// too old for its games to count).
func RunWorker(ctx context.Context, nc *nats.Conn, opts WorkerOptions) error {
	if err := CheckName(opts.Name); err != nil {
		return err
	}
	if opts.Backend == nil {
		return errors.New("worker: no compute backend given (nn/device.Open chooses one by name)")
	}
	if opts.ID == "" {
		host, _ := os.Hostname()
		opts.ID = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if opts.Workers < 1 {
		opts.Workers = runtime.NumCPU()
	}
	logf := func(format string, args ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, format+"\n", args...)
		}
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	kv, err := waitForRun(ctx, js, opts.Name, logf)
	if err != nil {
		return err
	}
	w := &worker{opts: opts, js: js, kv: kv, logf: logf}
	return w.run(ctx)
}

// waitForRun finds the run's state bucket, waiting for a trainer that
// has not started yet.
func waitForRun(ctx context.Context, js jetstream.JetStream, name string, logf func(string, ...any)) (jetstream.KeyValue, error) {
	told := false
	for {
		kv, err := js.KeyValue(ctx, stateBucket(name))
		if err == nil {
			if _, err := kv.Get(ctx, stateKey); err == nil {
				return kv, nil
			}
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !told {
			logf("no run %q on the server yet (no network published): waiting for its trainer", name)
			told = true
		}
		sleep(ctx, time.Second)
	}
}

type worker struct {
	opts WorkerOptions
	js   jetstream.JetStream
	kv   jetstream.KeyValue
	logf func(string, ...any)

	mu     sync.Mutex
	latest State // the newest state seen

	// what the worker plays with now
	state  State
	game   env.Game
	cfg    loop.Config
	net    *nn.Folded
	shards int
	// evals are the self-play evaluators, kept from round to round (a
	// GPU's batching server keeps what it prepared) while the settings
	// and the network's architecture stay; evalsFor says for which.
	evals    *nn.Evaluators
	evalsFor string
	// sentBytes and sentGames are what this worker's shards held: the
	// size of a game in the shard stream, to count the games waiting
	// there.
	sentBytes, sentGames int64
}

func (w *worker) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer func() {
		if w.evals != nil {
			w.evals.Close()
		}
	}()
	updates := make(chan State, 1)
	watchErr := make(chan error, 1)
	go func() { watchErr <- w.watch(ctx, updates) }()
	var first State
	select {
	case first = <-updates:
	case err := <-watchErr:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := w.load(ctx, first); err != nil {
		return err
	}
	for round := uint64(0); ctx.Err() == nil; round++ {
		if err := w.waitForRoom(ctx); err != nil {
			break
		}
		w.mu.Lock()
		latest := w.latest
		w.mu.Unlock()
		if latest.Generation != w.state.Generation || latest.RunID != w.state.RunID {
			if err := w.load(ctx, latest); err != nil {
				if errors.Is(err, ErrIncompatible) || ctx.Err() != nil {
					return err
				}
				// The network was replaced again while fetching it, or the
				// server is away: try the newest state next round.
				w.logf("loading generation %d: %v", latest.Generation, err)
				sleep(ctx, time.Second)
				continue
			}
		}
		if err := w.playRound(ctx, round); err != nil && ctx.Err() == nil {
			return err
		}
	}
	select {
	case err := <-watchErr:
		if err != nil && ctx.Err() == nil {
			return err
		}
	default:
	}
	return ctx.Err()
}

// waitForRoom holds the next round back while the shards waiting for the
// trainer hold a generation's games or more: games played now would
// queue behind them, reach the trainer played by a network too old to
// train on, and be refused. Self-play pauses instead of playing games
// that go stale (back-pressure). A queue it cannot read holds nothing
// back.
func (w *worker) waitForRoom(ctx context.Context) error {
	told := false
	for {
		queued, err := w.queuedGames(ctx)
		if err != nil || queued < w.cfg.SelfPlay.Games {
			if told {
				w.logf("worker %s: the trainer has caught up: playing again", w.opts.ID)
			}
			return ctx.Err()
		}
		if !told {
			w.logf("worker %s: %d games wait for the trainer, a generation's worth: pausing", w.opts.ID, queued)
			told = true
		}
		sleep(ctx, 250*time.Millisecond)
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// queuedGames estimates the games in the shard stream, which the trainer
// has not taken, from its bytes and the size of this worker's games; 0
// before the worker has sent any.
func (w *worker) queuedGames(ctx context.Context) (int, error) {
	if w.sentGames == 0 || w.sentBytes == 0 {
		return 0, nil
	}
	actx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	stream, err := w.js.Stream(actx, shardStream(w.opts.Name))
	if err != nil {
		return 0, err
	}
	info, err := stream.Info(actx)
	if err != nil {
		return 0, err
	}
	return int(int64(info.State.Bytes) * w.sentGames / w.sentBytes), nil
}

// watch follows the state key, keeping the newest and signalling each
// change. A watcher hears of a change at once; reading the key every few
// seconds as well covers a watcher that a server restart left deaf.
func (w *worker) watch(ctx context.Context, updates chan<- State) error {
	var revision uint64
	take := func(entry jetstream.KeyValueEntry) {
		if entry == nil || entry.Operation() != jetstream.KeyValuePut || entry.Revision() <= revision {
			return
		}
		revision = entry.Revision()
		var st State
		value := entry.Value()
		if len(value) > maxStateBytes {
			w.logf("ignoring a state of %d bytes", len(value))
			return
		}
		if err := json.Unmarshal(value, &st); err != nil {
			w.logf("ignoring a state that is not JSON: %v", err)
			return
		}
		w.mu.Lock()
		w.latest = st
		w.mu.Unlock()
		select {
		case updates <- st:
		default:
		}
	}
	for ctx.Err() == nil {
		watcher, err := w.kv.Watch(ctx, stateKey)
		if err != nil {
			w.logf("watching the run's state: %v", err)
			sleep(ctx, time.Second)
			continue
		}
		poll := time.NewTicker(2 * time.Second)
	watching:
		for {
			select {
			case <-ctx.Done():
				break watching
			case entry, ok := <-watcher.Updates():
				if !ok {
					break watching
				}
				take(entry)
			case <-poll.C:
				if entry, err := w.kv.Get(ctx, stateKey); err == nil {
					take(entry)
				}
			}
		}
		poll.Stop()
		watcher.Stop()
	}
	return nil
}

// load fetches and checks the network and config a state names.
func (w *worker) load(ctx context.Context, st State) error {
	if st.Format != Format {
		return fmt.Errorf("%w: the trainer (flipzero %s) speaks wire format %d, this worker (flipzero %s) format %d: run the same version on every machine",
			ErrIncompatible, st.Version, st.Format, w.opts.Version, Format)
	}
	g, err := w.opts.Games.ByName(st.Game)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrIncompatible, err)
	}
	if len(st.Config) > maxStateBytes {
		return fmt.Errorf("%w: config of %d bytes", ErrIncompatible, len(st.Config))
	}
	cfg, err := loop.ParseConfig([]byte(st.Config), w.opts.Games)
	if err != nil {
		return fmt.Errorf("%w: the run's config: %v", ErrIncompatible, err)
	}
	obj, err := w.js.ObjectStore(ctx, modelStore(w.opts.Name))
	if err != nil {
		return fmt.Errorf("model store: %w", err)
	}
	info, err := obj.GetInfo(ctx, st.Model)
	if err != nil {
		return fmt.Errorf("model %s: %w", st.Model, err)
	}
	if info.Size > maxModelBytes {
		return fmt.Errorf("model %s of %d bytes, limit %d", st.Model, info.Size, maxModelBytes)
	}
	// The object store checks the object's digest as it reads it, and
	// LoadCheckpoint checks the file's own checksum, game and shapes.
	raw, err := obj.GetBytes(ctx, st.Model)
	if err != nil {
		return fmt.Errorf("model %s: %w", st.Model, err)
	}
	dir, err := os.MkdirTemp("", "flipzero-worker-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.fznet")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		return err
	}
	ckpt, err := nn.LoadCheckpoint(path, g)
	if err != nil {
		return fmt.Errorf("model %s: %w", st.Model, err)
	}
	w.state, w.game, w.cfg, w.net = st, g, cfg, ckpt.Network.Fold()
	lag := time.Since(st.Published)
	w.logf("worker %s: playing with generation %d (published %.1f s ago)", w.opts.ID, st.Generation, lag.Seconds())
	if w.opts.OnNetwork != nil {
		w.opts.OnNetwork(st.Generation, lag)
	}
	return nil
}

// evaluators returns the evaluators of the worker's network for the
// round's settings: last round's, given the new weights, where the
// settings and the architecture are the same.
func (w *worker) evaluators(settings selfplay.Settings) (*nn.Evaluators, error) {
	key := fmt.Sprintf("%s %v %d %d", w.game.Name(), w.net.Config(), settings.WorkerCount(), settings.BatchSize)
	if w.evals != nil && w.evalsFor == key {
		if err := w.evals.Reload(w.net); err == nil {
			return w.evals, nil
		}
	}
	if w.evals != nil {
		w.evals.Close()
		w.evals = nil
	}
	evals, err := nn.NewEvaluators(w.opts.Backend, w.net, settings.WorkerCount(), settings.BatchSize)
	if err != nil {
		return nil, err
	}
	w.evals, w.evalsFor = evals, key
	return evals, nil
}

// playRound plays one round of games, each worker its concurrent games,
// and publishes them.
func (w *worker) playRound(ctx context.Context, round uint64) error {
	settings := w.cfg.SelfPlay
	settings.Workers = w.opts.Workers
	settings.Games = w.opts.Workers * settings.Concurrent
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	playing, runID := w.state.Generation, w.state.RunID
	// Stop early when the games would be refused.
	go func() {
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				w.mu.Lock()
				latest := w.latest
				w.mu.Unlock()
				if latest.RunID != runID || latest.Generation-playing > latest.MaxStale {
					cancel()
					return
				}
			}
		}
	}()
	var pending []selfplay.GameRecord
	pendingSamples := 0
	var publishErr error
	seed := w.opts.Seed ^ round*0x9e3779b97f4a7c15 ^ uint64(time.Now().UnixNano())
	evals, err := w.evaluators(settings)
	if err != nil {
		return err
	}
	_, err = selfplay.PlayGames(ctx, w.game, w.cfg.Search, settings, seed, evals.New, func(r selfplay.GameRecord) {
		if publishErr != nil {
			return
		}
		if pendingSamples+len(r.Samples) > MaxSamples/2 {
			publishErr = w.publish(ctx, pending)
			pending, pendingSamples = nil, 0
		}
		pending = append(pending, r)
		pendingSamples += len(r.Samples)
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil // a round cut short: its games would be refused
		}
		return fmt.Errorf("self-play: %w", err)
	}
	if publishErr == nil {
		publishErr = w.publish(ctx, pending)
	}
	if ctx.Err() != nil {
		return nil
	}
	return publishErr
}

// publish sends games as one or more shards, each small enough for the
// server's message size, retrying while the server is away.
func (w *worker) publish(ctx context.Context, games []selfplay.GameRecord) error {
	if len(games) == 0 {
		return nil
	}
	h := ShardHeader{
		Format: Format, RunID: w.state.RunID, Game: w.game.Name(), Generation: w.state.Generation,
		Shard: randomID(), Worker: w.opts.ID, Version: w.opts.Version,
	}
	var samples []data.Sample
	for _, r := range games {
		samples = append(samples, r.Samples...)
		h.Add(r)
		h.Records = append(h.Records, loop.FormatGame(w.game, r))
	}
	if len(samples) == 0 {
		return nil
	}
	body, err := encodeShard(h, w.game, samples)
	if err != nil {
		return err
	}
	limit := min(MaxMessage, int(w.js.Conn().MaxPayload())-4096)
	if len(body) > limit && len(games) > 1 {
		half := len(games) / 2
		if err := w.publish(ctx, games[:half]); err != nil {
			return err
		}
		return w.publish(ctx, games[half:])
	}
	msg := nats.NewMsg(shardSubject(w.opts.Name))
	msg.Data = body
	msg.Header.Set(jetstream.MsgIDHeader, h.Shard)
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		// An attempt once begun runs to its answer, so that a worker
		// stopped meanwhile still knows whether the server took the shard.
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), requestTimeout)
		_, err := w.js.PublishMsg(actx, msg)
		cancel()
		if err == nil {
			w.shards++
			w.sentBytes += int64(len(body))
			w.sentGames += int64(h.Games)
			if w.opts.OnShard != nil {
				w.opts.OnShard(h.Shard, h.Games, len(samples))
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if attempt == 0 || attempt%30 == 0 {
			w.logf("worker %s: publishing shard %s: %v (retrying)", w.opts.ID, h.Shard, err)
		}
		sleep(ctx, time.Second)
	}
}
