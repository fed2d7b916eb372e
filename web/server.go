// Package web serves a game against the engine as a page to play in a
// browser (SVG boards drawn from each game's cells, click to move) over a
// small JSON API that refuses malformed or illegal requests with a 4xx
// status and changes nothing then; and a training run's live page (run.go),
// which follows the run's folder while the loop writes it.
package web

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/flipzero/flipzero/engine"
	"github.com/flipzero/flipzero/env"
)

// pageFiles is the page: plain HTML, CSS and JavaScript, no build step.
//
//go:embed static
var pageFiles embed.FS

// Serve serves h on ln until ctx is done, then shuts the server down,
// giving requests in flight a few seconds; the run page's event streams,
// which never end on their own, end at once.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context {
			return context.WithValue(context.Background(), shutdownKey{}, ctx.Done())
		}}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(shutdown)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("web: %w", err)
	}
	return nil
}

// Game is the one game of a server against the engine, served as a page
// and a JSON API. Every request takes the lock, so requests are served one
// at a time, the bot's search included.
type Game struct {
	mu     sync.Mutex
	engine *engine.Engine
	human  env.Player
	// replies are the bot's decisions since the person's last one, with
	// their evaluations.
	replies []botReply
	legal   []int
}

type botReply struct {
	Move     string  `json:"move"`
	Value    float32 `json:"value"`
	Playouts int     `json:"playouts"`
	Seconds  float64 `json:"seconds"`
	// Expected is the final score the value stands for in a one-player
	// game (the value undone from [-1, 1] to the game's units).
	Expected *float64 `json:"expected,omitempty"`
}

// reply is what the page shows of an analysis.
func reply(g env.Game, a engine.Analysis) botReply {
	r := botReply{Move: a.Move, Value: a.Value, Playouts: a.Playouts, Seconds: a.Elapsed.Seconds()}
	if v, ok := engine.ExpectedScore(g, a.Value); ok {
		r.Expected = &v
	}
	return r
}

// NewGame starts a game against e with the person playing human.
func NewGame(e *engine.Engine, human env.Player) (*Game, error) {
	if err := e.NewGame(); err != nil {
		return nil, err
	}
	return Continue(e, human)
}

// Continue serves the game e is playing, from its current position (set
// up from a record, say), with the person playing human.
func Continue(e *engine.Engine, human env.Player) (*Game, error) {
	return &Game{engine: e, human: human}, nil
}

// maxRequestBody bounds what a request may send: a move is a few bytes.
const maxRequestBody = 4096

// Handler serves the page and its API.
func (s *Game) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(pageFiles, "static")
	files := http.FileServerFS(static)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, r.Method+" is not allowed here", http.StatusMethodNotAllowed)
			return
		}
		files.ServeHTTP(w, r)
	})
	mux.HandleFunc("GET /api/state", s.api(s.state))
	mux.HandleFunc("POST /api/move", s.api(s.move))
	mux.HandleFunc("POST /api/new", s.api(s.newGame))
	mux.HandleFunc("POST /api/undo", s.api(s.undo))
	mux.HandleFunc("POST /api/hint", s.api(s.hint))
	mux.HandleFunc("POST /api/bot", s.api(s.bot))
	// Other methods of the API's paths, and paths it does not have, get
	// a JSON message like every refused request.
	for _, path := range []string{"/api/state", "/api/move", "/api/new", "/api/undo", "/api/hint", "/api/bot"} {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": r.Method + " " + path + " is not allowed"})
		})
	}
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such request: " + r.URL.Path})
	})
	return mux
}

// httpError is a refused request: its status and the message shown.
type httpError struct {
	status int
	msg    string
}

func (e httpError) Error() string { return e.msg }

func refuse(status int, format string, args ...any) error {
	return httpError{status, fmt.Sprintf(format, args...)}
}

// request is what the POST endpoints read; every field is optional
// except where an endpoint says.
type request struct {
	Move string `json:"move"`
	As   string `json:"as"`
}

