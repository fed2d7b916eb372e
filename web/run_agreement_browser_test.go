package web

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/flipzero/flipzero/loop"
	"github.com/flipzero/flipzero/records"
)

// TestBrowserRunAgreement: the generations measured on held-out records
// (eval.records) draw the agreement chart, top-1 and top-3 in percent,
// and one appended later joins it; a run that measures none says how to.
func TestBrowserRunAgreement(t *testing.T) {
	ctx := browser(t)
	dir := newRunFolder(t, "tictactoe")
	agreement := func(top1, top3 float64) *loop.Agreement {
		return &loop.Agreement{Games: 10, Positions: 50,
			Top1: records.Estimate{Value: top1, Low: top1 - 0.05, High: top1 + 0.05},
			Top3: records.Estimate{Value: top3, Low: top3 - 0.05, High: top3 + 0.05}}
	}
	for _, m := range []loop.GenerationMetrics{
		{Generation: 0, Steps: 40, Step: 40, PolicyLoss: 1.5, ValueLoss: 0.9, Agreement: agreement(0.42, 0.8),
			Pretrained: &loop.Pretrained{From: "records", Games: 100, Positions: 500}},
		{Generation: 1, Games: 20, Positions: 90, Steps: 10, Step: 50, PolicyLoss: 1.4, ValueLoss: 0.8},
		{Generation: 2, Games: 20, Positions: 90, Steps: 10, Step: 60, PolicyLoss: 1.3, ValueLoss: 0.7, Agreement: agreement(0.46, 0.83)},
	} {
		if err := loop.AppendMetrics(dir.Metrics(), m); err != nil {
			t.Fatal(err)
		}
	}
	openRunPage(ctx, t, dir, `body[data-generation="2"]`)
	series := func(name string) int {
		return evalInt(t, ctx, fmt.Sprintf(`(() => { const s = document.querySelector('#chart-agreement [data-name="%s"]'); return s ? Number(s.dataset.n) : -1 })()`, name))
	}
	if a, b := series("top-1"), series("top-3"); a != 2 || b != 2 {
		t.Fatalf("the agreement chart draws top-1 with %d points and top-3 with %d, want the 2 generations measured", a, b)
	}
	next := loop.GenerationMetrics{Generation: 3, Games: 20, Positions: 90, Steps: 10, Step: 70, Agreement: agreement(0.5, 0.85)}
	if err := loop.AppendMetrics(dir.Metrics(), next); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "generation 3's agreement", `(() => { const s = document.querySelector('#chart-agreement [data-name="top-1"]'); return !!s && s.dataset.n === "3" })()`)

	unmeasured := newRunFolder(t, "tictactoe")
	if err := loop.AppendMetrics(unmeasured.Metrics(), loop.GenerationMetrics{Generation: 1, Games: 20, Steps: 10, Step: 10, PolicyLoss: 1, ValueLoss: 1}); err != nil {
		t.Fatal(err)
	}
	other := runServer(t, unmeasured)
	if err := chromedp.Run(ctx, chromedp.Navigate(other.URL+"/run"),
		chromedp.WaitVisible(`#chart-agreement text.empty`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	var empty string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector("#chart-agreement text.empty").textContent`, &empty)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(empty, "eval.records") {
		t.Errorf("an unmeasured run's agreement chart says %q", empty)
	}
}
