// Package play is a person's game against the engine as requests and
// answers, whatever carries them: "flipzero serve" answers them over
// HTTP (package web), and an exported page's own engine, compiled to
// WebAssembly (web/wasm), answers them inside the browser. The page
// sends the same requests either way, so one page serves both.
//
// A request is a method, a path and a JSON body:
//
//	GET  api/state                          the game as the page draws it
//	POST api/move     {"move": "f5"}        the person's decision; the bot answers
//	POST api/new      {"as": "white"}       a new game, the person on that side
//	POST api/undo                           take back the person's last decision
//	POST api/hint                           the bot's advice for the person
//	POST api/bot                            the bot plays the person's decision (one-player games)
//	POST api/strength {"playouts": 400}     how hard the bot thinks, or {"seconds": 2}
//	POST api/load     {"record": "f5;d6"}   set up the position a record reaches
//
// The answer is the game's View, or {"error": "…"} with a 4xx status that
// says what was wrong; a refused request changes nothing.
package play

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/flipzero/flipzero/engine"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/mcts"
)

// The statuses of answers, as HTTP has them.
const (
	StatusOK               = 200
	StatusBadRequest       = 400
	StatusNotFound         = 404
	StatusMethodNotAllowed = 405
	StatusConflict         = 409
	StatusTooLarge         = 413
	StatusUnprocessable    = 422
	StatusInternal         = 500
	StatusUnavailable      = 503
)

// MaxRequestBody bounds what a request may send: a record of a long
// YINSH game is a few kilobytes.
const MaxRequestBody = 16 << 10

// Limits on the strength a request may ask for, so that a page cannot
// set the bot thinking for hours.
const (
	MaxPlayouts = 100_000
	MaxSeconds  = 120
)

// topMoves is how many of the search's candidates an answer lists.
const topMoves = 5

// Session is one game between a person and the engine. Its methods may
// be called from several goroutines: requests are answered one at a
// time, the bot's search included.
type Session struct {
	mu      sync.Mutex
	engine  *engine.Engine
	human   env.Player
	network *Network
	// replies are the bot's decisions since the person's last one, with
	// their evaluations.
	replies []Reply
	legal   []int
}

// New starts a new game against e with the person playing human;
// network, if not nil, is what the page says of e's network.
func New(e *engine.Engine, human env.Player, network *Network) (*Session, error) {
	if err := e.NewGame(); err != nil {
		return nil, err
	}
	return Continue(e, human, network)
}

// Continue serves the game e is playing, from its current position (set
// up from a record, say), with the person playing human.
func Continue(e *engine.Engine, human env.Player, network *Network) (*Session, error) {
	if human != 0 && human != 1 {
		return nil, fmt.Errorf("play: no player %d", human)
	}
	return &Session{engine: e, human: human, network: network}, nil
}

// Answer is what a request gets: a status (StatusOK, or 4xx and 5xx
// with Body {"error": "…"}) and a body to send as JSON.
type Answer struct {
	Status int
	Body   any
}

// refusal is a refused request: its status and the message shown.
type refusal struct {
	status int
	msg    string
}

func (e refusal) Error() string { return e.msg }

func refuse(status int, format string, args ...any) error {
	return refusal{status, fmt.Sprintf(format, args...)}
}

func failed(status int, msg string) Answer {
	return Answer{status, map[string]string{"error": strings.ReplaceAll(msg, "\n", " ")}}
}

// request is what the POST requests read; every field is optional
// except where a request says.
type request struct {
	Move     string   `json:"move"`
	As       string   `json:"as"`
	Record   string   `json:"record"`
	Playouts int      `json:"playouts"`
	Seconds  *float64 `json:"seconds"`
}

// endpoint answers one request on the locked session.
type endpoint func(s *Session, ctx context.Context, req request) (View, error)

// route finds a request's endpoint by its path, with the method it
// takes.
func route(path string) (method string, answer endpoint, ok bool) {
	switch path {
	case "api/state":
		return "GET", (*Session).state, true
	case "api/move":
		return "POST", (*Session).move, true
	case "api/new":
		return "POST", (*Session).newGame, true
	case "api/undo":
		return "POST", (*Session).undo, true
	case "api/hint":
		return "POST", (*Session).hint, true
	case "api/bot":
		return "POST", (*Session).bot, true
	case "api/strength":
		return "POST", (*Session).strength, true
	case "api/load":
		return "POST", (*Session).load, true
	}
	return "", nil, false
}

