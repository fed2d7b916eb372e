// Package terminal plays a game against the engine in a terminal, in the
// game's notation, drawing the board with each game's own picture.
package terminal

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/flipzero/flipzero/engine"
	"github.com/flipzero/flipzero/env"
)

// Play is a game against the engine in a terminal: the board after each
// decision, the person's moves read from in (in the game's notation, in
// any case, or undo, hint, moves, resign, quit), the engine's answers and
// evaluations written to out. It returns at the end of the game or of
// the input.
func Play(ctx context.Context, e *engine.Engine, human env.Player, in io.Reader, out io.Writer) error {
	p := &terminalGame{engine: e, human: human, out: out, in: bufio.NewScanner(in)}
	return p.run(ctx)
}

// terminalGame is a game of play: the person types, the engine answers.
type terminalGame struct {
	engine *engine.Engine
	human  env.Player
	out    io.Writer
	in     *bufio.Scanner
	legal  []int
}

func (p *terminalGame) printf(format string, args ...any) { fmt.Fprintf(p.out, format, args...) }

func (p *terminalGame) run(ctx context.Context) error {
	e := p.engine
	g := e.Game()
	// In a one-player game the person plays and flipzero advises (hint)
	// or plays a move for them (bot); the chance events are dealt.
	solo := env.Players(g) == 1
	if solo {
		p.printf("You play %s; flipzero advises. Type a move, or help.\n", g.Name())
	} else {
		p.printf("flipzero plays %s as %s; you are %s. Type a move, or help.\n",
			g.Name(), g.PlayerName(p.human.Other()), g.PlayerName(p.human))
	}
	showBoard := true
	for {
		s := e.State()
		if env.IsChance(s) {
			played, err := e.Chances()
			if err != nil {
				return err
			}
			names := make([]string, len(played))
			for i, a := range played {
				names[i] = g.FormatAction(a)
			}
			p.printf("chance: %s\n", strings.Join(names, ", "))
			continue
		}
		if showBoard {
			p.printf("\n%s", picture(s))
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
			p.printf("flipzero (%s) plays %s — %s\n", g.PlayerName(a.Mover), a.Move, a.Summary(g))
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
			commands := "undo, hint, moves, resign, quit"
			if solo {
				commands = "undo, hint, bot (flipzero plays your move), moves, resign, quit"
			}
			p.printf("Type a move in %s notation (e.g. %s), or: %s.\n",
				g.Name(), g.FormatAction(s.LegalActions(p.legal)[0]), commands)
			showBoard = false
		case "bot":
			if !solo {
				p.printf("bot plays your move only in a one-player game. Type a move, or help.\n")
				showBoard = false
				break
			}
			a, err := e.GenMove(ctx)
			if err != nil {
				return err
			}
			p.printf("flipzero plays %s — %s\n", a.Move, a.Summary(g))
		case "moves":
			p.printf("legal: %s\n", legalText(s, &p.legal, 0))
			showBoard = false
		case "hint":
			a, err := e.Analyze(ctx)
			if err != nil {
				return err
			}
			p.printf("hint: %s — %s\n", a.Move, a.Summary(g))
			showBoard = false
		case "undo":
			if !p.undo() {
				p.printf("nothing to undo\n")
				showBoard = false
			}
		case "resign":
			if solo {
				p.printf("You stop: %s.\n", scoreText(s))
				return nil
			}
			p.printf("You resign: %s wins.\n", g.PlayerName(p.human.Other()))
			return nil
		default:
			if _, err := e.PlayMove(env.AnyCase(g, line)); err != nil {
				p.printf("%v. Legal: %s. Try again.\n", err, legalText(s, &p.legal, 24))
				showBoard = false
			}
		}
	}
}

// undo takes back the person's last decision and every answer of the
// engine and chance event after it; false when the person has made no
// decision yet.
func (p *terminalGame) undo() bool {
	e := p.engine
	last := e.LastDecision(func(mover env.Player) bool { return mover == p.human })
	if last < 0 {
		return false
	}
	for len(e.History()) > last {
		e.Undo()
	}
	return true
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

// resultText says how a finished game ended.
func resultText(s env.State) string {
	if _, ok := s.(env.Scorer); ok {
		return scoreText(s)
	}
	if w := s.Winner(); w != env.NoPlayer {
		return s.Game().PlayerName(w) + " wins"
	}
	return "a draw"
}

// picture draws a position with its coordinates: the game's own drawing,
// or its String.
func picture(s env.State) string {
	if d, ok := s.(env.Display); ok {
		return d.Picture()
	}
	return s.String()
}

// scoreText is a one-player game's score so far: "score 17 of 24".
func scoreText(s env.State) string {
	sc, ok := s.(env.Scorer)
	if !ok {
		return ""
	}
	return fmt.Sprintf("score %g of %g", sc.Score(), sc.MaxScore())
}
