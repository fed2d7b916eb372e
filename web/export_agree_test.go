package web

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flipzero/flipzero/engine"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/loop"
	"github.com/flipzero/flipzero/mcts"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/cpu"
	"github.com/flipzero/flipzero/web/internal/bundle"
	"github.com/flipzero/flipzero/web/play"
)

// shippedNetwork is the network section of one of configs/, the sizes
// the project trains.
func shippedNetwork(t *testing.T, config string) nn.Config {
	t.Helper()
	cfg, err := loop.LoadConfig(filepath.Join("..", "configs", config), games.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Network
}

// smallNetwork is a network of game small enough to load at once.
func smallNetwork(game string) nn.Config {
	cfg := nn.Config{Blocks: 1, Filters: 8, PolicyFilters: 2, ValueFilters: 1, ValueHidden: 8}
	if strings.HasPrefix(game, "yinsh") || game == "othello" {
		cfg.PolicyHead, cfg.PolicyFilters = "conv", 4
	}
	return cfg
}

// randomPositions plays random decisions (and chance events) from the
// start and returns up to n of the positions met where a decision is
// due, spread over the game.
func randomPositions(g env.Game, n int, seed uint64) []env.State {
	rng := rand.New(rand.NewPCG(seed, 1))
	var out []env.State
	var legal []int
	s := g.NewState()
	for ply := 0; !s.Terminal() && len(out) < n; ply++ {
		if !env.IsChance(s) && ply%3 == 0 {
			out = append(out, s.Clone())
		}
		legal = s.LegalActions(legal)
		s.Apply(legal[rng.IntN(len(legal))])
	}
	return out
}

// encode encodes states as the network reads them.
func encode(g env.Game, states []env.State) []float32 {
	p, h, w := g.EncodedShape()
	size := p * h * w
	in := make([]float32, len(states)*size)
	for i, s := range states {
		s.Encode(in[i*size : (i+1)*size])
	}
	return in
}

// pageForward runs the page's network (ONNX Runtime Web, through the
// page's transport) on encoded positions.
func pageForward(t *testing.T, ctx context.Context, input []float32, count int) (logits, wdl []float32) {
	t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Policy, WDL []float32 }
	js := fmt.Sprintf(`flipzeroTransport.evaluate(new Float32Array(%s), %d).then(r => ({policy: Array.from(r.policy), wdl: Array.from(r.wdl)}))`, raw, count)
	if err := awaitJS(ctx, js, &out); err != nil {
		t.Fatal(err)
	}
	return out.Policy, out.WDL
}

func largest(a []float32) float64 {
	m := 0.0
	for _, x := range a {
		m = max(m, math.Abs(float64(x)))
	}
	return m
}

func maxDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	d := 0.0
	for i := range a {
		x := math.Abs(float64(a[i]) - float64(b[i]))
		if !(x <= d) {
			d = x
		}
	}
	return d
}

// TestBrowserExportEveryGame exports a network of every game the
// project plays, opens each page in headless Chromium, and checks that
// the page's network (ONNX Runtime Web) computes what flipzero computes
// natively on the same positions, within 1e-4, and that the page's bot
// answers. Othello and YINSH blitz at their shipped sizes, the rest small.
func TestBrowserExportEveryGame(t *testing.T) {
	if testing.Short() {
		t.Skip("opens eight pages; -short leaves it out")
	}
	ctx := browserWith(t, 5*time.Minute, 1000, 760)
	reg := games.Builtin()
	for _, name := range games.Names() {
		cfg := smallNetwork(name)
		switch name {
		case "othello":
			cfg = shippedNetwork(t, "othello.yaml")
		case "yinsh-blitz":
			cfg = shippedNetwork(t, "yinsh-blitz.yaml")
		}
		g, err := reg.ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		model := modelOf(t, name, cfg, 6)
		url := staticServer(t, exportModel(t, model, ExportOptions{Strength: play.Strength{Playouts: 8}, Search: mcts.PlayConfig()}))
		if ready := openPage(t, ctx, url); ready != "true" {
			t.Fatalf("%s: the exported page did not start: %q", name, textOf(t, ctx, "#status"))
		}
		c, _, err := engine.LoadModel(model, nil)
		if err != nil {
			t.Fatal(err)
		}
		states := randomPositions(g, 8, 11)
		input := encode(g, states)
		inf, err := cpu.Backend().NewInference(c.Network.Fold(), len(states))
		if err != nil {
			t.Fatal(err)
		}
		wantLogits, wantWDL, err := inf.Forward(input, len(states))
		if err != nil {
			t.Fatal(err)
		}
		gotLogits, gotWDL := pageForward(t, ctx, input, len(states))
		dl, dw := maxDiff(gotLogits, wantLogits), maxDiff(gotWDL, wantWDL)
		if dl > 1e-4 || dw > 1e-4 {
			t.Errorf("%s (%d×%d): the page's network differs from flipzero's by %.2g in the policy logits and %.2g in win/draw/loss on %d positions",
				name, cfg.Filters, cfg.Blocks, dl, dw, len(states))
		}
		status, v, msg := pageRequest(t, ctx, "POST", "api/hint", nil)
		if status != play.StatusOK || v.Hint == nil || v.Hint.Playouts < 8 {
			t.Errorf("%s: the page's hint: %d %s", name, status, msg)
		}
		t.Logf("%s %d×%d: logits (largest %.3g) within %.2g, win/draw/loss within %.2g of flipzero's on %d positions; hint %s",
			name, cfg.Filters, cfg.Blocks, largest(wantLogits), dl, dw, len(states), v.Hint.Move)
	}
}