// api wraps an endpoint: the lock, the body's decoding, the bot's turn,
// and the answer — the game's view, or {"error": …} with a 4xx status.
func (s *Game) api(endpoint func(ctx context.Context, req request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req request
		if r.Method == http.MethodPost {
			body := http.MaxBytesReader(w, r.Body, maxRequestBody)
			dec := json.NewDecoder(body)
			dec.DisallowUnknownFields()
			if err := dec.Decode(&req); err != nil && !errors.Is(err, io.EOF) {
				var tooBig *http.MaxBytesError
				if errors.As(err, &tooBig) {
					writeJSON(w, http.StatusRequestEntityTooLarge, map[string]string{"error": "request body too large"})
					return
				}
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": "malformed request: " + err.Error()})
				return
			}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		// A bot reply cut short (the browser went away mid-search) is
		// made up before anything else.
		if err := s.botTurn(r.Context()); err != nil {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "the bot could not move: " + err.Error()})
			return
		}
		out, err := endpoint(r.Context(), req)
		if err != nil {
			status := http.StatusInternalServerError
			var he httpError
			if errors.As(err, &he) {
				status = he.status
			}
			writeJSON(w, status, map[string]string{"error": strings.ReplaceAll(err.Error(), "\n", " ")})
			return
		}
		writeJSON(w, http.StatusOK, out)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// botTurn lets the bot make every decision, and the engine's deal every
// chance event, until it is the person's turn or the game is over.
func (s *Game) botTurn(ctx context.Context) error {
	e := s.engine
	for !e.State().Terminal() {
		if env.IsChance(e.State()) {
			if _, err := e.Chances(); err != nil {
				return err
			}
			continue
		}
		if e.State().ToMove() == s.human {
			return nil
		}
		a, err := e.GenMove(ctx)
		if err != nil {
			return err
		}
		s.replies = append(s.replies, reply(e.Game(), a))
	}
	return nil
}

func (s *Game) state(ctx context.Context, _ request) (any, error) {
	return s.view(), nil
}

func (s *Game) move(ctx context.Context, req request) (any, error) {
	e := s.engine
	if strings.TrimSpace(req.Move) == "" {
		return nil, refuse(http.StatusBadRequest, `want {"move": "…"}`)
	}
	if e.State().Terminal() {
		return nil, refuse(http.StatusConflict, "the game is over")
	}
	if _, err := e.PlayMove(env.AnyCase(e.Game(), req.Move)); err != nil {
		return nil, refuse(http.StatusUnprocessableEntity, "%v", err)
	}
	s.replies = s.replies[:0]
	if err := s.botTurn(ctx); err != nil {
		return nil, err
	}
	return s.view(), nil
}

func (s *Game) newGame(ctx context.Context, req request) (any, error) {
	if req.As != "" {
		p, err := env.ParsePlayer(s.engine.Game(), req.As)
		if err != nil {
			return nil, refuse(http.StatusBadRequest, "%v", err)
		}
		s.human = p
	}
	if err := s.engine.NewGame(); err != nil {
		return nil, err
	}
	s.replies = s.replies[:0]
	if err := s.botTurn(ctx); err != nil {
		return nil, err
	}
	return s.view(), nil
}

// undo takes back the person's last decision and the bot's answers and
// the chance events after it.
func (s *Game) undo(ctx context.Context, _ request) (any, error) {
	e := s.engine
	last := e.LastDecision(func(p env.Player) bool { return p == s.human })
	if last < 0 {
		return nil, refuse(http.StatusConflict, "nothing to undo")
	}
	for len(e.History()) > last {
		if _, err := e.Undo(); err != nil {
			return nil, err
		}
	}
	s.replies = s.replies[:0]
	return s.view(), nil
}

func (s *Game) hint(ctx context.Context, _ request) (any, error) {
	e := s.engine
	if e.State().Terminal() {
		return nil, refuse(http.StatusConflict, "the game is over")
	}
	a, err := e.Analyze(ctx)
	if err != nil {
		return nil, err
	}
	v := s.view()
	h := reply(e.Game(), a)
	v.Hint = &h
	return v, nil
}

// bot has the bot play the person's decision: in a one-player game, to
// watch it play.
func (s *Game) bot(ctx context.Context, _ request) (any, error) {
	e := s.engine
	if env.Players(e.Game()) != 1 {
		return nil, refuse(http.StatusConflict, "the bot plays your move only in a one-player game")
	}
	if e.State().Terminal() {
		return nil, refuse(http.StatusConflict, "the game is over")
	}
	a, err := e.GenMove(ctx)
	if err != nil {
		return nil, err
	}
	s.replies = append(s.replies[:0], reply(e.Game(), a))
	if err := s.botTurn(ctx); err != nil {
		return nil, err
	}
	return s.view(), nil
}

// gameView is everything the page draws.
type gameView struct {
	Game  string `json:"game"`
	Board string `json:"board"` // "square" or "hex"
	Human string `json:"human"`
	Bot   string `json:"bot"`
	// Solo: a one-player game, which the person plays alone, the bot
	// advising (hint) or playing a decision for them (POST /api/bot).
	Solo bool `json:"solo"`
	// ToMove is the side to decide, YourTurn whether that is the person.
	ToMove   string     `json:"toMove"`
	YourTurn bool       `json:"yourTurn"`
	Prompt   string     `json:"prompt"`
	Over     bool       `json:"over"`
	Result   string     `json:"result"`
	Score    string     `json:"score"`
	Cells    []cellView `json:"cells"`
	Legal    []moveView `json:"legal"`
	History  []string   `json:"history"`
	// Last lists the points of the last decision, to mark them.
	Last    []string   `json:"last"`
	Replies []botReply `json:"replies"`
	Hint    *botReply  `json:"hint,omitempty"`
}

// cellView is one point of the board: its name, where to draw it (board
// units: squares are 1 apart, YINSH points 1 apart along lines), its grid
// coordinates and what stands on it.
type cellView = env.Cell

// moveView is one legal decision and the points a click picks it by:
// one point (a disc, a placement, a ring removal), a ring's from and to,
// or the points of a row.
type moveView struct {
	Move   string   `json:"move"`
	Kind   string   `json:"kind"` // point, move, row, pass
	Points []string `json:"points"`
}

func (s *Game) view() gameView {
	e := s.engine
	g := e.Game()
	st := e.State()
	d, drawn := st.(env.Display)
	v := gameView{
		Game: g.Name(), Board: "square",
		Human: g.PlayerName(s.human), Bot: g.PlayerName(s.human.Other()), Solo: env.Players(g) == 1,
		Over: st.Terminal(), Cells: []cellView{}, Legal: []moveView{}, History: []string{}, Last: []string{},
		Replies: append([]botReply{}, s.replies...),
	}
	targets := func(a int) (string, []string) {
		if g.FormatAction(a) == "pass" {
			return "pass", []string{}
		}
		if drawn {
			kind, points := d.Targets(a)
			return kind, append([]string{}, points...)
		}
		return "point", []string{g.FormatAction(a)}
	}
	if drawn {
		v.Board, v.Score, v.Cells = d.Layout(), d.Status(), d.Cells()
	}
	for _, a := range e.History() {
		v.History = append(v.History, g.FormatAction(a))
	}
	if n := len(e.History()); n > 0 {
		_, v.Last = targets(e.History()[n-1])
	}
	if st.Terminal() {
		v.Result = resultText(st)
		return v
	}
	v.ToMove = g.PlayerName(st.ToMove())
	v.YourTurn = st.ToMove() == s.human
	v.Prompt = decisionText(st, &s.legal)
	for _, a := range st.LegalActions(s.legal) {
		kind, points := targets(a)
		v.Legal = append(v.Legal, moveView{Move: g.FormatAction(a), Kind: kind, Points: points})
	}
	return v
}

// decisionText says what the player to move is to decide.
func decisionText(s env.State, buf *[]int) string {
	*buf = s.LegalActions(*buf)
	if len(*buf) == 1 && s.Game().FormatAction((*buf)[0]) == "pass" {
		return "you must pass (type pass)"
	}
	if d, ok := s.(env.Display); ok && d.Prompt() != "" {
		return d.Prompt()
	}
	return "your move"
}

// resultText says how a finished game ended: a one-player game by its
// score.
func resultText(s env.State) string {
	if sc, ok := s.(env.Scorer); ok {
		return fmt.Sprintf("score %g of %g", sc.Score(), sc.MaxScore())
	}
	if w := s.Winner(); w != env.NoPlayer {
		return s.Game().PlayerName(w) + " wins"
	}
	return "a draw"
}
