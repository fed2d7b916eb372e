package nn

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/envtest"
	"github.com/flipzero/flipzero/env/tictactoe"
)

// distinctPositions is n random positions of g, no two encoded alike.
func distinctPositions(t *testing.T, g env.Game, n int) []env.State {
	t.Helper()
	planes, h, w := g.EncodedShape()
	enc := make([]float32, planes*h*w)
	seen := map[string]bool{}
	var out []env.State
	for _, s := range envtest.RandomPositions(g, 4*n, 7) {
		s.Encode(enc)
		key := fmt.Sprint(enc)
		if !seen[key] && len(out) < n {
			seen[key] = true
			out = append(out, s)
		}
	}
	if len(out) < n {
		t.Fatalf("%d distinct positions of %s, want %d", len(out), g.Name(), n)
	}
	return out
}

func scriptedFor(g env.Game, maxBatch int) *scripted {
	planes, h, w := g.EncodedShape()
	A := g.ActionSpace()
	return &scripted{actions: A, size: planes * h * w, maxBatch: maxBatch,
		logits: make([]float32, maxBatch*A), wdl: make([]float32, 3*maxBatch)}
}

func forwarded(s *scripted) int {
	n := 0
	for _, b := range s.batches {
		n += b
	}
	return n
}

// TestEvalCacheAnswersAsTheNetwork: an evaluator with a cache gives what
// one without gives, bit for bit, and sends the network only the
// positions it does not remember.
func TestEvalCacheAnswersAsTheNetwork(t *testing.T) {
	g := tictactoe.Game{}
	A := g.ActionSpace()
	states := distinctPositions(t, g, 30)
	plainInf, cachedInf := scriptedFor(g, 8), scriptedFor(g, 8)
	plain, err := NewBatchEvaluator(g, plainInf)
	if err != nil {
		t.Fatal(err)
	}
	cached, err := NewBatchEvaluator(g, cachedInf)
	if err != nil {
		t.Fatal(err)
	}
	if err := cached.UseCache(1 << 12); err != nil {
		t.Fatal(err)
	}
	want, wantV := make([]float32, len(states)*A), make([]float32, len(states))
	if err := plain.Evaluate(states, want, wantV); err != nil {
		t.Fatal(err)
	}
	for pass, wantForwarded := range []int{len(states), 0} {
		got, gotV := make([]float32, len(states)*A), make([]float32, len(states))
		for i := range got {
			got[i] = -1 // a hit must clear the illegal actions' priors
		}
		cachedInf.batches = nil
		if err := cached.Evaluate(states, got, gotV); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) || !slices.Equal(gotV, wantV) {
			t.Fatalf("pass %d: the cached evaluator's answers differ from the network's", pass)
		}
		if n := forwarded(cachedInf); n != wantForwarded {
			t.Errorf("pass %d: %d positions went to the network, want %d", pass, n, wantForwarded)
		}
	}
	if hits, lookups := cached.CacheStats(); hits != int64(len(states)) || lookups != int64(2*len(states)) {
		t.Errorf("cache stats %d hits of %d lookups, want %d of %d", hits, lookups, len(states), 2*len(states))
	}
	// After warm-up neither a hit nor a replaced slot allocates: a
	// one-slot cache replaces on every miss.
	if err := cached.UseCache(1); err != nil {
		t.Fatal(err)
	}
	got, gotV := make([]float32, len(states)*A), make([]float32, len(states))
	cachedInf.batches = make([]int, 0, 1024)
	cached.Evaluate(states, got, gotV)
	if allocs := testing.AllocsPerRun(5, func() { cached.Evaluate(states, got, gotV) }); allocs != 0 {
		t.Errorf("%v allocations per call with a cache", allocs)
	}
	if !slices.Equal(got, want) || !slices.Equal(gotV, wantV) {
		t.Error("a one-slot cache's answers differ from the network's")
	}
}

