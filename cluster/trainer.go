package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/flipzero/flipzero/data"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/internal/atomicfile"
	"github.com/flipzero/flipzero/loop"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/runfolder"
	"github.com/flipzero/flipzero/selfplay"
)

// State is what the trainer tells the workers, in the state bucket.
type State struct {
	Format  int    `json:"format"`
	Version string `json:"version"` // the trainer's flipzero, for messages
	RunID   string `json:"run_id"`
	Game    string `json:"game"`
	// Config is the run's config.yaml: the workers play with its search
	// and selfplay sections.
	Config string `json:"config"`
	// Generation is the network to play with, the object Model in the
	// model store, published at Published.
	Generation int       `json:"generation"`
	Model      string    `json:"model"`
	Published  time.Time `json:"published"`
	// MaxStale is how many generations older than the generation
	// published when a shard arrives its network may be and still be
	// trained on.
	MaxStale int `json:"max_stale"`
}

const (
	maxStateBytes = 1 << 20
	maxModelBytes = 512 << 20
)

// TrainerOptions configure the trainer's side.
type TrainerOptions struct {
	Run   runfolder.Folder
	Name  string // the run's name on the server (default NameOf(Run))
	Games loop.Games
	// MaxStale: shards played by a network more than this many
	// generations older than the one published when they reached the
	// server are refused (default 0
	// means 0: only the newest network's games; the loop's flag defaults
	// to 1 so that games in flight when a network is published count).
	MaxStale int
	// StreamBytes bounds the shard stream: workers wait when it is full
	// (default 1 GiB).
	StreamBytes int64
	Version     string
	Log         io.Writer
}

// Stats counts what the trainer received.
type Stats struct {
	Shards, Samples, Games int   // stored
	Bytes                  int64 // message bytes of stored shards
	Duplicates, Refused    int
	// RefusedSamples counts the samples refused shards said they held.
	RefusedSamples int
}

// Trainer is the loop's Remote over NATS: it publishes networks and the
// run's state and collects the workers' shards.
type Trainer struct {
	opts TrainerOptions
	js   jetstream.JetStream

	mu    sync.Mutex
	ready bool
	runID string
	game  env.Game
	raw   []byte
	kv    jetstream.KeyValue
	obj   jetstream.ObjectStore
	cons  jetstream.Consumer
	seen  map[string]bool
	// published is the generation the workers were last told (-1: none).
	published int
	// publications are the last generations published and when, by the
	// server's clock: how old a shard's network was when it arrived.
	publications []publication
	stats        Stats
}

// publication is a generation published and when the server stored it.
type publication struct {
	generation int
	at         time.Time
}

// keptPublications bounds the publications a trainer remembers: shards
// wait in the stream for a generation or two, not for dozens.
const keptPublications = 64

// publishedWhen is the generation that was published when a shard
// arrived at the server: the newest published at or before arrived, or
// where the trainer knows of none that early (a shard from before it
// started), the one published now.
func (t *Trainer) publishedWhen(arrived time.Time) int {
	for i := len(t.publications) - 1; i >= 0; i-- {
		if p := t.publications[i]; !p.at.After(arrived) {
			return p.generation
		}
	}
	return t.published
}

var _ loop.Remote = (*Trainer)(nil)

// NewTrainer prepares the trainer's side of a run on the server nc is
// connected to. The run's folder may not exist yet: it is read on the
// first Publish.
func NewTrainer(nc *nats.Conn, opts TrainerOptions) (*Trainer, error) {
	if opts.Name == "" {
		opts.Name = NameOf(string(opts.Run))
	}
	if err := CheckName(opts.Name); err != nil {
		return nil, err
	}
	if opts.StreamBytes == 0 {
		opts.StreamBytes = 1 << 30
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	return &Trainer{opts: opts, js: js, published: -1}, nil
}

// Stats is what the trainer has received so far.
func (t *Trainer) Stats() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stats
}

