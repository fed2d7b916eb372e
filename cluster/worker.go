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
	"sync/atomic"
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
// fetches the published network and plays games continuously, publishing
// them as shards as they end, and swaps in each new network between two
// rounds of its searches; it starts no game while a generation's games
// wait for the trainer, or while its network is too old for their games
// to count.
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
	// state is the state of the network playing now (guarded by mu: a
	// stream's games read its generation as they end).
	state State

	// what the worker plays with now
	game env.Game
	cfg  loop.Config
	net  *nn.Folded
	// evals are the self-play evaluators, kept from stream to stream (a
	// GPU's batching server keeps what it prepared) while the settings
	// and the network's architecture stay; evalsFor says for which.
	evals    *nn.Evaluators
	evalsFor string
	// shards counts the shards sent; sentBytes and sentGames are what
	// they held: the size of a game in the shard stream, to count the
	// games waiting there.
	shards, sentBytes, sentGames atomic.Int64
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
		latest := w.newest()
		if w.stale(latest) {
			if err := w.load(ctx, latest); err != nil {
				if errors.Is(err, ErrIncompatible) || ctx.Err() != nil {
					return err
				}
				// The network was replaced again while fetching it, or the
				// server is away: try the newest state in a moment.
				w.logf("loading generation %d: %v", latest.Generation, err)
				sleep(ctx, time.Second)
				continue
			}
		}
		if err := w.playStream(ctx, round, updates); err != nil && ctx.Err() == nil {
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

// newest is the newest state seen.
func (w *worker) newest() State {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.latest
}

// playing is the state of the network playing now.
func (w *worker) playing() State {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.state
}

// stale says whether latest names another network than the one playing.
func (w *worker) stale(latest State) bool {
	st := w.playing()
	return latest.Generation != st.Generation || latest.RunID != st.RunID
}

// queuedGames estimates the games in the shard stream, which the trainer
// has not taken, from its bytes and the size of this worker's games; 0
// before the worker has sent any.
func (w *worker) queuedGames(ctx context.Context) (int, error) {
	sentGames, sentBytes := w.sentGames.Load(), w.sentBytes.Load()
	if sentGames == 0 || sentBytes == 0 {
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
	return int(int64(info.State.Bytes) * sentGames / sentBytes), nil
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

// load fetches and checks the network and config a state names and
// plays with them from now on.
func (w *worker) load(ctx context.Context, st State) error {
	l, err := w.fetch(ctx, st)
	if err != nil {
		return err
	}
	w.adopt(l)
	return nil
}

// loaded is a state's network and config, fetched and checked.
type loaded struct {
	st   State
	game env.Game
	cfg  loop.Config
	net  *nn.Folded
}

// adopt makes l what the worker plays with.
func (w *worker) adopt(l loaded) {
	w.game, w.cfg = l.game, l.cfg
	w.adoptNetwork(l)
}

// adoptNetwork makes l's network, of the game and config the worker
// plays, the one it plays with; a stream's publisher reads the game
// meanwhile, so it is left as it is.
func (w *worker) adoptNetwork(l loaded) {
	w.mu.Lock()
	w.state = l.st
	w.mu.Unlock()
	w.net = l.net
	lag := time.Since(l.st.Published)
	w.logf("worker %s: playing with generation %d (published %.1f s ago)", w.opts.ID, l.st.Generation, lag.Seconds())
	if w.opts.OnNetwork != nil {
		w.opts.OnNetwork(l.st.Generation, lag)
	}
}

// fetch fetches and checks the network and config a state names.
func (w *worker) fetch(ctx context.Context, st State) (loaded, error) {
	if st.Format != Format {
		return loaded{}, fmt.Errorf("%w: the trainer (flipzero %s) speaks wire format %d, this worker (flipzero %s) format %d: run the same version on every machine",
			ErrIncompatible, st.Version, st.Format, w.opts.Version, Format)
	}
	g, err := w.opts.Games.ByName(st.Game)
	if err != nil {
		return loaded{}, fmt.Errorf("%w: %v", ErrIncompatible, err)
	}
	if len(st.Config) > maxStateBytes {
		return loaded{}, fmt.Errorf("%w: config of %d bytes", ErrIncompatible, len(st.Config))
	}
	cfg, err := loop.ParseConfig([]byte(st.Config), w.opts.Games)
	if err != nil {
		return loaded{}, fmt.Errorf("%w: the run's config: %v", ErrIncompatible, err)
	}
	obj, err := w.js.ObjectStore(ctx, modelStore(w.opts.Name))
	if err != nil {
		return loaded{}, fmt.Errorf("model store: %w", err)
	}
	info, err := obj.GetInfo(ctx, st.Model)
	if err != nil {
		return loaded{}, fmt.Errorf("model %s: %w", st.Model, err)
	}
	if info.Size > maxModelBytes {
		return loaded{}, fmt.Errorf("model %s of %d bytes, limit %d", st.Model, info.Size, maxModelBytes)
	}
	// The object store checks the object's digest as it reads it, and
	// LoadCheckpoint checks the file's own checksum, game and shapes.
	raw, err := obj.GetBytes(ctx, st.Model)
	if err != nil {
		return loaded{}, fmt.Errorf("model %s: %w", st.Model, err)
	}
	dir, err := os.MkdirTemp("", "flipzero-worker-")
	if err != nil {
		return loaded{}, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.fznet")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		return loaded{}, err
	}
	ckpt, err := nn.LoadCheckpoint(path, g)
	if err != nil {
		return loaded{}, fmt.Errorf("model %s: %w", st.Model, err)
	}
	return loaded{st, g, cfg, ckpt.Network.Fold()}, nil
}

// evaluators returns the evaluators of the worker's network for a
// stream's settings: the last stream's, given the new weights, where the
// settings and the architecture are the same.
func (w *worker) evaluators(settings selfplay.Settings) (*nn.Evaluators, error) {
	key := fmt.Sprintf("%s %v %d %d %d", w.game.Name(), w.net.Config(), settings.WorkerCount(), settings.BatchSize, settings.EvalCache)
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
	if err := evals.SetCache(settings.EvalCache); err != nil {
		evals.Close()
		return nil, err
	}
	w.evals, w.evalsFor = evals, key
	return evals, nil
}

// playStream plays games continuously (selfplay.PlayStream) with the
// network loaded, and with each newer one of the same run, config and
// architecture, swapped in as it is published; it publishes the games as
// they end, until ctx ends or the run needs other evaluators. updates
// signals each new state the watcher sees.
func (w *worker) playStream(ctx context.Context, round uint64, updates <-chan State) error {
	settings := w.cfg.SelfPlay
	settings.Workers = w.opts.Workers
	settings.Games = w.opts.Workers * settings.Concurrent
	evals, err := w.evaluators(settings)
	if err != nil {
		return err
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	gate := &roomGate{changed: make(chan struct{})}
	var st selfplay.Stream
	out := &outbox{}
	batches := make(chan shardBatch, 2)
	var published atomic.Int64 // games of this stream sent
	sent := make(chan error, 1)
	go func() { sent <- w.publishAll(ctx, stop, batches, &published) }()
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		w.supervise(ctx, stop, gate, &st, evals, out, batches, &published, updates)
	}()
	seed := w.opts.Seed ^ round*0x9e3779b97f4a7c15 ^ uint64(time.Now().UnixNano())
	_, err = selfplay.PlayStream(ctx, &st, w.game, w.cfg.Search, settings, seed, evals.New, gate, func(r selfplay.GameRecord) {
		if b, due := out.add(r, w.playing(), MaxSamples/2, settings.Concurrent); due {
			select {
			case batches <- b:
			case <-ctx.Done():
			}
		}
	})
	stop()
	<-watched
	close(batches)
	if perr := <-sent; perr != nil {
		return perr
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("self-play: %w", err)
	}
	return nil
}

// supervise keeps a stream's gate and network while it plays, four times
// a second and at once when a new network is published: it sends the
// games of a network a newer one has replaced (before fetching the newer
// one: each moment they wait brings them nearer to being refused as
// stale) and swaps the newer one in if it is of the same run, config and
// architecture (and stops the stream for any other); it lets games start
// only while the games waiting for the trainer, with those of this
// stream in play or not yet sent, come to less than a generation's
// (back-pressure), and none while the network is too old for its games
// to count; and it sends the games that have waited a second for their
// batch to fill, or that ended under the replaced network during the
// swap. published counts the stream's games sent.
func (w *worker) supervise(ctx context.Context, stop func(), gate *roomGate, st *selfplay.Stream, evals *nn.Evaluators, out *outbox, batches chan<- shardBatch, published *atomic.Int64, updates <-chan State) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	why := "" // why no game may start, "" while some may
	send := func(b shardBatch) bool {
		select {
		case batches <- b:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for {
		latest := w.newest()
		if b, due := out.behind(latest); due && !send(b) {
			return
		}
		if w.stale(latest) && !w.swap(ctx, st, evals, latest) {
			stop()
			return
		}
		playing := w.playing()
		quota := w.cfg.SelfPlay.Games
		queued, err := w.queuedGames(ctx)
		if err != nil {
			queued = 0 // a queue it cannot read holds nothing back
		}
		room := quota - queued - (gate.startedGames() - int(published.Load()))
		now := ""
		switch {
		case latest.Generation-playing.Generation > latest.MaxStale:
			now, room = fmt.Sprintf("generation %d is too old for its games to count", playing.Generation), 0
		case queued >= quota:
			now = fmt.Sprintf("%d games wait for the trainer, a generation's worth", queued)
		}
		switch {
		case now != "" && why == "":
			w.logf("worker %s: %s: pausing", w.opts.ID, now)
		case now == "" && why != "":
			w.logf("worker %s: the trainer has caught up: playing again", w.opts.ID)
		}
		why = now
		gate.allow(room)
		b, due := out.due(time.Second)
		if !due {
			b, due = out.behind(playing)
		}
		if due && !send(b) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-updates:
		}
	}
}

// swap loads latest and swaps its network into the stream's evaluators
// between two rounds of their searches, and says whether the stream goes
// on: not when latest is another run, config or architecture, which the
// stream's evaluators and settings do not fit. A network it cannot fetch
// now is tried again at the next look.
func (w *worker) swap(ctx context.Context, st *selfplay.Stream, evals *nn.Evaluators, latest State) bool {
	l, err := w.fetch(ctx, latest)
	if err != nil {
		if errors.Is(err, ErrIncompatible) {
			return false // the worker's loop loads it again and says why
		}
		if ctx.Err() == nil {
			w.logf("loading generation %d: %v", latest.Generation, err)
		}
		return true
	}
	cur := w.playing()
	if l.st.RunID != cur.RunID || l.st.Config != cur.Config || l.game.Name() != w.game.Name() || l.net.Config() != w.net.Config() {
		return false
	}
	if err := st.Pause(func() error { return evals.Reload(l.net) }); err != nil {
		w.logf("worker %s: swapping in generation %d: %v", w.opts.ID, latest.Generation, err)
		return false
	}
	w.adoptNetwork(l)
	return true
}

// roomGate lets a stream start the games there is room for.
type roomGate struct {
	mu             sync.Mutex
	started, limit int // games started, and the most that may be
	changed        chan struct{}
}

func (g *roomGate) Start() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.started >= g.limit {
		return false
	}
	g.started++
	return true
}

func (g *roomGate) Changed() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.changed
}

// startedGames is how many games the gate has let start.
func (g *roomGate) startedGames() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.started
}