// TestEvalCacheReplaces: a slot holds the newest answer, so a position
// whose slot was taken since goes to the network again.
func TestEvalCacheReplaces(t *testing.T) {
	g := tictactoe.Game{}
	states := distinctPositions(t, g, 2)
	inf := scriptedFor(g, 4)
	ev, err := NewBatchEvaluator(g, inf)
	if err != nil {
		t.Fatal(err)
	}
	if err := ev.UseCache(1); err != nil {
		t.Fatal(err)
	}
	priors, values := make([]float32, g.ActionSpace()), make([]float32, 1)
	for _, i := range []int{0, 0, 1, 0, 1, 1} {
		if err := ev.Evaluate(states[i:i+1], priors, values); err != nil {
			t.Fatal(err)
		}
	}
	if n := forwarded(inf); n != 4 {
		t.Errorf("%d positions went to the network, want 4 (two hits in a row of six)", n)
	}
	if hits, _ := ev.CacheStats(); hits != 2 {
		t.Errorf("%d hits, want 2", hits)
	}
}

// TestEvalCacheChecksTheLegalActions: a key that matches with other legal
// actions, or under another network, is a miss, never another position's
// answer.
func TestEvalCacheChecksTheLegalActions(t *testing.T) {
	g := tictactoe.Game{}
	s := g.NewState()
	r := &cacheReader{cache: newEvalCache(16)}
	r.begin()
	priors := make([]float32, g.ActionSpace())
	for a := range priors {
		priors[a] = float32(a)
	}
	legal := s.LegalActions(nil)
	r.store(42, legal[1:], priors, 0.5)
	var v float32
	if _, hit := r.lookup(42, s, priors, &v, nil); hit {
		t.Fatal("a hit with other legal actions")
	}
	r.store(42, legal, priors, 0.5)
	out := make([]float32, g.ActionSpace())
	if _, hit := r.lookup(42, s, out, &v, nil); !hit || v != 0.5 || !slices.Equal(out, priors) {
		t.Fatalf("hit %v value %g priors %v, want a hit with 0.5 and %v", hit, v, out, priors)
	}
	if _, hit := r.lookup(42+16, s, out, &v, nil); hit {
		t.Error("a hit on another key of the same slot")
	}
	r.cache.network.Add(1)
	r.begin()
	if _, hit := r.lookup(42, s, out, &v, nil); hit {
		t.Error("a hit on the last network's answer")
	}
}

// TestCacheKey: the key depends on every value's bits and on the length,
// is never 0 (an empty slot), and spreads encodings of 0s and 1s over
// the slots.
func TestCacheKey(t *testing.T) {
	base := make([]float32, 300)
	keys := map[uint64]bool{cacheKey(base): true}
	for i := range base {
		for _, v := range []float32{1, float32(math.Copysign(0, -1)), 1e-30} {
			p := slices.Clone(base)
			p[i] = v
			k := cacheKey(p)
			if k == 0 || keys[k] {
				t.Fatalf("value %g at %d: key %#x, zero or met before", v, i, k)
			}
			keys[k] = true
		}
	}
	if cacheKey(base[:299]) == cacheKey(base) {
		t.Error("the key ignores the length")
	}
	// One 1 at each place: the 300 keys' low 8 bits (a 256-slot table)
	// should take most of the slots, as 300 random keys do (about 175).
	slots := map[uint64]bool{}
	for i := range base {
		p := slices.Clone(base)
		p[i] = 1
		slots[cacheKey(p)&255] = true
	}
	if len(slots) < 150 {
		t.Errorf("300 positions take %d of 256 slots, want about 175", len(slots))
	}
}

func TestCheckCacheEntries(t *testing.T) {
	for _, tc := range []struct {
		entries int
		ok      bool
	}{{0, true}, {1, true}, {1024, true}, {maxCacheEntries, true}, {-1, false}, {3, false}, {1000, false}, {2 * maxCacheEntries, false}} {
		if err := checkCacheEntries(tc.entries); (err == nil) != tc.ok {
			t.Errorf("%d entries: error %v, want ok %v", tc.entries, err, tc.ok)
		}
	}
}
