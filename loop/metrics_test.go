package loop

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

func TestMetricsAppendReadPlot(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "metrics.jsonl")
	for g := 1; g <= 5; g++ {
		m := GenerationMetrics{Generation: g, Steps: 10, PolicyLoss: 2 / float64(g), ValueLoss: 1 / float64(g)}
		if g >= 3 {
			r := float64(100 * g)
			m.Rating = &r
		}
		if err := AppendMetrics(path, m); err != nil {
			t.Fatal(err)
		}
	}
	ms, err := ReadMetrics(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 5 || ms[4].Generation != 5 || ms[1].PolicyLoss != 1 || ms[0].Rating != nil || *ms[4].Rating != 500 {
		t.Fatalf("read back %+v", ms)
	}
	out := filepath.Join(dir, "loss.png")
	if err := PlotMetrics(ms, out); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	// Without ratings there is one panel; with them, two stacked.
	if err := PlotMetrics(ms[:2], out); err != nil {
		t.Fatal(err)
	}
	raw, _ = os.ReadFile(out)
	one, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Dy() != 2*one.Bounds().Dy() {
		t.Errorf("heights %d and %d: want the rating panel under the loss panel", img.Bounds().Dy(), one.Bounds().Dy())
	}
	if err := PlotMetrics(nil, out); err == nil {
		t.Error("plotting nothing should be an error")
	}
}

func TestReadMetricsStopsAtBrokenLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "metrics.jsonl")
	os.WriteFile(path, []byte("{\"generation\":1}\n{\"generation\":2}\n{\"genera"), 0o644)
	ms, err := ReadMetrics(path)
	if err == nil || len(ms) != 2 {
		t.Errorf("got %d lines, err %v; want 2 lines and an error naming line 3", len(ms), err)
	}
}

func TestVersusBaseline(t *testing.T) {
	for _, tc := range []struct {
		m    GenerationMetrics
		want string
	}{
		{GenerationMetrics{}, ""},
		{GenerationMetrics{Baseline: "perfect", BaselineResult: &[3]int{0, 20, 0}}, ", vs perfect 0-20-0: no loss to perfect play in 20 games"},
		{GenerationMetrics{Baseline: "perfect", BaselineResult: &[3]int{0, 19, 1}}, ", vs perfect 0-19-1"},
		{GenerationMetrics{Baseline: "greedy", BaselineResult: &[3]int{12, 0, 0}}, ", vs greedy 12-0-0"},
	} {
		if got := versusBaseline(tc.m); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
}