// allow lets room more games start from now (none for room ≤ 0), waking
// the workers waiting on a change when that lets more start than before.
func (g *roomGate) allow(room int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	limit := g.started + max(room, 0)
	if limit == g.limit {
		return
	}
	more := limit > g.limit
	g.limit = limit
	if more {
		close(g.changed)
		g.changed = make(chan struct{})
	}
}

// shardBatch is games to publish, all played by the network of state.
type shardBatch struct {
	state State
	games []selfplay.GameRecord
}

// outbox gathers a stream's ended games into batches, one network's
// each, small enough for a message.
type outbox struct {
	mu      sync.Mutex
	pending shardBatch
	samples int
	first   time.Time // when the first pending game ended
}

// add queues a game that ended playing with st's network, and returns the
// batch that is due: the pending games when st is another generation
// than theirs or the game would take them past maxSamples (the game then
// waits for the next batch), or with it when they number maxGames.
func (o *outbox) add(r selfplay.GameRecord, st State, maxSamples, maxGames int) (shardBatch, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var due shardBatch
	ready := false
	if len(o.pending.games) > 0 && (st.Generation != o.pending.state.Generation || st.RunID != o.pending.state.RunID ||
		o.samples+len(r.Samples) > maxSamples) {
		due, ready = o.pending, true
		o.pending, o.samples = shardBatch{}, 0
	}
	if len(o.pending.games) == 0 {
		o.pending.state, o.first = st, time.Now()
	}
	o.pending.games = append(o.pending.games, r)
	o.samples += len(r.Samples)
	if !ready && len(o.pending.games) >= maxGames {
		due, ready = o.pending, true
		o.pending, o.samples = shardBatch{}, 0
	}
	return due, ready
}

