package loop

import (
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/mcts"
)

// TestUnknownKeyNamesSectionAndNearest: a key the config does not have is
// named with its section, with the nearest key the section has, or the
// section's keys when none is near; the keys a config does have, inlined
// ones included, all pass.
func TestUnknownKeyNamesSectionAndNearest(t *testing.T) {
	const config = `game: tictactoe
network:
  blocks: 1
search:
  cpuct: 1.5
  playouts_full: 64
selfplay:
  temperature: 1.0
train:
  momentum: 0.9
  learning_rate:
    - {step: 0, rate: 0.02}
    - {step: 100, rate: 0.005}
window:
  min: 100
`
	if _, err := ParseConfig([]byte(config), games.Builtin()); err != nil {
		t.Fatalf("the config without a slip: %v", err)
	}
	tests := []struct {
		name, from, to, want string
	}{
		{"in a section", "  cpuct: 1.5", "  cpucct: 1.5", "line 5: unknown key search.cpucct; did you mean search.cpuct?"},
		{"a swap", "  cpuct: 1.5", "  cpcut: 1.5", "unknown key search.cpcut; did you mean search.cpuct?"},
		{"an inlined struct's key", "playouts_full", "playouts_ful", "unknown key search.playouts_ful; did you mean search.playouts_full?"},
		{"an inlined optimizer key", "momentum", "momentun", "unknown key train.momentun; did you mean train.momentum?"},
		{"a section", "window:", "windows:", "line 14: unknown key windows; did you mean window?"},
		{"in a list", "{step: 100, rate: 0.005}", "{step: 100, rat: 0.005}", "unknown key train.learning_rate[1].rat; did you mean train.learning_rate[1].rate?"},
		{"nothing near", "  blocks: 1", "  blocks: 1\n  flavour: 2", "line 4: unknown key network.flavour (network's keys: blocks, filters, "},
		{"nothing near at the top", "game: tictactoe", "game: tictactoe\ncolour: red", "unknown key colour (the top level's keys: game, network, search, selfplay, train, window, arena, eval, start)"},
		{"a field no config sets", "  temperature: 1.0", "  temperature: 1.0\n  progress: 1", "unknown key selfplay.progress"},
	}
	for _, tt := range tests {
		text := strings.Replace(config, tt.from, tt.to, 1)
		if text == config {
			t.Fatalf("%s: %q not in the config", tt.name, tt.from)
		}
		_, err := ParseConfig([]byte(text), games.Builtin())
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line with %q", tt.name, err, tt.want)
		}
	}
}

// TestUnknownSearchSettingSuggests: the search settings a command line
// gives are a config's search section, named without it.
func TestUnknownSearchSettingSuggests(t *testing.T) {
	tests := []struct{ spec, want string }{
		{"cpucct: 2", `search settings "cpucct: 2": line 1: unknown key cpucct; did you mean cpuct?`},
		{"cpuct: 2, slover: true", "unknown key slover; did you mean solver?"},
		{"{mode: gumbel, gumbel_considerd: 8}", "unknown key gumbel_considerd; did you mean gumbel_considered?"},
	}
	for _, tt := range tests {
		_, err := ParseSearchSettings(tt.spec, mcts.PlayConfig())
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q", tt.spec, err, tt.want)
		}
	}
}
