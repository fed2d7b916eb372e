package gtp

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
)

func game(t testing.TB, name string) env.Game {
	t.Helper()
	g, err := games.ByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

const grhino = "/usr/games/gtp-rhino"

func needGRhino(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath(grhino); err != nil {
		t.Skip("GRhino is not installed (apt-get install grhino; .ci/run installs it)")
	}
}

// TestGTPNotAnEngine starts a program that does not speak GTP: cat
// echoes the command back, which is not an answer.
func TestGTPNotAnEngine(t *testing.T) {
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Skip("no cat on this system")
	}
	_, err = Start(game(t, "othello"), []string{cat}, 200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "does not speak GTP") || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v, want one saying cat does not speak GTP", err)
	}
}

// TestGRhinoPass tells GRhino of a pass: it refuses "play black pass",
// having passed for Black by itself, and plays on for White.
func TestGRhinoPass(t *testing.T) {
	needGRhino(t)
	g := game(t, "othello")
	e, err := Start(g, []string{grhino, "-l", "1"}, StartWait)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	s := g.NewState()
	if err := e.NewGame(ctx, s); err != nil {
		t.Fatal(err)
	}
	// Black has no move after these: the ninth decision is a pass.
	for _, text := range strings.Split("d3;c3;e6;d2;d1;e1;b3;c1;pass", ";") {
		a, err := env.ParseLegal(s, text)
		if err != nil {
			t.Fatal(err)
		}
		s.Apply(a)
		if err := e.Observe(ctx, a); err != nil {
			t.Fatalf("after %s: %v", text, err)
		}
	}
	a, err := e.Move(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if !s.IsLegal(a) || s.ToMove() != 1 {
		t.Fatalf("GRhino played %s for %s", g.FormatAction(a), g.PlayerName(s.ToMove()))
	}
	s.Apply(a)
	if err := e.Observe(ctx, a); err != nil {
		t.Fatal(err)
	}
	// Both now agree on the position: Black's reply is accepted.
	legal := s.LegalActions(nil)
	s.Apply(legal[0])
	if err := e.Observe(ctx, legal[0]); err != nil {
		t.Fatalf("GRhino refused Black's move after the pass: %v", err)
	}
}

func TestParseEngineMoveAnyCase(t *testing.T) {
	tests := []struct {
		game, answer, want string
	}{
		{"othello", "F5", "f5"},
		{"othello", "PASS", "pass"},
		{"yinsh", "M E5 E9", "M E5 E9"},
		{"yinsh", "PASS", "pass"},
		{"yinsh", "x k8", "X K8"},
	}
	for _, tt := range tests {
		g := game(t, tt.game)
		a, err := parseEngineMove(g, tt.answer)
		if err != nil || g.FormatAction(a) != tt.want {
			t.Errorf("%s %q: got %q, %v; want %s", tt.game, tt.answer, g.FormatAction(a), err, tt.want)
		}
	}
	if _, err := parseEngineMove(game(t, "yinsh"), "Q Z9"); err == nil {
		t.Error("nonsense parsed")
	}
}

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"engine -l 1", []string{"engine", "-l", "1"}},
		{"  engine\t-x  ", []string{"engine", "-x"}},
		{`engine --name "two words" 'and more'`, []string{"engine", "--name", "two words", "and more"}},
		{`"engine -l 1"`, []string{"engine", "-l", "1"}},
		{`engine ""`, []string{"engine", ""}},
	}
	for _, tc := range tests {
		got, err := SplitCommand(tc.in)
		if err != nil || fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tc.want) {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
