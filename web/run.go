package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/flipzero/flipzero/arena"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/runfolder"
)

// Run serves a training run's folder as a live page: its curves, the
// generation in progress, its matches and its recent self-play games to
// replay. It only reads the folder, never locks it: the loop writes each
// file whole under a temporary name and renames it into place, so every
// read sees an old file or a new one.
type Run struct {
	dir       runfolder.Folder
	games     Games
	summarize Summarizer
	// Poll is how often the event stream looks for changed files.
	Poll time.Duration
	// Check, when set, says the signs of the run going wrong that its
	// metrics show, and the page shows them.
	Check Checker
}

// Games finds a game by its registry name (env/games).
type Games interface {
	ByName(name string) (env.Game, error)
}

// Summarizer reads a run's config.yaml for its page: the game it plays,
// and the settings a person looks for first as name and value, or why
// the config is not one (loop.Summary is the training loop's).
type Summarizer func(config []byte) (game string, settings [][2]string, err error)

// Checker reads a run's metrics file and says, a sentence each, the
// signs of the run going wrong that its numbers show (loop.RunChecks is
// the training loop's).
type Checker func(metricsPath string) ([]string, error)

// Bounds on what the page reads from a run folder, whose files may come
// from elsewhere: a metrics file of a hundred thousand generations, the
// newest matches, the games of a generation.
const (
	maxMetricsBytes = 64 << 20
	maxMatchesBytes = 16 << 20
	maxConfigBytes  = 1 << 20
	maxStatusBytes  = 1 << 16
	maxGamesBytes   = 32 << 20
	maxGamesListed  = 2000
	maxPlies        = 10000
	matchesShown    = 200
	recordedShown   = 200
)

// NewRun opens the run in dir; games resolves the games its records
// play and summarize reads its config. A folder that is not a run, or
// whose config does not read, is an error.
func NewRun(dir string, games Games, summarize Summarizer) (*Run, error) {
	f := runfolder.Folder(dir)
	if err := f.Check(); err != nil {
		return nil, err
	}
	raw, err := readBounded(f.Config(), maxConfigBytes)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", dir, err)
	}
	if _, _, err := summarize(raw); err != nil {
		return nil, fmt.Errorf("run %s: config %s: %w", dir, f.Config(), err)
	}
	return &Run{dir: f, games: games, summarize: summarize, Poll: time.Second}, nil
}

// Handler serves the run's page alone: the page at /run (and / leads
// there), its assets and its API.
func (r *Run) Handler() http.Handler {
	mux := http.NewServeMux()
	r.register(mux)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, "run", http.StatusFound)
	})
	static, _ := fs.Sub(pageFiles, "static")
	files := http.FileServerFS(static)
	mux.HandleFunc("/", func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			http.Error(w, req.Method+" is not allowed here", http.StatusMethodNotAllowed)
			return
		}
		files.ServeHTTP(w, req)
	})
	mux.HandleFunc("/api/", func(w http.ResponseWriter, req *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such request: " + req.URL.Path})
	})
	return mux
}

// Handler serves the play page at / and the run's page at /run beside
// it; either may be nil (not both), and then the other is served alone.
func Handler(game *Game, run *Run) http.Handler {
	if run == nil {
		return game.Handler()
	}
	if game == nil {
		return run.Handler()
	}
	mux := http.NewServeMux()
	run.register(mux)
	mux.Handle("/", game.Handler())
	return mux
}

