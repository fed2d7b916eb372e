package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/env/yinsh"
	"github.com/flipzero/flipzero/selfplay"
)

func runGTP(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("gtp", "gtp --model FILE [--playouts N | --seconds S]\n\n"+
		"Plays the model as an engine speaking the Go Text Protocol on standard input\n"+
		"and output, as Othello GUIs and engines use it: moves like F5 and PASS; for\n"+
		"YINSH, moves in flipzero's notation (P E5, M E5 E9, R C4 G4, X K8, PASS), one\n"+
		"decision per genmove. The evaluation of each genmove goes to standard error.", io.out)
	ef := addEngineFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	e, err := ef.engine()
	if err != nil {
		return err
	}
	return serveGTP(ctx, e, io.in, io.out, io.err)
}

// gtpCommands are the commands the engine knows, in the order
// list_commands gives them.
var gtpCommands = []string{
	"protocol_version", "name", "version", "known_command", "list_commands", "quit",
	"boardsize", "clear_board", "komi", "play", "genmove", "undo", "showboard",
	"final_score", "time_settings", "time_left",
}

// gtpSession is the state of one GTP conversation.
type gtpSession struct {
	engine *selfplay.Engine
	log    io.Writer
	// decisions counts the decisions each play or genmove applied (a pass
	// the controller left out, then its move), so that undo takes back
	// exactly one command.
	decisions []int
	legal     []int
}

// serveGTP answers GTP commands from in until quit or the end of input.
func serveGTP(ctx context.Context, e *selfplay.Engine, in io.Reader, out, log io.Writer) error {
	sess := &gtpSession{engine: e, log: log}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 4096), 1<<20)
	w := bufio.NewWriter(out)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(strings.Map(func(r rune) rune {
			if r < ' ' && r != '\t' || r == 127 {
				return -1 // GTP drops control characters
			}
			return r
		}, line))
		if len(fields) == 0 {
			continue
		}
		id := ""
		if _, err := strconv.ParseUint(fields[0], 10, 32); err == nil {
			id, fields = fields[0], fields[1:]
			if len(fields) == 0 {
				continue
			}
		}
		command := strings.ToLower(fields[0])
		answer, err := sess.handle(ctx, command, fields[1:])
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			fmt.Fprintf(w, "?%s %s\n\n", id, oneLine(err))
		} else {
			fmt.Fprintf(w, "=%s %s\n\n", id, answer)
		}
		if err := w.Flush(); err != nil {
			return fmt.Errorf("gtp: %w", err)
		}
		if command == "quit" {
			return nil
		}
	}
	return sc.Err()
}

// handle runs one command and returns its answer's text.
func (sess *gtpSession) handle(ctx context.Context, command string, args []string) (string, error) {
	e := sess.engine
	g := e.Game()
	switch command {
	case "protocol_version":
		return "2", nil
	case "name":
		return "flipzero", nil
	case "version":
		return "1 (" + g.Name() + ")", nil
	case "known_command":
		if len(args) != 1 {
			return "", errors.New("known_command takes one command name")
		}
		for _, c := range gtpCommands {
			if c == args[0] {
				return "true", nil
			}
		}
		return "false", nil
	case "list_commands":
		return strings.Join(gtpCommands, "\n"), nil
	case "quit":
		return "", nil
	case "komi", "time_settings", "time_left":
		// Accepted for GUIs that send them; the strength is set on the
		// command line.
		return "", nil
	case "boardsize":
		if len(args) != 1 {
			return "", errors.New("boardsize takes one number")
		}
		if n, err := strconv.Atoi(args[0]); err != nil || n != boardSize(g) {
			return "", fmt.Errorf("unacceptable size: %s plays on %d only", g.Name(), boardSize(g))
		}
		return "", nil
	case "clear_board":
		sess.decisions = sess.decisions[:0]
		return "", e.NewGame()
	case "play":
		if len(args) < 2 {
			return "", errors.New("syntax error: play COLOR MOVE")
		}
		p, err := sideFlag(g, args[0])
		if err != nil {
			return "", fmt.Errorf("syntax error: %w", err)
		}
		return "", sess.play(p, strings.Join(args[1:], " "))
	case "genmove":
		if len(args) != 1 {
			return "", errors.New("syntax error: genmove COLOR")
		}
		p, err := sideFlag(g, args[0])
		if err != nil {
			return "", fmt.Errorf("syntax error: %w", err)
		}
		return sess.genmove(ctx, p)
	case "undo":
		if len(sess.decisions) == 0 {
			return "", errors.New("cannot undo")
		}
		n := sess.decisions[len(sess.decisions)-1]
		sess.decisions = sess.decisions[:len(sess.decisions)-1]
		for i := 0; i < n; i++ {
			if _, err := e.Undo(); err != nil {
				return "", err
			}
		}
		return "", nil
	case "showboard":
		s := e.State()
		text := drawBoard(s)
		if !s.Terminal() {
			text += fmt.Sprintf("%s to decide\n", g.PlayerName(s.ToMove()))
		}
		return "\n" + strings.TrimRight(text, "\n"), nil
	case "final_score":
		return finalScore(e.State()), nil
	}
	return "", errors.New("unknown command")
}

