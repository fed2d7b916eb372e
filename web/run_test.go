package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flipzero/flipzero/arena"
	"github.com/flipzero/flipzero/engine"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/internal/atomicfile"
	"github.com/flipzero/flipzero/loop"
	"github.com/flipzero/flipzero/nn/cpu"
	"github.com/flipzero/flipzero/runfolder"
)

const runGames = 12

// loopRun runs the real loop for two generations of a tiny tic-tac-toe
// config, with the arena on, in a new run folder.
func loopRun(t *testing.T) runfolder.Folder {
	t.Helper()
	raw, err := os.ReadFile("../configs/tictactoe.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(raw), "games_per_generation: 200", fmt.Sprintf("games_per_generation: %d", runGames), 1)
	text = strings.Replace(text, "min_samples: 256", "min_samples: 16", 1)
	text = strings.Replace(text, "playouts_full: 64", "playouts_full: 16", 1)
	text, _, _ = strings.Cut(text, "\narena:")
	text += "\narena:\n  games: 2\n  playouts: 4\n  baseline: random\n"
	cfg := filepath.Join(t.TempDir(), "tiny.yaml")
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := runfolder.Folder(filepath.Join(t.TempDir(), "run"))
	if err := loop.Loop(context.Background(), loop.LoopOptions{Backend: cpu.Backend(), ConfigPath: cfg, RunDir: string(dir), MaxGenerations: 2, Seed: 9}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func runServer(t *testing.T, dir runfolder.Folder) *httptest.Server {
	t.Helper()
	r, err := NewRun(string(dir), games.Builtin(), loop.Summarizer(games.Builtin()))
	if err != nil {
		t.Fatal(err)
	}
	r.Poll = 20 * time.Millisecond
	r.Check = loop.RunChecks
	srv := httptest.NewServer(r.Handler())
	// A page's event stream is open until its browser goes: end it.
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv
}

// getJSON fetches path and decodes a 200 answer into v; it returns the
// status and, for any other, the error message.
func getJSON(t *testing.T, srv *httptest.Server, method, path string, v any) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		var e struct{ Error string }
		json.Unmarshal(raw, &e)
		return res.StatusCode, e.Error
	}
	if ct := res.Header.Get("Content-Type"); v != nil && ct != "application/json" {
		t.Fatalf("%s: content type %q", path, ct)
	}
	if v != nil {
		if err := json.Unmarshal(raw, v); err != nil {
			t.Fatalf("%s: %v in %s", path, err, raw)
		}
	}
	return res.StatusCode, ""
}

// TestRunAPI reads a run made by the real loop through the JSON API: its
// metrics, matches, status and settings, its kept games, and a game
// replayed position by position; malformed requests are refused.
func TestRunAPI(t *testing.T) {
	dir := loopRun(t)
	srv := runServer(t, dir)
	var v runView
	if code, msg := getJSON(t, srv, "GET", "/api/run", &v); code != 200 {
		t.Fatalf("GET /api/run: %d %s", code, msg)
	}
	metrics := decodeAll[loop.GenerationMetrics](t, v.Metrics)
	matches := decodeAll[arena.MatchRecord](t, v.Matches)
	if v.Game != "tictactoe" || len(metrics) != 2 || metrics[1].Generation != 2 || v.MetricsSkipped != 0 {
		t.Fatalf("game %q, metrics %+v", v.Game, v.Metrics)
	}
	if m := metrics[1]; m.Games != runGames || m.Rating == nil || m.SelfPlaySeconds <= 0 || m.TrainSeconds <= 0 || m.ArenaSeconds <= 0 || m.Steps == 0 {
		t.Errorf("generation 2's metrics: %+v", m)
	}
	if len(matches) != 4 || v.MatchesTotal != 4 || matches[3].Generation != 2 {
		t.Errorf("matches %+v", v.Matches)
	}
	// The page's fit to the matches is the loop's: generation 2 has the
	// rating its metrics recorded, against the same anchor.
	fitted := map[string]float64{}
	for _, r := range v.Ratings {
		fitted[r.Player] = r.Elo
		if !(r.Low <= r.Elo && r.Elo <= r.High) || r.Games == 0 {
			t.Errorf("rating %+v: outside its interval, or no games", r)
		}
	}
	if elo, ok := fitted["gen-000002"]; !ok || metrics[1].Rating == nil || math.Abs(elo-*metrics[1].Rating) > 1e-6 || fitted[v.RatingsAnchor] != 0 || v.RatingsNote != "" {
		t.Errorf("ratings %+v anchored at %q (%q), generation 2's metrics say %v", v.Ratings, v.RatingsAnchor, v.RatingsNote, metrics[1].Rating)
	}
	if v.Status == nil || v.Status.Phase != loop.PhaseStopped || v.Status.Generation != 2 {
		t.Errorf("status %+v", v.Status)
	}
	if len(v.Recorded) != 2 || v.Recorded[0] != 1 || v.Recorded[1] != 2 || len(v.Problems) != 0 {
		t.Errorf("recorded %v, problems %v", v.Recorded, v.Problems)
	}
	if len(v.Settings) < 5 || !strings.Contains(v.Settings[0].Value, "blocks") || !strings.Contains(v.Config, "game: tictactoe") {
		t.Errorf("settings %v, config %q", v.Settings, v.Config)
	}

	var list gameListView
	if code, msg := getJSON(t, srv, "GET", "/api/run/games?gen=2", &list); code != 200 {
		t.Fatalf("games: %d %s", code, msg)
	}
	if list.Generation != 2 || len(list.Games) != runGames || list.Games[0].Plies < 5 {
		t.Fatalf("games of generation 2: %+v", list)
	}
	var rv replayView
	if code, msg := getJSON(t, srv, "GET", "/api/run/game?gen=2&game=0", &rv); code != 200 {
		t.Fatalf("game: %d %s", code, msg)
	}
	if rv.Error != "" || rv.Board != "square" || len(rv.Cells) != 9 || len(rv.Moves) != list.Games[0].Plies || len(rv.Frames) != len(rv.Moves)+1 {
		t.Fatalf("replay: error %q, board %s, %d cells, %d moves, %d frames", rv.Error, rv.Board, len(rv.Cells), len(rv.Moves), len(rv.Frames))
	}
	for ply, f := range rv.Frames {
		// Tic-tac-toe: one mark more each move, the mover's at the
		// point the move names.
		if len(f.Pieces) != ply {
			t.Fatalf("frame %d has %d marks: %v", ply, len(f.Pieces), f.Pieces)
		}
		if ply > 0 && (len(f.Last) != 1 || f.Last[0] != rv.Moves[ply-1] || f.Pieces[rv.Moves[ply-1]] == "") {
			t.Fatalf("frame %d: last %v, move %s, pieces %v", ply, f.Last, rv.Moves[ply-1], f.Pieces)
		}
	}
	if end := rv.Frames[len(rv.Frames)-1]; end.ToMove != "" || !(strings.HasSuffix(rv.Result, "wins") || rv.Result == "a draw") {
		t.Errorf("the end: to move %q, result %q", end.ToMove, rv.Result)
	}

	for _, c := range []struct {
		method, path string
		code         int
	}{
		{"GET", "/api/run/games", 400},
		{"GET", "/api/run/games?gen=x", 400},
		{"GET", "/api/run/games?gen=-1", 400},
		{"GET", "/api/run/games?gen=7", 404},
		{"GET", "/api/run/game?gen=1", 400},
		{"GET", fmt.Sprintf("/api/run/game?gen=1&game=%d", runGames), 400},
		{"POST", "/api/run", 405},
		{"DELETE", "/api/run/games?gen=1", 405},
		{"GET", "/api/run/nothing", 404},
		{"GET", "/api/nothing", 404},
	} {
		if code, msg := getJSON(t, srv, c.method, c.path, nil); code != c.code || msg == "" {
			t.Errorf("%s %s: %d %q, want %d and a message", c.method, c.path, code, msg, c.code)
		}
	}
	// The page and its assets; / leads to the page.
	for _, path := range []string{"/run", "/run.js", "/board.js", "/run.css", "/"} {
		res, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || len(body) == 0 {
			t.Errorf("GET %s: %d", path, res.StatusCode)
		}
		if path == "/" && !strings.Contains(string(body), `<script src="run.js">`) {
			t.Errorf("/ is not the run page")
		}
	}
}

// TestRunUntrustedFiles damages a run's files: lines of metrics and
// matches that are garbage are skipped and counted, a kept game with an
// illegal move replays up to it, a status that is not JSON is reported.
func TestRunUntrustedFiles(t *testing.T) {
	dir := loopRun(t)
	appendTo := func(path, text string) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(text); err != nil {
			t.Fatal(err)
		}
	}
	appendTo(dir.Metrics(), "garbage\n{\"generation\": \"three\"}\n"+strings.Repeat("x", 2<<20)+"\n")
	appendTo(dir.Matches(), "{not json\n")
	if err := os.WriteFile(dir.GameRecords(7), []byte("b2;a1;b2;c3\tblack\ttictactoe\nno tab here\nb2;nope\twhite\ttictactoe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir.Status(), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := runServer(t, dir)
	var v runView
	if code, msg := getJSON(t, srv, "GET", "/api/run", &v); code != 200 {
		t.Fatalf("GET /api/run: %d %s", code, msg)
	}
	if len(v.Metrics) != 2 || v.MetricsSkipped != 3 || len(v.Matches) != 4 || v.MatchesSkipped != 1 {
		t.Errorf("metrics %d (%d skipped), matches %d (%d skipped)", len(v.Metrics), v.MetricsSkipped, len(v.Matches), v.MatchesSkipped)
	}
	if v.Status != nil || len(v.Problems) != 1 || !strings.Contains(v.Problems[0], "status") {
		t.Errorf("status %+v, problems %v", v.Status, v.Problems)
	}
	var list gameListView
	getJSON(t, srv, "GET", "/api/run/games?gen=7", &list)
	if len(list.Games) != 2 || list.Skipped != 1 {
		t.Fatalf("games %+v", list)
	}
	for i, want := range []string{`move 3 ("b2"): not legal here`, `move 2 ("nope")`} {
		var rv replayView
		getJSON(t, srv, "GET", fmt.Sprintf("/api/run/game?gen=7&game=%d", i), &rv)
		if !strings.Contains(rv.Error, want) || len(rv.Frames) != len(rv.Moves)+1 || rv.Result != "the record does not replay" {
			t.Errorf("game %d: error %q, %d moves, %d frames, result %q", i, rv.Error, len(rv.Moves), len(rv.Frames), rv.Result)
		}
	}
}

// TestRunJustStarted serves a run that has only its config, as at the
// start of its first generation: the lists are empty, not null, and
// nothing is reported as a problem.
func TestRunJustStarted(t *testing.T) {
	dir := runfolder.Folder(t.TempDir())
	if err := os.WriteFile(dir.Config(), []byte("game: tictactoe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := runServer(t, dir)
	res, err := srv.Client().Get(srv.URL + "/api/run")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{`"metrics":[]`, `"matches":[]`, `"recorded":[]`, `"checks":[]`, `"problems":[]`, `"status":null`, `"game":"tictactoe"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("no %s in %s", want, raw)
		}
	}
}

// slowRun is a tic-tac-toe run folder whose metrics have 12 generations,
// the last six trained at a third of the others' rate: a run whose cores
// were shared from generation 7 on.
func slowRun(t *testing.T) runfolder.Folder {
	t.Helper()
	dir := runfolder.Folder(t.TempDir())
	if err := os.WriteFile(dir.Config(), []byte("game: tictactoe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for gen := 1; gen <= 12; gen++ {
		m := loop.GenerationMetrics{Generation: gen, Games: 10, Positions: 50, Steps: 10, Step: 10 * gen, TrainS: 900}
		if gen > 6 {
			m.TrainS = 300
		}
		if err := loop.AppendMetrics(dir.Metrics(), m); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestRunChecks: the page's data says the signs of a run going wrong.
func TestRunChecks(t *testing.T) {
	srv := runServer(t, slowRun(t))
	var v runView
	if code, msg := getJSON(t, srv, http.MethodGet, "/api/run", &v); code != http.StatusOK {
		t.Fatalf("GET /api/run: %d %s", code, msg)
	}
	if len(v.Checks) != 1 || !strings.HasPrefix(v.Checks[0], "generations 7-12 trained at 300 samples/s") || len(v.Problems) != 0 {
		t.Errorf("checks %q, problems %q", v.Checks, v.Problems)
	}
}

// TestNewRunRefusesNonRuns: a folder without a run, or with a config that
// does not read, is an error at start-up.
func TestNewRunRefusesNonRuns(t *testing.T) {
	empty := t.TempDir()
	if _, err := NewRun(empty, games.Builtin(), loop.Summarizer(games.Builtin())); err == nil || !strings.Contains(err.Error(), "not a run folder") {
		t.Errorf("empty folder: %v", err)
	}
	if _, err := NewRun(filepath.Join(empty, "missing"), games.Builtin(), loop.Summarizer(games.Builtin())); err == nil {
		t.Error("a missing folder was accepted")
	}
	if err := os.WriteFile(runfolder.Folder(empty).Config(), []byte("game: chess\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewRun(empty, games.Builtin(), loop.Summarizer(games.Builtin())); err == nil || !strings.Contains(err.Error(), "chess") {
		t.Errorf("a config of an unknown game: %v", err)
	}
}

// readEvent reads the next server-sent event, skipping comments, and
// decodes its data into a view (a "run" event) or a status (a "status" event).
func readEvent(t *testing.T, rd *bufio.Reader) runView {
	t.Helper()
	name, data := nextEvent(t, rd)
	if name != "run" {
		t.Fatalf("event %q, want run", name)
	}
	var v runView
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		t.Fatalf("event data: %v", err)
	}
	return v
}

func nextEvent(t *testing.T, rd *bufio.Reader) (name, data string) {
	t.Helper()
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("event stream: %v", err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "" && data != "":
			return name, data
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data += strings.TrimPrefix(line, "data: ")
		}
	}
}

// TestRunEvents follows a run through its event stream: a first event
// at once, another when the loop appends a generation or changes its
// status, and the stream ends when the server stops.
func TestRunEvents(t *testing.T) {
	dir := loopRun(t)
	r, err := NewRun(string(dir), games.Builtin(), loop.Summarizer(games.Builtin()))
	if err != nil {
		t.Fatal(err)
	}
	r.Poll = 20 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, r.Handler()) }()

	res, err := http.Get("http://" + ln.Addr().String() + "/api/run/events")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	rd := bufio.NewReader(res.Body)
	if v := readEvent(t, rd); len(v.Metrics) != 2 {
		t.Fatalf("first event: %d generations", len(v.Metrics))
	}
	ms, _ := loop.ReadMetrics(dir.Metrics())
	next := ms[1]
	next.Generation = 3
	if err := loop.AppendMetrics(dir.Metrics(), next); err != nil {
		t.Fatal(err)
	}
	if v := readEvent(t, rd); len(v.Metrics) != 3 || decodeAll[loop.GenerationMetrics](t, v.Metrics)[2].Generation != 3 {
		t.Fatalf("after a generation was appended: %d generations", len(v.Metrics))
	}
	status, _ := json.Marshal(loop.Status{Generation: 4, Phase: loop.PhaseSelfPlay, Done: 3, Total: runGames})
	// Written as the loop writes it: a poll never sees a half-written file.
	if err := atomicfile.WriteBytes(dir.Status(), status); err != nil {
		t.Fatal(err)
	}
	// The status alone changed: the event carries it alone.
	name, data := nextEvent(t, rd)
	var sv statusView
	if err := json.Unmarshal([]byte(data), &sv); name != "status" || err != nil || sv.Status == nil || sv.Status.Generation != 4 || sv.Status.Done != 3 {
		t.Fatalf("after the status changed: event %q, %s", name, data)
	}
	// A loop that falls silent is told without its status changing: the
	// status below is last written 9.7 s before the silence threshold.
	beat, _ := json.Marshal(loop.Status{Generation: 5, Phase: loop.PhaseSelfPlay, Heartbeat: 1,
		Updated: time.Now().Add(-9700 * time.Millisecond).UTC().Format(time.RFC3339Nano)})
	if err := atomicfile.WriteBytes(dir.Status(), beat); err != nil {
		t.Fatal(err)
	}
	for _, silent := range []bool{false, true} {
		name, data := nextEvent(t, rd)
		var sv statusView
		if err := json.Unmarshal([]byte(data), &sv); name != "status" || err != nil || sv.Status == nil || sv.Status.Generation != 5 || sv.Status.Silent != silent {
			t.Fatalf("a status falling silent: event %q, %s, want silent %v", name, data, silent)
		}
	}
	// A status that does not read comes with the whole view, which says so.
	if err := atomicfile.WriteBytes(dir.Status(), []byte("{")); err != nil {
		t.Fatal(err)
	}
	if v := readEvent(t, rd); v.Status != nil || len(v.Problems) != 1 {
		t.Fatalf("after the status was damaged: %+v, problems %v", v.Status, v.Problems)
	}
	// Stopping the server ends the stream at once, not after the
	// shutdown's grace period.
	start := time.Now()
	stop()
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(4 * time.Second):
		t.Fatal("the server did not stop with a stream open")
	}
	if _, err := io.ReadAll(rd); err != nil && time.Since(start) > 4*time.Second {
		t.Fatalf("stream: %v", err)
	}
}

// TestRunBesidePlayPage serves a model's play page and a run's page from
// one server.
func TestRunBesidePlayPage(t *testing.T) {
	srv := playAndRunServer(t)
	var v runView
	if code, msg := getJSON(t, srv, "GET", "/api/run", &v); code != 200 || len(v.Metrics) != 2 {
		t.Fatalf("/api/run: %d %s, %d generations", code, msg, len(v.Metrics))
	}
	var gv gameView
	if code, msg := getJSON(t, srv, "GET", "/api/state", &gv); code != 200 || gv.Game != "tictactoe" || len(gv.Legal) != 9 {
		t.Fatalf("/api/state: %d %s, %+v", code, msg, gv)
	}
	for path, want := range map[string]string{"/": `src="app.js"`, "/run": `src="run.js"`} {
		res, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if !strings.Contains(string(body), want) {
			t.Errorf("GET %s is not the page with %s", path, want)
		}
	}
	if code, _ := getJSON(t, srv, "GET", "/api/nothing", nil); code != 404 {
		t.Errorf("/api/nothing: %d", code)
	}
}

// playAndRunServer serves a two-generation loop run's page beside the
// play page of its second network, closed when the test ends.
func playAndRunServer(t *testing.T) *httptest.Server {
	t.Helper()
	dir := loopRun(t)
	e, err := engine.NewModelEngine(dir.Checkpoint(2), nil, engine.EngineOptions{Backend: cpu.Backend(), Playouts: 4})
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGame(e, 0)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRun(string(dir), games.Builtin(), loop.Summarizer(games.Builtin()))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(g, r))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv
}

// decodeAll decodes the page's raw records as the loop's or the arena's.
func decodeAll[T any](t *testing.T, raw []json.RawMessage) []T {
	t.Helper()
	out := make([]T, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal(r, &out[i]); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	return out
}