// Do answers one request: method "GET" or "POST", path "api/…" (a
// leading "/" is allowed), body the request's JSON (empty for none).
func (s *Session) Do(ctx context.Context, method, path string, body []byte) Answer {
	path = strings.TrimPrefix(path, "/")
	want, answer, ok := route(path)
	if !ok {
		return failed(StatusNotFound, "no such request: /"+path)
	}
	if method != want {
		return failed(StatusMethodNotAllowed, method+" /"+path+" is not allowed")
	}
	if len(body) > MaxRequestBody {
		return failed(StatusTooLarge, "request body too large")
	}
	var req request
	if method == "POST" && len(bytes.TrimSpace(body)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			return failed(StatusBadRequest, "malformed request: "+err.Error())
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// A bot reply cut short (the page went away mid-search) is made up
	// before anything else.
	if err := s.botTurn(ctx); err != nil {
		return failed(StatusUnavailable, "the bot could not move: "+err.Error())
	}
	v, err := answer(s, ctx, req)
	if err != nil {
		var r refusal
		if errors.As(err, &r) {
			return failed(r.status, r.msg)
		}
		return failed(StatusInternal, err.Error())
	}
	return Answer{StatusOK, v}
}

// botTurn lets the bot make every decision, and the engine's deal every
// chance event, until it is the person's turn or the game is over.
func (s *Session) botTurn(ctx context.Context) error {
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
		s.replies = append(s.replies, s.reply(a))
	}
	return nil
}

func (s *Session) state(ctx context.Context, _ request) (View, error) {
	return s.view(), nil
}

func (s *Session) move(ctx context.Context, req request) (View, error) {
	e := s.engine
	if strings.TrimSpace(req.Move) == "" {
		return View{}, refuse(StatusBadRequest, `want {"move": "…"}`)
	}
	if e.State().Terminal() {
		return View{}, refuse(StatusConflict, "the game is over")
	}
	if _, err := e.PlayMove(env.AnyCase(e.Game(), req.Move)); err != nil {
		return View{}, refuse(StatusUnprocessable, "%v", err)
	}
	s.replies = s.replies[:0]
	if err := s.botTurn(ctx); err != nil {
		return View{}, err
	}
	return s.view(), nil
}

// side reads a request's "as": the person's side, or the current one
// when it is left out.
func (s *Session) side(as string) (env.Player, error) {
	if as == "" {
		return s.human, nil
	}
	p, err := env.ParsePlayer(s.engine.Game(), as)
	if err != nil {
		return 0, refuse(StatusBadRequest, "%v", err)
	}
	return p, nil
}

func (s *Session) newGame(ctx context.Context, req request) (View, error) {
	human, err := s.side(req.As)
	if err != nil {
		return View{}, err
	}
	if err := s.engine.NewGame(); err != nil {
		return View{}, err
	}
	s.human = human
	s.replies = s.replies[:0]
	if err := s.botTurn(ctx); err != nil {
		return View{}, err
	}
	return s.view(), nil
}

// load sets up the position a record reaches: its moves in the game's
// notation separated by ";", or a whole record line as "flipzero
// convert" prints it (the moves, a tab, the outcome, a tab, the game).
// The bot then moves if it is its turn.
func (s *Session) load(ctx context.Context, req request) (View, error) {
	e := s.engine
	human, err := s.side(req.As)
	if err != nil {
		return View{}, err
	}
	moves, err := recordMoves(e.Game(), req.Record)
	if err != nil {
		return View{}, refuse(StatusUnprocessable, "%v", err)
	}
	// Checked on a state of its own first, so that a bad record leaves
	// the game as it was.
	if _, err := env.Play(e.Game(), strings.Join(moves, ";")); err != nil {
		return View{}, refuse(StatusUnprocessable, "record: %v", err)
	}
	if err := e.NewGame(); err != nil {
		return View{}, err
	}
	for _, m := range moves {
		if _, err := e.PlayMove(m); err != nil {
			return View{}, err
		}
	}
	s.human = human
	s.replies = s.replies[:0]
	if err := s.botTurn(ctx); err != nil {
		return View{}, err
	}
	return s.view(), nil
}

// recordMoves reads a record's moves: a line as "flipzero convert"
// prints it, whose game must be g, or the moves alone.
func recordMoves(g env.Game, record string) ([]string, error) {
	record = strings.TrimSpace(record)
	if fields := strings.Split(record, "\t"); len(fields) > 1 {
		if len(fields) >= 3 && strings.TrimSpace(fields[2]) != g.Name() {
			return nil, fmt.Errorf("the record is a game of %s, not %s", strings.TrimSpace(fields[2]), g.Name())
		}
		record = fields[0]
	}
	var moves []string
	for _, m := range strings.Split(record, ";") {
		if m = strings.TrimSpace(m); m != "" {
			moves = append(moves, env.AnyCase(g, m))
		}
	}
	return moves, nil
}

// undo takes back the person's last decision and the bot's answers and
// the chance events after it.
func (s *Session) undo(ctx context.Context, _ request) (View, error) {
	e := s.engine
	last := e.LastDecision(func(p env.Player) bool { return p == s.human })
	if last < 0 {
		return View{}, refuse(StatusConflict, "nothing to undo")
	}
	for len(e.History()) > last {
		if _, err := e.Undo(); err != nil {
			return View{}, err
		}
	}
	s.replies = s.replies[:0]
	return s.view(), nil
}

