package data

import (
	"runtime"
	"testing"
)

// serialChunk is n samples numbered from first (in Weight), each with
// planes values so that their memory is measurable.
func serialChunk(first, n, planes int) []Sample {
	chunk := make([]Sample, n)
	for i := range chunk {
		chunk[i] = Sample{
			Planes: make([]float32, planes),
			Legal:  []int32{0},
			Policy: []float32{1},
			Weight: float32(first + i),
		}
	}
	return chunk
}

// A long run adds many times the window, in chunks of every size (smaller
// than the window, about as large, larger): after every Add the window
// holds no more samples than it should, and holds the newest ones.
func TestReplayMemoryStaysWithinTheWindow(t *testing.T) {
	configs := []WindowConfig{
		{Min: 1000, Alpha: 1, Beta: 0},     // fixed at 1000
		{Min: 500, Alpha: 0.75, Beta: 0.4}, // KataGo's growth, scaled down
		{Min: 500, Alpha: 0.75, Beta: 3},   // fast growth, up to the cap
		{Min: 500, Alpha: 0.75, Beta: 3, Max: 2000},
	}
	chunkSizes := []int{1, 37, 400, 999, 1000, 1001, 2500}
	for _, cfg := range configs {
		r := NewReplay(cfg, 0)
		serial := 0
		for step := 0; step < 60; step++ {
			n := chunkSizes[step%len(chunkSizes)]
			r.Add(serialChunk(serial, n, 0))
			serial += n
			want := cfg.Size(r.Total())
			if r.held > want*11/10 {
				t.Fatalf("%+v step %d: %d samples held for a window of %d", cfg, step, r.held, want)
			}
			if r.Len() != want {
				t.Fatalf("%+v step %d: Len %d, want %d", cfg, step, r.Len(), want)
			}
			// The held samples are exactly the newest, oldest first.
			next := serial - r.held
			for _, c := range r.chunks {
				for i := range c {
					if int(c[i].Weight) != next {
						t.Fatalf("%+v step %d: held sample #%v where #%d belongs", cfg, step, c[i].Weight, next)
					}
					next++
				}
			}
		}
		if r.Total() < 10*cfg.Min {
			t.Fatalf("%+v: only %d samples added, want many windows' worth", cfg, r.Total())
		}
	}
}

// The heap, not only the count: evicted samples must become garbage, so
// the live heap stays near the window's own size.
func TestReplayHeapStaysWithinTheWindow(t *testing.T) {
	const window, planes = 2000, 5 * 64 // a reversi window of 2,000 samples
	r := NewReplay(WindowConfig{Min: window, Alpha: 1, Beta: 0}, 0)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	serial := 0
	for step := 0; step < 20; step++ {
		n := []int{1900, 2100, 700, 1333}[step%4]
		r.Add(serialChunk(serial, n, planes))
		serial += n
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perSample := planes*4 + 2*4 + 80 // planes, one legal action and its policy, the Sample
	live := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	ratio := float64(live) / float64(window*perSample)
	t.Logf("live heap %d bytes for a window of %d samples of ~%d bytes: %.2f× the window", live, window, perSample, ratio)
	if ratio > 1.1 {
		t.Errorf("the replay window keeps %.2f× its size alive", ratio)
	}
	runtime.KeepAlive(r)
}
