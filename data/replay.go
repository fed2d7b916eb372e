package data

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"

	"github.com/flipzero/flipzero/env"
)

// WindowConfig sizes the replay window as the run grows, KataGo's way: the
// window holds the newest Size(total) samples, where total counts every
// sample produced so far. It starts at Min and grows sublinearly, so early
// samples from a weak network leave the window quickly while a long run
// still trains on plenty of data.
type WindowConfig struct {
	// Min is the samples the window holds at least (KataGo: 250,000; the
	// loop's default 50,000, what two cores play in an hour or two).
	Min int `yaml:"min"`
	// Alpha is the growth exponent (default 0.75, KataGo's).
	Alpha float64 `yaml:"alpha"`
	// Beta is the growth scale (default 0.4, KataGo's).
	Beta float64 `yaml:"beta"`
	// Max is a hard cap, to bound memory (0: none; the loop's default
	// 500,000, about 1 GB of Othello samples).
	Max int `yaml:"max"`
}

// Validate names the first setting out of range by its key.
func (c WindowConfig) Validate() error {
	switch {
	case c.Min < 1:
		return fmt.Errorf("min: %d, must be 1 or more", c.Min)
	case !(c.Alpha > 0 && c.Alpha <= 1):
		return fmt.Errorf("alpha: %v, must be in (0, 1]", c.Alpha)
	case !(c.Beta >= 0 && c.Beta <= 10):
		return fmt.Errorf("beta: %v, must be in [0, 10]", c.Beta)
	case c.Max < 0:
		return fmt.Errorf("max: %d, must be 0 (none) or more", c.Max)
	}
	return nil
}

// Size is the window for a run that has produced total samples.
func (c WindowConfig) Size(total int) int {
	if total <= c.Min || c.Min <= 0 {
		return total
	}
	x := float64(total) / float64(c.Min)
	size := float64(c.Min) * (1 + c.Beta*(math.Pow(x, c.Alpha)-1)/c.Alpha)
	n := int(math.Min(size, float64(total)))
	if c.Max > 0 && n > c.Max {
		n = c.Max
	}
	return n
}

// Replay is the replay window: the newest samples of the run, in the order
// they were produced. It holds exactly the window's samples: whole chunks
// that fall out are dropped, and the oldest chunk is cut where the window
// begins, so memory follows the window however large the chunks are.
type Replay struct {
	cfg    WindowConfig
	chunks [][]Sample // oldest first
	held   int        // samples in chunks
	total  int        // samples produced over the run, evicted ones included
}

// NewReplay makes an empty window; total counts samples produced before
// (e.g. in shards not loaded).
func NewReplay(cfg WindowConfig, total int) *Replay {
	return &Replay{cfg: cfg, total: total}
}

// Add appends newly produced samples and drops what falls out of the window.
func (r *Replay) Add(samples []Sample) {
	if len(samples) == 0 {
		return
	}
	r.chunks = append(r.chunks, samples)
	r.held += len(samples)
	r.total += len(samples)
	r.evict()
}

// addOld prepends samples produced before the ones held (loading a run
// from disk newest first). It reports whether the window wants more.
func (r *Replay) addOld(samples []Sample) bool {
	r.chunks = append([][]Sample{samples}, r.chunks...)
	r.held += len(samples)
	r.evict()
	return r.held < r.cfg.Size(r.total)
}

// evict drops the samples older than the window. Dropped chunks leave
// the chunk list by a copy, not a reslice, so that its array does not keep
// them from the garbage collector.
func (r *Replay) evict() {
	want := r.cfg.Size(r.total)
	drop := 0
	for drop < len(r.chunks) && r.held-len(r.chunks[drop]) >= want {
		r.held -= len(r.chunks[drop])
		drop++
	}
	if drop > 0 {
		n := copy(r.chunks, r.chunks[drop:])
		clear(r.chunks[n:])
		r.chunks = r.chunks[:n]
	}
	if excess := r.held - want; excess > 0 {
		// The kept samples move to an array of their own: a reslice
		// would keep the cut ones, and their planes, alive.
		r.chunks[0] = append([]Sample(nil), r.chunks[0][excess:]...)
		r.held = want
	}
}

// Len is the number of samples in the window.
func (r *Replay) Len() int { return r.held }

// Total is the number of samples produced over the run.
func (r *Replay) Total() int { return r.total }

// Sample returns a sample drawn uniformly from the window.
func (r *Replay) Sample(rng *rand.Rand) *Sample {
	n := r.Len()
	if n == 0 {
		return nil
	}
	i := rng.IntN(n)
	for _, c := range r.chunks {
		if i < len(c) {
			return &c[i]
		}
		i -= len(c)
	}
	panic("unreachable: index within held samples")
}

// LoadReplay fills a window from the shards (*.shard) in dir, newest
// (by name) first. Shards that cannot be read are passed to report and
// skipped: a damaged file costs its samples, never the run.
func LoadReplay(dir string, g env.Game, cfg WindowConfig, report func(error)) (*Replay, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.shard"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	counts := make([]int, len(paths))
	total := 0
	for i, p := range paths {
		n, err := ShardSamples(p, g)
		if err != nil {
			report(err)
			counts[i] = -1
			continue
		}
		counts[i] = n
		total += n
	}
	r := NewReplay(cfg, 0)
	r.total = total
	for i := len(paths) - 1; i >= 0; i-- {
		if counts[i] < 0 {
			continue
		}
		samples, err := ReadShard(paths[i], g)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, os.ErrNotExist) {
				return nil, err
			}
			report(err)
			continue
		}
		if !r.addOld(samples) {
			break
		}
	}
	return r, nil
}