// boardSize is the size boardsize accepts: the side of the square
// boards, the 11 columns of YINSH.
func boardSize(g env.Game) int {
	_, h, _ := g.EncodedShape()
	return h
}

// catchUp passes for the player to move when the command is for p and
// the player to move can only pass: GTP controllers of Othello leave
// passes out. It returns the number of passes played.
func (sess *gtpSession) catchUp(p env.Player) (int, error) {
	e := sess.engine
	s := e.State()
	if s.Terminal() {
		return 0, errors.New("the game is over")
	}
	if s.ToMove() == p {
		return 0, nil
	}
	sess.legal = s.LegalActions(sess.legal)
	if len(sess.legal) == 1 && e.Game().FormatAction(sess.legal[0]) == "pass" {
		if err := e.Play(sess.legal[0]); err != nil {
			return 0, err
		}
		return 1, nil
	}
	return 0, fmt.Errorf("it is %s's turn", e.Game().PlayerName(s.ToMove()))
}

func (sess *gtpSession) play(p env.Player, move string) error {
	e := sess.engine
	passes, err := sess.catchUp(p)
	if err != nil {
		return err
	}
	if e.State().Terminal() {
		sess.undoPasses(passes)
		return errors.New("the game is over")
	}
	if _, err := e.PlayMove(playerMove(e.Game(), move)); err != nil {
		sess.undoPasses(passes)
		return fmt.Errorf("illegal move: %w", err)
	}
	sess.decisions = append(sess.decisions, passes+1)
	return nil
}

func (sess *gtpSession) undoPasses(n int) {
	for i := 0; i < n; i++ {
		sess.engine.Undo()
	}
}

func (sess *gtpSession) genmove(ctx context.Context, p env.Player) (string, error) {
	e := sess.engine
	passes, err := sess.catchUp(p)
	if err != nil {
		return "", err
	}
	if e.State().Terminal() {
		sess.undoPasses(passes)
		return "", errors.New("the game is over")
	}
	a, err := e.GenMove(ctx)
	if err != nil {
		sess.undoPasses(passes)
		return "", err
	}
	sess.decisions = append(sess.decisions, passes+1)
	fmt.Fprintf(sess.log, "flipzero: %s %s — %s\n", e.Game().PlayerName(a.Mover), a.Move, evaluationText(e.Game(), a))
	return strings.ToUpper(a.Move), nil
}

// finalScore is the score in GTP's form: B+n, W+n or 0, counted as each
// game counts: Othello discs (empty squares to the winner when the game
// is over), YINSH rings removed, tic-tac-toe one point for the line.
func finalScore(s env.State) string {
	var first, second int
	switch s := s.(type) {
	case *othello.State:
		first, second = s.Discs()
		if s.Terminal() {
			first, second = s.FinalScore()
		}
	case *yinsh.State:
		first, second = s.Removed(yinsh.White), s.Removed(yinsh.Black)
	case *tictactoe.State:
		switch s.Winner() {
		case 0:
			first = 1
		case 1:
			second = 1
		}
	}
	g := s.Game()
	switch {
	case first > second:
		return fmt.Sprintf("%c+%d", strings.ToUpper(g.PlayerName(0))[0], first-second)
	case second > first:
		return fmt.Sprintf("%c+%d", strings.ToUpper(g.PlayerName(1))[0], second-first)
	}
	if s.Terminal() && s.Winner() != env.NoPlayer {
		// A tie won by rule: seed Reversi gives it to the second player.
		return fmt.Sprintf("%c+0", strings.ToUpper(g.PlayerName(s.Winner()))[0])
	}
	return "0"
}
