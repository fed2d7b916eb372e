package mcts

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/flipzero/flipzero/env/tictactoe"
)

// The sampled Dirichlet has the right mean 1/n and variance
// (1/n)(1−1/n)/(alpha·n+1) per component, for alpha above and below 1.
func TestDirichletMoments(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tt := range []struct {
		alpha float64
		n     int
	}{{0.03, 10}, {0.3, 8}, {1, 5}, {2.5, 4}} {
		const samples = 20000
		var sum, sumSq float64
		buf := make([]float64, 0, tt.n)
		for k := 0; k < samples; k++ {
			buf = dirichlet(rng, tt.alpha, buf[:0], tt.n)
			total := 0.0
			for _, x := range buf {
				if x < 0 {
					t.Fatalf("negative component %v", x)
				}
				total += x
			}
			if math.Abs(total-1) > 1e-9 {
				t.Fatalf("alpha %v: sample sums to %v", tt.alpha, total)
			}
			sum += buf[0]
			sumSq += buf[0] * buf[0]
		}
		mean := sum / samples
		variance := sumSq/samples - mean*mean
		wantMean := 1 / float64(tt.n)
		wantVar := wantMean * (1 - wantMean) / (tt.alpha*float64(tt.n) + 1)
		if math.Abs(mean-wantMean) > 0.05*wantMean+4*math.Sqrt(wantVar/samples) {
			t.Errorf("alpha %v, n %d: mean %.4f, want %.4f", tt.alpha, tt.n, mean, wantMean)
		}
		if math.Abs(variance-wantVar) > 0.1*wantVar {
			t.Errorf("alpha %v, n %d: variance %.5f, want %.5f", tt.alpha, tt.n, variance, wantVar)
		}
	}
}

// Noise changes the root prior, keeps it a distribution, and comes off
// exactly; a new root starts without it.
func TestRootNoise(t *testing.T) {
	tests := []struct {
		name       string
		beforeRoot bool // SetNoise before the root is expanded
	}{{"set before the search", true}, {"set after the search", false}}
	for _, tt := range tests {
		tree := newTree(t, DefaultConfig(), tictactoe.Game{}.NewState())
		rng := rand.New(rand.NewPCG(5, 6))
		if tt.beforeRoot {
			tree.SetNoise(rng)
		}
		if err := tree.Search(context.Background(), Uniform{}, 10); err != nil {
			t.Fatal(err)
		}
		if !tt.beforeRoot {
			tree.SetNoise(rng)
		}
		var r Result
		tree.Result(&r)
		sum, moved := float32(0), false
		for _, c := range r.Children {
			sum += c.Prior
			if math.Abs(float64(c.Prior)-1.0/9) > 1e-6 {
				moved = true
			}
		}
		if !moved || math.Abs(float64(sum)-1) > 1e-5 {
			t.Errorf("%s: noised prior sums to %v, changed %v", tt.name, sum, moved)
		}
		tree.SetNoise(rng) // a second call must not noise again
		var again Result
		tree.Result(&again)
		for i := range r.Children {
			if again.Children[i].Prior != r.Children[i].Prior {
				t.Errorf("%s: noise was applied twice to one root", tt.name)
				break
			}
		}
		tree.SetNoise(nil)
		tree.Result(&r)
		for _, c := range r.Children {
			if c.Prior != float32(1)/9 {
				t.Errorf("%s: prior %v after removing the noise, want 1/9", tt.name, c.Prior)
				break
			}
		}
	}
}

func TestChoose(t *testing.T) {
	r := Result{
		Children: []Child{{Action: 1, Visits: 10}, {Action: 4, Visits: 30}, {Action: 7, Visits: 60}},
		Policy:   []float32{0, 0.1, 0, 0, 0.3, 0, 0, 0.6, 0},
		Best:     7,
		Playouts: 100,
	}
	rng := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		temperature float64
		want        map[int]float64 // expected frequency of each action
	}{
		{0, map[int]float64{7: 1}},
		{1, map[int]float64{1: 0.1, 4: 0.3, 7: 0.6}},
		// Policy^(1/0.5), normalized: 0.01, 0.09, 0.36 over 0.46.
		{0.5, map[int]float64{1: 0.01 / 0.46, 4: 0.09 / 0.46, 7: 0.36 / 0.46}},
		{1e-4, map[int]float64{7: 1}},
	}
	for _, tt := range tests {
		const draws = 20000
		counts := map[int]int{}
		for i := 0; i < draws; i++ {
			counts[r.Choose(tt.temperature, rng)]++
		}
		for a := range counts {
			if _, ok := tt.want[a]; !ok {
				t.Errorf("temperature %v: chose %d, which should never be chosen", tt.temperature, a)
			}
		}
		for a, p := range tt.want {
			got := float64(counts[a]) / draws
			if math.Abs(got-p) > 0.015 {
				t.Errorf("temperature %v: action %d chosen %.3f of the time, want %.3f", tt.temperature, a, got, p)
			}
		}
	}
}

