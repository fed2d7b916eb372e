package play

import (
	"fmt"
	"strings"
	"time"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/nn"
)

// View is everything the page draws.
type View struct {
	Game  string `json:"game"`
	Board string `json:"board"` // "square" or "hex"
	Human string `json:"human"`
	Bot   string `json:"bot"`
	// Solo: a one-player game, which the person plays alone, the bot
	// advising (hint) or playing a decision for them (POST api/bot).
	Solo bool `json:"solo"`
	// ToMove is the side to decide, YourTurn whether that is the person.
	ToMove   string   `json:"toMove"`
	YourTurn bool     `json:"yourTurn"`
	Prompt   string   `json:"prompt"`
	Over     bool     `json:"over"`
	Result   string   `json:"result"`
	Score    string   `json:"score"`
	Cells    []Cell   `json:"cells"`
	Legal    []Move   `json:"legal"`
	History  []string `json:"history"`
	// Record is the game so far as "flipzero convert" prints a record:
	// the moves separated by ";", a tab, the outcome ("black", "white",
	// "draw", "score N", or "unfinished"), a tab, the game's name.
	Record string `json:"record"`
	// Last lists the points of the last decision, to mark them.
	Last    []string `json:"last"`
	Replies []Reply  `json:"replies"`
	Hint    *Reply   `json:"hint,omitempty"`
	// Strength is how hard the bot thinks, Search how it searches.
	Strength Strength `json:"strength"`
	Search   string   `json:"search"`
	// Network is what the page says of the bot's network, if known.
	Network *Network `json:"network,omitempty"`
}

// Cell is one point of the board: its name, where to draw it (board
// units: squares are 1 apart, YINSH points 1 apart along lines), its grid
// coordinates and what stands on it.
type Cell = env.Cell

// Move is one legal decision and the points a click picks it by: one
// point (a disc, a placement, a ring removal), a ring's from and to, or
// the points of a row.
type Move struct {
	Move   string   `json:"move"`
	Kind   string   `json:"kind"` // point, move, row, pass
	Points []string `json:"points"`
}

// Strength is how hard the bot thinks: playouts a decision, or seconds
// a decision when Seconds is more than 0.
type Strength struct {
	Playouts int     `json:"playouts"`
	Seconds  float64 `json:"seconds"`
}

// Network is what a page says of the network it plays: which game, how
// far it trained, how large it is, when it was made.
type Network struct {
	Game string `json:"game"`
	// Generation is the run's generation it comes from, if known.
	Generation string `json:"generation,omitempty"`
	Blocks     int    `json:"blocks"`
	Filters    int    `json:"filters"`
	Parameters int64  `json:"parameters"`
	// Steps are the training steps behind it.
	Steps int64 `json:"steps"`
	// Created is when the file was written (RFC 3339), if known.
	Created string `json:"created,omitempty"`
}

// Text describes the network in a line.
func (n Network) Text() string {
	var b strings.Builder
	b.WriteString(n.Game + " network")
	if n.Generation != "" {
		b.WriteString(", generation " + n.Generation)
	}
	fmt.Fprintf(&b, ", %d×%d (%d blocks of %d filters, %d parameters), %d training steps", n.Filters, n.Blocks, n.Blocks, n.Filters, n.Parameters, n.Steps)
	if n.Created != "" {
		b.WriteString(", made " + n.Created[:min(len(n.Created), len("2006-01-02"))])
	}
	return b.String()
}

func (s *Session) view() View {
	e := s.engine
	g := e.Game()
	st := e.State()
	d, drawn := st.(env.Display)
	opts := e.Options()
	v := View{
		Game: g.Name(), Board: "square",
		Human: g.PlayerName(s.human), Bot: g.PlayerName(s.human.Other()), Solo: env.Players(g) == 1,
		Over: st.Terminal(), Cells: []Cell{}, Legal: []Move{}, History: []string{}, Last: []string{},
		Replies:  append([]Reply{}, s.replies...),
		Strength: Strength{Playouts: opts.Playouts, Seconds: opts.MoveTime.Seconds()},
		Search:   SearchText(opts.Search.ActingOn(g)),
		Network:  s.network,
	}
	if opts.MoveTime > 0 {
		v.Strength.Playouts = 0
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
	v.Record = env.Record{Game: g.Name(), Moves: v.History, Outcome: outcome(st)}.Line()
	if st.Terminal() {
		v.Result = ResultText(st)
		return v
	}
	v.ToMove = g.PlayerName(st.ToMove())
	v.YourTurn = st.ToMove() == s.human
	v.Prompt = decisionText(st, &s.legal)
	for _, a := range st.LegalActions(s.legal) {
		kind, points := targets(a)
		v.Legal = append(v.Legal, Move{Move: g.FormatAction(a), Kind: kind, Points: points})
	}
	return v
}

// outcome is a record's outcome: the winner's name, "draw", a one-player
// game's "score N", or "unfinished".
func outcome(s env.State) string {
	switch {
	case !s.Terminal():
		return "unfinished"
	case isScored(s):
		return fmt.Sprintf("score %g", s.(env.Scorer).Score())
	case s.Winner() == env.NoPlayer:
		return "draw"
	}
	return s.Game().PlayerName(s.Winner())
}

func isScored(s env.State) bool {
	_, ok := s.(env.Scorer)
	return ok
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

// ResultText says how a finished game ended: a one-player game by its
// score.
func ResultText(s env.State) string {
	if sc, ok := s.(env.Scorer); ok {
		return fmt.Sprintf("score %g of %g", sc.Score(), sc.MaxScore())
	}
	if w := s.Winner(); w != env.NoPlayer {
		return s.Game().PlayerName(w) + " wins"
	}
	return "a draw"
}

// NetworkOf describes a network as a page shows it: f its inference
// snapshot, steps the training steps behind it, created when it was
// saved (zero if unknown), generation the run's generation ("" if
// unknown).
func NetworkOf(f *nn.Folded, steps int64, created time.Time, generation string) *Network {
	l := f.Layers()
	n := &Network{
		Game: f.Game().Name(), Generation: generation,
		Blocks: f.Config().Blocks, Filters: f.Config().Filters,
		Parameters: int64(l.Parameters()), Steps: steps,
	}
	if !created.IsZero() {
		n.Created = created.UTC().Format(time.RFC3339)
	}
	return n
}
