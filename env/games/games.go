// Package games is the registry of every game flipzero knows, by name.
package games

import (
	"fmt"
	"sort"
	"strings"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/env/solitaire"
	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/env/yinsh"
)

// all builds the registry afresh on each call, so there is no shared
// mutable table.
func all() map[string]env.Game {
	return map[string]env.Game{
		"tictactoe":      tictactoe.Game{},
		"reversi":        othello.Reversi(),
		"othello":        othello.Othello(),
		"reversi-single": othello.Single(),
		// The rulebook's solitaire with the default layout
		// (env/solitaire/default.layout), scored by tokens captured or,
		// in its variant, by the sum of their numbers.
		"reversi-solitaire":     solitaire.Default(),
		"reversi-solitaire-sum": solitaire.DefaultSum(),
		"yinsh":                 yinsh.Full(),
		"yinsh-blitz":           yinsh.Blitz(),
	}
}

// ByName returns the game registered as name.
func ByName(name string) (env.Game, error) {
	if g, ok := all()[name]; ok {
		return g, nil
	}
	return nil, fmt.Errorf("unknown game %q (known: %s)", name, strings.Join(Names(), ", "))
}

// Names lists the registered games in byte order.
func Names() []string {
	var names []string
	for name := range all() {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
