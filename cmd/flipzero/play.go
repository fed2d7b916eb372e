package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/yinsh"
	"github.com/flipzero/flipzero/selfplay"
)

// engineFlags are the flags of the commands that play a model.
type engineFlags struct {
	model    *string
	playouts *int
	seconds  *float64
}

func addEngineFlags(fs *flagSet) engineFlags {
	return engineFlags{
		model:    fs.String("model", "", "model file (from flipzero export) or checkpoint"),
		playouts: fs.Int("playouts", 400, "search playouts per decision"),
		seconds:  fs.Float64("seconds", 0, "search time per decision in seconds, instead of --playouts"),
	}
}

// engine loads the model into an engine with the strength asked for.
func (f engineFlags) engine() (*selfplay.Engine, error) {
	if *f.model == "" {
		return nil, usagef("--model is required")
	}
	if *f.seconds < 0 || math.IsNaN(*f.seconds) || *f.seconds > 24*3600 {
		return nil, usagef("--seconds must be between 0 and a day, got %v", *f.seconds)
	}
	opts := selfplay.EngineOptions{Playouts: *f.playouts, MoveTime: time.Duration(*f.seconds * float64(time.Second))}
	if opts.MoveTime == 0 && opts.Playouts < 1 {
		return nil, usagef("--playouts must be at least 1, got %d", opts.Playouts)
	}
	e, err := selfplay.NewModelEngine(*f.model, opts)
	if err != nil {
		return nil, usageError{err}
	}
	return e, nil
}

// sideFlag reads a side by the game's name for it.
func sideFlag(g env.Game, name string) (env.Player, error) {
	for _, p := range []env.Player{0, 1} {
		if strings.EqualFold(name, g.PlayerName(p)) || (len(name) == 1 && strings.EqualFold(name, g.PlayerName(p)[:1])) {
			return p, nil
		}
	}
	return 0, fmt.Errorf("unknown side %q: %s plays %s and %s", name, g.Name(), g.PlayerName(0), g.PlayerName(1))
}

