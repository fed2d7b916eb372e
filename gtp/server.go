package gtp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/flipzero/flipzero/env"
)

// Controller is the engine a GTP server speaks for, in the manner of
// lc0's UCI loop: the server parses commands and keeps GTP's conventions,
// the controller plays. Each call blocks until it is done, and the server
// makes one call at a time, so a controller needs no locking of its own.
type Controller interface {
	Game() env.Game
	// State is the current position; the server reads it, never changes it.
	State() env.State
	// NewGame starts again from the start position.
	NewGame() error
	// Play plays a legal action.
	Play(action int) error
	// Undo takes back the last decision, reporting false when there is
	// none.
	Undo() (bool, error)
	// GenMove decides the current position's move and plays it,
	// returning the action and a line about its evaluation for the log.
	GenMove(ctx context.Context) (action int, comment string, err error)
}

// commands are the commands the server knows, in the order list_commands
// gives them.
var commands = [...]string{
	"protocol_version", "name", "version", "known_command", "list_commands", "quit",
	"boardsize", "clear_board", "komi", "play", "genmove", "undo", "showboard",
	"final_score", "time_settings", "time_left",
}

// session is the state of one GTP conversation.
type session struct {
	engine Controller
	log    io.Writer
	// decisions counts the decisions each play or genmove applied (a pass
	// the controller left out, then its move), so that undo takes back
	// exactly one command.
	decisions []int
	legal     []int
}

// Serve answers GTP commands read from in, writing the answers to out and
// a line per generated move to log, until quit or the end of input.
func Serve(ctx context.Context, e Controller, in io.Reader, out, log io.Writer) error {
	sess := &session{engine: e, log: log}
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
			fmt.Fprintf(w, "?%s %s\n\n", id, strings.ReplaceAll(err.Error(), "\n", " "))
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
func (sess *session) handle(ctx context.Context, command string, args []string) (string, error) {
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
		for _, c := range commands {
			if c == args[0] {
				return "true", nil
			}
		}
		return "false", nil
	case "list_commands":
		return strings.Join(commands[:], "\n"), nil
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
		p, err := env.ParsePlayer(g, args[0])
		if err != nil {
			return "", fmt.Errorf("syntax error: %w", err)
		}
		return "", sess.play(p, strings.Join(args[1:], " "))
	case "genmove":
		if len(args) != 1 {
			return "", errors.New("syntax error: genmove COLOR")
		}
		p, err := env.ParsePlayer(g, args[0])
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
		text := s.String()
		if d, ok := s.(env.Display); ok {
			text = d.Picture()
		}
		// Say who decides, unless the picture says who moves already.
		if mover := g.PlayerName(s.ToMove()); !s.Terminal() && !strings.Contains(text, mover+" to move") {
			text += fmt.Sprintf("%s to decide\n", mover)
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
func (sess *session) catchUp(p env.Player) (int, error) {
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

func (sess *session) play(p env.Player, move string) error {
	e := sess.engine
	passes, err := sess.catchUp(p)
	if err != nil {
		return err
	}
	if e.State().Terminal() {
		sess.undoPasses(passes)
		return errors.New("the game is over")
	}
	text := env.AnyCase(e.Game(), move)
	if _, err := e.Game().ParseAction(text); err != nil {
		// GTP tells a move it cannot read from a legal-looking one that
		// the rules forbid.
		sess.undoPasses(passes)
		return fmt.Errorf("syntax error: %w", err)
	}
	action, err := env.ParseLegal(e.State(), text)
	if err == nil {
		err = e.Play(action)
	}
	if err != nil {
		sess.undoPasses(passes)
		return fmt.Errorf("illegal move: %w", err)
	}
	sess.decisions = append(sess.decisions, passes+1)
	return nil
}

func (sess *session) undoPasses(n int) {
	for i := 0; i < n; i++ {
		sess.engine.Undo()
	}
}

func (sess *session) genmove(ctx context.Context, p env.Player) (string, error) {
	e := sess.engine
	passes, err := sess.catchUp(p)
	if err != nil {
		return "", err
	}
	if e.State().Terminal() {
		sess.undoPasses(passes)
		return "", errors.New("the game is over")
	}
	mover := e.State().ToMove()
	a, comment, err := e.GenMove(ctx)
	if err != nil {
		sess.undoPasses(passes)
		return "", err
	}
	sess.decisions = append(sess.decisions, passes+1)
	move := e.Game().FormatAction(a)
	fmt.Fprintf(sess.log, "flipzero: %s %s — %s\n", e.Game().PlayerName(mover), move, comment)
	return strings.ToUpper(move), nil
}

// finalScore is the score in GTP's form, B+n, W+n or 0, from the game's
// Tally; a game without one scores its result, a point for the winner.
func finalScore(s env.State) string {
	var first, second int
	if t, ok := s.(env.Tally); ok {
		first, second = t.Tally()
	} else if s.Terminal() {
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
