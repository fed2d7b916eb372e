package web

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/flipzero/flipzero/engine"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/mcts"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/web/internal/bundle"
	"github.com/flipzero/flipzero/web/play"
)

// builtBundle is the bundle the tests build once from the source they
// test, not the one the binary embeds, which may be older.
var builtBundle struct {
	once sync.Once
	dir  string
	err  error
}

// testBundle builds the bundle, or skips the test where ONNX Runtime Web
// is not installed (fails instead with FLIPZERO_REQUIRE_ONNXRUNTIME=1, as
// CI sets it).
func testBundle(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(bundle.ORTPackage), "dist")); err != nil {
		if os.Getenv("FLIPZERO_REQUIRE_ONNXRUNTIME") != "" {
			t.Fatalf("onnxruntime-web is not installed (npm ci --prefix web/ort): %v", err)
		}
		t.Skip("onnxruntime-web is not installed: npm ci --prefix web/ort (.ci/run does)")
	}
	builtBundle.once.Do(func() {
		builtBundle.dir, builtBundle.err = os.MkdirTemp("", "flipzero-bundle-")
		if builtBundle.err == nil {
			builtBundle.err = bundle.Build(context.Background(), builtBundle.dir, bundle.Options{Root: root})
		}
	})
	if builtBundle.err != nil {
		t.Fatal(builtBundle.err)
	}
	return builtBundle.dir
}

// modelOf writes a model of game with architecture cfg (random weights
// from seed) and returns its path.
func modelOf(t *testing.T, game string, cfg nn.Config, seed uint64) string {
	t.Helper()
	g, err := games.ByName(game)
	if err != nil {
		t.Fatal(err)
	}
	net, err := nn.New(g, cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	perturb(net, seed)
	path := filepath.Join(t.TempDir(), game+".fznet")
	if err := nn.SaveFolded(path, net.Fold(), 321, map[string]string{"generation": "9"}); err != nil {
		t.Fatal(err)
	}
	return path
}

// perturb gives a new network's batch norms, biases and zero heads
// values of their own, as training would, so that its outputs depend on
// every weight and a page that mishandled one would compute something
// else.
func perturb(net *nn.Network, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 5))
	for _, p := range append(net.Learnables(), net.Statistics()...) {
		zero := !slices.ContainsFunc(p.Data, func(x float32) bool { return x != 0 })
		for i := range p.Data {
			switch {
			case strings.HasSuffix(p.Name, ".bn.gamma"):
				p.Data[i] = float32(0.5 + rng.Float64())
			case strings.HasSuffix(p.Name, ".bn.beta"), strings.HasSuffix(p.Name, ".b"):
				p.Data[i] = float32(rng.NormFloat64() * 0.2)
			case strings.HasSuffix(p.Name, ".bn.mean"):
				p.Data[i] = float32(rng.NormFloat64() * 0.3)
			case strings.HasSuffix(p.Name, ".bn.var"):
				p.Data[i] = float32(0.5 + 2*rng.Float64())
			case zero:
				p.Data[i] = float32(rng.NormFloat64() * 0.1)
			}
		}
	}
}

// exportModel exports the model at path as a page with opts and returns
// its folder.
func exportModel(t *testing.T, path string, opts ExportOptions) string {
	t.Helper()
	c, _, err := engine.LoadModel(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "page")
	m := ExportModel{Network: c.Network.Fold(), Steps: c.Step, Metadata: c.Metadata}
	if _, err := Export(dir, m, opts, os.DirFS(testBundle(t))); err != nil {
		t.Fatal(err)
	}
	return dir
}