// agreement plays games with a native engine and asks the page's bot
// for its move at each position (from a fresh search, as the native
// engine searches it); it returns the positions and how many the two
// played the same move in, and fails the test where they differ and the
// native search's two best moves are not within float noise of each
// other.
func agreement(t *testing.T, ctx context.Context, model string, opts engine.EngineOptions, games int) (positions, same int) {
	t.Helper()
	e, err := engine.NewModelEngine(model, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	for game := 0; game < games; game++ {
		var moves []string
		// The first moves of each game but the first are random, so
		// that the games differ.
		rng := rand.New(rand.NewPCG(uint64(game), 9))
		if err := e.NewGame(); err != nil {
			t.Fatal(err)
		}
		for ply := 0; !e.State().Terminal(); ply++ {
			if env.IsChance(e.State()) {
				t.Fatal("a game with chance events")
			}
			if game > 0 && ply < 2 {
				legal := e.State().LegalActions(nil)
				m := e.Game().FormatAction(legal[rng.IntN(len(legal))])
				if _, err := e.PlayMove(m); err != nil {
					t.Fatal(err)
				}
				moves = append(moves, m)
				continue
			}
			record := strings.Join(moves, ";")
			mover := e.Game().PlayerName(e.State().ToMove())
			// The page's bot plays the side to move.
			human := e.Game().PlayerName(e.State().ToMove().Other())
			status, v, msg := pageRequest(t, ctx, "POST", "api/load", map[string]string{"record": record, "as": human})
			if status != play.StatusOK || len(v.Replies) == 0 {
				t.Fatalf("load %q as %s: %d %s", record, human, status, msg)
			}
			pageMove := v.Replies[0].Move
			// The native engine searches the same position from scratch.
			if err := e.NewGame(); err != nil {
				t.Fatal(err)
			}
			for _, m := range moves {
				if _, err := e.PlayMove(m); err != nil {
					t.Fatal(err)
				}
			}
			a, err := e.Analyze(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			positions++
			if a.Move == pageMove {
				same++
			} else if !nearTie(a, pageMove) {
				t.Errorf("after %q (%s to move) the page played %s, flipzero %s; the native search's candidates %+v",
					record, mover, pageMove, a.Move, a.Candidates[:min(3, len(a.Candidates))])
			}
			if _, err := e.PlayMove(a.Move); err != nil {
				t.Fatal(err)
			}
			moves = append(moves, a.Move)
		}
	}
	return positions, same
}

// nearTie says whether move is the native search's second best and the
// two best are within what float32's rounding can swap: a visit apart, or
// values within 1e-3.
func nearTie(a engine.Analysis, move string) bool {
	if len(a.Candidates) < 2 || a.Candidates[1].Move != move {
		return false
	}
	x, y := a.Candidates[0], a.Candidates[1]
	return x.Visits-y.Visits <= 1 || math.Abs(float64(x.Value-y.Value)) < 1e-3
}

// TestBrowserExportPlaysNativeMoves: over whole games of Othello and
// YINSH blitz at a fixed seed and playout count, the page's bot plays the
// native engine's move in at least 95% of the positions.
func TestBrowserExportPlaysNativeMoves(t *testing.T) {
	if testing.Short() {
		t.Skip("plays three games in the page and natively; -short leaves it out")
	}
	ctx := browserWith(t, 10*time.Minute, 1000, 760)
	// Othello as its config searches, Gumbel with the exact endgame;
	// YINSH blitz with PUCT; both with the solver, as every engine plays.
	gumbel := mcts.PlayConfig()
	gumbel.Mode, gumbel.EndgameSolve = mcts.Gumbel, 10
	tests := []struct {
		game     string
		cfg      nn.Config
		search   mcts.Config
		playouts int
		games    int
	}{
		{"othello", nn.Config{Blocks: 2, Filters: 32, PolicyFilters: 8, ValueFilters: 1, ValueHidden: 32, PolicyHead: "conv"}, gumbel, 48, 2},
		{"yinsh-blitz", nn.Config{Blocks: 2, Filters: 32, PolicyFilters: 8, ValueFilters: 1, ValueHidden: 32, PolicyHead: "conv", GlobalPooling: true}, mcts.PlayConfig(), 32, 1},
	}
	for _, tt := range tests {
		model := modelOf(t, tt.game, tt.cfg, 8)
		search := tt.search
		url := staticServer(t, exportModel(t, model, ExportOptions{Strength: play.Strength{Playouts: tt.playouts}, Search: search, Seed: 5}))
		if ready := openPage(t, ctx, url); ready != "true" {
			t.Fatalf("%s: the exported page did not start: %q", tt.game, textOf(t, ctx, "#status"))
		}
		opts := engine.EngineOptions{Backend: cpu.Backend(), Playouts: tt.playouts, Search: search, Seed: 5}
		positions, same := agreement(t, ctx, model, opts, tt.games)
		t.Logf("%s at %d playouts (%s): the page played flipzero's move in %d of %d positions (%.1f%%)",
			tt.game, tt.playouts, play.SearchText(search), same, positions, 100*float64(same)/float64(positions))
		if positions == 0 || float64(same) < 0.95*float64(positions) {
			t.Errorf("%s: the page played flipzero's move in %d of %d positions, want at least 95%%", tt.game, same, positions)
		}
	}
}

// TestBrowserExportSpeed measures an exported page of Othello's and
// YINSH blitz's shipped networks: ONNX Runtime Web's evaluations a
// second in the page at the search's batch, the seconds a move at 400
// playouts, and the same natively beside them. It asserts only that the
// page plays; the figures go to the log and to
// $FLIPZERO_ARTIFACTS/web-speed.txt.
func TestBrowserExportSpeed(t *testing.T) {
	if testing.Short() {
		t.Skip("measures for a minute; -short leaves it out")
	}
	ctx := browserWith(t, 10*time.Minute, 1000, 760)
	var report strings.Builder
	fmt.Fprintf(&report, "exported page in headless Chromium (ONNX Runtime Web, WebAssembly SIMD, one thread) against flipzero natively (cpu backend, float32, one core), %s\n", time.Now().UTC().Format(time.RFC3339))
	const playouts, moves = 400, 2
	for _, tt := range []struct{ game, config string }{{"othello", "othello.yaml"}, {"yinsh-blitz", "yinsh-blitz.yaml"}} {
		cfg := shippedNetwork(t, tt.config)
		model := modelOf(t, tt.game, cfg, 7)
		search := mcts.PlayConfig()
		url := staticServer(t, exportModel(t, model, ExportOptions{Strength: play.Strength{Playouts: playouts}, Search: search}))
		if ready := openPage(t, ctx, url); ready != "true" {
			t.Fatalf("%s: the exported page did not start: %q", tt.game, textOf(t, ctx, "#status"))
		}
		g, _ := games.ByName(tt.game)
		c, _, err := engine.LoadModel(model, nil)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&report, "%s %d×%d:\n", tt.game, cfg.Filters, cfg.Blocks)
		for _, batch := range []int{search.LeavesPerTree, 16} {
			page := pageEvalRate(t, ctx, g, batch, 2*time.Second)
			native := nativeEvalRate(t, c.Network.Fold(), g, batch, 2*time.Second)
			fmt.Fprintf(&report, "  network at batch %d: page %.0f evaluations/s, native %.0f\n", batch, page, native)
		}
		var pageSec, nativeSec float64
		var pagePlayouts int
		for i := 0; i < moves; i++ {
			status, v, msg := pageRequest(t, ctx, "POST", "api/new", map[string]string{"as": g.PlayerName(1)})
			if status != play.StatusOK || len(v.Replies) != 1 {
				t.Fatalf("%s: the page's opening move: %d %s", tt.game, status, msg)
			}
			pageSec += v.Replies[0].Seconds
			pagePlayouts += v.Replies[0].Playouts
		}
		e, err := engine.NewModelEngine(model, nil, engine.EngineOptions{Backend: cpu.Backend(), Playouts: playouts, Search: search})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < moves; i++ {
			e.NewGame()
			a, err := e.Analyze(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			nativeSec += a.Elapsed.Seconds()
		}
		fmt.Fprintf(&report, "  %d playouts a move (the opening, %d times): page %.2f s a move (%.0f playouts/s), native %.2f s\n",
			playouts, moves, pageSec/moves, float64(pagePlayouts)/pageSec, nativeSec/moves)
	}
	t.Log("\n" + report.String())
	path := filepath.Join(artifactDir(t), "web-speed.txt")
	if err := os.WriteFile(path, []byte(report.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// pageEvalRate is the page's network's positions a second at batch.
func pageEvalRate(t *testing.T, ctx context.Context, g env.Game, batch int, d time.Duration) float64 {
	t.Helper()
	p, h, w := g.EncodedShape()
	js := fmt.Sprintf(`(async () => {
		const x = new Float32Array(%d).map((_, i) => (i %% 3) * 0.5);
		await flipzeroTransport.evaluate(x, %d);
		const start = performance.now();
		let n = 0;
		while (performance.now() - start < %d) { await flipzeroTransport.evaluate(x, %d); n += %d; }
		return n * 1000 / (performance.now() - start);
	})()`, batch*p*h*w, batch, d.Milliseconds(), batch, batch)
	var rate float64
	if err := awaitJS(ctx, js, &rate); err != nil {
		t.Fatal(err)
	}
	return rate
}

// nativeEvalRate is flipzero's own float32 network's positions a second
// at batch on one goroutine, as bench nn measures it.
func nativeEvalRate(t *testing.T, f *nn.Folded, g env.Game, batch int, d time.Duration) float64 {
	t.Helper()
	inf, err := cpu.Backend().NewInference(f, batch)
	if err != nil {
		t.Fatal(err)
	}
	p, h, w := g.EncodedShape()
	x := make([]float32, batch*p*h*w)
	for i := range x {
		x[i] = float32(i%3) * 0.5
	}
	inf.Forward(x, batch)
	start := time.Now()
	n := 0
	for time.Since(start) < d {
		if _, _, err := inf.Forward(x, batch); err != nil {
			t.Fatal(err)
		}
		n += batch
	}
	return float64(n) / time.Since(start).Seconds()
}

// TestBrowserGoWasmNetworkSpeed measures what ONNX Runtime Web was
// chosen over: flipzero's own network compiled to WebAssembly (one
// thread, no SIMD), beside ONNX Runtime Web, in the same page, at the
// shipped sizes. It builds a second engine with the CPU backend in it
// (27 MB more), so it runs only when asked: FLIPZERO_WEB_GONET=1.
func TestBrowserGoWasmNetworkSpeed(t *testing.T) {
	if os.Getenv("FLIPZERO_WEB_GONET") == "" {
		t.Skip("a measurement, run on request: FLIPZERO_WEB_GONET=1 go test -run GoWasm -v ./web")
	}
	testBundle(t) // skips or fails where ONNX Runtime Web is not installed
	root, _ := filepath.Abs("..")
	dir := t.TempDir()
	if err := bundle.Build(context.Background(), dir, bundle.Options{Root: root, Tags: []string{"flipzero_gonet"}}); err != nil {
		t.Fatal(err)
	}
	ctx := browserWith(t, 10*time.Minute, 1000, 760)
	var report strings.Builder
	for _, tt := range []struct{ game, config string }{{"othello", "othello.yaml"}, {"yinsh-blitz", "yinsh-blitz.yaml"}} {
		cfg := shippedNetwork(t, tt.config).Inference()
		model := modelOf(t, tt.game, cfg, 7)
		c, _, err := engine.LoadModel(model, nil)
		if err != nil {
			t.Fatal(err)
		}
		page := filepath.Join(t.TempDir(), "page")
		m := ExportModel{Network: c.Network.Fold(), Steps: c.Step, Metadata: c.Metadata}
		if _, err := Export(page, m, ExportOptions{Strength: play.Strength{Playouts: 8}, Search: mcts.PlayConfig()}, os.DirFS(dir)); err != nil {
			t.Fatal(err)
		}
		if ready := openPage(t, ctx, staticServer(t, page)); ready != "true" {
			t.Fatalf("%s: the page did not start: %q", tt.game, textOf(t, ctx, "#status"))
		}
		g, _ := games.ByName(tt.game)
		raw, _ := json.Marshal(cfg)
		for _, batch := range []int{4, 16} {
			var goRate float64
			js := fmt.Sprintf(`flipzeroGoNet(%q, %q, %d, 3000)`, tt.game, raw, batch)
			if err := awaitJS(ctx, js, &goRate); err != nil {
				t.Fatal(err)
			}
			ortRate := pageEvalRate(t, ctx, g, batch, 3*time.Second)
			fmt.Fprintf(&report, "%s %d×%d at batch %d: Go WebAssembly %.1f evaluations/s, ONNX Runtime Web %.0f\n", tt.game, cfg.Filters, cfg.Blocks, batch, goRate, ortRate)
		}
	}
	t.Log("\n" + report.String())
	if err := os.WriteFile(filepath.Join(artifactDir(t), "web-go-wasm-speed.txt"), []byte(report.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
