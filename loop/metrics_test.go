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

// TestReadMetricsSkipsBrokenLines: a line a crash cut short, or damage
// between lines, leaves the generations around it readable, and the next
// generation appended after a cut line is read too.
func TestReadMetricsSkipsBrokenLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "metrics.jsonl")
	os.WriteFile(path, []byte("{\"generation\":1}\n###\n{\"generation\":2}\n{\"genera"), 0o644)
	if err := AppendMetrics(path, GenerationMetrics{Generation: 3}); err != nil {
		t.Fatal(err)
	}
	ms, err := ReadMetrics(path)
	if err != nil || len(ms) != 3 || ms[2].Generation != 3 {
		t.Errorf("read %+v, %v; want generations 1, 2 and 3", ms, err)
	}
}

func TestVersusBaseline(t *testing.T) {
	for _, tc := range []struct {
		m    GenerationMetrics
		want string
	}{
		{GenerationMetrics{}, ""},
		{GenerationMetrics{Baseline: "perfect", BaselineResult: &[3]int{0, 20, 0}}, ", vs perfect W-D-L 0-20-0: no loss to perfect play in 20 games"},
		{GenerationMetrics{Baseline: "perfect", BaselineResult: &[3]int{0, 19, 1}}, ", vs perfect W-D-L 0-19-1"},
		{GenerationMetrics{Baseline: "greedy", BaselineResult: &[3]int{12, 0, 0}}, ", vs greedy W-D-L 12-0-0"},
		// With the policy's match the verdict is the policy's: the search
		// drawing every game says nothing of what the network learned.
		{GenerationMetrics{Baseline: "perfect", BaselineResult: &[3]int{0, 20, 0}, PolicyResult: &[3]int{0, 3, 17}},
			", vs perfect W-D-L 0-20-0 with 32 playouts, 0-3-17 by the policy alone"},
		{GenerationMetrics{Baseline: "perfect", BaselineResult: &[3]int{0, 20, 0}, PolicyResult: &[3]int{0, 20, 0}},
			", vs perfect W-D-L 0-20-0 with 32 playouts, 0-20-0 by the policy alone: no loss to perfect play in 20 games"},
		{GenerationMetrics{Baseline: "greedy", BaselineResult: &[3]int{12, 0, 0}, PolicyResult: &[3]int{7, 1, 4}},
			", vs greedy W-D-L 12-0-0 with 32 playouts, 7-1-4 by the policy alone"},
	} {
		if got := versusBaseline(tc.m, 32); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
}
