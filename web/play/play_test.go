package play

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/engine"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/mcts"
)

// session starts a game of name against a rollout search, the person
// playing human.
func session(t *testing.T, name string, human env.Player, playouts int) *Session {
	t.Helper()
	g, err := games.ByName(name)
	if err != nil {
		t.Fatal(err)
	}
	eval, err := mcts.NewRollout(1, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	search := mcts.RolloutConfig()
	search.DirichletWeight = 0
	e, err := engine.NewEngine(g, eval, engine.EngineOptions{Playouts: playouts, Search: search, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(e, human, &Network{Game: name, Generation: "7", Blocks: 2, Filters: 16, Parameters: 1234, Steps: 99})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// do sends a request and decodes its answer as the page would: a View,
// or the error message.
func do(t *testing.T, s *Session, method, path, body string) (int, View, string) {
	t.Helper()
	a := s.Do(context.Background(), method, path, []byte(body))
	raw, err := json.Marshal(a.Body)
	if err != nil {
		t.Fatalf("%s %s: the answer does not marshal: %v", method, path, err)
	}
	var v View
	var e struct{ Error string }
	if a.Status == StatusOK {
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, raw)
		}
	} else if err := json.Unmarshal(raw, &e); err != nil || e.Error == "" {
		t.Fatalf("%s %s: status %d without a message: %s", method, path, a.Status, raw)
	}
	return a.Status, v, e.Error
}

// TestRefused: each malformed or untimely request gets its status and a
// message, and leaves the game as it was.
func TestRefused(t *testing.T) {
	s := session(t, "othello", 0, 8)
	tests := []struct {
		method, path, body string
		status             int
		says               string
	}{
		{"GET", "api/nothing", "", StatusNotFound, "no such request"},
		{"GET", "/api/move", "", StatusMethodNotAllowed, "not allowed"},
		{"POST", "api/state", "", StatusMethodNotAllowed, "not allowed"},
		{"POST", "api/move", `{"move": "a1"}`, StatusUnprocessable, "not legal"},
		{"POST", "api/move", `{"move": ""}`, StatusBadRequest, "want"},
		{"POST", "api/move", `{"mvoe": "f5"}`, StatusBadRequest, "unknown field"},
		{"POST", "api/move", `{"move": "f5"`, StatusBadRequest, "malformed"},
		{"POST", "api/move", `[1, 2]`, StatusBadRequest, "malformed"},
		{"POST", "api/move", `{"move": "` + strings.Repeat("f", MaxRequestBody) + `"}`, StatusTooLarge, "too large"},
		{"POST", "api/undo", "", StatusConflict, "nothing to undo"},
		{"POST", "api/new", `{"as": "purple"}`, StatusBadRequest, "purple"},
		{"POST", "api/bot", "", StatusConflict, "one-player"},
		{"POST", "api/strength", `{"playouts": 0}`, StatusBadRequest, "playouts"},
		{"POST", "api/strength", `{"playouts": 100001}`, StatusBadRequest, "playouts"},
		{"POST", "api/strength", `{"seconds": 0}`, StatusBadRequest, "seconds"},
		{"POST", "api/strength", `{"seconds": 121}`, StatusBadRequest, "seconds"},
		{"POST", "api/strength", `{"seconds": -1}`, StatusBadRequest, "seconds"},
		{"POST", "api/strength", `{"playouts": 10, "seconds": 1}`, StatusBadRequest, "not both"},
		{"POST", "api/load", `{"record": "f5;a1"}`, StatusUnprocessable, "move 2"},
		{"POST", "api/load", `{"record": "f5;zz"}`, StatusUnprocessable, "move 2"},
		{"POST", "api/load", `{"record": "f5\tunfinished\tyinsh"}`, StatusUnprocessable, "a game of yinsh"},
		{"POST", "api/load", `{"record": "f5", "as": "red"}`, StatusBadRequest, "red"},
	}
	_, before, _ := do(t, s, "GET", "api/state", "")
	for _, tt := range tests {
		status, _, msg := do(t, s, tt.method, tt.path, tt.body)
		if status != tt.status || !strings.Contains(msg, tt.says) {
			t.Errorf("%s %s %.40s: %d %q, want %d saying %q", tt.method, tt.path, tt.body, status, msg, tt.status, tt.says)
		}
	}
	_, after, _ := do(t, s, "GET", "api/state", "")
	if after.Record != before.Record || after.Strength != before.Strength || after.Human != before.Human {
		t.Errorf("refused requests changed the game: %q %+v → %q %+v", before.Record, before.Strength, after.Record, after.Strength)
	}
}

// TestMoveAndRecord: the bot answers a move at once, with its
// evaluation and top moves, and the record is the moves played in the
// form "flipzero convert" prints.
func TestMoveAndRecord(t *testing.T) {
	s := session(t, "othello", 0, 32)
	status, v, msg := do(t, s, "POST", "api/move", `{"move": "F5"}`)
	if status != StatusOK {
		t.Fatalf("move: %d %s", status, msg)
	}
	if len(v.History) != 2 || v.History[0] != "f5" || len(v.Replies) != 1 || !v.YourTurn {
		t.Fatalf("after f5: history %v, replies %+v", v.History, v.Replies)
	}
	r := v.Replies[0]
	if r.Win == nil || *r.Win < 0 || *r.Win > 1 || r.Expected != nil || r.Playouts < 32 {
		t.Errorf("the bot's reply %+v: want a win chance in [0, 1] after 32 playouts", r)
	}
	if len(r.Top) == 0 || r.Top[0].Move != r.Move || r.Top[0].Visits == 0 {
		t.Errorf("the reply's top moves %+v do not start with its move %s", r.Top, r.Move)
	}
	for i := 1; i < len(r.Top); i++ {
		if r.Top[i].Visits > r.Top[i-1].Visits {
			t.Errorf("top moves out of order: %+v", r.Top)
		}
	}
	if want := "f5;" + v.History[1] + "\tunfinished\tothello"; v.Record != want {
		t.Errorf("record %q, want %q", v.Record, want)
	}
	if v.Network == nil || v.Network.Generation != "7" || v.Search == "" {
		t.Errorf("the view does not say what plays: network %+v, search %q", v.Network, v.Search)
	}
	// The record played back through api/load reaches the same position,
	// the person on the same side.
	t2 := session(t, "othello", 0, 8)
	body, _ := json.Marshal(map[string]string{"record": v.Record})
	status, w, msg := do(t, t2, "POST", "api/load", string(body))
	if status != StatusOK || strings.Join(w.History, ";") != strings.Join(v.History, ";") || !w.YourTurn || len(w.Replies) != 0 {
		t.Errorf("load %q: %d %s, history %v, your turn %v", v.Record, status, msg, w.History, w.YourTurn)
	}
}

// TestLoadTheBotsTurn: a record that leaves the bot to move has it move
// at once; one played to the end says the outcome.
func TestLoadTheBotsTurn(t *testing.T) {
	s := session(t, "tictactoe", 1, 64)
	status, v, msg := do(t, s, "POST", "api/load", `{"record": "a1;b1;a2;b2"}`)
	if status != StatusOK {
		t.Fatalf("load: %d %s", status, msg)
	}
	// The bot (black, X) completes a1-a2-a3.
	if len(v.History) != 5 || v.History[4] != "a3" || !v.Over || v.Result != "black wins" {
		t.Fatalf("after loading a1;b1;a2;b2 the bot played %v, over %v, result %q", v.History, v.Over, v.Result)
	}
	if !strings.HasSuffix(v.Record, "\tblack\ttictactoe") {
		t.Errorf("record of a finished game %q", v.Record)
	}
	status, v, _ = do(t, s, "POST", "api/load", `{"record": "", "as": "black"}`)
	if status != StatusOK || len(v.History) != 0 || v.Human != "black" || !v.YourTurn {
		t.Errorf("an empty record as black: %d, history %v, human %s", status, v.History, v.Human)
	}
}

// TestStrength: the strength asked for is the next search's, and a new
// game keeps it.
func TestStrength(t *testing.T) {
	s := session(t, "tictactoe", 0, 8)
	tests := []struct {
		body     string
		playouts int
		seconds  float64
	}{
		{`{"playouts": 50}`, 50, 0},
		{`{"seconds": 0.05}`, 0, 0.05},
		{`{"playouts": 20}`, 20, 0},
	}
	for _, tt := range tests {
		status, v, msg := do(t, s, "POST", "api/strength", tt.body)
		if status != StatusOK || v.Strength != (Strength{tt.playouts, tt.seconds}) {
			t.Fatalf("strength %s: %d %s, %+v", tt.body, status, msg, v.Strength)
		}
		// A new game's tree is empty: the hint's search is the strength's
		// alone.
		do(t, s, "POST", "api/new", "")
		_, v, _ = do(t, s, "POST", "api/hint", "")
		h := v.Hint
		if h == nil {
			t.Fatalf("no hint after strength %s", tt.body)
		}
		if tt.playouts > 0 && h.Playouts != tt.playouts {
			t.Errorf("strength %s: the hint searched %d playouts", tt.body, h.Playouts)
		}
		if tt.seconds > 0 && h.Seconds < tt.seconds {
			t.Errorf("strength %s: the hint searched %.3f s", tt.body, h.Seconds)
		}
	}
}

// TestSolo: a one-player game's replies expect a score and no win
// chance, and its record's outcome is the score.
func TestSolo(t *testing.T) {
	s := session(t, "reversi-solitaire", 0, 8)
	var v View
	for i := 0; i < 100 && !v.Over; i++ {
		status, next, msg := do(t, s, "POST", "api/bot", "")
		if status != StatusOK || len(next.Replies) != 1 || next.Replies[0].Expected == nil || next.Replies[0].Win != nil {
			t.Fatalf("bot: %d %s %+v", status, msg, next.Replies)
		}
		v = next
	}
	if !v.Over || !strings.Contains(v.Record, "\tscore ") || !strings.HasPrefix(v.Result, "score ") {
		t.Errorf("the end: over %v, record %q, result %q", v.Over, v.Record, v.Result)
	}
}

func TestSearchText(t *testing.T) {
	gumbel := mcts.PlayConfig()
	gumbel.Mode, gumbel.EndgameSolve = mcts.Gumbel, 10
	noSolver := mcts.PlayConfig()
	noSolver.Solver, noSolver.EndgameSolve = false, 10
	noEndgame := mcts.PlayConfig()
	noEndgame.EndgameSolve = 0
	tests := []struct {
		cfg  mcts.Config
		want string
	}{
		{noEndgame, "PUCT search, proven wins and losses (MCTS-Solver)"},
		{gumbel, "Gumbel search, proven wins and losses (MCTS-Solver), the endgame solved exactly from 10 empty squares"},
		{noSolver, "PUCT search"},
	}
	for _, tt := range tests {
		if got := SearchText(tt.cfg); got != tt.want {
			t.Errorf("SearchText(%+v) = %q, want %q", tt.cfg, got, tt.want)
		}
	}
}

func TestNetworkText(t *testing.T) {
	n := Network{Game: "othello", Generation: "428", Blocks: 4, Filters: 64, Parameters: 301000, Steps: 46000, Created: "2025-06-01T10:00:00Z"}
	want := "othello network, generation 428, 64×4 (4 blocks of 64 filters, 301000 parameters), 46000 training steps, made 2025-06-01"
	if got := n.Text(); got != want {
		t.Errorf("Text() = %q, want %q", got, want)
	}
}
