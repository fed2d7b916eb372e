package web

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/flipzero/flipzero/engine"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/cpu"
	"github.com/flipzero/flipzero/web/play"
)

// untrainedModel writes a small untrained model of game.
func untrainedModel(t *testing.T, game string) string {
	t.Helper()
	g, err := games.ByName(game)
	if err != nil {
		t.Fatal(err)
	}
	net, err := nn.New(g, nn.Config{Blocks: 1, Filters: 8, PolicyFilters: 2, ValueFilters: 1, ValueHidden: 8}, 3)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), game+".fznet")
	if err := nn.SaveFolded(path, net.Fold(), 0, map[string]string{"generation": "0"}); err != nil {
		t.Fatal(err)
	}
	return path
}

// gameView is the answer of the API's requests.
type gameView = play.View

// testServer starts a game server for an untrained model of game.
func testServer(t *testing.T, game string, human env.Player) *httptest.Server {
	t.Helper()
	e, err := engine.NewModelEngine(untrainedModel(t, game), nil, engine.EngineOptions{Backend: cpu.Backend(), Playouts: 8})
	if err != nil {
		t.Fatal(err)
	}
	gs, err := NewGame(e, human)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gs.Handler())
	t.Cleanup(srv.Close)
	return srv
}

// call sends a request and decodes the answer: the game's view, or the
// error message.
func call(t *testing.T, srv *httptest.Server, method, path, body string) (int, gameView, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var v gameView
	var e struct{ Error string }
	if res.StatusCode == http.StatusOK {
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, raw)
		}
	} else {
		json.Unmarshal(raw, &e)
	}
	return res.StatusCode, v, e.Error
}

// replay checks a view's history against the rules and returns the
// position it leads to.
func replay(t *testing.T, v gameView) env.State {
	t.Helper()
	g, err := games.ByName(v.Game)
	if err != nil {
		t.Fatal(err)
	}
	s, err := env.Play(g, strings.Join(v.History, ";"))
	if err != nil {
		t.Fatalf("history %v: %v", v.History, err)
	}
	return s
}

func TestServeAPI(t *testing.T) {
	srv := testServer(t, "othello", 0)
	code, v, _ := call(t, srv, "GET", "/api/state", "")
	if code != 200 || v.Game != "othello" || v.Board != "square" || len(v.Cells) != 64 || !v.YourTurn || len(v.Legal) != 4 {
		t.Fatalf("start: %d %+v", code, v)
	}
	before := v
	// Refused requests: 4xx with a message, and the game unchanged.
	refused := []struct {
		method, path, body string
		status             int
	}{
		{"POST", "/api/move", `{"move": "a1"}`, 422},
		{"POST", "/api/move", `{"move": "zz"}`, 422},
		{"POST", "/api/move", `{"move": ""}`, 400},
		{"POST", "/api/move", `{"mvoe": "f5"}`, 400},
		{"POST", "/api/move", `{"move": "f5"`, 400},
		{"POST", "/api/move", `[1, 2]`, 400},
		{"POST", "/api/move", `{"move": "` + strings.Repeat("f", 20000) + `"}`, 413},
		{"GET", "/api/move", "", 405},
		{"POST", "/api/undo", "", 409},
		{"POST", "/api/new", `{"as": "purple"}`, 400},
		{"GET", "/api/nothing", "", 404},
	}
	for _, r := range refused {
		code, _, msg := call(t, srv, r.method, r.path, r.body)
		if code != r.status {
			t.Errorf("%s %s %.40s: status %d, want %d", r.method, r.path, r.body, code, r.status)
		}
		if msg == "" {
			t.Errorf("%s %s %.40s: no message", r.method, r.path, r.body)
		}
	}
	if _, v, _ := call(t, srv, "GET", "/api/state", ""); len(v.History) != 0 || v.Score != before.Score {
		t.Fatalf("refused requests changed the game: %v", v.History)
	}

	// A move: the bot answers at once.
	code, v, msg := call(t, srv, "POST", "/api/move", `{"move": "F5"}`)
	if code != 200 {
		t.Fatalf("move f5: %d %s", code, msg)
	}
	if len(v.History) != 2 || v.History[0] != "f5" || len(v.Replies) != 1 || v.Replies[0].Move != v.History[1] || !v.YourTurn {
		t.Fatalf("after f5: history %v, replies %+v", v.History, v.Replies)
	}
	if s := replay(t, v); s.String() != boardOf(t, v) {
		t.Errorf("the view's board is not the history's position")
	}
	if code, v, _ = call(t, srv, "POST", "/api/hint", ""); code != 200 || v.Hint == nil || v.Hint.Playouts == 0 {
		t.Errorf("hint: %d %+v", code, v.Hint)
	}
	if code, v, _ = call(t, srv, "POST", "/api/undo", ""); code != 200 || len(v.History) != 0 {
		t.Errorf("undo: %d, history %v", code, v.History)
	}
	// A new game as white: the bot opens.
	code, v, _ = call(t, srv, "POST", "/api/new", `{"as": "white"}`)
	if code != 200 || v.Human != "white" || len(v.History) != 1 || !v.YourTurn {
		t.Fatalf("new game as white: %d, human %s, history %v", code, v.Human, v.History)
	}
}

