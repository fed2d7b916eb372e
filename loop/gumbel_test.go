package loop

import (
	"os"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/mcts"
)

// search.mode and search.gumbel_considered reach the search, and a bad
// value is an error naming its key. The Othello and YINSH configs ship
// Gumbel (it won the matches at equal training time); tic-tac-toe and the
// solitaire PUCT.
func TestConfigSearchMode(t *testing.T) {
	for file, want := range map[string]mcts.Mode{
		"yinsh-blitz.yaml": mcts.Gumbel, "yinsh.yaml": mcts.Gumbel, "othello.yaml": mcts.Gumbel,
		"tictactoe.yaml": mcts.PUCT, "reversi-solitaire.yaml": mcts.PUCT,
	} {
		cfg, err := LoadConfig("../configs/"+file, games.Builtin())
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Search.Mode != want {
			t.Errorf("%s searches with %v, want %v", file, cfg.Search.Mode, want)
		}
	}
	raw, err := os.ReadFile("../configs/reversi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	shipped, err := ParseConfig(raw, games.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	if shipped.Search.Mode != mcts.Gumbel || shipped.Search.GumbelConsidered != 16 {
		t.Errorf("reversi.yaml searches with %v, %d considered, want gumbel with 16", shipped.Search.Mode, shipped.Search.GumbelConsidered)
	}
	text := strings.Replace(string(raw), "gumbel_considered: 16", "gumbel_considered: 8", 1)
	cfg, err := ParseConfig([]byte(text), games.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Search.Mode != mcts.Gumbel || cfg.Search.GumbelConsidered != 8 {
		t.Errorf("search %v with %d considered, want gumbel with 8", cfg.Search.Mode, cfg.Search.GumbelConsidered)
	}
	puct, err := ParseConfig([]byte(strings.Replace(text, "mode: gumbel", "mode: puct", 1)), games.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	if puct.Search.Mode != mcts.PUCT {
		t.Errorf("mode: puct gives %v", puct.Search.Mode)
	}
	for _, tt := range []struct{ from, to, want string }{
		{"mode: gumbel", "mode: alphazero", "mode: unknown search mode \"alphazero\""},
		{"gumbel_considered: 8", "gumbel_considered: 0", "search.gumbel_considered"},
	} {
		_, err := ParseConfig([]byte(strings.Replace(text, tt.from, tt.to, 1)), games.Builtin())
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line naming %s", tt.to, err, tt.want)
		}
	}
}
