package web

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/flipzero/flipzero/arena"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/internal/atomicfile"
	"github.com/flipzero/flipzero/loop"
	"github.com/flipzero/flipzero/nn/cpu"
	"github.com/flipzero/flipzero/runfolder"
)

// evalInt evaluates a JavaScript expression that gives a number.
func evalInt(t *testing.T, ctx context.Context, js string) int {
	t.Helper()
	var n int
	if err := chromedp.Run(ctx, chromedp.Evaluate(js, &n)); err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return n
}

// waitFor waits until the JavaScript condition holds.
func waitFor(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	var ok bool
	for deadline := time.Now().Add(20 * time.Second); ; {
		if err := chromedp.Run(ctx, chromedp.Evaluate(js, &ok)); err != nil {
			t.Fatal(err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page never showed %s (%s); status %q", what, js, textOf(t, ctx, "#status-line"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestBrowserRun opens the page of a run made by the real loop in
// headless Chromium: the charts and the generation are drawn, a
// generation appended to the metrics and a new status show up without a
// reload, and a kept game steps forward and back by buttons and keys.
func TestBrowserRun(t *testing.T) {
	ctx := browser(t)
	dir := loopRun(t)
	openRunPage(ctx, t, dir, `body[data-generation="2"]`)
	series := func(chart, name string) int {
		return evalInt(t, ctx, fmt.Sprintf(`(() => { const s = document.querySelector('#%s [data-name="%s"]'); return s ? Number(s.dataset.n) : -1 })()`, chart, name))
	}
	for _, c := range []struct{ chart, name string }{
		{"chart-loss", "policy"}, {"chart-loss", "value"}, {"chart-rating", "Elo"}, {"chart-evals", "evaluations/s"},
		{"chart-positions", "window"}, {"chart-time", "self-play"}, {"chart-time", "arena"}, {"chart-results", "draws"},
		{"chart-loss", "value of a constant guess"}, {"chart-length", "moves a game"},
	} {
		if n := series(c.chart, c.name); n != 2 {
			t.Errorf("%s draws %s with %d points, want 2", c.chart, c.name, n)
		}
	}
	// The value loss of a constant guess: the entropy of outcomes from the
	// mover's side, wins and losses equally common, draws the games' share.
	for _, c := range []struct {
		wins, losses, draws int
		want                float64
	}{
		{5, 5, 0, math.Ln2},
		{3, 7, 0, math.Ln2},
		{0, 0, 4, 0},
		{1, 1, 2, -math.Log(0.25)/2 - math.Log(0.5)/2},
		{2, 1, 1, -0.75*math.Log(0.375) - 0.25*math.Log(0.25)},
	} {
		var got float64
		js := fmt.Sprintf(`constantValueLoss({games: %d, results: [%d, %d, %d]})`, c.wins+c.losses+c.draws, c.wins, c.losses, c.draws)
		if err := chromedp.Run(ctx, chromedp.Evaluate(js, &got)); err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		if math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", js, got, c.want)
		}
	}
	var solo bool
	if err := chromedp.Run(ctx, chromedp.Evaluate(`constantValueLoss({games: 4, results: [4, 0, 0], score: 31}) === null`, &solo)); err != nil || !solo {
		t.Errorf("a one-player game's generation has a constant guess's value loss (%v)", err)
	}
	if got := textOf(t, ctx, "#tiles .tile .value"); got != "2" {
		t.Errorf("the generation tile shows %q", got)
	}
	// Scores in the one form: the self-play results from the first
	// player's side, each match from its player's.
	ms, err := loop.ReadMetrics(dir.Metrics())
	if err != nil {
		t.Fatal(err)
	}
	r := ms[1].Results
	if got, want := textOf(t, ctx, "#tiles"), fmt.Sprintf("last: first player W-D-L %d-%d-%d", r[0], r[2], r[1]); !strings.Contains(got, want) {
		t.Errorf("the tiles say %q, want %q", got, want)
	}
	matches, _, err := arena.ReadMatches(dir.Matches())
	if err != nil || len(matches) == 0 {
		t.Fatalf("matches: %v, %v", matches, err)
	}
	newest := matches[len(matches)-1]
	if got := textOf(t, ctx, "#matches thead"); !strings.Contains(got, "W-D-L") || strings.Contains(got, "won") {
		t.Errorf("the matches' heading %q, want one W-D-L column", got)
	}
	if got, want := textOf(t, ctx, "#matches tbody tr:first-child td:nth-child(4)"), fmt.Sprintf("%d-%d-%d", newest.Wins, newest.Draws, newest.Losses); got != want {
		t.Errorf("the newest match shows %q, want %q", got, want)
	}
	if hidden := evalInt(t, ctx, `document.getElementById("play-link").hidden ? 1 : 0`); hidden != 1 {
		t.Error("the page links a game that this server does not serve")
	}
	if got := textOf(t, ctx, "#status-line"); !strings.Contains(got, "Stopped after generation 2") {
		t.Errorf("status line %q", got)
	}

	// The loop goes on: a new generation's metrics, then a status for the
	// generation after it.
	next := ms[1]
	next.Generation, next.PolicyLoss, next.ValueLoss = 3, ms[1].PolicyLoss*0.8, ms[1].ValueLoss*0.8
	if err := loop.AppendMetrics(dir.Metrics(), next); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "generation 3", `document.body.dataset.generation === "3"`)
	if n := series("chart-loss", "policy"); n != 3 {
		t.Errorf("after generation 3 the loss chart has %d points", n)
	}
	// Pointing at the loss chart's right end shows generation 3's values.
	var tip string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`(() => {
		const a = document.querySelector("#chart-loss .hover-area"), b = a.getBoundingClientRect();
		a.dispatchEvent(new MouseEvent("mousemove", { clientX: b.right - 2, clientY: b.top + 10 }));
		return document.querySelector("#chart-loss .tip").textContent })()`, &tip)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tip, "generation 3") || !strings.Contains(tip, "policy: ") || !strings.Contains(tip, "value: ") {
		t.Errorf("the loss chart's tip at generation 3 says %q", tip)
	}
	now := time.Now().UTC()
	status, _ := json.Marshal(loop.Status{Generation: 4, Phase: loop.PhaseSelfPlay, Done: 5, Total: runGames,
		GenerationStarted: now.Add(-7 * time.Second).Format(time.RFC3339Nano), PhaseStarted: now.Add(-7 * time.Second).Format(time.RFC3339Nano),
		Updated: now.Format(time.RFC3339Nano)})
	if err := atomicfile.WriteBytes(dir.Status(), status); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "generation 4 in progress", `document.getElementById("status-line").textContent.includes("Generation 4: self-play — 5 / 12 games")`)

	// The newest kept generation's first game, stepped through.
	waitFor(t, ctx, "a game to replay", `document.getElementById("replay").dataset.ply === "0" && document.querySelectorAll("#replay-moves li").length > 4`)
	marks := func() int {
		return evalInt(t, ctx, `document.querySelectorAll("#replay-board text:not(.label)").length`)
	}
	if m := marks(); m != 0 {
		t.Fatalf("the start position shows %d marks", m)
	}
	for i := 1; i <= 3; i++ {
		if err := chromedp.Run(ctx, chromedp.Click("#next", chromedp.ByID)); err != nil {
			t.Fatal(err)
		}
		waitFor(t, ctx, fmt.Sprintf("move %d", i), fmt.Sprintf(`document.getElementById("replay").dataset.ply === "%d"`, i))
		if m := marks(); m != i {
			t.Fatalf("after %d moves the board shows %d marks", i, m)
		}
	}
	if got := textOf(t, ctx, "#replay-moves li.current"); got != textOf(t, ctx, "#replay-moves li:nth-child(3)") {
		t.Errorf("the current move %q is not the third", got)
	}
	moves := evalInt(t, ctx, `document.querySelectorAll("#replay-moves li").length`)
	if err := chromedp.Run(ctx, chromedp.KeyEvent(kb.End)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the end of the game", fmt.Sprintf(`document.getElementById("replay").dataset.ply === "%d"`, moves))
	if got := textOf(t, ctx, "#replay-status"); !strings.Contains(got, "wins") && !strings.Contains(got, "draw") {
		t.Errorf("the end of the game says %q", got)
	}
	if err := chromedp.Run(ctx, chromedp.KeyEvent(kb.ArrowLeft)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "one move back", fmt.Sprintf(`document.getElementById("replay").dataset.ply === "%d"`, moves-1))
	if m := marks(); m != moves-1 {
		t.Errorf("one move before the end the board shows %d marks, want %d", m, moves-1)
	}
	screenshot(t, ctx, "run.png")

	// Another generation's games.
	if err := chromedp.Run(ctx, chromedp.SetValue("#replay-gen", "1", chromedp.ByID),
		chromedp.Evaluate(`document.getElementById("replay-gen").dispatchEvent(new Event("change"))`, nil)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "generation 1's games", `document.getElementById("replay-status").textContent.includes("(generation 1)")`)

	// A loop that writes its heartbeat and counts moves, then one that
	// fell silent a minute ago (killed): the page says so within a poll,
	// and its dot stops being the running loop's green.
	now = time.Now().UTC()
	running, _ := json.Marshal(loop.Status{Generation: 5, Phase: loop.PhaseSelfPlay, Done: 300, Total: 700, Unit: "moves",
		PhaseStarted: now.Format(time.RFC3339Nano), GenerationStarted: now.Format(time.RFC3339Nano), Updated: now.Format(time.RFC3339Nano),
		Heartbeat: 2, Host: "trainer", PID: 4242})
	// Written whole, as the loop writes it: the server may read at any
	// moment.
	if err := atomicfile.WriteBytes(dir.Status(), running); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "moves counted", `document.getElementById("status-line").textContent.includes("Generation 5: self-play — 300 / 700 moves") && document.getElementById("live").dataset.state === "on"`)
	var killed loop.Status
	json.Unmarshal(running, &killed)
	killed.Updated = now.Add(-time.Minute).Format(time.RFC3339Nano)
	silent, _ := json.Marshal(killed)
	if err := atomicfile.WriteBytes(dir.Status(), silent); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "a silent loop", `document.getElementById("status-line").textContent.includes("stopped without a word") && document.getElementById("live").dataset.state === "idle"`)
	if got := textOf(t, ctx, "#status-detail"); !strings.Contains(got, "on trainer (process 4242)") || !strings.Contains(got, "resumes it") {
		t.Errorf("a silent loop's detail says %q", got)
	}
	screenshot(t, ctx, "run-silent.png")
}

