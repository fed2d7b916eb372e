package cpu

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Data-parallel training. A graph's machine runs one operation at a
// time, and only the convolutions and batch norms split their work over
// the cores; everything else in a step (Gorgonia's element-wise
// operations, the heads, the losses, the tape itself) runs on one core,
// which caps what more cores add. So a training step splits its batch
// into replicas, shards of consecutive samples, each with its own graph
// and machine, run side by side; their gradients are added up.
//
// Batch norm is the one operation that mixes a batch's samples. The
// replicas' batch norms share their sums (synchronized batch norm): each
// adds its shard's per-channel sums, waits for the others and reads the
// totals, so that every replica normalizes with the whole batch's
// statistics and back-propagates through them. A step computes what one
// graph over the whole batch would, up to the order of floating-point
// sums.

// minReplicaSamples is the fewest samples a replica trains: below a
// GEMM's worth of images (groupImages: 8 Othello boards) a replica's
// fixed costs outgrow its share of the work.
const minReplicaSamples = 8

// replicaCount is how many replicas train a batch of n samples: one per
// core (GOMAXPROCS), at most limit if positive, each with at least
// minReplicaSamples.
func replicaCount(n, limit int) int {
	k := min(runtime.GOMAXPROCS(0), n/minReplicaSamples)
	if limit > 0 {
		k = min(k, limit)
	}
	return max(k, 1)
}

// replicaLimit is FLIPZERO_REPLICAS, the most replicas a step is split
// into (0 where unset: one a core), there to compare splits: replicas
// that share the cores run their convolutions and batch norms on
// GOMAXPROCS/replicas cores each.
func replicaLimit() (int, error) {
	v := strings.TrimSpace(os.Getenv("FLIPZERO_REPLICAS"))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("FLIPZERO_REPLICAS=%q: want the most replicas a training step is split into, a positive whole number", v)
	}
	return n, nil
}

// errReplicaFailed stops the replicas waiting for one that failed.
var errReplicaFailed = errors.New("another replica of the training step failed")

// replicaGroup is what the replicas of one batch size share: a barrier
// that every replica reaches at each batch norm's reduction, in the same
// order (their graphs are built alike), and each replica's count of
// reductions this step.
type replicaGroup struct {
	parties int

	mu      sync.Mutex
	reached *sync.Cond
	arrived int
	round   uint64
	failed  bool
	// passed and stopped are round and failed, read without the lock
	// by the replicas spinning at the barrier.
	passed  atomic.Uint64
	stopped atomic.Bool

	// reductions[r] counts replica r's reductions this step: which of a
	// layer's two sets of partial sums the next one uses. Each replica
	// touches only its own.
	reductions []int
}

func newReplicaGroup(parties int) *replicaGroup {
	g := &replicaGroup{parties: parties, reductions: make([]int, parties)}
	g.reached = sync.NewCond(&g.mu)
	return g
}

// start readies the group for a step; no replica may be running.
func (g *replicaGroup) start() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.arrived, g.failed = 0, false
	g.stopped.Store(false)
	clear(g.reductions)
}

// fail wakes every replica waiting at the barrier, and every one that
// reaches it later this step, with errReplicaFailed.
func (g *replicaGroup) fail() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.failed = true
	g.stopped.Store(true)
	g.reached.Broadcast()
}

// wait blocks until every replica has reached the barrier, or one failed.
// A replica that arrives early spins a while (spinWait) before it sleeps:
// the replicas reach a barrier within a fraction of a millisecond of each
// other, about as long as waking a sleeping goroutine on an idle core
// takes (0.1–0.3 ms on a virtual machine's), and a step has dozens of
// barriers. On two Zen 5 cores spinning made Othello's training step 8%
// faster.
func (g *replicaGroup) wait() error {
	g.mu.Lock()
	if g.failed {
		g.mu.Unlock()
		return errReplicaFailed
	}
	round := g.round
	g.arrived++
	if g.arrived == g.parties {
		g.arrived = 0
		g.round++
		g.passed.Store(g.round)
		g.reached.Broadcast()
		g.mu.Unlock()
		return nil
	}
	g.mu.Unlock()
	if g.spin(round) {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.round == round && !g.failed {
		g.reached.Wait()
	}
	if g.round == round {
		return errReplicaFailed
	}
	return nil
}

// spin waits up to spinWait for the barrier's round to pass, and says
// whether it did; false sends the caller to sleep (also when a replica
// failed, which the caller then finds under the lock). It yields its
// core now and then, so that a goroutine waiting for one (self-play
// playing beside training) runs instead of the spinning.
func (g *replicaGroup) spin(round uint64) bool {
	var began time.Time
	for i := 0; ; i++ {
		if g.passed.Load() != round {
			return true
		}
		if i%64 == 0 {
			if g.stopped.Load() {
				return false
			}
			if i == 0 {
				began = time.Now()
			} else if time.Since(began) > spinWait {
				return false
			}
		}
		if i%1024 == 1023 {
			runtime.Gosched()
		}
	}
}

// spinWait is how long a replica spins at a barrier before it sleeps:
// longer than most waits (a few tenths of a millisecond when the replicas
// are balanced), short beside a step (tens of milliseconds), so that a
// replica whose core is taken, by self-play or another process, costs
// the others little.
const spinWait = time.Millisecond

// replicaPart is which replica of which group a graph is; the zero value
// is a graph alone, over the whole batch.
type replicaPart struct {
	group *replicaGroup
	rank  int
	// procs is how many cores the graph's operations split their work
	// over (0: all of them).
	procs int
	// layers are the group's batch norms' shared sums, in the order the
	// graphs are built: the first replica built makes them, the others
	// find them.
	layers *[]*[2][][]float64
}

// channelSums adds one batch norm's per-channel sums over the replicas.
// Each reduction writes the replica's own sums into one of two sets,
// alternately, then waits for the others: a replica writes a set again
// only two reductions later, after a barrier every replica passed once it
// had read that set's last totals.
type channelSums struct {
	part replicaPart
	sets *[2][][]float64 // [set][rank]
}

// sums returns the shared sums of the graph's next batch norm, width
// values a replica.
func (p replicaPart) sums(layer, width int) channelSums {
	if p.group == nil {
		return channelSums{}
	}
	for len(*p.layers) <= layer {
		sets := &[2][][]float64{}
		for s := range sets {
			sets[s] = make([][]float64, p.group.parties)
			for r := range sets[s] {
				sets[s][r] = make([]float64, width)
			}
		}
		*p.layers = append(*p.layers, sets)
	}
	return channelSums{part: p, sets: (*p.layers)[layer]}
}

// allReduce sets total to the sum over the replicas of their local (a
// copy of local for a graph alone). total and local may not overlap.
func (c channelSums) allReduce(local, total []float64) error {
	g := c.part.group
	if g == nil {
		copy(total, local)
		return nil
	}
	r := c.part.rank
	set := c.sets[g.reductions[r]%2]
	g.reductions[r]++
	copy(set[r], local)
	if err := g.wait(); err != nil {
		return err
	}
	clear(total)
	for _, part := range set {
		for i, v := range part[:len(total)] {
			total[i] += v
		}
	}
	return nil
}

// ownsStatistics says whether the graph moves the running statistics:
// the replicas all compute the same, and the first writes them.
func (c channelSums) ownsStatistics() bool { return c.part.rank == 0 }