func (t *Trainer) logf(format string, args ...any) {
	if t.opts.Log != nil {
		fmt.Fprintf(t.opts.Log, format+"\n", args...)
	}
}

// setup reads the run folder and creates the run's bucket, object store,
// stream and consumer (or finds them from before).
func (t *Trainer) setup(ctx context.Context) error {
	if t.ready {
		return nil
	}
	run := t.opts.Run
	cfg, err := loop.LoadConfig(run.Config(), t.opts.Games)
	if err != nil {
		return err
	}
	if t.game, err = t.opts.Games.ByName(cfg.Game); err != nil {
		return err
	}
	if t.raw, err = os.ReadFile(run.Config()); err != nil {
		return err
	}
	if t.runID, err = runID(run); err != nil {
		return err
	}
	received, err := run.ReceivedShards()
	if err != nil {
		return err
	}
	t.seen = make(map[string]bool, len(received))
	for _, r := range received {
		t.seen[r.ID] = true
	}
	name := t.opts.Name
	t.kv, err = t.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: stateBucket(name), Description: "flipzero run " + name + ": state",
		History: 1, MaxValueSize: maxStateBytes, Storage: jetstream.FileStorage,
	})
	if err != nil {
		return fmt.Errorf("state bucket %s: %w", stateBucket(name), err)
	}
	// Two trainers of one name would share the stream and the workers.
	if entry, err := t.kv.Get(ctx, stateKey); err == nil {
		var st State
		if json.Unmarshal(entry.Value(), &st) == nil && st.RunID != "" && st.RunID != t.runID {
			return fmt.Errorf("the server already has a run named %q with another id (%s, this run folder's is %s): give this run another --name, or delete the old run's stream and buckets", name, st.RunID, t.runID)
		}
	}
	t.obj, err = t.js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket: modelStore(name), Description: "flipzero run " + name + ": networks",
		Storage: jetstream.FileStorage,
	})
	if err != nil {
		return fmt.Errorf("model store %s: %w", modelStore(name), err)
	}
	stream, err := t.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: shardStream(name), Description: "flipzero run " + name + ": games from workers",
		Subjects:  []string{shardSubject(name)},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage,
		MaxBytes: t.opts.StreamBytes, Discard: jetstream.DiscardNew,
		MaxMsgSize: MaxMessage + 64<<10, Duplicates: 2 * time.Minute,
	})
	if err != nil {
		return fmt.Errorf("shard stream %s: %w", shardStream(name), err)
	}
	t.cons, err = stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable: consumerName, AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: 10 * time.Second, MaxAckPending: 256,
	})
	if err != nil {
		return fmt.Errorf("shard consumer: %w", err)
	}
	t.ready = true
	return nil
}

