package main

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/env/yinsh"
	"github.com/flipzero/flipzero/selfplay"
)

// webFiles is the page: plain HTML, CSS and JavaScript, no build step.
//
//go:embed web
var webFiles embed.FS

func runServe(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("serve", "serve --model FILE [--addr 127.0.0.1:8080] [--playouts N | --seconds S]\n\n"+
		"Serves a web page to play against the model in a browser. It listens on the\n"+
		"loopback interface unless --addr says otherwise; one game per server.", io.out)
	ef := addEngineFlags(fs)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	as := fs.String("as", "", "your side in the first game (default: the side that moves first)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	e, err := ef.engine()
	if err != nil {
		return err
	}
	human := env.Player(0)
	if *as != "" {
		if human, err = sideFlag(e.Game(), *as); err != nil {
			return usageError{err}
		}
	}
	srv, err := newGameServer(e, human)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return usageError{fmt.Errorf("--addr: %w", err)}
	}
	fmt.Fprintf(io.out, "flipzero plays %s at http://%s/ (Ctrl-C stops)\n", e.Game().Name(), ln.Addr())
	hs := &http.Server{Handler: srv.handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(shutdown)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// gameServer holds the one game of a server. Every request takes the
// lock, so requests are served one at a time, the bot's search included.
type gameServer struct {
	mu     sync.Mutex
	engine *selfplay.Engine
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
}

func newGameServer(e *selfplay.Engine, human env.Player) (*gameServer, error) {
	s := &gameServer{engine: e, human: human}
	if err := e.NewGame(); err != nil {
		return nil, err
	}
	return s, nil
}

// maxRequestBody bounds what a request may send: a move is a few bytes.
const maxRequestBody = 4096

func (s *gameServer) handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(webFiles, "web")
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
	// Other methods of the API's paths, and paths it does not have, get
	// a JSON message like every refused request.
	for _, path := range []string{"/api/state", "/api/move", "/api/new", "/api/undo", "/api/hint"} {
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
func (s *gameServer) api(endpoint func(ctx context.Context, req request) (any, error)) http.HandlerFunc {
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
			writeJSON(w, status, map[string]string{"error": oneLine(err)})
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

// botTurn lets the bot make every decision until it is the person's turn
// or the game is over.
func (s *gameServer) botTurn(ctx context.Context) error {
	e := s.engine
	for !e.State().Terminal() && e.State().ToMove() != s.human {
		a, err := e.GenMove(ctx)
		if err != nil {
			return err
		}
		s.replies = append(s.replies, botReply{Move: a.Move, Value: a.Value, Playouts: a.Playouts, Seconds: a.Elapsed.Seconds()})
	}
	return nil
}

func (s *gameServer) state(ctx context.Context, _ request) (any, error) {
	return s.view(), nil
}

func (s *gameServer) move(ctx context.Context, req request) (any, error) {
	e := s.engine
	if strings.TrimSpace(req.Move) == "" {
		return nil, refuse(http.StatusBadRequest, `want {"move": "…"}`)
	}
	if e.State().Terminal() {
		return nil, refuse(http.StatusConflict, "the game is over")
	}
	if _, err := e.PlayMove(playerMove(e.Game(), req.Move)); err != nil {
		return nil, refuse(http.StatusUnprocessableEntity, "%v", err)
	}
	s.replies = s.replies[:0]
	if err := s.botTurn(ctx); err != nil {
		return nil, err
	}
	return s.view(), nil
}

func (s *gameServer) newGame(ctx context.Context, req request) (any, error) {
	if req.As != "" {
		p, err := sideFlag(s.engine.Game(), req.As)
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

// undo takes back the person's last decision and the bot's answers to it.
func (s *gameServer) undo(ctx context.Context, _ request) (any, error) {
	e := s.engine
	st := e.Game().NewState()
	last := -1
	for i, a := range e.History() {
		if st.ToMove() == s.human {
			last = i
		}
		st.Apply(a)
	}
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

func (s *gameServer) hint(ctx context.Context, _ request) (any, error) {
	e := s.engine
	if e.State().Terminal() {
		return nil, refuse(http.StatusConflict, "the game is over")
	}
	a, err := e.Analyze(ctx)
	if err != nil {
		return nil, err
	}
	v := s.view()
	v.Hint = &botReply{Move: a.Move, Value: a.Value, Playouts: a.Playouts, Seconds: a.Elapsed.Seconds()}
	return v, nil
}

// gameView is everything the page draws.
type gameView struct {
	Game  string `json:"game"`
	Board string `json:"board"` // "square" or "hex"
	Human string `json:"human"`
	Bot   string `json:"bot"`
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
type cellView struct {
	Name  string  `json:"name"`
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
	Col   int     `json:"col"`
	Row   int     `json:"row"`
	Piece string  `json:"piece"`
}

// moveView is one legal decision and the points a click picks it by:
// one point (a disc, a placement, a ring removal), a ring's from and to,
// or the five markers of a row.
type moveView struct {
	Move   string   `json:"move"`
	Kind   string   `json:"kind"` // point, move, row, pass
	Points []string `json:"points"`
}

func (s *gameServer) view() gameView {
	e := s.engine
	g := e.Game()
	st := e.State()
	v := gameView{
		Game: g.Name(), Board: "square",
		Human: g.PlayerName(s.human), Bot: g.PlayerName(s.human.Other()),
		Over: st.Terminal(), Score: scoreText(st),
		Cells: boardCells(st), Legal: []moveView{}, History: []string{}, Last: []string{},
		Replies: append([]botReply{}, s.replies...),
	}
	if _, ok := st.(*yinsh.State); ok {
		v.Board = "hex"
	}
	for _, a := range e.History() {
		v.History = append(v.History, g.FormatAction(a))
	}
	if n := len(v.History); n > 0 {
		v.Last = movePoints(v.History[n-1])
	}
	if st.Terminal() {
		v.Result = resultText(st)
		return v
	}
	v.ToMove = g.PlayerName(st.ToMove())
	v.YourTurn = st.ToMove() == s.human
	v.Prompt = decisionText(st, &s.legal)
	for _, a := range st.LegalActions(s.legal) {
		text := g.FormatAction(a)
		mv := moveView{Move: text, Kind: "point", Points: movePoints(text)}
		switch {
		case text == "pass":
			mv.Kind = "pass"
		case strings.HasPrefix(text, "M "):
			mv.Kind = "move"
		case strings.HasPrefix(text, "R "):
			mv.Kind = "row"
		}
		v.Legal = append(v.Legal, mv)
	}
	return v
}

// movePoints lists the points a decision's notation names: the square of
// an Othello or tic-tac-toe move (without a direction), the point of a
// YINSH placement or ring removal, a ring move's from and to, and every
// point of a removed row (its two ends and the three between).
func movePoints(text string) []string {
	f := strings.Fields(text)
	switch {
	case len(f) == 0 || text == "pass":
		return []string{}
	case len(f) == 1:
		square, _, _ := strings.Cut(f[0], ":")
		return []string{square}
	case f[0] == "R" && len(f) == 3:
		a, b := f[1], f[2]
		ca, ra := a[0], atoiRow(a[1:])
		cb, rb := b[0], atoiRow(b[1:])
		var out []string
		for i := 0; i <= 4; i++ {
			c := int(ca) + (int(cb)-int(ca))*i/4
			r := ra + (rb-ra)*i/4
			out = append(out, fmt.Sprintf("%c%d", c, r))
		}
		return out
	}
	return f[1:]
}

func atoiRow(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// boardCells lists the points of the board with their pieces.
func boardCells(st env.State) []cellView {
	var cells []cellView
	switch s := st.(type) {
	case *yinsh.State:
		names := map[byte]string{'W': "white-ring", 'B': "black-ring", 'w': "white-marker", 'b': "black-marker"}
		for _, p := range yinshPoints(s) {
			cells = append(cells, cellView{
				Name: p.name, Col: p.col, Row: p.row, Piece: names[p.piece],
				X: float64(p.col) * math.Sqrt(3) / 2, Y: float64(p.col)/2 - float64(p.row),
			})
		}
	case *othello.State:
		black, white := s.Boards()
		for sq := 0; sq < othello.Squares; sq++ {
			c := cellView{Name: othello.SquareName(sq), Col: sq % 8, Row: sq/8 + 1, X: float64(sq % 8), Y: float64(sq / 8)}
			switch {
			case black>>sq&1 != 0:
				c.Piece = "black"
			case white>>sq&1 != 0:
				c.Piece = "white"
			}
			cells = append(cells, c)
		}
	case *tictactoe.State:
		for cell := 0; cell < tictactoe.Cells; cell++ {
			// Row 3 on top, as the terminal draws it.
			c := cellView{Name: s.Game().FormatAction(cell), Col: cell % 3, Row: cell/3 + 1, X: float64(cell % 3), Y: float64(2 - cell/3)}
			switch {
			case s.Marks(0)&(1<<cell) != 0:
				c.Piece = "black"
			case s.Marks(1)&(1<<cell) != 0:
				c.Piece = "white"
			}
			cells = append(cells, c)
		}
	}
	return cells
}

// scoreText is the running score: discs, rings removed.
func scoreText(st env.State) string {
	switch s := st.(type) {
	case *othello.State:
		b, w := s.Discs()
		return fmt.Sprintf("black %d, white %d", b, w)
	case *yinsh.State:
		return fmt.Sprintf("rings removed: white %d, black %d (of %d)", s.Removed(yinsh.White), s.Removed(yinsh.Black),
			s.Game().(yinsh.Game).RingsToWin())
	}
	return ""
}
