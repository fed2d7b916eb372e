package gtp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/flipzero/flipzero/env"
)

// Resign is what Client.Move returns for an engine that gives up.
const Resign = -1

// SplitCommand splits a command line into words: blanks separate words,
// quotes group them.
func SplitCommand(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	// The whole command may itself be quoted, as in gtp:"engine -l 1".
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] && !strings.ContainsRune(s[1:len(s)-1], rune(s[0])) {
		s = s[1 : len(s)-1]
	}
	var words []string
	var word strings.Builder
	inWord := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				word.WriteByte(c)
			}
		case c == '"' || c == '\'':
			quote, inWord = c, true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed quote %c", quote)
	}
	if inWord {
		words = append(words, word.String())
	}
	return words, nil
}

// Client is one running engine, spoken to over its standard input and
// output, playing one game at a time. It is used by one goroutine at a
// time.
type Client struct {
	name  string
	game  env.Game
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	// exited is closed once the process has ended and waitErr is set.
	exited  chan struct{}
	waitErr error
	stderr  *tailBuffer

	// state is the position the engine has been told of.
	state env.State
	legal []int
	// generated is the engine's own last move, which "genmove" already
	// played on its board: Observe must not send it again.
	generated    int
	hasGenerated bool
	// passRefused remembers that the engine refuses "play X pass" and
	// passes by itself.
	passRefused bool
}

// quitWait is how long a closing engine gets to exit after "quit".
const quitWait = time.Second

// StartWait is how long an engine may take to answer its first
// command: engines that load a large network or book take seconds.
const StartWait = time.Minute

// Start starts the engine argv (a program and its arguments) for game g
// and checks that it answers a first command
// within startWait.
func Start(g env.Game, argv []string, startWait time.Duration) (*Client, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("gtp engine %s: %w", argv[0], err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("gtp engine %s: %w", argv[0], err)
	}
	e := &Client{
		name:   strings.Join(argv, " "),
		game:   g,
		cmd:    cmd,
		stdin:  stdin,
		lines:  make(chan string, 16),
		exited: make(chan struct{}),
		stderr: &tailBuffer{limit: 2048},
		state:  g.NewState(),
		legal:  make([]int, 0, g.ActionSpace()),
	}
	cmd.Stderr = e.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("gtp engine %s: %w", e.name, err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 4096), 1<<20)
		for sc.Scan() {
			e.lines <- sc.Text()
		}
		close(e.lines)
		e.waitErr = cmd.Wait()
		close(e.exited)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), startWait)
	defer cancel()
	if _, err := e.send(ctx, "protocol_version"); err != nil {
		e.Close()
		return nil, fmt.Errorf("gtp engine %s does not speak GTP: %w", e.name, err)
	}
	return e, nil
}

// gtpRefusal is an engine's "? message" answer.
type gtpRefusal struct{ command, message string }

func (r gtpRefusal) Error() string {
	return fmt.Sprintf("refused %q: %s", r.command, r.message)
}

// send sends one command and returns the answer's text, or a gtpRefusal
// when the engine answers with an error.
func (e *Client) send(ctx context.Context, command string) (string, error) {
	if _, err := io.WriteString(e.stdin, command+"\n"); err != nil {
		return "", e.exitError(command, err)
	}
	var answer []string
	for {
		var line string
		var ok bool
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("gtp engine %s: %q: %w", e.name, command, ctx.Err())
		case line, ok = <-e.lines:
		}
		if !ok {
			return "", e.exitError(command, io.ErrUnexpectedEOF)
		}
		line = strings.TrimRight(line, "\r")
		if len(answer) == 0 {
			// Lines before the answer's first are not GTP: ignore them,
			// as some engines chatter on standard output.
			if line == "" || (line[0] != '=' && line[0] != '?') {
				continue
			}
		} else if line == "" {
			break
		}
		answer = append(answer, line)
	}
	first := answer[0]
	// Drop the status character and an optional command id.
	text := strings.TrimLeft(first[1:], "0123456789")
	text = strings.TrimSpace(strings.Join(append([]string{text}, answer[1:]...), "\n"))
	if first[0] == '?' {
		return "", gtpRefusal{command, text}
	}
	return text, nil
}

// exitError describes an engine that has gone away while command was
// under way.
func (e *Client) exitError(command string, cause error) error {
	select {
	case <-e.exited:
		status := "exited"
		if e.waitErr != nil {
			status = e.waitErr.Error()
		}
		tail := strings.TrimSpace(e.stderr.String())
		if tail != "" {
			tail = "; its last words: " + strings.ReplaceAll(tail, "\n", " | ")
		}
		return fmt.Errorf("gtp engine %s stopped (%s) during %q%s", e.name, status, command, tail)
	case <-time.After(quitWait):
		return fmt.Errorf("gtp engine %s: %q: %w", e.name, command, cause)
	}
}