// staticServer serves dir as a static host does: files, no headers of
// its own, no API.
func staticServer(t *testing.T, dir string) string {
	t.Helper()
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

// openPage opens url and waits until the page has started: its engine
// loaded and the game shown ("true"), or a failure said ("failed").
func openPage(t *testing.T, ctx context.Context, url string) string {
	t.Helper()
	if err := chromedp.Run(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	var ready string
	for deadline := time.Now().Add(60 * time.Second); ; {
		if err := chromedp.Run(ctx, chromedp.Evaluate(`document.body.dataset.ready`, &ready)); err != nil {
			t.Fatal(err)
		}
		if ready == "true" || ready == "failed" {
			return ready
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page did not start: status %q", textOf(t, ctx, "#status"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// awaitJS evaluates a JavaScript expression that gives a promise and
// decodes what it resolves to into out.
func awaitJS(ctx context.Context, js string, out any) error {
	return chromedp.Run(ctx, chromedp.Evaluate(js, out, func(p *runtime.EvaluateParams) *runtime.EvaluateParams {
		return p.WithAwaitPromise(true)
	}))
}

// pageRequest sends a request through the page's transport, as the page
// does, and returns the answer's view.
func pageRequest(t *testing.T, ctx context.Context, method, path string, body any) (int, play.View, string) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	arg := "undefined"
	if body != nil {
		arg = string(b)
	}
	var res struct {
		Status int
		Data   json.RawMessage
	}
	js := fmt.Sprintf(`flipzeroTransport.request(%q, %q, %s).then(r => ({status: r.status, data: r.data}))`, method, path, arg)
	if err := awaitJS(ctx, js, &res); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	var v play.View
	var e struct{ Error string }
	if res.Status == play.StatusOK {
		if err := json.Unmarshal(res.Data, &v); err != nil {
			t.Fatal(err)
		}
	} else {
		json.Unmarshal(res.Data, &e)
	}
	return res.Status, v, e.Error
}

// TestBrowserExportedPage opens an exported Othello page from a plain
// static server and plays it by clicks: the page's own engine answers,
// says which network it plays and how, gives hints and its top moves,
// takes moves back, changes strength, and shows the record; on a phone's
// screen too. Screenshots of each state go to $FLIPZERO_ARTIFACTS.
func TestBrowserExportedPage(t *testing.T) {
	ctx := browserWith(t, 3*time.Minute, 1100, 820)
	model := modelOf(t, "othello", nn.Config{Blocks: 2, Filters: 16, PolicyFilters: 4, ValueFilters: 1, ValueHidden: 16, PolicyHead: "conv"}, 4)
	url := staticServer(t, exportModel(t, model, ExportOptions{Strength: play.Strength{Playouts: 32}, Search: mcts.PlayConfig()}))
	if ready := openPage(t, ctx, url); ready != "true" {
		t.Fatalf("the exported page did not start: %q", textOf(t, ctx, "#status"))
	}
	var engineName string
	chromedp.Run(ctx, chromedp.Evaluate(`document.body.dataset.engine`, &engineName))
	if engineName != "page" {
		t.Fatalf("the exported page's requests are answered by %q, want its own engine", engineName)
	}
	network := textOf(t, ctx, "#network")
	for _, want := range []string{"othello network", "generation 9", "16×2", "321 training steps", "32 playouts a move", "PUCT search", "in this page"} {
		if !strings.Contains(network, want) {
			t.Errorf("the page says %q, without %q", network, want)
		}
	}
	screenshot(t, ctx, "export-start.png")
	if err := chromedp.Run(ctx, chromedp.Click(`#pt-f5`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	ply := plyAfter(t, ctx, 0)
	if p := pieces(t, ctx); ply != 2 || p["f5"] != "black" || len(p) != 6 {
		t.Fatalf("after f5 and the bot's answer: ply %d, discs %v", ply, p)
	}
	if ev := textOf(t, ctx, "#evaluation"); !strings.Contains(ev, "flipzero played") || !strings.Contains(ev, "its chance of winning") {
		t.Errorf("the bot's answer shows %q", ev)
	}
	screenshot(t, ctx, "export-answered.png")

	// A hint, marked on the board, and the search's top moves with the
	// policy's priors.
	click(t, ctx, "#hint")
	waitIdle(t, ctx)
	hint := textOf(t, ctx, "#message")
	if !strings.HasPrefix(hint, "Hint: ") || !strings.Contains(hint, "your chance of winning") {
		t.Errorf("the hint shows %q", hint)
	}
	if n := evalInt(t, ctx, `document.querySelectorAll("circle.hinted").length`); n != 1 {
		t.Errorf("%d hinted points on the board, want 1", n)
	}
	click(t, ctx, "#show-top")
	var top [][]string
	chromedp.Run(ctx, chromedp.Evaluate(`[...document.querySelectorAll("#top-rows tr")].map(tr => [...tr.cells].map(td => td.textContent))`, &top))
	if len(top) == 0 || !strings.HasPrefix(hint, "Hint: "+top[0][0]+" ") || !strings.HasSuffix(top[0][2], "%") {
		t.Errorf("top moves %v for the hint %q", top, hint)
	}
	screenshot(t, ctx, "export-hint-top.png")

	// The record, ready to copy, in the notation the project reads.
	click(t, ctx, "#record-box summary")
	var record string
	chromedp.Run(ctx, chromedp.Value("#record", &record, chromedp.ByQuery))
	var history []string
	chromedp.Run(ctx, chromedp.Evaluate(`[...document.querySelectorAll("#history li")].map(li => li.textContent)`, &history))
	if want := strings.Join(history, ";") + "\tunfinished\tothello"; record != want {
		t.Errorf("the record reads %q, want %q", record, want)
	}
	screenshot(t, ctx, "export-record.png")

	// Undo takes back the person's move and the answer.
	click(t, ctx, "#undo")
	waitIdle(t, ctx)
	if ply := evalInt(t, ctx, `Number(document.body.dataset.ply)`); ply != 0 {
		t.Errorf("after undo the page shows %d decisions", ply)
	}

	// A stronger bot, then a new game as white: the bot opens with the
	// strength chosen.
	choose(t, ctx, "strength", "p100")
	waitIdle(t, ctx)
	if net := textOf(t, ctx, "#network"); !strings.Contains(net, "100 playouts a move") {
		t.Errorf("after choosing 100 playouts the page says %q", net)
	}
	choose(t, ctx, "side", "white")
	click(t, ctx, "#new")
	if ply := plyAfter(t, ctx, 0); ply != 1 {
		t.Fatalf("a new game as white: %d decisions, want the bot's opening", ply)
	}
	if ev := textOf(t, ctx, "#evaluation"); !strings.Contains(ev, "100 playouts") {
		t.Errorf("the bot's opening with 100 playouts shows %q", ev)
	}
	screenshot(t, ctx, "export-as-white.png")

	// Seconds a move: the page's timers bound the search.
	choose(t, ctx, "strength", "s1")
	waitIdle(t, ctx)
	status, v, msg := pageRequest(t, ctx, "POST", "api/hint", nil)
	if status != play.StatusOK || v.Strength.Seconds != 1 || v.Hint == nil || v.Hint.Seconds < 1 {
		t.Errorf("a hint at 1 s a move: %d %s, strength %+v, hint %+v", status, msg, v.Strength, v.Hint)
	}
}

// TestBrowserExportedPagePhone plays an exported YINSH blitz page on a
// phone's screen: the board fills the width, the controls fit below it,
// and a click on a point places a ring.
func TestBrowserExportedPagePhone(t *testing.T) {
	ctx := browserWith(t, 2*time.Minute, 390, 844)
	model := modelOf(t, "yinsh-blitz", nn.Config{Blocks: 1, Filters: 16, PolicyFilters: 4, ValueFilters: 1, ValueHidden: 16, PolicyHead: "conv", GlobalPooling: true}, 5)
	url := staticServer(t, exportModel(t, model, ExportOptions{Strength: play.Strength{Playouts: 16}, Search: mcts.PlayConfig()}))
	if err := chromedp.Run(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateScale(2))); err != nil {
		t.Fatal(err)
	}
	if ready := openPage(t, ctx, url); ready != "true" {
		t.Fatalf("the exported page did not start: %q", textOf(t, ctx, "#status"))
	}
	width := evalInt(t, ctx, `Math.round(document.getElementById("board").getBoundingClientRect().width)`)
	overflow := evalInt(t, ctx, `document.documentElement.scrollWidth - document.documentElement.clientWidth`)
	if width < 360 || overflow > 0 {
		t.Errorf("on a 390-pixel screen the board is %d pixels wide and the page %d pixels too wide", width, overflow)
	}
	screenshot(t, ctx, "export-phone-start.png")
	click(t, ctx, "#pt-F6")
	if ply := plyAfter(t, ctx, 0); ply != 2 {
		t.Fatalf("after P F6 the page shows %d decisions", ply)
	}
	if p := pieces(t, ctx); p["F6"] != "white-ring" {
		t.Errorf("F6 holds %q after the placement", p["F6"])
	}
	screenshot(t, ctx, "export-phone-answered.png")
}

func click(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	if err := chromedp.Run(ctx, chromedp.Click(sel, chromedp.ByQuery)); err != nil {
		t.Fatalf("click %s: %v", sel, err)
	}
}

// choose picks value in the select with the id, as a person does.
func choose(t *testing.T, ctx context.Context, id, value string) {
	t.Helper()
	js := fmt.Sprintf(`(() => { const s = document.getElementById(%q); s.value = %q; s.dispatchEvent(new Event("change")); return s.value })()`, id, value)
	var got string
	if err := chromedp.Run(ctx, chromedp.Evaluate(js, &got)); err != nil || got != value {
		t.Fatalf("choose %s in #%s: %q, %v", value, id, got, err)
	}
}

// waitIdle waits until the page is no longer waiting for an answer.
func waitIdle(t *testing.T, ctx context.Context) {
	t.Helper()
	waitFor(t, ctx, "an answer", `document.body.dataset.busy !== "true"`)
}

// TestBrowserExportedPageBroken: a page whose network, engine or
// description cannot load says so on the page instead of showing an
// empty board.
func TestBrowserExportedPageBroken(t *testing.T) {
	ctx := browserWith(t, 3*time.Minute, 1000, 700)
	model := modelOf(t, "tictactoe", smallNetwork("tictactoe"), 2)
	good := exportModel(t, model, ExportOptions{Strength: play.Strength{Playouts: 8}, Search: mcts.PlayConfig()})
	tests := []struct {
		name   string
		damage func(dir string) error
		says   string
	}{
		{"model-cut", func(dir string) error {
			p := filepath.Join(dir, "model.onnx")
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(p, b[:len(b)/3], 0o644)
		}, "the network model.onnx does not load"},
		{"model-missing", func(dir string) error { return os.Remove(filepath.Join(dir, "model.onnx")) }, "could not be fetched: 404"},
		{"engine-missing", func(dir string) error { return os.Remove(filepath.Join(dir, bundle.Engine)) }, "the engine (flipzero.wasm) could not be fetched"},
		{"page-json-game", func(dir string) error {
			p := filepath.Join(dir, play.PageFile)
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(p, []byte(strings.Replace(string(b), `"game": "tictactoe"`, `"game": "chess"`, 1)), 0o644)
		}, "the engine did not start: page.json: unknown game"},
		{"page-json-cut", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, play.PageFile), []byte(`{"engine": "pa`), 0o644)
		}, "The page could not learn who plays"},
	}
	for _, tt := range tests {
		dir := filepath.Join(t.TempDir(), tt.name)
		if err := os.CopyFS(dir, os.DirFS(good)); err != nil {
			t.Fatal(err)
		}
		if err := tt.damage(dir); err != nil {
			t.Fatal(err)
		}
		ready := openPage(t, ctx, staticServer(t, dir))
		status := textOf(t, ctx, "#status")
		if ready != "failed" || !strings.Contains(status, tt.says) {
			t.Errorf("%s: the page is %q and says %q, want it to fail saying %q", tt.name, ready, status, tt.says)
		}
		if tt.name == "model-cut" {
			screenshot(t, ctx, "export-broken-model.png")
		}
	}
}