// register adds the run's page and API to mux.
func (r *Run) register(mux *http.ServeMux) {
	mux.HandleFunc("GET /run", func(w http.ResponseWriter, req *http.Request) {
		page, err := pageFiles.ReadFile("static/run.html")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(page)
	})
	mux.HandleFunc("GET /run/", func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, "/run", http.StatusMovedPermanently)
	})
	mux.HandleFunc("GET /api/run", func(w http.ResponseWriter, req *http.Request) {
		writeJSON(w, http.StatusOK, r.view())
	})
	mux.HandleFunc("GET /api/run/events", r.events)
	mux.HandleFunc("GET /api/run/games", r.gameList)
	mux.HandleFunc("GET /api/run/game", r.replay)
	for _, path := range []string{"/api/run", "/api/run/events", "/api/run/games", "/api/run/game"} {
		mux.HandleFunc(path, func(w http.ResponseWriter, req *http.Request) {
			writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": req.Method + " " + path + " is not allowed"})
		})
	}
	mux.HandleFunc("/api/run/", func(w http.ResponseWriter, req *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such request: " + req.URL.Path})
	})
}

// runView is everything the page draws but the games.
type runView struct {
	Run      string    `json:"run"`
	Game     string    `json:"game"`
	Settings []setting `json:"settings"`
	Config   string    `json:"config"`
	// Metrics are the generations, oldest first; MetricsSkipped counts
	// lines that were not a generation's metrics.
	// Metrics and Matches are the run's records as the loop wrote them:
	// the page reads their fields.
	Metrics        []json.RawMessage `json:"metrics"`
	MetricsSkipped int               `json:"metricsSkipped"`
	// Matches are the newest matches, oldest first, of MatchesTotal.
	Matches        []json.RawMessage `json:"matches"`
	MatchesTotal   int               `json:"matchesTotal"`
	MatchesSkipped int               `json:"matchesSkipped"`
	// Ratings are Elo ratings fitted to every match of the run's game, as
	// flipzero ratings fits them, strongest first, RatingsAnchor rated 0:
	// how a run whose arena is off is rated from the matches flipzero
	// arena --run adds. RatingsNote says why there are none.
	Ratings       []ratingView `json:"ratings"`
	RatingsAnchor string       `json:"ratingsAnchor"`
	RatingsNote   string       `json:"ratingsNote,omitempty"`
	// Status is the generation in progress, when the loop writes one.
	Status *runStatus `json:"status"`
	// Recorded lists the newest generations whose games are kept.
	Recorded []int `json:"recorded"`
	// Checks are the signs of the run going wrong (Run.Check).
	Checks []string `json:"checks"`
	// Problems are files that could not be read, one line each.
	Problems []string `json:"problems"`
	Now      string   `json:"now"`
}

type ratingView struct {
	Player string  `json:"player"`
	Elo    float64 `json:"elo"`
	Low    float64 `json:"low"`
	High   float64 `json:"high"`
	Games  int     `json:"games"`
}

