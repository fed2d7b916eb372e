package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flipzero/flipzero/data"
	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/loop"
	"github.com/flipzero/flipzero/runfolder"
	"github.com/flipzero/flipzero/selfplay"
)

// lockedBuffer is a process's output, read while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// started is a flipzero process of a test, killed when the test ends.
type started struct {
	cmd  *exec.Cmd
	out  *lockedBuffer
	done chan error
}

func startCommand(t *testing.T, args ...string) *started {
	t.Helper()
	cmd := commandProcess(t, args...)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &started{cmd, out, make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() { p.kill() })
	return p
}

func (p *started) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case err := <-p.done:
		p.done <- err
	case <-time.After(10 * time.Second):
	}
}

func (p *started) wait(t *testing.T, limit time.Duration) error {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		return err
	case <-time.After(limit):
		t.Fatalf("%v did not end in %v:\n%s", p.cmd.Args[1:], limit, p.out.String())
		return nil
	}
}

func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitFor polls cond until it holds or the limit passes.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool, logs ...*started) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			var b strings.Builder
			for _, p := range logs {
				fmt.Fprintf(&b, "--- %v\n%s\n", p.cmd.Args[1:], p.out.String())
			}
			t.Fatalf("%s: not within %v\n%s", what, limit, b.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func generationsDone(run string) int {
	ms, _ := loop.ReadMetrics(filepath.Join(run, "metrics.jsonl"))
	return len(ms)
}

// checkReceived checks that every position the loop counted is in a
// received shard exactly once.
func checkReceived(t *testing.T, run string) {
	t.Helper()
	received, err := runfolder.Folder(run).ReceivedShards()
	if err != nil {
		t.Fatal(err)
	}
	stored := 0
	for _, r := range received {
		s, err := data.ReadShard(r.Path, tictactoe.Game{})
		if err != nil {
			t.Fatal(err)
		}
		stored += len(s)
	}
	ms, err := loop.ReadMetrics(filepath.Join(run, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	positions := 0
	for _, m := range ms {
		positions += m.Positions
	}
	if stored != positions || stored == 0 {
		t.Errorf("%d positions in %d received shards, the loop trained on %d", stored, len(received), positions)
	}
}

// checkSurprise checks that every generation's metrics have the mean
// policy surprise of the positions workers played for it: the statistics
// come with the games. (A trainer that stopped after receiving some of a
// generation's games counts those by their number alone.)
func checkSurprise(t *testing.T, run string) {
	t.Helper()
	ms, err := loop.ReadMetrics(filepath.Join(run, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.PolicySurprise == nil || !(*m.PolicySurprise > 0 && *m.PolicySurprise < selfplay.MaxPolicySurprise) {
			t.Errorf("generation %d: policy surprise %v, want the workers' positions' mean", m.Generation, m.PolicySurprise)
		}
	}
}

// TestClusterTicTacToe trains tic-tac-toe through Debian's nats-server
// with two worker processes, one killed with SIGKILL mid-run: three
// generations finish, every position played and received is trained on
// once, and the third network does not lose to random in 40 games.
func TestClusterTicTacToe(t *testing.T) {
	if testing.Short() {
		t.Skip("three generations with real processes")
	}
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		t.Skip("nats-server is not installed (apt-get install nats-server)")
	}
	port := freeLoopbackPort(t)
	server := exec.Command(bin, "-a", "127.0.0.1", "-p", strconv.Itoa(port), "-js", "-sd", t.TempDir())
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Process.Kill(); server.Wait() })
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	waitFor(t, 10*time.Second, "nats-server listening", func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
		}
		return err == nil
	})

	run := filepath.Join(t.TempDir(), "ttt")
	trainer := startCommand(t, "loop", "--config", tinyRunConfig(t, 200), "--run", run, "--nats", url,
		"--local-workers", "0", "--generations", "3", "--quiet", "--seed", "1")
	doomed := startCommand(t, "worker", "--nats", url, "--run", "ttt", "--workers", "1", "--id", "doomed", "--seed", "2")
	survivor := startCommand(t, "worker", "--nats", url, "--run", "ttt", "--workers", "1", "--id", "survivor", "--seed", "3")
	all := []*started{trainer, doomed, survivor}
	waitFor(t, 2*time.Minute, "the first generation", func() bool { return generationsDone(run) >= 1 }, all...)
	// A worker may sit out a generation while a generation's games wait
	// for the trainer (back-pressure): any network after the first will do.
	newer := regexp.MustCompile(`playing with generation [1-9]`)
	waitFor(t, time.Minute, "the doomed worker at work after the first generation", func() bool {
		return newer.MatchString(doomed.out.String())
	}, all...)
	time.Sleep(300 * time.Millisecond) // in the middle of its games
	doomed.kill()
	if err := trainer.wait(t, 3*time.Minute); err != nil {
		t.Fatalf("trainer: %v\n%s\n--- survivor\n%s", err, trainer.out.String(), survivor.out.String())
	}
	if n := generationsDone(run); n != 3 {
		t.Fatalf("%d generations, want 3:\n%s", n, trainer.out.String())
	}
	if !newer.MatchString(survivor.out.String()) {
		t.Errorf("the surviving worker did not pick up a newer network:\n%s", survivor.out.String())
	}
	survivor.kill()
	checkRunFiles(t, run)
	checkReceived(t, run)
	checkSurprise(t, run)

	var out, errOut bytes.Buffer
	code := runCommand(context.Background(), []string{"arena", "--game", "tictactoe", "--a", filepath.Join(run, "models", "gen-000003.ckpt"),
		"--b", "random", "--games", "40", "--progress=false"}, &out, &errOut)
	if code != 0 {
		t.Fatalf("arena: exit %d: %s", code, errOut.String())
	}
	m := regexp.MustCompile(`W-D-L (\d+)-(\d+)-(\d+)`).FindStringSubmatch(out.String())
	// Random against random loses about 17 of 40 with colours
	// alternating; three small generations lose at most one or two
	// (the network itself depends on which worker's games arrived when).
	if m == nil {
		t.Fatalf("no result from the arena:\n%s", out.String())
	}
	if losses, _ := strconv.Atoi(m[3]); losses > 2 {
		t.Errorf("the third network lost %s of 40 to random, want at most 2:\n%s", m[3], out.String())
	}
	t.Logf("generation 3 against random: %s", m[0])
}

