package web

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/flipzero/flipzero/engine"
	"github.com/flipzero/flipzero/nn/cpu"
	"github.com/flipzero/flipzero/web/play"
)

// startServe serves a game against model on a free loopback port and
// returns the page's address.
func startServe(t *testing.T, model string) string {
	t.Helper()
	e, err := engine.NewModelEngine(model, nil, engine.EngineOptions{Backend: cpu.Backend(), Playouts: 16})
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGame(e, 0)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler())
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

// browser starts headless Chromium, or skips the test without it.
func browser(t *testing.T) context.Context {
	t.Helper()
	return browserWith(t, 50*time.Second, 1100, 760)
}

// browserWith starts headless Chromium with a window of width × height
// for at most timeout, or skips the test without it.
func browserWith(t *testing.T, timeout time.Duration, width, height int) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (apt-get install chromium; .ci/run installs it)")
	}
	// A fresh profile; not t.TempDir, whose removal fails while Chromium's
	// helper processes are still writing their last files.
	profile, err := os.MkdirTemp("", "flipzero-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(width, height),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() {
		cancelTimeout()
		cancelCtx()
		cancelAlloc()
		for try := 0; try < 20 && os.RemoveAll(profile) != nil; try++ {
			time.Sleep(100 * time.Millisecond)
		}
	})
	return ctx
}

