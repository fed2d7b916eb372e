package loop

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// generations makes n generations' metrics from 1 on, each 10 s, 64
// games of 50 positions, 100 steps at 1,000 samples/s, then lets edit
// change generation i (0-based).
func generations(n int, edit func(i int, m *GenerationMetrics)) []GenerationMetrics {
	ms := make([]GenerationMetrics, n)
	for i := range ms {
		ms[i] = GenerationMetrics{
			Generation: i + 1, Seconds: 10, RunSeconds: float64(10 * (i + 1)), Games: 64, Positions: 3200,
			Steps: 100, Step: 100 * (i + 1), Samples: 3200 * (i + 1), TrainS: 1000, TrainSeconds: 6,
			EvalsS: 5000, PolicyLoss: 2, ValueLoss: 0.8, LR: 0.02,
		}
		if edit != nil {
			edit(i, &ms[i])
		}
	}
	return ms
}

func TestReportSums(t *testing.T) {
	ms := generations(30, func(i int, m *GenerationMetrics) {
		m.Seconds = float64(10 + i%3) // 10, 11, 12: median 11
		if i >= 20 {
			m.Positions, m.PolicyLoss = 64*30, 1
		}
	})
	start := GenerationMetrics{Generation: 0, Step: 500, TrainS: 9000, Pretrained: &Pretrained{From: "records", Positions: 1000}}
	r := NewReport(append([]GenerationMetrics{start}, ms...))
	if r.Generation != 30 || r.Steps != 3000 || r.PretrainSteps != 500 || r.Games != 30*64 || r.Positions != 30*3200 {
		t.Errorf("counts: generation %d, steps %d (pretraining %d), games %d, positions %d", r.Generation, r.Steps, r.PretrainSteps, r.Games, r.Positions)
	}
	if r.MedianSeconds != 11 || r.TrainS != 1000 || r.EvalsS != 5000 {
		t.Errorf("medians: %v s, %v samples/s (the pretraining's 9000 left out), %v evaluations/s", r.MedianSeconds, r.TrainS, r.EvalsS)
	}
	if r.FirstPositionsPerGame != 50 || r.LastPositionsPerGame != 30 || r.FirstLosses[0] != 2 || r.LastLosses[0] != 1 {
		t.Errorf("first and last: %v and %v positions a game, policy loss %v and %v", r.FirstPositionsPerGame, r.LastPositionsPerGame, r.FirstLosses[0], r.LastLosses[0])
	}
	if r.Pretrained == nil || len(r.Checks) != 0 {
		t.Errorf("pretrained %v, checks %v", r.Pretrained, r.Checks)
	}
	if empty := NewReport(nil); empty.Generation != 0 || len(empty.Checks) != 0 {
		t.Errorf("no metrics: %+v", empty)
	}
}

func TestReportFalseResignations(t *testing.T) {
	for _, tc := range []struct {
		name          string
		played, wrong int // each generation's
		gens          int
		want          bool
	}{
		{"none false", 6, 0, 30, false},
		{"5% exactly", 20, 1, 10, false},
		{"over 5%", 20, 2, 10, true},
		{"too few played out to say", 3, 1, 5, false},
		{"many over few generations", 50, 10, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReport(generations(tc.gens, func(_ int, m *GenerationMetrics) { m.NoResign, m.FalseResign = tc.played, tc.wrong }))
			got := len(r.Checks) == 1 && r.Checks[0].Sign == SignFalseResignations && strings.Contains(r.Checks[0].Text, "resign_threshold")
			if got != tc.want || (!tc.want && len(r.Checks) != 0) {
				t.Errorf("checks %v, want a resignation check: %v", r.Checks, tc.want)
			}
		})
	}
}

// TestReportFalseResignationsRecent: the check judges the newest games,
// so a run whose resignation went wrong early and was mended passes.
func TestReportFalseResignationsRecent(t *testing.T) {
	ms := generations(100, func(i int, m *GenerationMetrics) {
		m.NoResign = 10
		if i < 20 {
			m.FalseResign = 5
		}
	})
	if r := NewReport(ms); len(r.Checks) != 0 {
		t.Errorf("mended early: %v", r.Checks)
	}
	ms[99].FalseResign = 10
	ms[98].FalseResign = 10
	if r := NewReport(ms); len(r.Checks) != 1 {
		t.Errorf("wrong at the end: %v", r.Checks)
	}
}

func TestReportSlowStretches(t *testing.T) {
	for _, tc := range []struct {
		name string
		slow []int // generations (1-based) that trained at half the rate
		want []string
	}{
		{"steady", nil, nil},
		{"scattered slow generations", []int{3, 9, 10, 20, 21, 22, 23, 40}, nil},
		{"a stretch", []int{11, 12, 13, 14, 15, 16}, []string{"generations 11-16 trained at 500 samples/s, 50%"}},
		{"two stretches", []int{1, 2, 3, 4, 5, 30, 31, 32, 33, 34, 35, 36}, []string{"generations 1-5 ", "generations 30-36 "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slow := map[int]bool{}
			for _, g := range tc.slow {
				slow[g] = true
			}
			r := NewReport(generations(50, func(_ int, m *GenerationMetrics) {
				if slow[m.Generation] {
					m.TrainS = 500
				}
			}))
			if len(r.Checks) != len(tc.want) {
				t.Fatalf("checks %v, want %d", r.Checks, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(r.Checks[i].Text, w) {
					t.Errorf("check %v, want it to start %q", r.Checks[i], w)
				}
			}
		})
	}
}

// TestCheckLog: the loop says a check when it appears, not again each
// generation it goes on holding, and again when it comes back.
func TestCheckLog(t *testing.T) {
	ms := generations(60, func(i int, m *GenerationMetrics) {
		m.NoResign = 30
		switch {
		case i >= 20 && i < 28: // generations 21-28 train slow
			m.TrainS = 400
		case i == 40 || i == 55: // false resignations, mended, then again
			m.FalseResign = 30
		}
	})
	var l checkLog
	var said []string
	for _, m := range ms {
		for _, c := range l.add(m) {
			said = append(said, fmt.Sprintf("%d %s %d", m.Generation, c.Sign, c.From))
		}
	}
	want := []string{"25 slow training 21", "41 false resignations 0", "56 false resignations 0"}
	if !slices.Equal(said, want) {
		t.Errorf("said %q, want %q", said, want)
	}
}
