package loop

import (
	"os"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/mcts"
	"github.com/flipzero/flipzero/selfplay"
)

func TestSearchText(t *testing.T) {
	gumbel := selfplay.Search{PlayoutCap: mcts.PlayoutCap{Full: 32, Fast: 32, FullFraction: 1}}
	gumbel.Mode = mcts.Gumbel
	capped := selfplay.Search{PlayoutCap: mcts.PlayoutCap{Full: 160, Fast: 32, FullFraction: 0.25}}
	for _, tc := range []struct {
		s    selfplay.Search
		want string
	}{
		{gumbel, "Gumbel, 32 playouts on every move"},
		{capped, "PUCT, 160 playouts on 25% of moves, 32 on the rest"},
	} {
		if got := searchText(tc.s); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
}

func TestSummary(t *testing.T) {
	raw, err := os.ReadFile("../configs/othello.yaml")
	if err != nil {
		t.Fatal(err)
	}
	game, settings, err := Summary(raw, games.Builtin())
	if err != nil || game != "othello" || len(settings) != 6 || settings[2] != [2]string{"search", "Gumbel, 32 playouts on every move"} {
		t.Errorf("summary: %q, %q, %v", game, settings, err)
	}
	if _, _, err := Summary([]byte("game: chess\n"), games.Builtin()); err == nil || !strings.Contains(err.Error(), "chess") {
		t.Errorf("a config of an unknown game: %v", err)
	}
}

// TestSummaryOfThePolicyMatch: the page's summary of the tic-tac-toe
// config says its policy plays the perfect player too.
func TestSummaryOfThePolicyMatch(t *testing.T) {
	raw, err := os.ReadFile("../configs/tictactoe.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, settings, err := Summary(raw, games.Builtin())
	if err != nil || len(settings) != 6 || settings[5][0] != "arena" {
		t.Fatalf("summary: %q, %v", settings, err)
	}
	if want := "20 games against the self-play network and perfect, 32 playouts; the policy alone (1 playout) against perfect too"; settings[5][1] != want {
		t.Errorf("arena: %q, want %q", settings[5][1], want)
	}
}
