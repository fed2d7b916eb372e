package cpu

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/nn"
)

// TestReplicasComputeWhatOneGraphDoes trains two copies of a network side
// by side, one on a single graph, one split into replicas (shards of
// unequal sizes, samples of unequal weights, some without auxiliary
// targets), and checks the losses, every gradient, the running
// statistics and the weights after a few steps agree: the replicas' batch
// norms normalize with the whole batch's statistics and back-propagate
// through them.
func TestReplicasComputeWhatOneGraphDoes(t *testing.T) {
	cases := []struct {
		name     string
		game     env.Game
		cfg      nn.Config
		batch    nn.Batch
		replicas int
	}{
		{"othello-aux", fakeOthello, nn.Config{Blocks: 1, Filters: 8, PolicyFilters: 2, ValueFilters: 1, ValueHidden: 8, Ownership: true, Score: true},
			withAux(fakeBatch(fakeOthello, 27, 2), 27, 64, 3), 3},
		{"othello-pooling-conv-policy", othello.Othello(), nn.Config{Blocks: 2, Filters: 8, PolicyFilters: 4, ValueFilters: 1, ValueHidden: 8, GlobalPooling: true, PolicyHead: "conv"},
			randomBatch(othello.Othello(), 35, 5), 4},
		{"yinsh-shaped", fakeYinsh, nn.Config{Blocks: 1, Filters: 8, PolicyFilters: 2, ValueFilters: 1, ValueHidden: 8},
			fakeBatch(fakeYinsh, 16, 4), 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(c.replicas))
			trainers := [2]*Trainer{}
			for i := range trainers {
				net, err := nn.New(c.game, c.cfg, 7)
				if err != nil {
					t.Fatal(err)
				}
				if trainers[i], err = NewTrainer(net, nn.DefaultTrainConfig()); err != nil {
					t.Fatal(err)
				}
			}
			one, split := trainers[0], trainers[1]
			one.maxReplicas = 1
			if c.cfg.GlobalPooling {
				// Winograd's rounding differs from cell to cell, so a
				// global max over cells of identical neighbourhoods (an
				// Othello board's empty corners) is a tie that it breaks
				// by rounding: once the replicas' sums in another order
				// move the weights by float32's last bit, the max's
				// gradient may go to another of the tied cells, which is
				// as right. The cases without pooling test the split on
				// Winograd; this one runs on the direct kernels.
				for _, tr := range trainers {
					if tr.kernels != nil {
						k := *tr.kernels
						k.winograd = false
						tr.kernels = &k
					}
				}
			}
			sg, err := split.stepGraphs(len(c.batch.Value) / valueOutputs)
			if err != nil {
				t.Fatal(err)
			}
			if len(sg.replicas) != c.replicas {
				t.Fatalf("the batch split into %d replicas, want %d", len(sg.replicas), c.replicas)
			}
			trainSideBySide(t, split, one, c.batch, 3)
		})
	}
}

func TestReplicaCount(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(16))
	for _, c := range []struct{ n, limit, want int }{
		{128, 0, 16},
		{128, 4, 4},
		{64, 0, 8}, // at least minReplicaSamples each
		{7, 0, 1},  // too few to split
		{17, 0, 2}, // shards of 8 and 9
		{1024, 0, 16},
	} {
		if got := replicaCount(c.n, c.limit); got != c.want {
			t.Errorf("replicaCount(%d, %d) = %d, want %d", c.n, c.limit, got, c.want)
		}
	}
}

