package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/arena"
	"github.com/flipzero/flipzero/engine"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/envtest"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/gtp"
	"github.com/flipzero/flipzero/loop"
	"github.com/flipzero/flipzero/nn/cpu"
	"github.com/flipzero/flipzero/player"
	"github.com/flipzero/flipzero/runfolder"
	"github.com/flipzero/flipzero/web"
)

// nim is a game that exists only in this test: a pile of stones, each
// player takes 1, 2 or 3, and whoever takes the last stone wins. It is
// plugged in through a registry of its own and nothing else, to show that
// a game needs no change outside env/.
type nim struct{}

const nimPile = 10

func (nim) Name() string                   { return "nim" }
func (nim) NewState() env.State            { return &nimState{left: nimPile} }
func (nim) ActionSpace() int               { return 3 }
func (nim) EncodedShape() (int, int, int)  { return 2, 1, nimPile + 1 }
func (nim) FormatAction(action int) string { return fmt.Sprintf("take%d", action+1) }
func (nim) PlayerName(p env.Player) string { return [2]string{"black", "white"}[p] }
func (g nim) Symmetries() []env.Symmetry {
	return []env.Symmetry{{Name: "identity", Cell: seq(nimPile + 1), Action: seq(3)}}
}
func (nim) ParseAction(t string) (int, error) {
	for a := 0; a < 3; a++ {
		if t == (nim{}).FormatAction(a) {
			return a, nil
		}
	}
	return 0, fmt.Errorf("bad move %q: want take1, take2 or take3", t)
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

type nimState struct {
	left   int
	toMove env.Player
}

func (s *nimState) Game() env.Game            { return nim{} }
func (s *nimState) ToMove() env.Player        { return s.toMove }
func (s *nimState) Terminal() bool            { return s.left == 0 }
func (s *nimState) IsLegal(a int) bool        { return a >= 0 && a < 3 && a < s.left }
func (s *nimState) Apply(a int)               { s.left -= a + 1; s.toMove = s.toMove.Other() }
func (s *nimState) Clone() env.State          { c := *s; return &c }
func (s *nimState) CopyFrom(src env.State)    { *s = *src.(*nimState) }
func (s *nimState) Transformed(int) env.State { return s.Clone() }
func (s *nimState) String() string {
	return fmt.Sprintf("%d stones, %s to take", s.left, nim{}.PlayerName(s.toMove))
}

// Winner: the player who took the last stone, the one not to move.
func (s *nimState) Winner() env.Player { return s.toMove.Other() }

func (s *nimState) LegalActions(buf []int) []int {
	buf = buf[:0]
	for a := 0; a < 3 && a < s.left; a++ {
		buf = append(buf, a)
	}
	return buf
}

// Encode: plane 0 one-hot the stones left, plane 1 all ones when white
// is to move.
func (s *nimState) Encode(dst []float32) {
	clear(dst)
	dst[s.left] = 1
	if s.toMove == 1 {
		for i := nimPile + 1; i < 2*(nimPile+1); i++ {
			dst[i] = 1
		}
	}
}

// The display: the pile as a row of cells.
func (s *nimState) Picture() string { return s.String() + "\n" }
func (s *nimState) Layout() string  { return "square" }
func (s *nimState) Status() string  { return fmt.Sprintf("%d left", s.left) }
func (s *nimState) Prompt() string  { return "take 1 to 3 stones" }
func (s *nimState) Cells() []env.Cell {
	var cells []env.Cell
	for i := 0; i < nimPile; i++ {
		c := env.Cell{Name: fmt.Sprintf("s%d", i+1), Col: i, Row: 1, X: float64(i)}
		if i < s.left {
			c.Piece = "black"
		}
		cells = append(cells, c)
	}
	return cells
}
func (s *nimState) Targets(a int) (string, []string) {
	return "point", []string{fmt.Sprintf("s%d", s.left-a)}
}

const nimConfig = `game: nim
network: {blocks: 1, filters: 8}
search: {playouts_full: 16, playouts_fast: 8, full_search_fraction: 1}
selfplay: {games_per_generation: 16, concurrent_games: 4, batch_size: 4, resign_threshold: -1}
train: {batch_size: 16, min_samples: 16}
window: {min: 200}
arena: {games: 4, playouts: 8, baseline: random}
`

// TestPluggableGame plays a game that exists only in this test through
// the training loop (two generations with the per-generation arena), an
// arena match of its network, a GTP session and the web API.
func TestPluggableGame(t *testing.T) {
	if err := envtest.CheckPlayouts(nim{}, envtest.Options{}); err != nil {
		t.Fatalf("the test game breaks the contract: %v", err)
	}
	reg := games.Builtin().With(nim{})
	ctx := context.Background()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "nim.yaml")
	if err := os.WriteFile(cfgPath, []byte(nimConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	run := runfolder.Folder(filepath.Join(dir, "run"))
	var log strings.Builder
	err := loop.Loop(ctx, loop.LoopOptions{Backend: cpu.Backend(), ConfigPath: cfgPath, RunDir: string(run), Games: reg, MaxGenerations: 2, Seed: 1, Log: &log})
	if err != nil {
		t.Fatalf("loop: %v\n%s", err, log.String())
	}
	if gens, _ := run.Generations(); len(gens) != 3 {
		t.Fatalf("generations %v after two, want 0, 1, 2\n%s", gens, log.String())
	}
	matches, _, err := arena.ReadMatches(run.Matches())
	if err != nil || len(matches) != 4 {
		t.Fatalf("the loop's arena recorded %d matches (%v), want 4", len(matches), err)
	}

	// Arena: the trained network against random play.
	net, err := player.LoadNetworkPlayer(cpu.Backend(), run.Checkpoint(2), nim{}, 16)
	if err != nil {
		t.Fatal(err)
	}
	r, err := arena.RunArena(ctx, nim{}, net, player.RandomPlayer(), arena.ArenaOptions{Games: 8, Seed: 3})
	if err != nil || r.Score.Games() != 8 {
		t.Fatalf("arena: %+v, %v", r.Score, err)
	}

	// GTP and the web page: an engine over the exported model, its game
	// found in the registry by the model file's header.
	model := filepath.Join(dir, "nim.fznet")
	if _, err := loop.Export(run, -1, model, reg); err != nil {
		t.Fatal(err)
	}
	newEngine := func() *engine.Engine {
		e, err := engine.NewModelEngine(model, reg, engine.EngineOptions{Backend: cpu.Backend(), Playouts: 8})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	var out strings.Builder
	script := "name\nplay black take3\ngenmove white\nshowboard\nfinal_score\nquit\n"
	if err := gtp.Serve(ctx, gtpController{newEngine()}, strings.NewReader(script), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	answers := strings.Split(strings.TrimSpace(out.String()), "\n\n")
	for i := range answers {
		answers[i] = strings.TrimSpace(answers[i])
	}
	if len(answers) != 6 || answers[1] != "=" || !strings.HasPrefix(answers[2], "= TAKE") || !strings.Contains(answers[3], "stones, black to take") {
		t.Fatalf("GTP session:\n%s", out.String())
	}

	game, err := web.NewGame(newEngine(), 0)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(game.Handler())
	defer srv.Close()
	res, err := srv.Client().Post(srv.URL+"/api/move", "application/json", strings.NewReader(`{"move": "take2"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var view struct {
		Game    string     `json:"game"`
		History []string   `json:"history"`
		Cells   []env.Cell `json:"cells"`
		Score   string     `json:"score"`
	}
	if err := json.NewDecoder(res.Body).Decode(&view); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("POST /api/move: %d, %v", res.StatusCode, err)
	}
	if view.Game != "nim" || len(view.History) != 2 || view.History[0] != "take2" || len(view.Cells) != nimPile || !strings.HasSuffix(view.Score, "left") {
		t.Fatalf("the page's view after take2: %+v", view)
	}
}