type setting struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func (r *Run) view() runView {
	v := runView{Run: string(r.dir), Settings: []setting{}, Metrics: []json.RawMessage{},
		Matches: []json.RawMessage{}, Ratings: []ratingView{}, Recorded: []int{}, Checks: []string{}, Problems: []string{}, Now: time.Now().UTC().Format(time.RFC3339Nano)}
	problem := func(err error) { v.Problems = append(v.Problems, err.Error()) }
	raw, err := readBounded(r.dir.Config(), maxConfigBytes)
	if err != nil {
		problem(err)
	} else if game, settings, err := r.summarize(raw); err != nil {
		problem(fmt.Errorf("config: %w", err))
	} else {
		v.Game, v.Config = game, string(raw)
		for _, s := range settings {
			v.Settings = append(v.Settings, setting{s[0], s[1]})
		}
	}
	// A run has no metrics before its first generation ends, and no
	// matches while its arena is off.
	if ms, skipped, err := readLines[metricsKeys](r.dir.Metrics(), maxMetricsBytes); err == nil {
		v.Metrics, v.MetricsSkipped = ms, skipped
	} else if !errors.Is(err, fs.ErrNotExist) {
		problem(err)
	}
	if r.Check != nil {
		if checks, err := r.Check(r.dir.Metrics()); err != nil {
			problem(err)
		} else if checks != nil {
			v.Checks = checks
		}
	}
	if ms, skipped, err := readLines[matchKeys](r.dir.Matches(), maxMatchesBytes); err == nil {
		v.MatchesTotal, v.MatchesSkipped = len(ms), skipped
		v.Matches = ms[max(0, len(ms)-matchesShown):]
		if len(ms) > 0 {
			v.Ratings, v.RatingsAnchor, v.RatingsNote = r.ratings(v.Game)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		problem(err)
	}
	if s, err := r.status(); err != nil {
		problem(err)
	} else {
		v.Status = s
	}
	if gens, err := r.dir.RecordedGenerations(); err != nil {
		problem(err)
	} else if gens != nil {
		v.Recorded = gens[max(0, len(gens)-recordedShown):]
	}
	return v
}

// ratings fits Elo ratings to the run's matches of game (all of them
// where the config did not read), anchored at random where it played,
// else at the newest match's opponent. A log or a fit that fails gives
// no ratings and a note saying why.
func (r *Run) ratings(game string) (ratings []ratingView, anchor, note string) {
	records, _, err := arena.ReadMatches(r.dir.Matches())
	if err != nil {
		return []ratingView{}, "", err.Error()
	}
	if game != "" {
		records = slices.DeleteFunc(records, func(m arena.MatchRecord) bool { return m.Game != game })
	}
	if len(records) == 0 {
		return []ratingView{}, "", "no match of " + game + " to rate"
	}
	anchor = arena.Anchor(records, records[len(records)-1].B)
	fitted, err := arena.FitRatings(arena.Matches(records), anchor)
	if err != nil {
		return []ratingView{}, anchor, err.Error()
	}
	ratings = make([]ratingView, len(fitted))
	for i, f := range fitted {
		ratings[i] = ratingView{Player: f.Player, Elo: f.Elo, Low: f.Low, High: f.High, Games: f.Games}
	}
	return ratings, anchor, ""
}

// runStatus is the loop's status as the page gets it, with what the
// server tells from it.
type runStatus struct {
	runfolder.Status
	// Silent: the loop has written nothing for several heartbeats and
	// never said it stopped: killed, crashed, or its machine gone.
	Silent bool `json:"silent,omitempty"`
}

// status reads the status file: nil when the loop has written none.
func (r *Run) status() (*runStatus, error) {
	raw, err := readBounded(r.dir.Status(), maxStatusBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s runfolder.Status
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	return &runStatus{Status: s, Silent: s.Silent(time.Now())}, nil
}

// statusView is the status event: the status changes every second while
// a generation plays, and the metrics only at its end, so the stream
// sends the small part alone.
type statusView struct {
	Status *runStatus `json:"status"`
	Now    string     `json:"now"`
}

// readBounded reads a file, refusing one larger than limit.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(raw)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return raw, nil
}

// readLines reads a JSON-lines record file of the run, its newest
// limit bytes, under the run folder's policy for record files: a line is
// kept, as the loop wrote it, where it is a JSON object whose key fields
// (K's) have their types.
func readLines[K any](path string, limit int64) (out []json.RawMessage, skipped int, err error) {
	return runfolder.ReadRecords(path, limit, runfolder.End, func(line []byte) (json.RawMessage, error) {
		if _, err := runfolder.JSONRecord[K](line); err != nil {
			return nil, err
		}
		return json.RawMessage(bytes.Clone(line)), nil
	})
}

// The key fields of the run's records that the page reads.
type (
	metricsKeys struct {
		Generation int `json:"generation"`
	}
	matchKeys struct {
		A      string `json:"a"`
		B      string `json:"b"`
		Wins   int    `json:"wins"`
		Draws  int    `json:"draws"`
		Losses int    `json:"losses"`
	}
)

// shutdownKey marks the request contexts of Serve's server with the
// channel that closes when the server is told to stop: an event stream
// never ends on its own, and would hold the shutdown to its time limit.
type shutdownKey struct{}

// events streams the run's view as server-sent events: a "run" event at
// once and whenever a file of the run other than its status changes, a
// "status" event (statusView) when only the status does; the files are
// looked at every r.Poll, and a comment now and then keeps the
// connection alive.
func (r *Run) events(w http.ResponseWriter, req *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "this connection cannot stream events"})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	var stopping <-chan struct{}
	if c, ok := req.Context().Value(shutdownKey{}).(<-chan struct{}); ok {
		stopping = c
	}
	poll := r.Poll
	if poll <= 0 {
		poll = time.Second
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	const keepAlive = 15 * time.Second
	send := func(event string, v any) bool {
		raw, err := json.Marshal(v)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, raw); err != nil {
			return false
		}
		flusher.Flush()
		return true
	}
	var lastFiles, lastStatus string
	lastSent := time.Now()
	for {
		files, status := r.signature()
		// A loop falls silent without touching its status: the flag is
		// part of what changes.
		s, err := r.status()
		status += fmt.Sprint(s != nil && s.Silent)
		if files != lastFiles || status != lastStatus {
			ok := true
			if files != lastFiles || err != nil {
				// A status that does not read goes with the whole view,
				// whose problems report it.
				ok = send("run", r.view())
			} else {
				ok = send("status", statusView{Status: s, Now: time.Now().UTC().Format(time.RFC3339Nano)})
			}
			if !ok {
				return
			}
			lastFiles, lastStatus, lastSent = files, status, time.Now()
		} else if time.Since(lastSent) >= keepAlive {
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
			flusher.Flush()
			lastSent = time.Now()
		}
		select {
		case <-req.Context().Done():
			return
		case <-stopping:
			return
		case <-tick.C:
		}
	}
}