// TestReplicaGroupFails checks the barrier: replicas wait for each other
// round after round, a replica that fails releases the ones waiting and
// those that arrive later with errReplicaFailed, and start readies the
// group for the next step; replicas that have stopped spinning and sleep
// are woken by the last arrival and by a failure alike.
func TestReplicaGroupFails(t *testing.T) {
	g := newReplicaGroup(3)
	g.start()
	// Three rounds in which all arrive.
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for r := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				if err := g.wait(); err != nil {
					errs[r] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("replica %d: %v with every replica arriving", r, err)
		}
	}
	// waiting starts replicas 0 to n−1 waiting once, their errors in errs.
	waiting := func(n int) {
		for r := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[r] = g.wait()
			}()
		}
	}
	// Two wait; the third fails instead of arriving.
	waiting(2)
	g.fail()
	wg.Wait()
	for r := range 2 {
		if !errors.Is(errs[r], errReplicaFailed) {
			t.Errorf("replica %d waiting when another failed: %v, want errReplicaFailed", r, errs[r])
		}
	}
	if err := g.wait(); !errors.Is(err, errReplicaFailed) {
		t.Errorf("arriving after a failure: %v, want errReplicaFailed", err)
	}
	// The next step starts afresh.
	g.start()
	// Late arrivals and failures reach replicas that have stopped
	// spinning and sleep.
	waiting(2)
	time.Sleep(5 * spinWait)
	if err := g.wait(); err != nil {
		t.Fatalf("the last replica, arriving late: %v", err)
	}
	wg.Wait()
	for r := range 2 {
		if errs[r] != nil {
			t.Errorf("replica %d, asleep when the last arrived: %v", r, errs[r])
		}
	}
	waiting(2)
	time.Sleep(5 * spinWait)
	g.fail()
	wg.Wait()
	for r := range 2 {
		if !errors.Is(errs[r], errReplicaFailed) {
			t.Errorf("replica %d, asleep when another failed: %v, want errReplicaFailed", r, errs[r])
		}
	}
	g.start()
	waiting(3)
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Errorf("replica %d after start: %v", r, err)
		}
	}
}

// TestChannelSumsAddOverReplicas checks the reduction: every replica
// reads the sum of all replicas' values, reduction after reduction, with
// the two sets of partial sums alternating.
func TestChannelSumsAddOverReplicas(t *testing.T) {
	const replicas, rounds = 4, 5
	g := newReplicaGroup(replicas)
	g.start()
	layers := &[]*[2][][]float64{}
	var wg sync.WaitGroup
	got := make([][][]float64, replicas)
	for r := range replicas {
		part := replicaPart{group: g, rank: r, procs: 1, layers: layers}
		sums := part.sums(0, 3)
		if r > 0 && len(*layers) != 1 {
			t.Fatalf("replica %d made the layer's sums again: %d layers", r, len(*layers))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range rounds {
				total := make([]float64, 2)
				local := []float64{float64(r + 1), float64(round * (r + 1))}
				if err := sums.allReduce(local, total); err != nil {
					t.Error(err)
					return
				}
				got[r] = append(got[r], total)
			}
		}()
	}
	wg.Wait()
	for r := range replicas {
		for round, total := range got[r] {
			// 1+2+3+4 and round·(1+2+3+4).
			if total[0] != 10 || total[1] != float64(10*round) {
				t.Errorf("replica %d, reduction %d: %v, want [10 %d]", r, round, total, 10*round)
			}
		}
	}
}

// TestReplicaLimit: FLIPZERO_REPLICAS bounds the split; anything but a
// positive whole number is refused by name.
func TestReplicaLimit(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want int
		bad  bool
	}{{"", 0, false}, {"8", 8, false}, {" 4 ", 4, false}, {"0", 0, true}, {"-2", 0, true}, {"four", 0, true}, {"2.5", 0, true}} {
		t.Setenv("FLIPZERO_REPLICAS", tc.env)
		got, err := replicaLimit()
		if got != tc.want || (err != nil) != tc.bad || (err != nil && !strings.Contains(err.Error(), "FLIPZERO_REPLICAS")) {
			t.Errorf("FLIPZERO_REPLICAS=%q: %d, %v; want %d, error %v", tc.env, got, err, tc.want, tc.bad)
		}
	}
	g := othello.Othello()
	net, err := nn.New(g, nn.DefaultConfig(g), 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("FLIPZERO_REPLICAS", "none")
	if _, err := NewTrainer(net, nn.DefaultTrainConfig()); err == nil || !strings.Contains(err.Error(), "FLIPZERO_REPLICAS") {
		t.Errorf("a trainer with FLIPZERO_REPLICAS=none: %v, want the variable named", err)
	}
}