// boardOf draws the view's cells as the Othello state draws itself.
func boardOf(t *testing.T, v gameView) string {
	t.Helper()
	s := replay(t, v)
	var b strings.Builder
	b.WriteString("  a b c d e f g h\n")
	for row := 0; row < 8; row++ {
		b.WriteString(string(rune('1' + row)))
		for col := 0; col < 8; col++ {
			switch v.Cells[row*8+col].Piece {
			case "black":
				b.WriteString(" X")
			case "white":
				b.WriteString(" O")
			default:
				b.WriteString(" .")
			}
		}
		b.WriteByte('\n')
	}
	b.WriteString(s.Game().PlayerName(s.ToMove()) + " to move\n")
	return b.String()
}

// TestServeYinshDecisions plays YINSH through the API by the page's own
// means — the legal moves and the points each one is clicked by — to the
// end of a blitz game, the bot answering each time with all its
// decisions so that it is the person's turn again.
func TestServeYinshDecisions(t *testing.T) {
	srv := testServer(t, "yinsh-blitz", 0)
	_, v, _ := call(t, srv, "GET", "/api/state", "")
	if v.Board != "hex" || len(v.Cells) != 85 || len(v.Legal) != 85 {
		t.Fatalf("start: board %s, %d cells, %d legal", v.Board, len(v.Cells), len(v.Legal))
	}
	kinds := map[string]int{}
	for turn := 0; !v.Over; turn++ {
		if turn > 300 {
			t.Fatal("the game does not end")
		}
		if !v.YourTurn {
			t.Fatalf("not the person's turn after the bot answered: %+v", v)
		}
		m := v.Legal[turn*7%len(v.Legal)]
		kinds[m.Kind]++
		want := map[string]int{"point": 1, "move": 2, "row": 5, "pass": 0}[m.Kind]
		if len(m.Points) != want {
			t.Fatalf("%s: %d points %v", m.Move, len(m.Points), m.Points)
		}
		code, next, msg := call(t, srv, "POST", "/api/move", `{"move": "`+m.Move+`"}`)
		if code != 200 {
			t.Fatalf("%s: %d %s", m.Move, code, msg)
		}
		replay(t, next)
		v = next
	}
	if kinds["point"] < 5 || kinds["move"] < 1 {
		t.Errorf("decisions made: %v", kinds)
	}
	if code, _, _ := call(t, srv, "POST", "/api/move", `{"move": "pass"}`); code != 409 {
		t.Errorf("a move after the end: status %d, want 409", code)
	}
	t.Logf("%s after %d decisions; the person made %v", v.Result, len(v.History), kinds)
}