// TestBrowserRunYinsh opens the page of a YINSH run that has not finished
// a generation yet but kept a game (a random one here): the page waits for
// the first generation, reports no problem, and replays the game on the
// hexagonal board to its end.
func TestBrowserRunYinsh(t *testing.T) {
	ctx := browser(t)
	dir := runfolder.Folder(t.TempDir())
	if err := dir.Create(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir.Config(), []byte("game: yinsh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := games.ByName("yinsh")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(4, 5))
	s := g.NewState()
	var moves []string
	var legal []int
	for !s.Terminal() && len(moves) < 300 {
		legal = s.LegalActions(legal)
		a := legal[rng.IntN(len(legal))]
		moves = append(moves, g.FormatAction(a))
		s.Apply(a)
	}
	outcome := "draw"
	if w := s.Winner(); s.Terminal() && w != env.NoPlayer {
		outcome = g.PlayerName(w)
	}
	record := strings.Join(moves, ";") + "\t" + outcome + "\tyinsh\n"
	if err := os.WriteFile(dir.GameRecords(3), []byte(record), 0o644); err != nil {
		t.Fatal(err)
	}
	openRunPage(ctx, t, dir, `#replay[data-ply="0"]`)
	if got := textOf(t, ctx, "#status-line"); got != "Waiting for the first generation…" {
		t.Errorf("status line %q", got)
	}
	if hidden := evalInt(t, ctx, `document.getElementById("problems").hidden ? 1 : 0`); hidden != 1 {
		t.Errorf("the page reports a problem: %q", textOf(t, ctx, "#problems"))
	}
	if err := chromedp.Run(ctx, chromedp.KeyEvent(kb.End)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the end of the game", fmt.Sprintf(`document.getElementById("replay").dataset.ply === "%d"`, len(moves)))
	// 85 points, and the rings and markers on them.
	if n := evalInt(t, ctx, `document.querySelectorAll("#replay-board circle").length`); n < 85+10 {
		t.Errorf("the board has %d circles", n)
	}
	if got := textOf(t, ctx, "#replay-status"); !strings.Contains(got, fmt.Sprintf("Move %d of %d", len(moves), len(moves))) {
		t.Errorf("the end of the game says %q", got)
	}
	screenshot(t, ctx, "run-yinsh.png")
}

// TestBrowserRunChecks: the page shows a run's checks, apart from its
// problems.
func TestBrowserRunChecks(t *testing.T) {
	ctx := browser(t)
	openRunPage(ctx, t, slowRun(t), `#checks:not([hidden])`)
	if got := textOf(t, ctx, "#checks"); !strings.HasPrefix(got, "Check: generations 7-12 trained at 300 samples/s") {
		t.Errorf("checks say %q", got)
	}
	if hidden := evalInt(t, ctx, `document.getElementById("problems").hidden ? 1 : 0`); hidden != 1 {
		t.Errorf("the page reports a problem: %q", textOf(t, ctx, "#problems"))
	}
}

// TestBrowserRunBesidePlayPage: with a model too, the run page links the
// game, and the link leads to it.
func TestBrowserRunBesidePlayPage(t *testing.T) {
	ctx := browser(t)
	srv := playAndRunServer(t)
	if err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/run"),
		chromedp.WaitVisible(`body[data-generation="2"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#play-link`, chromedp.ByID),
		chromedp.Click(`#play-link`, chromedp.ByID),
		chromedp.WaitVisible(`body[data-ply="0"]`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	if p := pieces(t, ctx); len(p) != 0 {
		t.Errorf("the game's page shows %v", p)
	}
}

// solitaireRun runs the real loop for two tiny generations of the
// solitaire, its arena on: a one-player run's folder.
func solitaireRun(t *testing.T) runfolder.Folder {
	t.Helper()
	raw, err := os.ReadFile("../configs/reversi-solitaire.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	for _, r := range [][2]string{
		{"blocks: 3", "blocks: 1"}, {"filters: 40", "filters: 8"},
		{"playouts_full: 128", "playouts_full: 8"}, {"playouts_fast: 32", "playouts_fast: 4"},
		{"games_per_generation: 128", "games_per_generation: 6"}, {"min_samples: 1000", "min_samples: 16"},
		{"games: 0 ", "games: 2 "}, {"playouts: 100", "playouts: 4"},
	} {
		text = strings.Replace(text, r[0], r[1], 1)
	}
	cfg := filepath.Join(t.TempDir(), "solitaire.yaml")
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := runfolder.Folder(filepath.Join(t.TempDir(), "run"))
	if err := loop.Loop(context.Background(), loop.LoopOptions{Backend: cpu.Backend(), ConfigPath: cfg, RunDir: string(dir), MaxGenerations: 2, Seed: 9}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestBrowserRunSolitaire: a one-player run's page draws the mean scores
// where a two-player run's draws wins and draws, shows its matches'
// means, and replays a game with its tokens to its score.
func TestBrowserRunSolitaire(t *testing.T) {
	ctx := browser(t)
	srv := runServer(t, solitaireRun(t))
	if err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/run"),
		chromedp.WaitVisible(`body[data-generation="2"]`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	series := func(name string) int {
		return evalInt(t, ctx, fmt.Sprintf(`(() => { const s = document.querySelector('#chart-results [data-name="%s"]'); return s ? Number(s.dataset.n) : -1 })()`, name))
	}
	if series("mean score in self-play") != 2 || series("mean score in the arena") != 2 || series("draws") != -1 {
		t.Errorf("the results chart draws self-play %d, arena %d, draws %d points; want the two mean scores",
			series("mean score in self-play"), series("mean score in the arena"), series("draws"))
	}
	if got := textOf(t, ctx, "#tiles"); !strings.Contains(got, "last: mean score ") {
		t.Errorf("the tiles say %q", got)
	}
	if got := textOf(t, ctx, "#matches tbody"); !strings.Contains(got, " vs ") {
		t.Errorf("the matches show %q, want both mean scores", got)
	}
	// A deal can end after two placements that capture nothing: any
	// listed move says the game is loaded.
	waitFor(t, ctx, "a game to replay", `document.getElementById("replay").dataset.ply === "0" && document.querySelectorAll("#replay-moves li").length > 0`)
	if got := textOf(t, ctx, "#replay-game"); !strings.Contains(got, ", score ") || strings.Contains(got, "wins") {
		t.Errorf("the games are listed as %q, want their scores", got)
	}
	if n := evalInt(t, ctx, `[...document.querySelectorAll("#replay-board text")].filter((t) => t.textContent === "?").length`); n != 24 {
		t.Errorf("the replay's start shows %d face-down tokens, want 24", n)
	}
	if err := chromedp.Run(ctx, chromedp.Click("#last", chromedp.ByID)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the end of the game", `document.getElementById("replay-status").textContent.includes("score ")`)
	if got := textOf(t, ctx, "#settings"); !strings.Contains(got, "2 deals played by the new network") {
		t.Errorf("the settings say %q", got)
	}
	screenshot(t, ctx, "run-solitaire.png")
}

// newRunFolder makes a run folder of game that has its config and
// nothing else yet.
func newRunFolder(t *testing.T, game string) runfolder.Folder {
	t.Helper()
	dir := runfolder.Folder(t.TempDir())
	if err := dir.Create(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir.Config(), []byte("game: "+game+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// writeStatus writes a running loop's status: generation gen in phase,
// done of total units, written now.
func writeStatus(t *testing.T, dir runfolder.Folder, gen int, phase string, done, total int, unit string) {
	t.Helper()
	now := time.Now().UTC().Format(time.RFC3339Nano)
	raw, _ := json.Marshal(loop.Status{Generation: gen, Phase: phase, Done: done, Total: total, Unit: unit,
		GenerationStarted: now, PhaseStarted: now, Updated: now, Heartbeat: 2})
	if err := atomicfile.WriteBytes(dir.Status(), raw); err != nil {
		t.Fatal(err)
	}
}

// TestBrowserRunLossBeforeTraining: until a generation has trained, the
// loss chart says what the loop is at, following its status: the first
// generation's self-play, then its training (not a window too small to
// train), and only once a generation ended without training, the window
// below train.min_samples.
func TestBrowserRunLossBeforeTraining(t *testing.T) {
	ctx := browser(t)
	dir := newRunFolder(t, "tictactoe")
	writeStatus(t, dir, 1, loop.PhaseSelfPlay, 300, 1400, "moves")
	openRunPage(ctx, t, dir, `#chart-loss text.empty`)
	empty := `document.querySelector("#chart-loss text.empty").textContent`
	waitFor(t, ctx, "self-play", empty+`.includes("generation 1 is in self-play")`)
	writeStatus(t, dir, 1, loop.PhaseTraining, 68, 111, "steps")
	waitFor(t, ctx, "training", empty+`.includes("generation 1 is training: its losses show when it ends")`)
	if err := loop.AppendMetrics(dir.Metrics(), loop.GenerationMetrics{Generation: 1, Games: 20, Positions: 90, Window: 90}); err != nil {
		t.Fatal(err)
	}
	writeStatus(t, dir, 2, loop.PhaseSelfPlay, 10, 1400, "moves")
	waitFor(t, ctx, "a window below min_samples", empty+`.includes("the window is still below train.min_samples")`)
}

// headlessChromium runs Chromium headless on url with the further flags,
// as a screenshot tool does, and returns its standard output; it fails
// the test when Chromium has not returned within limit.
func headlessChromium(t *testing.T, limit time.Duration, url string, flags ...string) string {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (apt-get install chromium; .ci/run installs it)")
	}
	profile, err := os.MkdirTemp("", "flipzero-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for try := 0; try < 20 && os.RemoveAll(profile) != nil; try++ {
			time.Sleep(100 * time.Millisecond)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--user-data-dir=" + profile}, flags...)
	cmd := exec.CommandContext(ctx, path, append(args, url)...)
	// Its helper processes may hold the output open after it is killed.
	cmd.WaitDelay = 5 * time.Second
	var out, errs strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errs
	start := time.Now()
	err = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("chromium %s did not return within %v", strings.Join(flags, " "), limit)
	}
	if err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(flags, " "), err, errs.String())
	}
	t.Logf("chromium %s returned in %.1f s", strings.Join(flags, " "), time.Since(start).Seconds())
	return out.String()
}

// TestBrowserRunScreenshot: a screenshot tool that waits for the page's
// network to go quiet (Chromium's --virtual-time-budget) returns from
// the run page, though the page follows the run through a stream that
// never ends, and the page it took has the run drawn from that stream.
func TestBrowserRunScreenshot(t *testing.T) {
	dir := newRunFolder(t, "tictactoe")
	if err := loop.AppendMetrics(dir.Metrics(), loop.GenerationMetrics{Generation: 1, Games: 20, Positions: 90, Window: 90,
		Steps: 6, Step: 6, PolicyLoss: 2.1, ValueLoss: 1.0}); err != nil {
		t.Fatal(err)
	}
	writeStatus(t, dir, 2, loop.PhaseSelfPlay, 10, 1400, "moves")
	srv := runServer(t, dir)
	const limit = 40 * time.Second
	png := filepath.Join(artifactDir(t), "run-headless.png")
	os.Remove(png)
	headlessChromium(t, limit, srv.URL+"/run", "--virtual-time-budget=8000", "--window-size=1100,900", "--screenshot="+png)
	if info, err := os.Stat(png); err != nil || info.Size() == 0 {
		t.Errorf("no screenshot: %v", err)
	}
	dom := headlessChromium(t, limit, srv.URL+"/run", "--virtual-time-budget=8000", "--dump-dom")
	if !strings.Contains(dom, `data-generation="1"`) || !strings.Contains(dom, "Generation 2: self-play") {
		t.Errorf("the page the tool took does not show the run's generation 1 and status:\n%s", dom)
	}
}

// TestBrowserRunAfterReusedGames: a generation whose games were saved
// before a stop and reused has no self-play rate of its own; the page
// shows the last one measured, says whose it is and why, and counts the
// reused games among the run's.
func TestBrowserRunAfterReusedGames(t *testing.T) {
	ctx := browser(t)
	dir := newRunFolder(t, "tictactoe")
	for _, m := range []loop.GenerationMetrics{
		{Generation: 1, Games: 200, Positions: 680, PositionsS: 486, EvalsS: 21346, Steps: 43, Step: 43, PolicyLoss: 1.7, ValueLoss: 1.0, Results: [3]int{120, 50, 30}, Best: 1},
		{Generation: 2, Games: 200, Positions: 644, Reused: true, Steps: 41, Step: 84, PolicyLoss: 1.6, ValueLoss: 0.9, Results: [3]int{110, 60, 30}, Best: 2},
	} {
		if err := loop.AppendMetrics(dir.Metrics(), m); err != nil {
			t.Fatal(err)
		}
	}
	openRunPage(ctx, t, dir, `body[data-generation="2"]`)
	for _, want := range [][3]string{
		{"Evaluations/s", "21.3k", "486 positions/s in generation 1; 2 reused its saved games"},
		{"Games", "400", ""},
	} {
		if got := tileText(t, ctx, want[0]); got[0] != want[1] || want[2] != "" && got[1] != want[2] {
			t.Errorf("the %s tile shows %q, want %q", want[0], got, want[1:])
		}
	}
}

// tileText is the value and the line under it of the tile called name.
func tileText(t *testing.T, ctx context.Context, name string) [2]string {
	t.Helper()
	var got []string
	js := fmt.Sprintf(`(() => { const t = [...document.querySelectorAll("#tiles .tile")].find((t) => t.querySelector(".name").textContent === %q);
		return t ? [t.querySelector(".value").textContent, t.querySelector(".sub").textContent] : ["", ""] })()`, name)
	if err := chromedp.Run(ctx, chromedp.Evaluate(js, &got)); err != nil || len(got) != 2 {
		t.Fatalf("tile %s: %v", name, err)
	}
	return [2]string{got[0], got[1]}
}

// TestBrowserRunSaysHowToRate: in a run whose config leaves the arena
// off, as the shipped Othello config does, the rating tile and chart say
// how a generation gets rated instead of a bare dash.
func TestBrowserRunSaysHowToRate(t *testing.T) {
	ctx := browser(t)
	dir := newRunFolder(t, "othello")
	if err := loop.AppendMetrics(dir.Metrics(), loop.GenerationMetrics{Generation: 1, Games: 128, Positions: 7000, Window: 7000,
		Steps: 68, Step: 68, PolicyLoss: 3.1, ValueLoss: 1.0, Best: 1}); err != nil {
		t.Fatal(err)
	}
	openRunPage(ctx, t, dir, `body[data-generation="1"]`)
	if got := tileText(t, ctx, "Rating"); got[0] != "—" || !strings.Contains(got[1], "flipzero arena --run") {
		t.Errorf("the rating tile shows %q, want a dash and how to rate", got)
	}
	var got string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector("#chart-rating text.empty").textContent`, &got)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "arena.games") || !strings.Contains(got, "flipzero arena --run") {
		t.Errorf("the rating chart says %q, want both ways to rate", got)
	}
}

// TestBrowserRunRatesFromMatches: a run whose arena is off, with
// checkpoints rated by flipzero arena --run, shows the newest rated
// generation's fitted Elo in its tile and chart, and every player's in
// the ratings table.
func TestBrowserRunRatesFromMatches(t *testing.T) {
	ctx := browser(t)
	dir := newRunFolder(t, "othello")
	if err := loop.AppendMetrics(dir.Metrics(), loop.GenerationMetrics{Generation: 3, Games: 128, Positions: 7000, Window: 7000,
		Steps: 68, Step: 68, PolicyLoss: 3.1, ValueLoss: 1.0, Best: 3}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []arena.MatchRecord{
		{Game: "othello", A: filepath.Join(string(dir), "models", "gen-000001.ckpt"), B: "greedy", Wins: 40, Draws: 5, Losses: 55},
		{Game: "othello", A: filepath.Join(string(dir), "models", "gen-000003.ckpt"), B: "greedy", Wins: 80, Draws: 4, Losses: 16},
		{Game: "yinsh", A: "other", B: "greedy", Wins: 1},
	} {
		if err := arena.AppendMatch(dir.Matches(), m); err != nil {
			t.Fatal(err)
		}
	}
	openRunPage(ctx, t, dir, `body[data-generation="3"]`)
	got := tileText(t, ctx, "Rating")
	// 80-4-16 is 82%: about +263 Elo against greedy.
	if elo, err := strconv.Atoi(got[0]); err != nil || elo < 200 || elo > 330 || !strings.Contains(got[1], "gen 3") || !strings.Contains(got[1], "greedy 0") {
		t.Errorf("the rating tile shows %q, want generation 3's fitted Elo against greedy", got)
	}
	var points string
	var rows []string
	if err := chromedp.Run(ctx,
		chromedp.Evaluate(`document.querySelector("#chart-rating").dataset.points`, &points),
		chromedp.Evaluate(`[...document.querySelectorAll("#ratings tbody tr")].map((r) => r.cells[0].textContent)`, &rows)); err != nil {
		t.Fatal(err)
	}
	if points != "2" || len(rows) != 3 || !strings.HasSuffix(rows[0], "gen-000003.ckpt") || rows[2] != filepath.Join(string(dir), "models", "gen-000001.ckpt") {
		t.Errorf("the rating chart has %s points and the table %q, want generations 1 and 3 and greedy, strongest first", points, rows)
	}
}

// openRunPage serves the run in dir and opens its page in the browser of
// ctx, waiting until the element of selector shows.
func openRunPage(ctx context.Context, t *testing.T, dir runfolder.Folder, selector string) {
	t.Helper()
	srv := runServer(t, dir)
	if err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/run"),
		chromedp.WaitVisible(selector, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
}