// signature changes whenever a file the view reads changes, the status
// apart from the others: the loop replaces each file whole, so its size
// or modification time moves.
func (r *Run) signature() (files, status string) {
	stamp := func(paths ...string) string {
		var b bytes.Buffer
		for _, path := range paths {
			if info, err := os.Stat(path); err == nil {
				fmt.Fprintf(&b, "%d/%d;", info.Size(), info.ModTime().UnixNano())
			} else {
				b.WriteString("-;")
			}
		}
		return b.String()
	}
	return stamp(r.dir.Config(), r.dir.Metrics(), r.dir.Matches(), r.dir.Games()), stamp(r.dir.Status())
}

// generationParam reads the generation a games request names.
func generationParam(req *http.Request) (int, error) {
	gen, err := strconv.Atoi(req.URL.Query().Get("gen"))
	if err != nil || gen < 0 || gen > 999_999 {
		return 0, fmt.Errorf("want ?gen=N, a generation from 0 to 999999")
	}
	return gen, nil
}

// gameSummary is one game of a generation's list.
type gameSummary struct {
	Index   int    `json:"index"`
	Plies   int    `json:"plies"`
	Outcome string `json:"outcome"`
}

type gameListView struct {
	Generation int           `json:"generation"`
	Games      []gameSummary `json:"games"`
	Skipped    int           `json:"skipped"`
}

func (r *Run) readGames(w http.ResponseWriter, req *http.Request) (int, []runfolder.GameLine, int, bool) {
	gen, err := generationParam(req)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return 0, nil, 0, false
	}
	games, skipped, err := runfolder.ReadGames(r.dir.GameRecords(gen), maxGamesListed, maxGamesBytes)
	if err != nil {
		status := http.StatusInternalServerError
		if errors.Is(err, fs.ErrNotExist) {
			status = http.StatusNotFound
			err = fmt.Errorf("generation %d has no games kept", gen)
		}
		writeJSON(w, status, map[string]string{"error": err.Error()})
		return 0, nil, 0, false
	}
	return gen, games, skipped, true
}

func (r *Run) gameList(w http.ResponseWriter, req *http.Request) {
	gen, games, skipped, ok := r.readGames(w, req)
	if !ok {
		return
	}
	v := gameListView{Generation: gen, Games: make([]gameSummary, len(games)), Skipped: skipped}
	for i, g := range games {
		v.Games[i] = gameSummary{Index: i, Plies: len(g.Moves), Outcome: g.Outcome}
	}
	writeJSON(w, http.StatusOK, v)
}