// TestServeConcurrent sends moves, undos and reads at once: the lock
// keeps the game consistent (run with -race).
func TestServeConcurrent(t *testing.T) {
	srv := testServer(t, "tictactoe", 0)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 6; j++ {
				switch (i + j) % 3 {
				case 0:
					_, v, _ := call(t, srv, "GET", "/api/state", "")
					if len(v.Legal) > 0 {
						call(t, srv, "POST", "/api/move", `{"move": "`+v.Legal[j%len(v.Legal)].Move+`"}`)
					}
				case 1:
					call(t, srv, "POST", "/api/undo", "")
				default:
					if j == 5 {
						call(t, srv, "POST", "/api/new", "")
					}
				}
			}
		}(i)
	}
	wg.Wait()
	_, v, _ := call(t, srv, "GET", "/api/state", "")
	replay(t, v)
	if !v.Over && !v.YourTurn {
		t.Errorf("after the storm it is not the person's turn: %+v", v)
	}
}

func TestServePage(t *testing.T) {
	srv := testServer(t, "tictactoe", 0)
	for _, path := range []string{"/", "/app.js", "/style.css"} {
		res, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || len(body) < 100 {
			t.Errorf("%s: %d, %d bytes", path, res.StatusCode, len(body))
		}
	}
}

// TestTargets: the points a click picks each kind of decision by.
func TestTargets(t *testing.T) {
	tests := []struct{ game, move, kind, want string }{
		{"othello", "f5", "point", "f5"}, {"reversi-single", "f5:n", "point", "f5"}, {"tictactoe", "b2", "point", "b2"},
		{"yinsh", "P E5", "point", "E5"}, {"yinsh", "X K8", "point", "K8"}, {"yinsh", "M E5 E9", "move", "E5 E9"},
		{"yinsh", "R C4 G4", "row", "C4 D4 E4 F4 G4"}, {"yinsh", "R E1 E5", "row", "E1 E2 E3 E4 E5"},
		{"yinsh", "R B2 F6", "row", "B2 C3 D4 E5 F6"}, {"yinsh", "R E6 E10", "row", "E6 E7 E8 E9 E10"},
	}
	for _, tt := range tests {
		g, err := games.ByName(tt.game)
		if err != nil {
			t.Fatal(err)
		}
		a, err := g.ParseAction(tt.move)
		if err != nil {
			t.Fatal(err)
		}
		kind, points := g.NewState().(env.Display).Targets(a)
		if got := strings.Join(points, " "); kind != tt.kind || got != tt.want {
			t.Errorf("%s %s: %s %q, want %s %q", tt.game, tt.move, kind, got, tt.kind, tt.want)
		}
	}
}