func runPlay(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("play", "play --model FILE [--as SIDE] [--playouts N | --seconds S]\n\n"+
		"A game against the model in the terminal. Type moves in the game's notation,\n"+
		"or: undo (take back your last move), hint (the model's advice), moves (the\n"+
		"legal moves), resign, quit.", io.out)
	ef := addEngineFlags(fs)
	as := fs.String("as", "", "your side: black or white (default: the side that moves first)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	e, err := ef.engine()
	if err != nil {
		return err
	}
	g := e.Game()
	human := env.Player(0)
	if *as != "" {
		if human, err = sideFlag(g, *as); err != nil {
			return usageError{err}
		}
	}
	p := &terminalGame{engine: e, human: human, out: io.out, in: bufio.NewScanner(io.in)}
	return p.run(ctx)
}

// terminalGame is a game of play: the person types, the engine answers.
type terminalGame struct {
	engine *selfplay.Engine
	human  env.Player
	out    io.Writer
	in     *bufio.Scanner
	legal  []int
}

func (p *terminalGame) printf(format string, args ...any) { fmt.Fprintf(p.out, format, args...) }

func (p *terminalGame) run(ctx context.Context) error {
	e := p.engine
	g := e.Game()
	p.printf("flipzero plays %s as %s; you are %s. Type a move, or help.\n",
		g.Name(), g.PlayerName(p.human.Other()), g.PlayerName(p.human))
	showBoard := true
	for {
		s := e.State()
		if showBoard {
			p.printf("\n%s", drawBoard(s))
		}
		showBoard = true
		if s.Terminal() {
			p.printf("Game over: %s.\n", resultText(s))
			return nil
		}
		if s.ToMove() != p.human {
			a, err := e.GenMove(ctx)
			if err != nil {
				return err
			}
			p.printf("flipzero (%s) plays %s — %s\n", g.PlayerName(a.Mover), a.Move, evaluationText(g, a))
			continue
		}
		p.printf("%s, %s: ", g.PlayerName(p.human), decisionText(s, &p.legal))
		if !p.in.Scan() {
			p.printf("\n")
			return p.in.Err()
		}
		line := strings.TrimSpace(p.in.Text())
		switch strings.ToLower(line) {
		case "":
			showBoard = false
		case "quit", "exit":
			return nil
		case "help", "?":
			p.printf("Type a move in %s notation (e.g. %s), or: undo, hint, moves, resign, quit.\n",
				g.Name(), g.FormatAction(s.LegalActions(p.legal)[0]))
			showBoard = false
		case "moves":
			p.printf("legal: %s\n", legalText(s, &p.legal, 0))
			showBoard = false
		case "hint":
			a, err := e.Analyze(ctx)
			if err != nil {
				return err
			}
			p.printf("hint: %s — %s\n", a.Move, evaluationText(g, a))
			showBoard = false
		case "undo":
			if !p.undo() {
				p.printf("nothing to undo\n")
				showBoard = false
			}
		case "resign":
			p.printf("You resign: %s wins.\n", g.PlayerName(p.human.Other()))
			return nil
		default:
			if _, err := e.PlayMove(playerMove(g, line)); err != nil {
				p.printf("%v. Legal: %s. Try again.\n", err, legalText(s, &p.legal, 24))
				showBoard = false
			}
		}
	}
}

// undo takes back the person's last decision and every answer of the
// engine after it; false when the person has made no decision yet.
func (p *terminalGame) undo() bool {
	e := p.engine
	s := e.Game().NewState()
	last := -1
	for i, a := range e.History() {
		if s.ToMove() == p.human {
			last = i
		}
		s.Apply(a)
	}
	if last < 0 {
		return false
	}
	for len(e.History()) > last {
		e.Undo()
	}
	return true
}

// playerMove accepts a move typed in any case: "f5", "F5", "m e5 e9".
func playerMove(g env.Game, text string) string {
	for _, t := range []string{text, strings.ToLower(text), strings.ToUpper(text)} {
		if t == "PASS" {
			continue
		}
		if _, err := g.ParseAction(t); err == nil {
			return t
		}
	}
	return text
}

// decisionText says what the player to move is to decide.
func decisionText(s env.State, buf *[]int) string {
	*buf = s.LegalActions(*buf)
	if len(*buf) == 1 && s.Game().FormatAction((*buf)[0]) == "pass" {
		return "you must pass (type pass)"
	}
	if _, ok := s.(*yinsh.State); ok {
		switch s.Game().FormatAction((*buf)[0])[0] {
		case 'P':
			return "place a ring (P E5)"
		case 'M':
			return "move a ring (M E5 E9)"
		case 'R':
			return "remove a row (R C4 G4)"
		case 'X':
			return "remove one of your rings (X K8)"
		}
	}
	return "your move"
}

// legalText lists the legal moves, at most limit of them (0: all).
func legalText(s env.State, buf *[]int, limit int) string {
	*buf = s.LegalActions(*buf)
	var moves []string
	for i, a := range *buf {
		if limit > 0 && i == limit {
			moves = append(moves, fmt.Sprintf("… (%d in all; type moves)", len(*buf)))
			break
		}
		moves = append(moves, s.Game().FormatAction(a))
	}
	return strings.Join(moves, ", ")
}

// evaluationText is the engine's view after a search: the value for the
// side that searched, as a score in [-1, 1] and a rough win chance.
func evaluationText(g env.Game, a selfplay.Analysis) string {
	return fmt.Sprintf("eval %+.2f for %s (~%.0f%%), %d playouts in %.1f s",
		a.Value, g.PlayerName(a.Mover), 50*(1+float64(a.Value)), a.Playouts, a.Elapsed.Seconds())
}

// resultText says how a finished game ended.
func resultText(s env.State) string {
	if w := s.Winner(); w != env.NoPlayer {
		return s.Game().PlayerName(w) + " wins"
	}
	return "a draw"
}

// drawBoard draws a position for the terminal with its coordinates:
// YINSH as its hexagonal grid, the square games as their own drawing.
func drawBoard(s env.State) string {
	if ys, ok := s.(*yinsh.State); ok {
		return drawHex(ys)
	}
	return s.String()
}

// hexPoint is a YINSH point and what stands on it.
type hexPoint struct {
	name     string
	col, row int  // column 0..10 for A..K, row 1..11
	piece    byte // W, B rings; w, b markers; 0 empty
}

// yinshPoints lists the 85 points with their pieces, read from the
// position's encoding (planes of own and opponent rings and markers, cell
// (row−1)·11 + column).
func yinshPoints(s *yinsh.State) []hexPoint {
	enc := make([]float32, yinsh.Planes*yinsh.GridSize*yinsh.GridSize)
	s.Encode(enc)
	plane := yinsh.GridSize * yinsh.GridSize
	own := s.Game().PlayerName(s.ToMove())[0]
	opp := s.Game().PlayerName(s.ToMove().Other())[0]
	pieces := [4]byte{own - 'a' + 'A', opp - 'a' + 'A', own, opp}
	var out []hexPoint
	for col := 0; col < 11; col++ {
		for row := 1; row <= 11; row++ {
			name := fmt.Sprintf("%c%d", 'A'+col, row)
			if _, err := yinsh.ParsePoint(name); err != nil {
				continue
			}
			pt := hexPoint{name: name, col: col, row: row}
			cell := (row-1)*yinsh.GridSize + col
			for k := range pieces {
				if enc[k*plane+cell] != 0 {
					pt.piece = pieces[k]
				}
			}
			out = append(out, pt)
		}
	}
	return out
}

// drawHex draws the YINSH board as its hexagon: columns are vertical, and
// a point (column c, row r) is drawn 4c characters across and c − 2r
// half-lines down, so that the three directions of lines are about 60°
// apart. Column letters run above and below; each row's number stands at
// both of its ends.
func drawHex(s *yinsh.State) string {
	points := yinshPoints(s)
	const top, margin = 20, 4
	const height, width = top + 6, 4*11 + margin + 3
	grid := make([][]byte, height)
	for i := range grid {
		grid[i] = []byte(strings.Repeat(" ", width))
	}
	put := func(line, x int, text string) {
		copy(grid[line][x:], text)
	}
	left, right := map[int]hexPoint{}, map[int]hexPoint{}
	for _, p := range points {
		symbol := "."
		if p.piece != 0 {
			symbol = string(p.piece)
		}
		put(p.col-2*p.row+top, 4*p.col+margin, symbol)
		if l, ok := left[p.row]; !ok || p.col < l.col {
			left[p.row] = p
		}
		if r, ok := right[p.row]; !ok || p.col > r.col {
			right[p.row] = p
		}
	}
	for col := 0; col < 11; col++ {
		letter := string(rune('A' + col))
		put(0, 4*col+margin, letter)
		put(height-1, 4*col+margin, letter)
	}
	for row := 1; row <= 11; row++ {
		l, r := left[row], right[row]
		put(l.col-2*l.row+top, 4*l.col+margin-3, fmt.Sprintf("%2d", row))
		put(r.col-2*r.row+top, 4*r.col+margin+2, fmt.Sprintf("%d", row))
	}
	var b strings.Builder
	for _, line := range grid {
		if t := strings.TrimRight(string(line), " "); t != "" {
			b.WriteString(t)
			b.WriteByte('\n')
		}
	}
	g := s.Game().(yinsh.Game)
	fmt.Fprintf(&b, "W B rings, w b markers. Rings removed: white %d, black %d (of %d); markers left %d\n",
		s.Removed(yinsh.White), s.Removed(yinsh.Black), g.RingsToWin(), s.Supply())
	return b.String()
}