func TestTemperatureSchedule(t *testing.T) {
	s := Temperature{Start: 0.8, End: 0.2, HalfLife: 10}
	tests := []struct {
		ply  int
		want float64
	}{{0, 0.8}, {10, 0.5}, {20, 0.35}, {1000, 0.2}}
	for _, tt := range tests {
		if got := s.At(tt.ply); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("At(%d) = %v, want %v", tt.ply, got, tt.want)
		}
	}
	if got := (Temperature{Start: 1}).At(50); got != 1 {
		t.Errorf("a schedule without half-life gives %v, want its start 1", got)
	}
}

func TestPlayoutCap(t *testing.T) {
	p := PlayoutCap{Full: 600, Fast: 100, FullFraction: 0.25}
	rng := rand.New(rand.NewPCG(8, 9))
	full := 0
	const draws = 10000
	for i := 0; i < draws; i++ {
		n, isFull := p.Draw(rng)
		if isFull != (n == 600) || (!isFull && n != 100) {
			t.Fatalf("drew %d playouts, full %v", n, isFull)
		}
		if isFull {
			full++
		}
	}
	if f := float64(full) / draws; math.Abs(f-0.25) > 0.02 {
		t.Errorf("%.3f of the searches are full, want 0.25", f)
	}
}

// Forced playouts give every root child at least about √(k·P·N) visits,
// and the pruned policy target takes them back from the weak children.
func TestForcedPlayoutsAndPruning(t *testing.T) {
	cfg := DefaultConfig()
	cfg.ForcedPlayouts = true
	cfg.DirichletWeight = 0.25
	// Black threatens a1-a2-a3: white must block at a3, every other move
	// loses, so without forcing those get few visits.
	s := play(t, tictactoe.Game{}, "a1;b2;a2")
	tree := newTree(t, cfg, s)
	tree.SetNoise(rand.New(rand.NewPCG(1, 1)))
	const playouts = 2000
	if err := tree.Search(context.Background(), newRollout(t, 2), playouts); err != nil {
		t.Fatal(err)
	}
	var r Result
	tree.Result(&r)
	if r.Best != 6 {
		t.Fatalf("best %d, want a3 (6)", r.Best)
	}
	pruned := false
	for _, c := range r.Children {
		forced := math.Sqrt(cfg.ForcedPlayoutsK * float64(c.Prior) * playouts)
		if float64(c.Visits) < math.Floor(forced) {
			t.Errorf("child %d has %d visits, below its forced %.1f", c.Action, c.Visits, forced)
		}
		share := float64(r.Policy[c.Action]) * playouts
		if c.Action == r.Best {
			if share < float64(c.Visits) {
				t.Errorf("the best child's target share %.1f visits is below its %d visits", share, c.Visits)
			}
			continue
		}
		if share > float64(c.Visits)+1e-6 {
			t.Errorf("child %d: target share %.1f visits above its %d", c.Action, share, c.Visits)
		}
		if share < float64(c.Visits)/2 {
			pruned = true
		}
	}
	if !pruned {
		t.Errorf("no losing child lost half its visits in the policy target: %v", r.Policy)
	}
	// Without noise the same search is plain: no forced visits, no pruning.
	tree.SetNoise(nil)
	tree.Result(&r)
	for _, c := range r.Children {
		if got, want := r.Policy[c.Action], float32(c.Visits)/float32(r.Playouts); got != want {
			t.Errorf("without noise, child %d's target %v, want its visit share %v", c.Action, got, want)
		}
	}
}