// TestServeSolitaire: the page of a one-player game has the person play
// alone, the server answering every chance event from its deal, so the
// person's turn never stands at one; a hint and the bot's move say the
// score they expect; undo takes a placement back with its reveals; the
// end says the score.
func TestServeSolitaire(t *testing.T) {
	srv := testServer(t, "reversi-solitaire", 0)
	code, v, _ := call(t, srv, "GET", "/api/state", "")
	if code != 200 || !v.Solo || !v.YourTurn || len(v.Cells) != 64 || len(v.Legal) != 8 || !strings.HasPrefix(v.Score, "captured 0 of 24") {
		t.Fatalf("start: %d %+v", code, v)
	}
	pieces := map[string]string{}
	for _, c := range v.Cells {
		pieces[c.Name] = c.Piece
	}
	if pieces["c1"] != "token" || pieces["d5"] != "gold" || pieces["d4"] != "black" || pieces["a1"] != "" {
		t.Errorf("start pieces: c1 %q, d5 %q, d4 %q, a1 %q", pieces["c1"], pieces["d5"], pieces["d4"], pieces["a1"])
	}
	if code, _, msg := call(t, srv, "POST", "/api/move", `{"move": "reveal:gold"}`); code != 422 {
		t.Errorf("a reveal played by the person: %d %s", code, msg)
	}
	code, v, _ = call(t, srv, "POST", "/api/hint", "")
	if code != 200 || v.Hint == nil || v.Hint.Expected == nil || *v.Hint.Expected < 0 || *v.Hint.Expected > 24 {
		t.Fatalf("hint: %d %+v", code, v.Hint)
	}
	// d3:gold turns up the tokens orthogonally next to it, d2 and c3;
	// the server reveals both before answering.
	code, v, _ = call(t, srv, "POST", "/api/move", `{"move": "d3:gold"}`)
	if code != 200 || !v.YourTurn || len(v.History) != 3 || !strings.HasPrefix(v.History[1], "reveal:") {
		t.Fatalf("after d3:gold: %d %+v", code, v)
	}
	afterMove := v.History
	s := replay(t, v)
	if env.IsChance(s) {
		t.Fatal("the person's turn stands at a chance node")
	}
	// Undo takes the placement and its reveals back; playing it again
	// turns up the same faces, the deal's.
	if code, v, _ = call(t, srv, "POST", "/api/undo", ""); code != 200 || len(v.History) != 0 {
		t.Fatalf("undo: %d %v", code, v.History)
	}
	if code, v, _ = call(t, srv, "POST", "/api/move", `{"move": "d3:gold"}`); code != 200 || strings.Join(v.History, ";") != strings.Join(afterMove, ";") {
		t.Fatalf("the same placement again: %v, first %v", v.History, afterMove)
	}
	// The bot plays the rest.
	for i := 0; i < 100 && !v.Over; i++ {
		code, v, _ = call(t, srv, "POST", "/api/bot", "")
		if code != 200 || len(v.Replies) != 1 || v.Replies[0].Expected == nil {
			t.Fatalf("bot: %d %+v", code, v)
		}
	}
	s = replay(t, v)
	if !v.Over || !s.Terminal() || v.Result != fmt.Sprintf("score %g of 24", s.(env.Scorer).Score()) {
		t.Fatalf("end: over %v, result %q, the moves give terminal %v", v.Over, v.Result, s.Terminal())
	}
	if code, _, _ := call(t, srv, "POST", "/api/bot", ""); code != 409 {
		t.Errorf("the bot after the end: %d", code)
	}
	// Two-player games have no such request.
	if code, _, _ := call(t, testServer(t, "othello", 0), "POST", "/api/bot", ""); code != 409 {
		t.Errorf("the bot's move in othello: %d", code)
	}
}

// TestServePageJSON: the served page learns from page.json that the
// server answers it, and its views say which network plays and how.
func TestServePageJSON(t *testing.T) {
	e, err := engine.NewModelEngine(untrainedModel(t, "tictactoe"), nil, engine.EngineOptions{Backend: cpu.Backend(), Playouts: 12})
	if err != nil {
		t.Fatal(err)
	}
	network := &play.Network{Game: "tictactoe", Generation: "4", Blocks: 1, Filters: 8, Parameters: 100, Steps: 9}
	gs, err := NewNetworkGame(e, 0, network)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gs.Handler())
	defer srv.Close()
	res, err := srv.Client().Get(srv.URL + "/page.json")
	if err != nil {
		t.Fatal(err)
	}
	var page play.Page
	err = json.NewDecoder(res.Body).Decode(&page)
	res.Body.Close()
	if err != nil || res.StatusCode != 200 || page.Engine != play.EngineServer || page.Model != "" {
		t.Errorf("page.json: %d %+v %v", res.StatusCode, page, err)
	}
	_, v, _ := call(t, srv, "GET", "/api/state", "")
	if v.Network == nil || *v.Network != *network || v.Strength.Playouts != 12 || !strings.HasPrefix(v.Search, "PUCT search") {
		t.Errorf("the view says network %+v, strength %+v, search %q", v.Network, v.Strength, v.Search)
	}
	if code, v, msg := call(t, srv, "POST", "/api/strength", `{"playouts": 30}`); code != 200 || v.Strength.Playouts != 30 {
		t.Errorf("strength over HTTP: %d %s %+v", code, msg, v.Strength)
	}
}