// replayView is one game replayed by the rules, a frame per position.
type replayView struct {
	Generation int    `json:"generation"`
	Index      int    `json:"index"`
	Game       string `json:"game"`
	Board      string `json:"board"` // "square" or "hex"
	// Cells place the board's points; the frames say what stands where.
	Cells   []env.Cell `json:"cells"`
	Moves   []string   `json:"moves"`
	Frames  []frame    `json:"frames"`
	Outcome string     `json:"outcome"`
	Result  string     `json:"result"`
	// Error is set when a move of the record did not replay: the frames
	// stop before it.
	Error string `json:"error,omitempty"`
}

// frame is the position after a number of moves.
type frame struct {
	Pieces map[string]string `json:"pieces"`
	Last   []string          `json:"last"`
	Score  string            `json:"score"`
	ToMove string            `json:"toMove"`
}

func (r *Run) replay(w http.ResponseWriter, req *http.Request) {
	gen, games, _, ok := r.readGames(w, req)
	if !ok {
		return
	}
	index, err := strconv.Atoi(req.URL.Query().Get("game"))
	if err != nil || index < 0 || index >= len(games) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("want &game=I, I from 0 to %d", len(games)-1)})
		return
	}
	rec := games[index]
	raw, err := readBounded(r.dir.Config(), maxConfigBytes)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
		return
	}
	name, _, err := r.summarize(raw)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "config: " + err.Error()})
		return
	}
	if rec.Game != "" {
		name = rec.Game
	}
	g, err := r.games.ByName(name)
	if err != nil {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, replayGame(g, gen, index, rec))
}

// replayGame plays a record's moves by the rules, stopping at the first
// that does not parse or is not legal.
func replayGame(g env.Game, gen, index int, rec runfolder.GameLine) replayView {
	st := g.NewState()
	v := replayView{Generation: gen, Index: index, Game: g.Name(), Board: "square", Cells: []env.Cell{},
		Moves: []string{}, Outcome: rec.Outcome}
	d, drawn := st.(env.Display)
	if drawn {
		v.Board = d.Layout()
		for _, c := range d.Cells() {
			c.Piece = ""
			v.Cells = append(v.Cells, c)
		}
	}
	v.Frames = append(v.Frames, frameOf(st, nil))
	for i, text := range rec.Moves {
		if i == maxPlies {
			v.Error = fmt.Sprintf("the record is longer than %d moves: the rest is left out", maxPlies)
			break
		}
		if st.Terminal() {
			v.Error = fmt.Sprintf("move %d (%q) comes after the end of the game", i+1, text)
			break
		}
		a, err := g.ParseAction(text)
		if err == nil && !st.IsLegal(a) {
			err = errors.New("not legal here")
		}
		if err != nil {
			v.Error = fmt.Sprintf("move %d (%q): %v", i+1, text, err)
			break
		}
		var last []string
		if d, ok := st.(env.Display); ok && g.FormatAction(a) != "pass" {
			_, last = d.Targets(a)
		}
		st.Apply(a)
		v.Moves = append(v.Moves, g.FormatAction(a))
		v.Frames = append(v.Frames, frameOf(st, last))
	}
	switch {
	case v.Error != "":
		v.Result = "the record does not replay"
	case st.Terminal():
		v.Result = resultText(st)
	case rec.Outcome == "draw":
		v.Result = "a draw, agreed before the end"
	default:
		v.Result = rec.Outcome + " wins by resignation"
	}
	return v
}

func frameOf(st env.State, last []string) frame {
	f := frame{Pieces: map[string]string{}, Last: append([]string{}, last...)}
	if d, ok := st.(env.Display); ok {
		f.Score = d.Status()
		for _, c := range d.Cells() {
			if c.Piece != "" {
				f.Pieces[c.Name] = c.Piece
			}
		}
	}
	if !st.Terminal() {
		f.ToMove = st.Game().PlayerName(st.ToMove())
	}
	return f
}
