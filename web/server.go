// Package web serves a game against the engine as a page to play in a
// browser (SVG boards drawn from each game's cells, click to move) over a
// small JSON API (package play's requests) that refuses malformed or
// illegal requests with a 4xx status and changes nothing then; writes the
// same page as a folder that plays with no server, the engine compiled to
// WebAssembly inside it (export.go); and serves a training run's live
// page (run.go), which follows the run's folder while the loop writes it.
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
	"time"

	"github.com/flipzero/flipzero/engine"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/web/play"
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
// and a JSON API: the requests of package play over HTTP.
type Game struct {
	session *play.Session
}

// NewGame starts a game against e with the person playing human.
func NewGame(e *engine.Engine, human env.Player) (*Game, error) {
	return NewNetworkGame(e, human, nil)
}

// NewNetworkGame is NewGame whose page says what network it plays
// (network: nil for nothing).
func NewNetworkGame(e *engine.Engine, human env.Player, network *play.Network) (*Game, error) {
	s, err := play.New(e, human, network)
	if err != nil {
		return nil, err
	}
	return &Game{session: s}, nil
}

// Continue serves the game e is playing, from its current position (set
// up from a record, say), with the person playing human.
func Continue(e *engine.Engine, human env.Player) (*Game, error) {
	s, err := play.Continue(e, human, nil)
	if err != nil {
		return nil, err
	}
	return &Game{session: s}, nil
}

// Handler serves the page and its API.
func (g *Game) Handler() http.Handler {
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
	// The page asks first who answers it: this server.
	mux.HandleFunc("GET /"+play.PageFile, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, play.Page{Engine: play.EngineServer})
	})
	mux.HandleFunc("/api/", g.api)
	return mux
}

// api answers a request of the page's API: the session's answer as
// JSON, or {"error": …} with a 4xx status.
func (g *Game) api(w http.ResponseWriter, r *http.Request) {
	var body []byte
	if r.Method == http.MethodPost {
		var err error
		body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, play.MaxRequestBody))
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeJSON(w, http.StatusRequestEntityTooLarge, map[string]string{"error": "request body too large"})
			return
		}
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "reading the request: " + err.Error()})
			return
		}
	}
	method := r.Method
	if method == http.MethodHead {
		method = http.MethodGet
	}
	a := g.session.Do(r.Context(), method, r.URL.Path, body)
	writeJSON(w, a.Status, a.Body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// resultText says how a finished game ended, as the play page says it.
func resultText(s env.State) string { return play.ResultText(s) }