func (e *Client) NewGame(ctx context.Context, start env.State) error {
	e.state.CopyFrom(e.game.NewState())
	e.hasGenerated = false
	if _, err := e.send(ctx, "clear_board"); err != nil {
		return fmt.Errorf("gtp engine %s: new game: %w", e.name, err)
	}
	// GTP can only be told moves from the start, so a game that begins
	// elsewhere must have been reached by moves the engine is told of.
	if start.String() != e.state.String() {
		return fmt.Errorf("gtp engine %s: can only start games at the start position", e.name)
	}
	return nil
}

func (e *Client) Move(ctx context.Context, s env.State) (int, error) {
	if e.legal = s.LegalActions(e.legal); len(e.legal) == 1 {
		// A forced move (a pass, above all) is not worth a question; the
		// engine hears of it through Observe.
		return e.legal[0], nil
	}
	color := e.game.PlayerName(s.ToMove())
	command := "genmove " + color
	answer, err := e.send(ctx, command)
	if err != nil {
		return 0, fmt.Errorf("gtp engine %s: %w", e.name, err)
	}
	if strings.EqualFold(answer, "resign") {
		return Resign, nil
	}
	action, err := parseEngineMove(e.game, answer)
	if err != nil {
		return 0, fmt.Errorf("gtp engine %s answered %q to %q: %w", e.name, answer, command, err)
	}
	if !s.IsLegal(action) {
		return 0, fmt.Errorf("gtp engine %s played %s, which is not legal here", e.name, e.game.FormatAction(action))
	}
	e.generated, e.hasGenerated = action, true
	return action, nil
}

func (e *Client) Observe(ctx context.Context, action int) error {
	if e.state.Terminal() || !e.state.IsLegal(action) {
		return fmt.Errorf("gtp engine %s: told of move %s, not legal in the game it knows", e.name, e.game.FormatAction(action))
	}
	color := e.game.PlayerName(e.state.ToMove())
	e.state.Apply(action)
	if e.hasGenerated {
		e.hasGenerated = false
		if action == e.generated {
			return nil
		}
		return fmt.Errorf("gtp engine %s: its move %s was replaced by %s", e.name, e.game.FormatAction(e.generated), e.game.FormatAction(action))
	}
	move := e.game.FormatAction(action)
	isPass := strings.EqualFold(move, "pass")
	if isPass && e.passRefused {
		return nil
	}
	_, err := e.send(ctx, "play "+color+" "+move)
	var refusal gtpRefusal
	if isPass && errors.As(err, &refusal) {
		// Some Othello engines (GRhino) pass for a player with no move by
		// themselves and refuse to be told of it. Should the engine not
		// have passed, its next move or "play" will be refused: an error
		// then, not a silent divergence.
		e.passRefused = true
		return nil
	}
	if err != nil {
		return fmt.Errorf("gtp engine %s: %w", e.name, err)
	}
	return nil
}

// Close asks the engine to quit and ends it if it does not.
func (e *Client) Close() error {
	select {
	case <-e.exited:
		return nil
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), quitWait)
	defer cancel()
	_, quitErr := e.send(ctx, "quit")
	e.stdin.Close()
	// Whatever the engine still prints must not block its reader.
	go func() {
		for range e.lines {
		}
	}()
	wait := quitWait
	if quitErr != nil {
		// An engine that does not answer "quit" is stuck: end it now.
		wait = 0
	}
	select {
	case <-e.exited:
	case <-time.After(wait):
		e.cmd.Process.Kill()
		<-e.exited
	}
	return nil
}

// tailBuffer keeps the last bytes written to it: an engine's standard
// error, for the message when it dies.
type tailBuffer struct {
	mu    sync.Mutex
	limit int
	buf   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.limit; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// parseEngineMove reads an engine's move in the game's notation, whatever
// the case the engine writes it in: GTP engines write Othello moves and
// passes in capitals (F5, PASS), YINSH's notation has capital verbs and
// points (M E5 E9).
func parseEngineMove(g env.Game, answer string) (int, error) {
	action, err := g.ParseAction(answer)
	if err == nil {
		return action, nil
	}
	for _, variant := range []string{strings.ToLower(answer), strings.ToUpper(answer)} {
		if a, e := g.ParseAction(variant); e == nil {
			return a, nil
		}
	}
	return 0, err
}