func (s *Session) hint(ctx context.Context, _ request) (View, error) {
	e := s.engine
	if e.State().Terminal() {
		return View{}, refuse(StatusConflict, "the game is over")
	}
	a, err := e.Analyze(ctx)
	if err != nil {
		return View{}, err
	}
	v := s.view()
	h := s.reply(a)
	v.Hint = &h
	return v, nil
}

// bot has the bot play the person's decision: in a one-player game, to
// watch it play.
func (s *Session) bot(ctx context.Context, _ request) (View, error) {
	e := s.engine
	if env.Players(e.Game()) != 1 {
		return View{}, refuse(StatusConflict, "the bot plays your move only in a one-player game")
	}
	if e.State().Terminal() {
		return View{}, refuse(StatusConflict, "the game is over")
	}
	a, err := e.GenMove(ctx)
	if err != nil {
		return View{}, err
	}
	s.replies = append(s.replies[:0], s.reply(a))
	if err := s.botTurn(ctx); err != nil {
		return View{}, err
	}
	return s.view(), nil
}

// strength sets how hard the bot thinks: {"playouts": N} or {"seconds": S}.
func (s *Session) strength(ctx context.Context, req request) (View, error) {
	playouts, moveTime := req.Playouts, time.Duration(0)
	switch {
	case req.Seconds != nil && req.Playouts != 0:
		return View{}, refuse(StatusBadRequest, `want {"playouts": N} or {"seconds": S}, not both`)
	case req.Seconds != nil:
		sec := *req.Seconds
		if !(sec > 0 && sec <= MaxSeconds) {
			return View{}, refuse(StatusBadRequest, "seconds: %v, want more than 0 and at most %d", sec, MaxSeconds)
		}
		moveTime = time.Duration(sec * float64(time.Second))
	case playouts < 1 || playouts > MaxPlayouts:
		return View{}, refuse(StatusBadRequest, "playouts: %d, want 1 to %d", playouts, MaxPlayouts)
	}
	if err := s.engine.SetStrength(playouts, moveTime); err != nil {
		return View{}, refuse(StatusBadRequest, "%v", err)
	}
	return s.view(), nil
}

// Reply is one search of the bot's: the move it chose and what it
// thinks of the position.
type Reply struct {
	Move     string  `json:"move"`
	Value    float32 `json:"value"`
	Playouts int     `json:"playouts"`
	Seconds  float64 `json:"seconds"`
	// Win is the chance of winning the value stands for, for the side
	// that searched, a draw counting half: (1 + value) / 2. Absent in a
	// one-player game.
	Win *float64 `json:"win,omitempty"`
	// Expected is the final score the value stands for in a one-player
	// game (the value undone from [-1, 1] to the game's units).
	Expected *float64 `json:"expected,omitempty"`
	// Proven is "win", "loss" or "draw" when the search proved the
	// move's result.
	Proven string `json:"proven,omitempty"`
	// Top are the search's most visited moves, best first, each with the
	// network's prior: the policy's view of the position.
	Top []Candidate `json:"top"`
}

// Candidate is one move the search looked at.
type Candidate struct {
	Move   string  `json:"move"`
	Visits int     `json:"visits"`
	Prior  float32 `json:"prior"`
	// Value is the move's mean value for the side that searched; null
	// when the search never tried it.
	Value *float32 `json:"value"`
}

// reply is what the page shows of an analysis.
func (s *Session) reply(a engine.Analysis) Reply {
	g := s.engine.Game()
	r := Reply{Move: a.Move, Value: a.Value, Playouts: a.Playouts, Seconds: a.Elapsed.Seconds(), Top: []Candidate{}}
	if v, ok := engine.ExpectedScore(g, a.Value); ok {
		r.Expected = &v
	} else {
		win := (1 + float64(a.Value)) / 2
		r.Win = &win
	}
	if a.Proof != mcts.Unproven {
		r.Proven = a.Proof.String()
	}
	for _, c := range a.Candidates[:min(topMoves, len(a.Candidates))] {
		cand := Candidate{Move: c.Move, Visits: c.Visits, Prior: c.Prior}
		if !math.IsNaN(float64(c.Value)) {
			v := c.Value
			cand.Value = &v
		}
		r.Top = append(r.Top, cand)
	}
	return r
}

// SearchText says in words how e searches: the algorithm and what is
// proven rather than guessed.
func SearchText(cfg mcts.Config) string {
	parts := []string{cmp.Or(map[mcts.Mode]string{mcts.PUCT: "PUCT search", mcts.Gumbel: "Gumbel search"}[cfg.Mode], "search")}
	if cfg.Solver {
		parts = append(parts, "proven wins and losses (MCTS-Solver)")
	}
	if cfg.Solver && cfg.EndgameSolve > 0 {
		parts = append(parts, fmt.Sprintf("the endgame solved exactly from %d empty squares", cfg.EndgameSolve))
	}
	return strings.Join(parts, ", ")
}