// behind returns the pending games when they were played by an older
// network than st's: once a newer one is in play, waiting for more
// games of theirs only brings them nearer to being refused as stale.
func (o *outbox) behind(st State) (shardBatch, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.pending.games) == 0 || (o.pending.state.Generation >= st.Generation && o.pending.state.RunID == st.RunID) {
		return shardBatch{}, false
	}
	b := o.pending
	o.pending, o.samples = shardBatch{}, 0
	return b, true
}

// due returns the pending games once the first has waited longer than d.
func (o *outbox) due(d time.Duration) (shardBatch, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.pending.games) == 0 || time.Since(o.first) < d {
		return shardBatch{}, false
	}
	b := o.pending
	o.pending, o.samples = shardBatch{}, 0
	return b, true
}

// publishAll publishes the batches as they come, counting their games in
// published, until batches closes; one that fails stops the stream, and
// the rest are dropped. A stream
// stopped for good (ctx ended) drops what it had not sent: its games
// would be refused, or nobody is there to take them.
func (w *worker) publishAll(ctx context.Context, stop func(), batches <-chan shardBatch, published *atomic.Int64) error {
	var failed error
	for b := range batches {
		if failed != nil || ctx.Err() != nil {
			continue
		}
		if err := w.publish(ctx, b.state, b.games); err != nil && ctx.Err() == nil {
			failed = err
			stop()
			continue
		}
		published.Add(int64(len(b.games)))
	}
	return failed
}

// publish sends games as one or more shards, each small enough for the
// server's message size, retrying while the server is away.
func (w *worker) publish(ctx context.Context, st State, games []selfplay.GameRecord) error {
	if len(games) == 0 {
		return nil
	}
	h := ShardHeader{
		Format: Format, RunID: st.RunID, Game: w.game.Name(), Generation: st.Generation,
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
		if err := w.publish(ctx, st, games[:half]); err != nil {
			return err
		}
		return w.publish(ctx, st, games[half:])
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
			w.shards.Add(1)
			w.sentBytes.Add(int64(len(body)))
			w.sentGames.Add(int64(h.Games))
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
