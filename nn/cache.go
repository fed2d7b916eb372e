package nn

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/flipzero/flipzero/env"
)

// evalCache remembers the network's answers for the positions it scored,
// keyed by a hash of their encoding (lc0's NNCache, KataGo's NN cache
// table): a search meets a position again through transpositions, the
// games of a generation share their openings, and a move's search revisits
// what the last one saw beside the move played. The network's answer
// depends on the encoding alone, so a hit returns what it would say.
//
// The table is direct-mapped: a position's slot is fixed by its hash, and
// a new answer replaces whatever held the slot. A hit needs the whole
// 64-bit hash, the network and the position's legal actions to match;
// two encodings of one key are then a chance of about 2⁻⁶⁴ a lookup.
//
// The evaluators of one Evaluators share one cache, so that what one
// worker's games met answers another's: each slot is read and written
// under its stripe's lock. After warm-up it allocates nothing: each slot
// keeps the capacity of its largest answer.
type evalCache struct {
	slots []cacheSlot
	mask  uint64
	locks [cacheStripes]sync.Mutex // slot i's is locks[i%cacheStripes]
	// network counts the network's reloads (Evaluators.Reload): an answer
	// is a hit only under the network that gave it.
	network atomic.Uint64
}

// cacheStripes is how many locks the slots share: enough that workers on
// many cores seldom wait on one another.
const cacheStripes = 256

// cacheSlot is one remembered answer: the priors of the legal actions,
// in the order LegalActions lists them, and the value, of the network
// counted network. key 0 is empty.
type cacheSlot struct {
	key, network uint64
	value        float32
	legal        []int32
	priors       []float32
}

// cacheReader is one evaluator's side of a cache: the network it is
// answering for in this call, scratch for a slot's answer, and its counts.
type cacheReader struct {
	cache         *evalCache
	network       uint64
	legal         []int32
	priors        []float32
	hits, lookups int64
}

// PlayCacheEntries is the cache of a player's evaluator in matches and
// play: a match's games share their openings and a search its
// transpositions, and a position's answer, once the network gave it,
// costs nothing again. 2¹⁶ answers hold a long match's openings and a
// move's search many times over, in 4.5 MiB and their priors.
const PlayCacheEntries = 1 << 16

// maxCacheEntries bounds a cache's table (72 bytes a slot before its
// answers): a config asking for more is a mistake, not a wish.
const maxCacheEntries = 1 << 24

// checkCacheEntries says whether entries is a table size a cache takes:
// 0 (no cache) or a power of two up to maxCacheEntries.
func checkCacheEntries(entries int) error {
	if entries < 0 || entries > maxCacheEntries || entries&(entries-1) != 0 {
		return fmt.Errorf("evaluation cache of %d entries, want 0 (none) or a power of two up to %d", entries, maxCacheEntries)
	}
	return nil
}

func newEvalCache(entries int) *evalCache {
	return &evalCache{slots: make([]cacheSlot, entries), mask: uint64(entries - 1)}
}

// cacheKey is the hash of an encoded position; never 0, the empty
// slot's. It is the same on every run, so that a seeded run's cache hits
// the same positions each time. A value's bits enter at the bottom, the
// multiply carries them up and the shift brings the top back down: the
// planes' values are mostly 0 and 1, whose low bits are all zero. About
// 3 ns a value, against the microseconds the network spends on each.
func cacheKey(planes []float32) uint64 {
	const m = 0x9e3779b97f4a7c15 // 2⁶⁴ over the golden ratio, odd
	h := uint64(len(planes)) * m
	for _, v := range planes {
		h = (h ^ uint64(math.Float32bits(v))) * m
		h ^= h >> 29
	}
	// MurmurHash3's finalizer: every bit of h reaches the slot's bits.
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	if h == 0 {
		return 1 // not h|1: the low bits choose the slot
	}
	return h
}

// begin readies r for one Evaluate call: the answers of the network
// loaded now.
func (r *cacheReader) begin() { r.network = r.cache.network.Load() }

// lookup writes the remembered answer for s (whose encoding hashed to
// key) into priors (the whole action space) and *value, and says whether
// there was one. legal is scratch for s's legal actions, returned.
func (r *cacheReader) lookup(key uint64, s env.State, priors []float32, value *float32, legal []int) ([]int, bool) {
	r.lookups++
	i := key & r.cache.mask
	lock := &r.cache.locks[i%cacheStripes]
	lock.Lock()
	slot := &r.cache.slots[i]
	if slot.key != key || slot.network != r.network {
		lock.Unlock()
		return legal, false
	}
	// Copied out, so that the legal actions are listed without the lock.
	r.legal = append(r.legal[:0], slot.legal...)
	r.priors = append(r.priors[:0], slot.priors...)
	v := slot.value
	lock.Unlock()
	legal = s.LegalActions(legal)
	if len(legal) != len(r.legal) {
		return legal, false
	}
	for k, a := range legal {
		if int32(a) != r.legal[k] {
			return legal, false
		}
	}
	clear(priors)
	for k, a := range legal {
		priors[a] = r.priors[k]
	}
	*value = v
	r.hits++
	return legal, true
}

// store remembers the answer for the position whose encoding hashed to
// key: priors over the whole action space, of which the legal actions'
// are kept, and value.
func (r *cacheReader) store(key uint64, legal []int, priors []float32, value float32) {
	i := key & r.cache.mask
	lock := &r.cache.locks[i%cacheStripes]
	lock.Lock()
	defer lock.Unlock()
	slot := &r.cache.slots[i]
	slot.key, slot.network, slot.value = key, r.network, value
	slot.legal = slices.Grow(slot.legal[:0], len(legal))
	slot.priors = slices.Grow(slot.priors[:0], len(legal))
	for _, a := range legal {
		slot.legal = append(slot.legal, int32(a))
		slot.priors = append(slot.priors, priors[a])
	}
}

// CacheStats counts the evaluator's cache lookups and the hits among
// them since it was made; both 0 without a cache.
func (e *BatchEvaluator) CacheStats() (hits, lookups int64) {
	if e.cache == nil {
		return 0, 0
	}
	return e.cache.hits, e.cache.lookups
}

// shareCache makes the evaluator answer from c (nil: no cache).
func (e *BatchEvaluator) shareCache(c *evalCache) {
	e.cache = nil
	if c != nil {
		e.cache = &cacheReader{cache: c}
	}
}

// UseCache gives the evaluator a cache of its own of entries answers (a
// power of two; 0: none). Evaluators share one among theirs (SetCache).
func (e *BatchEvaluator) UseCache(entries int) error {
	if err := checkCacheEntries(entries); err != nil {
		return err
	}
	var c *evalCache
	if entries > 0 {
		c = newEvalCache(entries)
	}
	e.shareCache(c)
	return nil
}
