package gtp

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env"
)

// historyController is a Controller over a list of positions that fails
// the test when the server asks it for what GTP's conventions rule out:
// an illegal action, or an undo past the start.
type historyController struct {
	t       *testing.T
	g       env.Game
	history []env.State
	legal   []int
}

func newHistoryController(t *testing.T, g env.Game) *historyController {
	return &historyController{t: t, g: g, history: []env.State{g.NewState()}}
}

func (c *historyController) Game() env.Game   { return c.g }
func (c *historyController) State() env.State { return c.history[len(c.history)-1] }
func (c *historyController) NewGame() error {
	c.history = c.history[:1]
	return nil
}

func (c *historyController) Play(action int) error {
	s := c.State()
	if s.Terminal() || !s.IsLegal(action) {
		c.t.Fatalf("asked to play %s in\n%v", c.g.FormatAction(action), s)
	}
	next := s.Clone()
	next.Apply(action)
	c.history = append(c.history, next)
	return nil
}

func (c *historyController) Undo() (bool, error) {
	if len(c.history) == 1 {
		c.t.Fatal("asked to undo at the start")
	}
	c.history = c.history[:len(c.history)-1]
	return true, nil
}

func (c *historyController) GenMove(context.Context) (int, string, error) {
	c.legal = c.State().LegalActions(c.legal)
	a := c.legal[len(c.history)%len(c.legal)]
	return a, "", c.Play(a)
}

// commandCount is the number of commands a GTP session's text holds,
// counted as GTP's preprocessing defines them: a line less its comment and
// control characters, not empty and not an id alone, up to quit.
func commandCount(script string) int {
	n := 0
	for _, line := range strings.Split(script, "\n") {
		line, _, _ = strings.Cut(line, "#")
		fields := strings.Fields(strings.Map(func(r rune) rune {
			if r < ' ' && r != '\t' || r == 127 {
				return -1
			}
			return r
		}, line))
		if len(fields) > 0 {
			if _, err := strconv.ParseUint(fields[0], 10, 32); err == nil {
				fields = fields[1:]
			}
		}
		if len(fields) == 0 {
			continue
		}
		n++
		if strings.ToLower(fields[0]) == "quit" {
			break
		}
	}
	return n
}

// FuzzServe plays arbitrary GTP sessions of Othello, whose passes the
// server supplies and takes back: nothing may panic, the controller is
// never asked for an illegal action or an undo past the start, and every
// command gets one answer, a success or a failure.
func FuzzServe(f *testing.F) {
	f.Add("boardsize 8\nclear_board\nplay b d3\ngenmove w\nplay b c5\nundo\nundo\nshowboard\nfinal_score\nquit\n")
	f.Add("1 play black f5\n2 genmove white\n3 undo\n4 undo\n5 undo\n# a comment\n6 list_commands\n")
	f.Add("play b pass\nplay w d3\nknown_command play\ngenmove b\ngenmove b\ngenmove b\nundo\nclear_board\nundo\n")
	g := game(f, "othello")
	f.Fuzz(func(t *testing.T, script string) {
		if len(script) > 1<<12 {
			return // a session, not a benchmark
		}
		var out bytes.Buffer
		c := newHistoryController(t, g)
		if err := Serve(context.Background(), c, strings.NewReader(script), &out, io.Discard); err != nil {
			t.Fatalf("serve: %v", err)
		}
		answers := strings.Split(out.String(), "\n\n")
		if answers[len(answers)-1] != "" {
			t.Fatalf("output does not end with an answer's blank line: %q", out.String())
		}
		answers = answers[:len(answers)-1]
		if want := commandCount(script); len(answers) != want {
			t.Fatalf("%d answers to %d commands: %q", len(answers), want, out.String())
		}
		for _, a := range answers {
			if a == "" || (a[0] != '=' && a[0] != '?') {
				t.Fatalf("answer %q is neither a success nor a failure", a)
			}
		}
	})
}
