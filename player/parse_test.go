package player

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParsePlayerUnknownNames: a name that is neither a kind of player
// nor a file lists the kinds, with the one it was likely meant to be; a
// file that is there but does not load keeps the loader's error.
func TestParsePlayerUnknownNames(t *testing.T) {
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.fznet")
	if err := os.WriteFile(broken, []byte("not a model"), 0o644); err != nil {
		t.Fatal(err)
	}
	loadErr := errors.New("load failed: not a model file")
	opts := PlayerOptions{Playouts: 1, LoadNetwork: func(path string, playouts int) (Player, error) {
		return nil, loadErr
	}}
	kinds := "random, greedy, perfect, mcts:N, alphabeta:D, gtp:COMMAND"
	tests := []struct {
		name  string
		opts  PlayerOptions
		want  string
		guess string // "" when no kind is near
	}{
		{"nosuchplayer", opts, `unknown player "nosuchplayer": no such model file, nor one of ` + kinds, ""},
		{filepath.Join(dir, "gen-000010.ckpt"), opts, "no such model file, nor one of " + kinds, ""},
		{"greddy", opts, `unknown player "greddy"`, "greedy"},
		{"Random", opts, `unknown player "Random"`, "random"},
		{"mcst:100", opts, `unknown player "mcst:100"`, "mcts:N"},
		{"mcts", opts, `unknown player "mcts"`, "mcts:N"},
		{"alphabeta", opts, `unknown player "alphabeta"`, "alphabeta:D"},
		{"perfect:3", opts, `unknown player "perfect:3"`, "perfect"},
		// Where networks cannot load, every name that is not a kind is unknown.
		{"greddy", PlayerOptions{}, `unknown player "greddy": not one of ` + kinds, "greedy"},
	}
	for _, tt := range tests {
		_, err := ParsePlayer(tt.name, tt.opts)
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		msg := err.Error()
		guess := ""
		if _, after, ok := strings.Cut(msg, "; did you mean "); ok {
			guess = strings.TrimSuffix(after, "?")
		}
		if !strings.Contains(msg, tt.want) || guess != tt.guess || strings.Contains(msg, "\n") {
			t.Errorf("%s: error %q, want one line with %q and the guess %q", tt.name, msg, tt.want, tt.guess)
		}
	}
	// A file that exists is the loader's to judge, whatever its name.
	if _, err := ParsePlayer(broken, opts); !errors.Is(err, loadErr) {
		t.Errorf("%s: error %v, want the loader's", broken, err)
	}
}