// runID reads the run's id, making one for a run that has none.
func runID(run runfolder.Folder) (string, error) {
	raw, err := os.ReadFile(run.ClusterID())
	if err == nil {
		id := strings.TrimSpace(string(raw))
		if validShardID.MatchString(id) {
			return id, nil
		}
		return "", fmt.Errorf("%s: %q is not a run id", run.ClusterID(), id)
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	id := randomID()
	return id, atomicfile.WriteBytes(run.ClusterID(), []byte(id+"\n"))
}

func randomID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Publish puts the network in the model store and points the state at it.
func (t *Trainer) Publish(ctx context.Context, gen int, net *nn.Folded) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.setup(ctx); err != nil {
		return err
	}
	if t.published == gen {
		return nil
	}
	model := runfolder.GenerationName(gen)
	dir, err := os.MkdirTemp("", "flipzero-publish-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, model+".fznet")
	if err := nn.SaveFolded(path, net, 0, map[string]string{"generation": fmt.Sprint(gen)}); err != nil {
		return err
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	err = t.retry(ctx, fmt.Sprintf("put %s in %s", model, modelStore(t.opts.Name)), func(ctx context.Context) error {
		_, err := t.obj.PutBytes(ctx, model, raw)
		return err
	})
	if err != nil {
		return err
	}
	st := State{
		Format: Format, Version: t.opts.Version, RunID: t.runID, Game: t.game.Name(),
		Config: string(t.raw), Generation: gen, Model: model, Published: time.Now().UTC(),
		MaxStale: t.opts.MaxStale,
	}
	value, err := json.Marshal(st)
	if err != nil {
		return err
	}
	var revision uint64
	err = t.retry(ctx, "put the run's state", func(ctx context.Context) error {
		var err error
		revision, err = t.kv.Put(ctx, stateKey, value)
		return err
	})
	if err != nil {
		return err
	}
	t.published = gen
	t.remember(ctx, gen, revision)
	t.logf("published generation %d for the workers of run %s", gen, t.opts.Name)
	// Old networks are no use to anyone: workers fetch the newest.
	if old := gen - t.opts.MaxStale - 1; old >= 0 {
		t.obj.Delete(ctx, runfolder.GenerationName(old))
	}
	return nil
}

// Collect receives generation number's games until it has quota of them.
func (t *Trainer) Collect(ctx context.Context, number, quota int, add func(loop.RemoteGames)) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.setup(ctx); err != nil {
		return err
	}
	received, err := t.opts.Run.ReceivedShards()
	if err != nil {
		return err
	}
	games := 0
	for _, r := range received {
		if r.Generation != number {
			continue
		}
		n, err := data.ShardSamples(r.Path, t.game)
		if err != nil {
			continue // LoadReplay has reported it
		}
		games += r.Games
		add(loop.RemoteGames{Stored: true, Tally: selfplay.Tally{Games: r.Games}, Positions: n})
	}
	for games < quota {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch, err := t.cons.Fetch(16, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// The server is away (restarting, a network cut): the client
			// reconnects by itself, so wait and ask again.
			t.logf("fetching shards: %v", err)
			sleep(ctx, time.Second)
			continue
		}
		for msg := range batch.Messages() {
			if games >= quota {
				msg.Nak() // the next generation's
				continue
			}
			games += t.receive(ctx, number, msg, add)
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			t.logf("fetching shards: %v", err)
		}
	}
	return nil
}

// remember notes when the server stored the state that published gen,
// by the server's clock (the clock of the shards' arrival times too); by
// the trainer's, if the server does not say.
func (t *Trainer) remember(ctx context.Context, gen int, revision uint64) {
	at := time.Now()
	actx, cancel := context.WithTimeout(ctx, requestTimeout)
	if entry, err := t.kv.GetRevision(actx, stateKey, revision); err == nil {
		at = entry.Created()
	}
	cancel()
	t.publications = append(t.publications, publication{gen, at})
	if len(t.publications) > keptPublications {
		t.publications = t.publications[len(t.publications)-keptPublications:]
	}
}

// receive checks one message, stores it and acknowledges it; it returns
// the games it added.
func (t *Trainer) receive(ctx context.Context, number int, msg jetstream.Msg, add func(loop.RemoteGames)) int {
	current := t.published
	if md, err := msg.Metadata(); err == nil {
		current = t.publishedWhen(md.Timestamp)
	}
	h, samples, err := t.check(msg.Data(), current)
	if err != nil {
		t.stats.Refused++
		t.stats.RefusedSamples += h.Samples
		from := "unknown worker"
		if h.Worker != "" {
			from = fmt.Sprintf("worker %q", h.Worker)
		}
		t.logf("shard %q from %s dropped: %v", h.Shard, from, err)
		// Acknowledged, not terminated: a work-queue stream keeps
		// terminated messages (nats-server 2.9), and they would fill it.
		msg.Ack()
		return 0
	}
	if t.seen[h.Shard] {
		t.stats.Duplicates++
		t.logf("shard %s from worker %q dropped: already stored (redelivered)", h.Shard, h.Worker)
		msg.Ack()
		return 0
	}
	path := t.opts.Run.ReceivedShard(number, h.Shard, h.Games, h.Generation)
	if err := data.WriteShard(path, t.game, samples); err != nil {
		// Not acknowledged: the server redelivers it after the ack wait.
		t.logf("storing shard %s: %v", h.Shard, err)
		msg.Nak()
		return 0
	}
	// The games' records beside the generation's others, for the run's
	// page; a record lost here loses nothing of training.
	if err := runfolder.AppendLines(t.opts.Run.GameRecords(number), h.Records); err != nil {
		t.logf("keeping the games of shard %s: %v", h.Shard, err)
	}
	t.seen[h.Shard] = true
	actx, cancel := context.WithTimeout(ctx, requestTimeout)
	err = msg.DoubleAck(actx)
	cancel()
	if err != nil {
		// Stored all the same; a redelivery is recognised by its id.
		t.logf("acknowledging shard %s: %v", h.Shard, err)
	}
	t.stats.Shards++
	t.stats.Samples += len(samples)
	t.stats.Games += h.Games
	t.stats.Bytes += int64(len(msg.Data()))
	add(loop.RemoteGames{Samples: samples, Tally: h.Tally})
	return h.Games
}

// check decodes and checks a message against the run. A shard's network
// may be MaxStale generations older than current, the one published when
// the shard arrived: a shard that waited in the stream while the trainer
// caught up is as fresh as when it was sent, and workers pause while a
// generation's games wait, which bounds the wait.
func (t *Trainer) check(msg []byte, current int) (ShardHeader, []data.Sample, error) {
	h, body, err := decodeHeader(msg)
	if err != nil {
		return h, nil, err
	}
	switch {
	case h.RunID != t.runID:
		return h, nil, refuse("run id %q is not this run's %q: a worker of another run of the same name", h.RunID, t.runID)
	case h.Game != t.game.Name():
		return h, nil, refuse("game %q, this run plays %q", h.Game, t.game.Name())
	case h.Generation > t.published:
		return h, nil, refuse("played by generation %d, newer than the published %d", h.Generation, t.published)
	case h.Generation < current-t.opts.MaxStale:
		return h, nil, refuse("played by generation %d, more than %d older than generation %d, published when it arrived", h.Generation, t.opts.MaxStale, current)
	}
	samples, err := decodeSamples(h, body, t.game)
	return h, samples, err
}

// requestTimeout bounds one request to the server. A request written as
// the server went away is never answered, and the caller's context may
// have a distant deadline or none: without a bound of its own, the
// trainer would wait for that answer until the run ends.
const requestTimeout = 10 * time.Second

// retry makes a request until the server answers it or ctx ends, each
// attempt bounded by requestTimeout: the client reconnects by itself
// while the server restarts, and the run goes on once it is back.
func (t *Trainer) retry(ctx context.Context, what string, request func(context.Context) error) error {
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, requestTimeout)
		err := request(actx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if attempt == 0 || attempt%30 == 0 {
			t.logf("%s: %v (retrying)", what, err)
		}
		sleep(ctx, time.Second)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// Queued lists the shards waiting in run name's stream on the server nc
// is connected to, by id, with the samples their headers claim: what
// workers sent that no trainer has taken yet, or (after a trainer lost an
// acknowledgement) a shard stored already whose redelivery is to come.
func Queued(ctx context.Context, nc *nats.Conn, name string) (map[string]int, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	stream, err := js.Stream(ctx, shardStream(name))
	if err != nil {
		return nil, fmt.Errorf("shard stream %s: %w", shardStream(name), err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		return nil, err
	}
	queued := map[string]int{}
	if info.State.Msgs == 0 {
		return queued, nil
	}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		m, err := stream.GetMsg(ctx, seq)
		if err != nil {
			continue // deleted: taken by the trainer
		}
		h, _, err := decodeHeader(m.Data)
		if err != nil {
			h.Shard = fmt.Sprint("unreadable-", seq)
		}
		queued[h.Shard] = h.Samples
	}
	return queued, nil
}
