package cluster

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/flipzero/flipzero/data"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/loop"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/cpu"
	"github.com/flipzero/flipzero/runfolder"
	"github.com/flipzero/flipzero/selfplay"
)

// syncBuffer is a log several goroutines write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// tinyConfig writes the tic-tac-toe config with small generations.
func tinyConfig(t *testing.T, gamesPerGen int) string {
	t.Helper()
	raw, err := os.ReadFile("../configs/tictactoe.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(raw), "games_per_generation: 200", "games_per_generation: "+strconv.Itoa(gamesPerGen), 1)
	text = strings.Replace(text, "min_samples: 256", "min_samples: 32", 1)
	text = strings.Replace(text, "concurrent_games: 64", "concurrent_games: 16", 1)
	path := filepath.Join(t.TempDir(), "tictactoe.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// embedded starts an embedded server on a random loopback port.
func embedded(t *testing.T, auth Auth) (string, func()) {
	t.Helper()
	s, err := Serve(ServerOptions{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	stop := func() { s.Shutdown(); s.WaitForShutdown() }
	t.Cleanup(stop)
	return s.ClientURL(), stop
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// debianServer runs the nats-server program (Debian's package) on a
// loopback port with its store in dir; stop ends it.
func debianServer(t *testing.T, port int, dir string) (url string, stop func()) {
	t.Helper()
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		t.Skip("nats-server is not installed (apt-get install nats-server)")
	}
	cmd := exec.Command(bin, "-a", "127.0.0.1", "-p", strconv.Itoa(port), "-js", "-sd", dir)
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	stop = func() {
		select {
		case <-done:
			return
		default:
		}
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("nats-server on port %d:\n%s", port, out.String())
		}
	})
	url = fmt.Sprintf("nats://127.0.0.1:%d", port)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return url, stop
		}
		if time.Now().After(deadline) {
			t.Fatalf("nats-server did not start:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func connect(t *testing.T, url string, auth Auth) *nats.Conn {
	t.Helper()
	nc, err := Connect(ConnectOptions{URL: url, Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// newRun creates a run folder with its config and a generation-0 network.
func newRun(t *testing.T, gamesPerGen int) (runfolder.Folder, *nn.Folded) {
	t.Helper()
	run := runfolder.Folder(filepath.Join(t.TempDir(), "run"))
	if err := run.Create(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(tinyConfig(t, gamesPerGen))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(run.Config(), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := loop.ParseConfig(raw, games.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	net, err := nn.New(tictactoe.Game{}, cfg.Network, 1)
	if err != nil {
		t.Fatal(err)
	}
	return run, net.Fold()
}

// storedSamples counts the samples in a run's received shards, and
// fails on a shard stored twice.
func storedSamples(t *testing.T, run runfolder.Folder) (samples, shards int) {
	t.Helper()
	received, err := run.ReceivedShards()
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, r := range received {
		if ids[r.ID] {
			t.Errorf("shard %s stored twice", r.ID)
		}
		ids[r.ID] = true
		s, err := data.ReadShard(r.Path, tictactoe.Game{})
		if err != nil {
			t.Fatal(err)
		}
		samples += len(s)
	}
	return samples, len(received)
}

// TestTrainerAndWorkers runs the loop for two generations with two
// workers over the embedded server: every shard a worker had accepted is
// either stored once or still waiting in the stream, and the positions
// trained on are the positions stored.
func TestTrainerAndWorkers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	auth := Auth{Token: "s3cret"}
	url, _ := embedded(t, auth)
	run, _ := newRun(t, 24)
	var log syncBuffer
	trainer, err := NewTrainer(connect(t, url, auth), TrainerOptions{Run: run, Games: games.Builtin(), MaxStale: 1, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	sent := map[string]int{}
	lags := 0
	wctx, stopWorkers := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := RunWorker(wctx, connect(t, url, auth), WorkerOptions{Backend: cpu.Backend(),
				Name: NameOf(string(run)), Games: games.Builtin(), Workers: 1, ID: fmt.Sprint("w", i), Seed: uint64(i), Log: &log,
				OnShard: func(id string, games, samples int) {
					mu.Lock()
					sent[id] = samples
					mu.Unlock()
				},
				OnNetwork: func(int, time.Duration) {
					mu.Lock()
					lags++
					mu.Unlock()
				},
			})
			if err != nil && wctx.Err() == nil {
				t.Errorf("worker: %v", err)
			}
		}()
	}
	err = loop.Loop(ctx, loop.LoopOptions{Backend: cpu.Backend(), RunDir: string(run), MaxGenerations: 2, Remote: trainer, Seed: 1, Log: &log})
	stopWorkers()
	wg.Wait()
	if err != nil {
		t.Fatalf("loop: %v\n%s", err, log.String())
	}
	ms, err := loop.ReadMetrics(run.Metrics())
	if err != nil || len(ms) != 2 {
		t.Fatalf("metrics: %v, %d generations\n%s", err, len(ms), log.String())
	}
	stored, shards := storedSamples(t, run)
	positions := ms[0].Positions + ms[1].Positions
	if stored != positions || stored == 0 {
		t.Errorf("%d samples stored, the loop counted %d positions", stored, positions)
	}
	if ms[0].Games < 24 || ms[1].Games < 24 {
		t.Errorf("generations of %d and %d games, want at least 24", ms[0].Games, ms[1].Games)
	}
	// The workers' games are kept as local self-play's are, for the
	// run's page to replay.
	for _, m := range ms {
		kept, skipped, err := loop.ReadGames(run.GameRecords(m.Generation), 1000, 1<<20)
		if err != nil || len(kept) != m.Games || skipped != 0 {
			t.Errorf("generation %d: %d games kept, %d lines skipped (%v); the metrics count %d", m.Generation, len(kept), skipped, err, m.Games)
		}
	}
	st := trainer.Stats()
	if st.Shards != shards || st.Samples != stored {
		t.Errorf("trainer counted %d shards of %d samples, the run holds %d of %d", st.Shards, st.Samples, shards, stored)
	}
	// Whatever was sent and not stored is still in the stream or was
	// refused as stale: nothing vanished.
	received, _ := run.ReceivedShards()
	for _, r := range received {
		if _, ok := sent[r.ID]; !ok {
			t.Errorf("stored shard %s that no worker sent", r.ID)
		}
	}
	waiting := queuedNotStored(t, ctx, connect(t, url, auth), run)
	if got := len(received) + st.Refused + waiting; got != len(sent) {
		t.Errorf("%d shards sent; %d stored, %d refused, %d waiting", len(sent), len(received), st.Refused, waiting)
	}
	if lags < 2 {
		t.Errorf("workers picked up %d networks, want each at least one", lags)
	}
}

// goodShard is a valid shard of run's generation gen, as a worker sends it.
func goodShard(t testing.TB, runID string, gen int) (ShardHeader, []data.Sample) {
	t.Helper()
	g := tictactoe.Game{}
	s := data.Sample{Planes: make([]float32, 27), Legal: []int32{0, 4, 8}, Policy: []float32{0.25, 0.5, 0.25}, Weight: 1}
	s.Planes[4] = 1
	h := ShardHeader{Format: Format, RunID: runID, Game: g.Name(), Generation: gen, Shard: randomID(), Worker: "test", Tally: selfplay.Tally{Games: 1, Moves: 5, Results: [3]int{1, 0, 0}, Surprise: 0.2, SurpriseSamples: 1},
		Records: []string{"b2;a1;c1;a3;a2\tblack\ttictactoe"}}
	return h, []data.Sample{s}
}

// sendShard publishes b on run's shard subject as a worker would, with
// msgID as the server's deduplication id.
func sendShard(t *testing.T, ctx context.Context, nc *nats.Conn, run runfolder.Folder, msgID string, b []byte) {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	m := nats.NewMsg(shardSubject(NameOf(string(run))))
	m.Data = b
	m.Header.Set(jetstream.MsgIDHeader, msgID)
	if _, err := js.PublishMsg(ctx, m); err != nil {
		t.Fatal(err)
	}
}

// reshaped is tic-tac-toe with another tensor shape, for forging shards
// whose shapes are wrong.
type reshaped struct{ tictactoe.Game }

func (reshaped) EncodedShape() (int, int, int) { return 2, 3, 3 }

func body(t testing.TB, h ShardHeader, g env.Game, samples []data.Sample) []byte {
	t.Helper()
	b, err := encodeShard(h, g, samples)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// forgedBody is body with every sample's outcome set to outcome, written
// by hand in the data package's shard format (version 2), since
// data.EncodeShard refuses to write an outcome outside [-1, 1]: what a
// worker of another build, or a forger, might send.
func forgedBody(t *testing.T, h ShardHeader, g env.Game, samples []data.Sample, outcome float32) []byte {
	t.Helper()
	h.Samples = len(samples)
	var payload bytes.Buffer
	zw, _ := flate.NewWriter(&payload, flate.BestSpeed)
	put := func(v uint32) { zw.Write(binary.LittleEndian.AppendUint32(nil, v)) }
	for _, s := range samples {
		put(uint32(len(s.Legal)))
		put(math.Float32bits(outcome))
		put(math.Float32bits(s.Weight))
		for _, v := range s.Planes {
			put(math.Float32bits(v))
		}
		for _, a := range s.Legal {
			put(uint32(a))
		}
		for _, p := range s.Policy {
			put(math.Float32bits(p))
		}
	}
	zw.Close()
	planes, height, width := g.EncodedShape()
	shard := append([]byte("FZSHARD\x00"), 2, 0, byte(len(g.Name())), 0)
	shard = append(shard, g.Name()...)
	for _, v := range []int{planes, height, width, g.ActionSpace(), len(samples)} {
		shard = binary.LittleEndian.AppendUint32(shard, uint32(v))
	}
	shard = binary.LittleEndian.AppendUint64(shard, uint64(payload.Len()))
	crc := crc32.Update(crc32.Checksum(shard, crc32.MakeTable(crc32.Castagnoli)), crc32.MakeTable(crc32.Castagnoli), payload.Bytes())
	shard = binary.LittleEndian.AppendUint32(shard, crc)
	shard = append(shard, payload.Bytes()...)
	head, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	b := binary.LittleEndian.AppendUint32([]byte(wireMagic), uint32(len(head)))
	return append(append(b, head...), shard...)
}

// TestDecodeRefusesBadOutcomes: a shard whose outcomes are not numbers in
// [-1, 1] is refused with a reason naming the outcome, and the same
// shard with a one-player game's real-valued outcome is taken whole.
func TestDecodeRefusesBadOutcomes(t *testing.T) {
	g := tictactoe.Game{}
	for _, tt := range []struct {
		outcome float32
		want    string // "" for a good shard
	}{
		{0.375, ""},
		{-1, ""},
		{float32(math.NaN()), "outcome NaN"},
		{float32(math.Inf(1)), "outcome +Inf"},
		{float32(math.Inf(-1)), "outcome -Inf"},
		{1.0000001, "outcome 1.0000001"},
		{-2, "outcome -2"},
	} {
		h, s := goodShard(t, "run", 1)
		head, rest, err := decodeHeader(forgedBody(t, h, g, s, tt.outcome))
		if err != nil {
			t.Fatalf("%v: header: %v", tt.outcome, err)
		}
		got, err := decodeSamples(head, rest, g)
		switch {
		case tt.want == "" && (err != nil || len(got) != 1 || got[0].Outcome != tt.outcome):
			t.Errorf("outcome %v: %v, want the sample back", tt.outcome, err)
		case tt.want != "" && (!errors.Is(err, errRefused) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("outcome %v: %v, want a refusal saying %q", tt.outcome, err, tt.want)
		}
	}
}

// TestRefusesBadShards sends forged and corrupt shards beside good ones
// through real servers (Debian's nats-server, and the embedded one): each
// bad one is dropped with its reason in the log, the good ones are
// stored, a redelivered one is stored once.
func TestRefusesBadShards(t *testing.T) {
	t.Run("nats-server", func(t *testing.T) {
		url, _ := debianServer(t, freePort(t), t.TempDir())
		refusesBadShards(t, url)
	})
	t.Run("embedded", func(t *testing.T) {
		url, _ := embedded(t, Auth{})
		refusesBadShards(t, url)
	})
}

func refusesBadShards(t *testing.T, url string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nc := connect(t, url, Auth{})
	run, net := newRun(t, 3)
	var log syncBuffer
	trainer, err := NewTrainer(nc, TrainerOptions{Run: run, Games: games.Builtin(), MaxStale: 1, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if err := trainer.Publish(ctx, 5, net); err != nil {
		t.Fatal(err)
	}
	id := trainer.runID
	g := tictactoe.Game{}
	send := func(msgID string, b []byte) { t.Helper(); sendShard(t, ctx, nc, run, msgID, b) }
	type forged struct {
		why  string // what the log must say
		body []byte
	}
	var bad []forged
	add := func(why string, mutate func(h *ShardHeader, s []data.Sample) []byte) {
		h, s := goodShard(t, id, 5)
		bad = append(bad, forged{why, mutate(&h, s)})
	}
	add("checksum mismatch", func(h *ShardHeader, s []data.Sample) []byte {
		b := body(t, *h, g, s)
		b[len(b)-3] ^= 0x40
		return b
	})
	add(`game "othello"`, func(h *ShardHeader, s []data.Sample) []byte { h.Game = "othello"; return body(t, *h, g, s) })
	add("at most", func(h *ShardHeader, s []data.Sample) []byte {
		b := body(t, *h, g, s)
		// The header claims one sample; the shard inside claims a million.
		cut := bytes.Index(b, []byte("FZSHARD"))
		nameEnd := cut + 12 + len("tictactoe")
		binary.LittleEndian.PutUint32(b[nameEnd+16:], 1_000_000)
		return b
	})
	add("samples, must be", func(h *ShardHeader, s []data.Sample) []byte {
		// A header claiming more samples than any shard may hold.
		h.Samples = MaxSamples + 1
		head, _ := json.Marshal(h)
		shard, _ := data.EncodeShard(g, s)
		b := binary.LittleEndian.AppendUint32([]byte(wireMagic), uint32(len(head)))
		return append(append(b, head...), shard...)
	})
	add("shapes", func(h *ShardHeader, s []data.Sample) []byte {
		s[0].Planes = make([]float32, 18)
		return body(t, *h, reshaped{}, s)
	})
	add("plane value 3 is NaN", func(h *ShardHeader, s []data.Sample) []byte {
		s[0].Planes[3] = float32(math.NaN())
		return body(t, *h, g, s)
	})
	add("outcome NaN", func(h *ShardHeader, s []data.Sample) []byte {
		return forgedBody(t, *h, g, s, float32(math.NaN()))
	})
	add("outcome 1.5", func(h *ShardHeader, s []data.Sample) []byte {
		return forgedBody(t, *h, g, s, 1.5)
	})
	add("policy sums to", func(h *ShardHeader, s []data.Sample) []byte {
		s[0].Policy[1] = 0.9
		return body(t, *h, g, s)
	})
	add("another run", func(h *ShardHeader, s []data.Sample) []byte { h.RunID = randomID(); return body(t, *h, g, s) })
	add("wire format 99", func(h *ShardHeader, s []data.Sample) []byte { h.Format = 99; return body(t, *h, g, s) })
	add("more than 1 older", func(h *ShardHeader, s []data.Sample) []byte { h.Generation = 3; return body(t, *h, g, s) })
	add("newer than the published", func(h *ShardHeader, s []data.Sample) []byte { h.Generation = 6; return body(t, *h, g, s) })
	add("bad magic", func(h *ShardHeader, s []data.Sample) []byte { return []byte("hello") })
	add("2 games of 1 started from forks", func(h *ShardHeader, s []data.Sample) []byte { h.Forked = 2; return body(t, *h, g, s) })
	add("2 game records for 1 games", func(h *ShardHeader, s []data.Sample) []byte {
		h.Records = append(h.Records, h.Records[0])
		return body(t, *h, g, s)
	})
	add("control character", func(h *ShardHeader, s []data.Sample) []byte {
		h.Records[0] = "b2;a1\x1b[2J\tblack\ttictactoe"
		return body(t, *h, g, s)
	})
	add(`not moves, an outcome and the game "tictactoe"`, func(h *ShardHeader, s []data.Sample) []byte {
		h.Records[0] = "b2;a1\tblack\tothello"
		return body(t, *h, g, s)
	})
	add("resignations", func(h *ShardHeader, s []data.Sample) []byte {
		h.Resigned = 2
		return body(t, *h, g, s)
	})
	add("policy surprise -1", func(h *ShardHeader, s []data.Sample) []byte {
		h.Surprise = -1
		return body(t, *h, g, s)
	})
	add("policy surprise 0.2 over 2 of 1", func(h *ShardHeader, s []data.Sample) []byte {
		h.SurpriseSamples = 2
		return body(t, *h, g, s)
	})
	for i, f := range bad {
		send(fmt.Sprint("bad", i), f.body)
	}
	h, s := goodShard(t, id, 4) // one generation old: still welcome
	good := body(t, h, g, s)
	send("good", good)
	send("again", good) // a redelivery JetStream's own window does not catch
	h2, s2 := goodShard(t, id, 5)
	h2.Games = 2
	h2.Results = [3]int{1, 0, 1}
	h2.Records = append(h2.Records, "b2;a1\tdraw\ttictactoe")
	send("good2", body(t, h2, g, s2))

	var got []loop.RemoteGames
	if err := trainer.Collect(ctx, 6, 3, func(b loop.RemoteGames) { got = append(got, b) }); err != nil {
		t.Fatalf("collect: %v\n%s", err, log.String())
	}
	if len(got) != 2 || got[0].Games+got[1].Games != 3 {
		t.Errorf("collected %+v, want the two good shards", got)
	}
	for _, f := range bad {
		if !strings.Contains(log.String(), f.why) {
			t.Errorf("the log does not say %q:\n%s", f.why, log.String())
		}
	}
	if !strings.Contains(log.String(), "already stored") {
		t.Errorf("the redelivered shard was not recognised:\n%s", log.String())
	}
	if _, shards := storedSamples(t, run); shards != 2 {
		t.Errorf("%d shards stored, want 2", shards)
	}
	// The stored shards' games are kept beside the generation's others.
	if kept, _, err := loop.ReadGames(run.GameRecords(6), 100, 1<<20); err != nil || len(kept) != 3 {
		t.Errorf("generation 6 keeps %d games (%v), want the 3 received", len(kept), err)
	}
	if st := trainer.Stats(); st.Refused != len(bad) || st.Duplicates != 1 {
		t.Errorf("stats %+v: want %d refused, 1 duplicate", st, len(bad))
	}

	// A restarted trainer knows the stored shards from the run folder.
	again, err := NewTrainer(nc, TrainerOptions{Run: run, Games: games.Builtin(), MaxStale: 1, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if err := again.Publish(ctx, 5, net); err != nil {
		t.Fatal(err)
	}
	send("third", good)
	h3, s3 := goodShard(t, id, 5)
	send("fresh", body(t, h3, g, s3))
	got = nil
	if err := again.Collect(ctx, 6, 4, func(b loop.RemoteGames) { got = append(got, b) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || !got[0].Stored || !got[1].Stored || got[2].Stored {
		t.Errorf("after a restart collected %+v: want the two stored shards and the fresh one", got)
	}
	if again.Stats().Duplicates != 1 {
		t.Errorf("the restarted trainer did not drop the old shard: %+v", again.Stats())
	}
}

// TestServerRestart stops Debian's nats-server in the middle of a run and
// starts it again on the same port and storage: the trainer and the
// worker reconnect by themselves, the run finishes, and every shard the
// server accepted is stored, refused as stale, or still queued.
func TestServerRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a server during a three-generation run")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	port, store := freePort(t), t.TempDir()
	url, stop := debianServer(t, port, store)
	run, _ := newRun(t, 24)
	var log syncBuffer
	trainer, err := NewTrainer(connect(t, url, Auth{}), TrainerOptions{Run: run, Games: games.Builtin(), MaxStale: 1, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	sent := map[string]bool{}
	wctx, stopWorker := context.WithCancel(ctx)
	workerDone := make(chan error, 1)
	go func() {
		workerDone <- RunWorker(wctx, connect(t, url, Auth{}), WorkerOptions{Backend: cpu.Backend(),
			Name: NameOf(string(run)), Games: games.Builtin(), Workers: 1, ID: "w", Log: &log,
			OnShard: func(id string, _, _ int) { mu.Lock(); sent[id] = true; mu.Unlock() },
		})
	}()
	restarted := make(chan struct{})
	go func() {
		defer close(restarted)
		for ctx.Err() == nil {
			if n, _ := storedCount(run); n >= 1 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		stop()
		log.Write([]byte("-- server stopped\n"))
		time.Sleep(time.Second)
		debianServer(t, port, store)
		log.Write([]byte("-- server started\n"))
	}()
	err = loop.Loop(ctx, loop.LoopOptions{Backend: cpu.Backend(), RunDir: string(run), MaxGenerations: 3, Remote: trainer, Seed: 1, Log: &log})
	<-restarted
	stopWorker()
	if werr := <-workerDone; werr != nil && wctx.Err() == nil {
		t.Errorf("worker: %v", werr)
	}
	if err != nil {
		t.Fatalf("loop: %v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "-- server started") {
		t.Fatalf("the server was not restarted during the run:\n%s", log.String())
	}
	ms, _ := loop.ReadMetrics(run.Metrics())
	if len(ms) != 3 {
		t.Fatalf("%d generations finished, want 3:\n%s", len(ms), log.String())
	}
	stored, shards := storedSamples(t, run)
	if positions := ms[0].Positions + ms[1].Positions + ms[2].Positions; positions != stored {
		t.Errorf("%d positions trained, %d stored", positions, stored)
	}
	waiting := queuedNotStored(t, ctx, connect(t, url, Auth{}), run)
	mu.Lock()
	defer mu.Unlock()
	if got := shards + trainer.Stats().Refused + waiting; got != len(sent) {
		t.Errorf("%d shards accepted by the server; %d stored, %d refused, %d queued\n%s", len(sent), shards, trainer.Stats().Refused, waiting, log.String())
	}
}

// TestLostAcknowledgement stops the server between the trainer's taking
// a shard and its acknowledging it, under a caller's distant deadline:
// the trainer stores the shard, gives the acknowledgement up after
// requestTimeout rather than at the deadline; a network published while
// the server stays away longer than that is published once it is back;
// and the trainer goes on collecting, the shard stored once.
func TestLostAcknowledgement(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out an acknowledgement's timeout")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	port, store := freePort(t), t.TempDir()
	url, stop := debianServer(t, port, store)
	nc := connect(t, url, Auth{})
	run, net := newRun(t, 2)
	var log syncBuffer
	trainer, err := NewTrainer(nc, TrainerOptions{Run: run, Games: games.Builtin(), MaxStale: 1, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if err := trainer.Publish(ctx, 0, net); err != nil {
		t.Fatal(err)
	}
	send := func() {
		t.Helper()
		h, s := goodShard(t, trainer.runID, 0)
		sendShard(t, ctx, nc, run, h.Shard, body(t, h, tictactoe.Game{}, s))
	}
	send()
	batch, err := trainer.cons.Fetch(1, jetstream.FetchMaxWait(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	msg := <-batch.Messages()
	if msg == nil {
		t.Fatalf("no shard fetched: %v", batch.Error())
	}
	stop()
	began := time.Now()
	var got []loop.RemoteGames
	games := trainer.receive(ctx, 1, msg, func(b loop.RemoteGames) { got = append(got, b) })
	if waited := time.Since(began); waited > requestTimeout+5*time.Second {
		t.Errorf("the trainer waited %v for an acknowledgement the stopped server could not answer", waited.Round(time.Second))
	}
	if games != 1 || len(got) != 1 {
		t.Errorf("received %d games in %d batches, want the shard's one", games, len(got))
	}
	if !strings.Contains(log.String(), "acknowledging shard") {
		t.Fatalf("the acknowledgement reached a stopped server:\n%s", log.String())
	}

	published := make(chan error, 1)
	go func() { published <- trainer.Publish(ctx, 1, net) }()
	time.Sleep(requestTimeout + 2*time.Second) // the first attempt times out
	debianServer(t, port, store)
	if err := <-published; err != nil {
		t.Fatalf("publishing across the restart: %v\n%s", err, log.String())
	}
	if entry, err := trainer.kv.Get(ctx, stateKey); err != nil || !strings.Contains(string(entry.Value()), `"generation":1,`) {
		t.Fatalf("the state after publishing generation 1 across the restart: %v", err)
	}
	send()
	got = nil
	if err := trainer.Collect(ctx, 1, 2, func(b loop.RemoteGames) { got = append(got, b) }); err != nil {
		t.Fatalf("collect after the restart: %v\n%s", err, log.String())
	}
	if len(got) != 2 || !got[0].Stored || got[1].Stored {
		t.Errorf("after the restart collected %+v: want the stored shard and the fresh one", got)
	}
	if _, shards := storedSamples(t, run); shards != 2 {
		t.Errorf("%d shards stored, want 2", shards)
	}
	// Both shards' games are kept, the one stored before the restart too.
	if kept, _, err := loop.ReadGames(run.GameRecords(1), 100, 1<<20); err != nil || len(kept) != 2 {
		t.Errorf("generation 1 keeps %d games (%v), want the 2 received", len(kept), err)
	}
	if n := queuedNotStored(t, ctx, connect(t, url, Auth{}), run); n != 0 {
		t.Errorf("%d shards queued that were not stored", n)
	}
}

func storedCount(run runfolder.Folder) (int, error) {
	r, err := run.ReceivedShards()
	return len(r), err
}

// TestWorkerRefusesAnotherVersion: a worker meeting a run published by a
// trainer of another wire format stops with a message that says so.
func TestWorkerRefusesAnotherVersion(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	url, _ := embedded(t, Auth{})
	nc := connect(t, url, Auth{})
	js, _ := jetstream.New(nc)
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: stateBucket("other")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, stateKey, []byte(`{"format":99,"version":"flipzero v9","game":"tictactoe","generation":3}`)); err != nil {
		t.Fatal(err)
	}
	err = RunWorker(ctx, nc, WorkerOptions{Backend: cpu.Backend(), Name: "other", Games: games.Builtin(), Version: "flipzero v1"})
	if !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), "format 99") || !strings.Contains(err.Error(), "same version") {
		t.Errorf("worker of another version: %v", err)
	}
}

// TestTrainerRefusesNameOfAnotherRun: a second run folder taking a run
// name the server already has is refused before it touches the stream.
func TestTrainerRefusesNameOfAnotherRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	url, _ := embedded(t, Auth{})
	nc := connect(t, url, Auth{})
	first, net := newRun(t, 3)
	a, err := NewTrainer(nc, TrainerOptions{Run: first, Name: "shared", Games: games.Builtin()})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Publish(ctx, 0, net); err != nil {
		t.Fatal(err)
	}
	second, _ := newRun(t, 3)
	b, err := NewTrainer(nc, TrainerOptions{Run: second, Name: "shared", Games: games.Builtin()})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Publish(ctx, 0, net); err == nil || !strings.Contains(err.Error(), "already has a run named") {
		t.Errorf("a second run of the same name: %v", err)
	}
	// The first run's trainer, restarted, is its own run again.
	again, _ := NewTrainer(nc, TrainerOptions{Run: first, Name: "shared", Games: games.Builtin()})
	if err := again.Publish(ctx, 0, net); err != nil {
		t.Errorf("the first run restarted: %v", err)
	}
}

// TestReceivedNames: a received shard's file name gives back its
// generation, id, games and the network that played it, ids with dashes
// included.
func TestReceivedNames(t *testing.T) {
	run := runfolder.Folder(t.TempDir())
	if err := run.Create(); err != nil {
		t.Fatal(err)
	}
	path := run.ReceivedShard(12, "a-b_9-3g", 7, 11)
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(run.Shard(12), nil, 0o644) // a local generation's shard is not a received one
	got, err := run.ReceivedShards()
	if err != nil || len(got) != 1 {
		t.Fatalf("%v, %v", got, err)
	}
	if r := got[0]; r.Generation != 12 || r.ID != "a-b_9-3g" || r.Games != 7 || r.Played != 11 || r.Path != path {
		t.Errorf("parsed %+v from %s", r, filepath.Base(path))
	}
}

// queuedNotStored counts the shards waiting in the run's stream that are
// not stored already: a stored shard whose acknowledgement was lost (the
// server going down) waits for its redelivery, to be dropped then.
func queuedNotStored(t *testing.T, ctx context.Context, nc *nats.Conn, run runfolder.Folder) int {
	t.Helper()
	queued, err := Queued(ctx, nc, NameOf(string(run)))
	if err != nil {
		t.Fatal(err)
	}
	received, _ := run.ReceivedShards()
	for _, r := range received {
		delete(queued, r.ID)
	}
	return len(queued)
}

// TestWorkerPausesWhenTheTrainerFallsBehind: with no trainer taking its
// shards, a worker stops playing once a generation's games wait in the
// stream (back-pressure), and plays again once the trainer takes them.
func TestWorkerPausesWhenTheTrainerFallsBehind(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url, _ := embedded(t, Auth{})
	const quota = 24
	run, net := newRun(t, quota)
	var log syncBuffer
	trainer, err := NewTrainer(connect(t, url, Auth{}), TrainerOptions{Run: run, Games: games.Builtin(), MaxStale: 1, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if err := trainer.Publish(ctx, 0, net); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	sentGames := 0
	wctx, stopWorker := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- RunWorker(wctx, connect(t, url, Auth{}), WorkerOptions{Backend: cpu.Backend(),
			Name: NameOf(string(run)), Games: games.Builtin(), Workers: 1, ID: "w", Seed: 1, Log: &log,
			OnShard: func(_ string, games, _ int) {
				mu.Lock()
				sentGames += games
				mu.Unlock()
			},
		})
	}()
	defer func() {
		stopWorker()
		<-done
	}()
	waitFor := func(what, line string) {
		t.Helper()
		for !strings.Contains(log.String(), line) {
			if ctx.Err() != nil {
				t.Fatalf("the worker never said it was %s\n%s", what, log.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor("pausing", "pausing")
	sent := func() int {
		mu.Lock()
		defer mu.Unlock()
		return sentGames
	}
	// The games in play when the gate closed still end and go out; then
	// nothing more.
	paused := sent()
	for settled := false; !settled; {
		time.Sleep(500 * time.Millisecond)
		now := sent()
		settled, paused = now == paused, now
		if ctx.Err() != nil {
			t.Fatalf("the worker kept sending games after it paused: %d\n%s", paused, log.String())
		}
	}
	// A generation's worth, and at most the games in play (16), those
	// waiting for their batch (16) and those of the quarter second before
	// the worker looked (16 more) beyond it.
	if paused < quota || paused > quota+48 {
		t.Errorf("paused after sending %d games, want between %d and %d", paused, quota, quota+48)
	}
	time.Sleep(time.Second)
	if later := sent(); later != paused {
		t.Fatalf("sent %d games while paused (%d before)", later-paused, paused)
	}
	if err := trainer.Collect(ctx, 1, quota, func(loop.RemoteGames) {}); err != nil {
		t.Fatal(err)
	}
	waitFor("playing again", "caught up")
}

// TestShardsWaitingInTheStreamStayFresh: a shard is as fresh as when it
// reached the server, whatever the trainer published while it waited; a
// shard whose network was too old when it arrived is refused.
func TestShardsWaitingInTheStreamStayFresh(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url, _ := embedded(t, Auth{})
	nc := connect(t, url, Auth{})
	run, net := newRun(t, 2)
	var log syncBuffer
	trainer, err := NewTrainer(nc, TrainerOptions{Run: run, Games: games.Builtin(), MaxStale: 1, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	send := func() string {
		t.Helper()
		h, s := goodShard(t, trainer.runID, 0)
		sendShard(t, ctx, nc, run, h.Shard, body(t, h, tictactoe.Game{}, s))
		return h.Shard
	}
	if err := trainer.Publish(ctx, 0, net); err != nil {
		t.Fatal(err)
	}
	waited := send()
	for gen := 1; gen <= 2; gen++ {
		if err := trainer.Publish(ctx, gen, net); err != nil {
			t.Fatal(err)
		}
	}
	late := send()
	batch, err := trainer.cons.Fetch(2, jetstream.FetchMaxWait(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var got []loop.RemoteGames
	for msg := range batch.Messages() {
		trainer.receive(ctx, 3, msg, func(b loop.RemoteGames) { got = append(got, b) })
	}
	if len(got) != 1 || trainer.stats.Refused != 1 {
		t.Fatalf("%d shards taken and %d refused, want the one that waited taken and the late one refused\n%s", len(got), trainer.stats.Refused, log.String())
	}
	if !strings.Contains(log.String(), late) || strings.Contains(log.String(), waited+`" from`) {
		t.Errorf("the late shard %s should be the one refused:\n%s", late, log.String())
	}
}