// artifactDir is where screenshots go: $FLIPZERO_ARTIFACTS, or the test's
// temporary folder.
func artifactDir(t *testing.T) string {
	if dir := os.Getenv("FLIPZERO_ARTIFACTS"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	return t.TempDir()
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	var png []byte
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(artifactDir(t), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// plyAfter waits until the page shows more than ply decisions played and
// is not waiting for the server, and returns the new count.
func plyAfter(t *testing.T, ctx context.Context, ply int) int {
	t.Helper()
	var n int
	js := fmt.Sprintf(`(() => { const n = Number(document.body.dataset.ply); return n > %d && document.body.dataset.busy !== "true" ? n : -1 })()`, ply)
	for deadline := time.Now().Add(20 * time.Second); ; {
		if err := chromedp.Run(ctx, chromedp.Evaluate(js, &n)); err != nil {
			t.Fatal(err)
		}
		if n > ply {
			return n
		}
		if time.Now().After(deadline) {
			var status string
			chromedp.Run(ctx, chromedp.Text("#status", &status, chromedp.ByID))
			t.Fatalf("the page still shows %d decisions; status %q", ply, status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func pieces(t *testing.T, ctx context.Context) map[string]string {
	t.Helper()
	var out map[string]string
	js := `Object.fromEntries([...document.querySelectorAll("circle.cell")].filter(c => c.dataset.piece).map(c => [c.dataset.name, c.dataset.piece]))`
	if err := chromedp.Run(ctx, chromedp.Evaluate(js, &out)); err != nil {
		t.Fatal(err)
	}
	return out
}

func textOf(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	var s string
	if err := chromedp.Run(ctx, chromedp.Text(sel, &s, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	return s
}

const target = `circle.cell[data-target="1"]`

// TestBrowserOthello drives the page in headless Chromium: it clicks
// moves on the Othello board and checks that the bot answered and the
// board was redrawn.
func TestBrowserOthello(t *testing.T) {
	ctx := browser(t)
	url := startServe(t, untrainedModel(t, "othello"))
	if err := chromedp.Run(ctx, chromedp.Navigate(url), chromedp.WaitVisible(`body[data-ply="0"]`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	if p := pieces(t, ctx); len(p) != 4 || p["d5"] != "black" || p["d4"] != "white" {
		t.Fatalf("start position on the page: %v", p)
	}
	if err := chromedp.Run(ctx, chromedp.Click(`#pt-f5`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	ply := plyAfter(t, ctx, 0)
	p := pieces(t, ctx)
	if ply != 2 || p["f5"] != "black" || p["e5"] == "white" && p["f5"] != "black" || len(p) != 6 {
		t.Fatalf("after f5 and the bot's answer: ply %d, discs %v", ply, p)
	}
	if !strings.Contains(textOf(t, ctx, "#evaluation"), "flipzero played") || !strings.Contains(textOf(t, ctx, "#status"), "Your turn") {
		t.Errorf("no evaluation or turn shown: %q / %q", textOf(t, ctx, "#evaluation"), textOf(t, ctx, "#status"))
	}
	for i := 0; i < 3; i++ {
		if err := chromedp.Run(ctx, chromedp.Click(target, chromedp.ByQuery)); err != nil {
			t.Fatal(err)
		}
		ply = plyAfter(t, ctx, ply)
	}
	if got := len(pieces(t, ctx)); got != 4+ply {
		t.Errorf("after %d decisions the board shows %d discs, want %d", ply, got, 4+ply)
	}
	screenshot(t, ctx, "othello.png")
}

// TestBrowserYinsh places rings by clicking, then moves a ring by clicking
// it and its destination, checking each time that the bot answered.
func TestBrowserYinsh(t *testing.T) {
	ctx := browser(t)
	url := startServe(t, untrainedModel(t, "yinsh"))
	if err := chromedp.Run(ctx, chromedp.Navigate(url), chromedp.WaitVisible(`body[data-ply="0"]`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Run(ctx, chromedp.Click(`#pt-F6`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	ply := plyAfter(t, ctx, 0)
	if p := pieces(t, ctx); ply != 2 || p["F6"] != "white-ring" || len(p) != 2 {
		t.Fatalf("after P F6: ply %d, pieces %v", ply, p)
	}
	for ply < 10 {
		if err := chromedp.Run(ctx, chromedp.Click(target, chromedp.ByQuery)); err != nil {
			t.Fatal(err)
		}
		ply = plyAfter(t, ctx, ply)
	}
	rings := 0
	for _, piece := range pieces(t, ctx) {
		if strings.HasSuffix(piece, "-ring") {
			rings++
		}
	}
	if rings != 10 || !strings.Contains(textOf(t, ctx, "#status"), "move a ring") {
		t.Fatalf("after the placements: %d rings, status %q", rings, textOf(t, ctx, "#status"))
	}
	// A ring move: the ring, then its destination.
	var from string
	if err := chromedp.Run(ctx,
		chromedp.AttributeValue(target+`[data-piece="white-ring"]`, "data-name", &from, nil, chromedp.ByQuery),
		chromedp.Click(target+`[data-piece="white-ring"]`, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	var to string
	if err := chromedp.Run(ctx, chromedp.AttributeValue(target, "data-name", &to, nil, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	if to == from {
		t.Fatalf("after clicking the ring %s the destinations include it", from)
	}
	if err := chromedp.Run(ctx, chromedp.Click(`#pt-`+to, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	next := plyAfter(t, ctx, ply)
	p := pieces(t, ctx)
	if next < ply+2 || p[from] != "white-marker" || p[to] != "white-ring" {
		t.Fatalf("after M %s %s: ply %d → %d, %s holds %q and %s %q", from, to, ply, next, from, p[from], to, p[to])
	}
	var history []string
	chromedp.Run(ctx, chromedp.Evaluate(`[...document.querySelectorAll("#history li")].map(li => li.textContent)`, &history))
	if len(history) != next || history[ply] != "M "+from+" "+to {
		t.Errorf("move list %v, want %d entries with M %s %s at %d", history, next, from, to, ply)
	}
	screenshot(t, ctx, "yinsh.png")
}

// rowPosition plays random YINSH decisions until the player to decide
// must remove a row, and returns the decisions.
func rowPosition(t *testing.T, e *engine.Engine) []int {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 8))
	var legal []int
	for game := 0; game < 200; game++ {
		e.NewGame()
		for !e.State().Terminal() {
			legal = e.State().LegalActions(legal)
			if strings.HasPrefix(e.Game().FormatAction(legal[0]), "R ") {
				return append([]int(nil), e.History()...)
			}
			e.Play(legal[rng.IntN(len(legal))])
		}
	}
	t.Fatal("no row to remove in 200 random games")
	return nil
}

// TestBrowserYinshRow removes a row by clicking its markers, then a ring,
// in a position reached by random play, and checks that the bot answered.
func TestBrowserYinshRow(t *testing.T) {
	ctx := browser(t)
	e, err := engine.NewModelEngine(untrainedModel(t, "yinsh"), nil, engine.EngineOptions{Backend: cpu.Backend(), Playouts: 16})
	if err != nil {
		t.Fatal(err)
	}
	history := rowPosition(t, e)
	if err := e.NewGame(); err != nil {
		t.Fatal(err)
	}
	for _, a := range history {
		if err := e.Play(a); err != nil {
			t.Fatal(err)
		}
	}
	gs, err := Continue(e, e.State().ToMove())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gs.Handler())
	defer srv.Close()
	_, v, _ := call(t, srv, "GET", "/api/state", "")
	var row play.Move
	for _, m := range v.Legal {
		if m.Kind == "row" {
			row = m
			break
		}
	}
	ply := len(history)
	if row.Move == "" || !v.YourTurn {
		t.Fatalf("no row to remove for the person: %+v", v.Legal)
	}
	if err := chromedp.Run(ctx, chromedp.Navigate(srv.URL), chromedp.WaitVisible(fmt.Sprintf(`body[data-ply="%d"]`, ply), chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	// Click the row's markers until the page knows which row is meant.
	for i, p := range row.Points {
		if err := chromedp.Run(ctx, chromedp.Click(`#pt-`+p, chromedp.ByQuery)); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			screenshot(t, ctx, "yinsh-row.png")
		}
		var n string
		chromedp.Run(ctx, chromedp.Evaluate(`document.body.dataset.busy === "true" ? "" : document.body.dataset.ply`, &n))
		if n == fmt.Sprint(ply+1) {
			break
		}
	}
	ply = plyAfter(t, ctx, ply)
	_, v, _ = call(t, srv, "GET", "/api/state", "")
	if v.History[len(history)] != row.Move {
		t.Fatalf("the page played %s, want %s", v.History[len(history)], row.Move)
	}
	if !v.YourTurn || !strings.HasPrefix(v.Legal[0].Move, "X ") {
		t.Fatalf("after the row: your turn %v, legal %v", v.YourTurn, v.Legal)
	}
	// Then a ring.
	if err := chromedp.Run(ctx, chromedp.Click(target, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	ply = plyAfter(t, ctx, ply)
	_, v, _ = call(t, srv, "GET", "/api/state", "")
	if x := v.History[len(history)+1]; !strings.HasPrefix(x, "X ") {
		t.Fatalf("after the row the page played %s, want a ring removal", x)
	}
	if !v.Over && (len(v.History) < len(history)+3 || !v.YourTurn) {
		t.Errorf("the bot did not answer: history %v", v.History[len(history):])
	}
	t.Logf("removed %s then %s; the bot answered %v", row.Move, v.History[len(history)+1], v.History[len(history)+2:])
}

// TestBrowserSolitaire plays the solitaire on the page: a placement
// clicked turns its neighbouring tokens up on the board at once, and the
// bot's move, asked for with its button, says the score it expects.
func TestBrowserSolitaire(t *testing.T) {
	ctx := browser(t)
	url := startServe(t, untrainedModel(t, "reversi-solitaire"))
	if err := chromedp.Run(ctx, chromedp.Navigate(url), chromedp.WaitVisible(`body[data-ply="0"]`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	p := pieces(t, ctx)
	if len(p) != 28 || p["d5"] != "gold" || p["d4"] != "black" || p["c1"] != "token" {
		t.Fatalf("start position on the page: %v", p)
	}
	var sideHidden bool
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.getElementById("side-label").hidden`, &sideHidden)); err != nil || !sideHidden {
		t.Errorf("the side to play is offered in a one-player game (%v)", err)
	}
	if err := chromedp.Run(ctx, chromedp.Click(`#pt-d3`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	ply := plyAfter(t, ctx, 0)
	p = pieces(t, ctx)
	if ply != 3 || p["d3"] != "gold" || p["d4"] != "gold" || !strings.HasPrefix(p["c3"], "token-") || !strings.HasPrefix(p["d2"], "token-") || p["c3"] == "token" {
		t.Fatalf("after d3:gold and its reveals: ply %d, pieces %v", ply, p)
	}
	if err := chromedp.Run(ctx, chromedp.Click(`#bot`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	ply = plyAfter(t, ctx, ply)
	if ev := textOf(t, ctx, "#evaluation"); !strings.Contains(ev, "flipzero played") || !strings.Contains(ev, "expects a score of") {
		t.Errorf("the bot's move shows %q", ev)
	}
	if st := textOf(t, ctx, "#status"); !strings.HasPrefix(st, "Your turn: place a gold or a black disc") && !strings.HasPrefix(st, "Game over") {
		t.Errorf("status %q", st)
	}
	screenshot(t, ctx, "solitaire.png")
}
