// Package games is the registry of games by name: Builtin has every game
// flipzero ships, and With adds others (a game of a test's own, a
// user's), so that the loop, the arena and the players find any game by
// the name in a config, a model file or a flag.
package games

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/env/solitaire"
	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/env/yinsh"
)

// Registry maps names to games. A Registry is a value: With returns a new
// one and never changes the receiver, so there is no shared mutable table.
type Registry struct {
	games map[string]env.Game
}

// Builtin is the registry of flipzero's own games.
func Builtin() Registry {
	return Registry{}.With(
		tictactoe.Game{},
		othello.Reversi(), othello.Othello(), othello.Single(),
		// The rulebook's solitaire with the default layout
		// (env/solitaire/default.layout), scored by tokens captured or,
		// in its variant, by the sum of their numbers.
		solitaire.Default(), solitaire.DefaultSum(),
		yinsh.Full(), yinsh.Blitz(),
	)
}

// With returns the registry with gs added under their names (replacing a
// game of the same name).
func (r Registry) With(gs ...env.Game) Registry {
	out := Registry{games: make(map[string]env.Game, len(r.games)+len(gs))}
	for name, g := range r.games {
		out.games[name] = g
	}
	for _, g := range gs {
		out.games[g.Name()] = g
	}
	return out
}

// ByName returns the game registered as name.
func (r Registry) ByName(name string) (env.Game, error) {
	if g, ok := r.games[name]; ok {
		return g, nil
	}
	return nil, fmt.Errorf("unknown game %q (known: %s)", name, strings.Join(r.Names(), ", "))
}

// Names lists the registered games in byte order.
func (r Registry) Names() []string {
	names := make([]string, 0, len(r.games))
	for name := range r.games {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// ByName returns the built-in game registered as name.
func ByName(name string) (env.Game, error) { return Builtin().ByName(name) }

// Names lists the built-in games in byte order.
func Names() []string { return Builtin().Names() }

// RecordReader reads the games of one file of a foreign record format. It
// may return good records together with an error about bad ones.
type RecordReader func(r io.Reader) ([]env.Record, error)

// RecordFormats are the foreign record formats flipzero reads, by the
// name convert's --from takes: the French federation's WTHOR database
// (Othello) and boardspace.net's SGF dialect (YINSH, one game a file).
func RecordFormats() map[string]RecordReader {
	return map[string]RecordReader{
		"wthor": othello.ReadWTHOR,
		"boardspace": func(r io.Reader) ([]env.Record, error) {
			rec, err := yinsh.ReadBoardspace(r)
			if err != nil {
				return nil, err
			}
			return []env.Record{rec}, nil
		},
	}
}