func runCommand(ctx context.Context, args []string, out, errOut *bytes.Buffer) int {
	return run(ctx, args, stdio{strings.NewReader(""), out, errOut})
}

// TestClusterTrainerKilled runs the trainer with its embedded NATS server
// and a worker process, kills the trainer with SIGKILL in the middle of a
// generation and starts it again: it resumes from its checkpoint, the
// worker carries on with the new server, and no shard is stored twice or
// trained on twice.
func TestClusterTrainerKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts a trainer process")
	}
	port := freeLoopbackPort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	run := filepath.Join(t.TempDir(), "emb")
	config := tinyRunConfig(t, 60)
	first := startCommand(t, "loop", "--config", config, "--run", run, "--serve-nats", addr,
		"--local-workers", "0", "--quiet", "--seed", "1")
	worker := startCommand(t, "worker", "--nats", "nats://"+addr, "--run", "emb", "--workers", "1", "--seed", "2")
	waitFor(t, 2*time.Minute, "the first generation", func() bool { return generationsDone(run) >= 1 }, first, worker)
	waitFor(t, time.Minute, "a shard of generation 2", func() bool {
		received, _ := runfolder.Folder(run).ReceivedShards()
		for _, r := range received {
			if r.Generation == 2 {
				return true
			}
		}
		return false
	}, first, worker)
	first.kill()
	before := generationsDone(run)

	second := startCommand(t, "loop", "--run", run, "--serve-nats", addr, "--local-workers", "0",
		"--generations", "2", "--quiet", "--seed", "3")
	if err := second.wait(t, 3*time.Minute); err != nil {
		t.Fatalf("restarted trainer: %v\n%s\n--- worker\n%s", err, second.out.String(), worker.out.String())
	}
	if !strings.Contains(second.out.String(), fmt.Sprintf("generation %d,", before)) {
		t.Errorf("the restart did not resume from generation %d:\n%s", before, second.out.String())
	}
	if n := generationsDone(run); n != before+2 {
		t.Errorf("%d generations after the restart, want %d", n, before+2)
	}
	select {
	case err := <-worker.done:
		t.Fatalf("the worker stopped when the trainer was killed: %v\n%s", err, worker.out.String())
	default:
	}
	// The worker is the only source of games: the generations the
	// restarted trainer finished were played by it.
	received, _ := runfolder.Folder(run).ReceivedShards()
	after := 0
	for _, r := range received {
		if r.Generation > before+1 { // received only by the restarted trainer
			after++
		}
	}
	if after == 0 {
		t.Errorf("no shard received after the restart:\n%s", worker.out.String())
	}
	worker.kill()
	checkRunFiles(t, run)
	checkReceived(t, run)
}

// TestServeNATSNeedsCredentials: a server other machines can reach is
// refused without a token or password.
func TestServeNATSNeedsCredentials(t *testing.T) {
	for _, env := range []string{"FLIPZERO_NATS_TOKEN", "FLIPZERO_NATS_USER", "FLIPZERO_NATS_PASSWORD"} {
		t.Setenv(env, "")
	}
	var out, errOut bytes.Buffer
	run := filepath.Join(t.TempDir(), "run")
	code := runCommand(context.Background(), []string{"loop", "--config", tinyRunConfig(t, 10), "--run", run,
		"--serve-nats", "0.0.0.0:0", "--generations", "1"}, &out, &errOut)
	if code != 2 || !strings.Contains(errOut.String(), "needs credentials") {
		t.Errorf("exit %d: %s", code, errOut.String())
	}
	if _, err := os.Stat(run); err == nil {
		t.Errorf("the refused command created the run folder")
	}
}

// TestHelpKeepsSecrets: a token in the environment is used but never
// shown, not even as a flag's default in --help.
func TestHelpKeepsSecrets(t *testing.T) {
	t.Setenv("FLIPZERO_NATS_TOKEN", "topsecret-token")
	t.Setenv("FLIPZERO_NATS_PASSWORD", "topsecret-password")
	for _, cmd := range []string{"worker", "loop"} {
		var out, errOut bytes.Buffer
		if code := runCommand(context.Background(), []string{cmd, "--help"}, &out, &errOut); code != 0 {
			t.Fatalf("%s --help: exit %d", cmd, code)
		}
		if strings.Contains(out.String()+errOut.String(), "topsecret") {
			t.Errorf("%s --help shows a secret from the environment:\n%s", cmd, out.String())
		}
	}
}
