package arena

import (
	"fmt"
	"strings"

	"github.com/flipzero/flipzero/env"
)

// A match against a slow engine runs for an hour or more; one cut short
// (a killed process, a lost machine) resumes from its records file: the
// games it finished count and are not played again. A line holds no game
// number, so Place works each one out from what the line does hold: who
// moved first says the colour, and the moves begin with the opening that
// the seed deals to one pair of games.

// ParseGame reads a game as ArenaGame.Line writes it and replays its moves
// in g, so that a damaged or foreign line is refused rather than counted:
// the outcome must be the final position's, or a win by the player who
// did not resign (a line stopping short of the end with a winner). A
// line whose outcome is "unfinished" parses, for the caller to drop. The
// game's Index is left to Place.
func ParseGame(g env.Game, line string) (ArenaGame, error) {
	fields := strings.Split(line, "\t")
	if len(fields) != 5 {
		return ArenaGame{}, fmt.Errorf("%d tab-separated fields, want 5: moves, outcome, game, first player, second player", len(fields))
	}
	rec := ArenaGame{
		Record:   env.Record{Outcome: fields[1], Game: fields[2]},
		Players:  [2]string{fields[3], fields[4]},
		Resigned: env.NoPlayer,
	}
	if rec.Game != g.Name() {
		return ArenaGame{}, fmt.Errorf("a game of %q, not %s", rec.Game, g.Name())
	}
	if fields[0] != "" {
		rec.Moves = strings.Split(fields[0], ";")
	}
	s := g.NewState()
	for i, m := range rec.Moves {
		a, err := env.ParseLegal(s, m)
		if err != nil {
			return ArenaGame{}, fmt.Errorf("move %d: %w", i+1, err)
		}
		s.Apply(a)
	}
	switch {
	case rec.Outcome == "unfinished":
	case s.Terminal():
		if want := env.ResultName(s); rec.Outcome != want {
			return ArenaGame{}, fmt.Errorf("outcome %q, but the moves end in %q", rec.Outcome, want)
		}
	case rec.Outcome == g.PlayerName(s.ToMove().Other()):
		rec.Resigned = s.ToMove()
	default:
		return ArenaGame{}, fmt.Errorf("outcome %q before the game's end, where %s is to move: want the winner after a resignation, or unfinished",
			rec.Outcome, g.PlayerName(s.ToMove()))
	}
	return rec, nil
}

// PlaceError says which of the games given to Place (from 0) is not of
// the match, and why.
type PlaceError struct {
	Game int
	Err  error
}

func (e PlaceError) Error() string { return fmt.Sprintf("game %d: %v", e.Game+1, e.Err) }
func (e PlaceError) Unwrap() error { return e.Err }

// Place gives each finished game of an earlier part of a match between A
// and B (names a and b) its Index in the match that opts describes (the
// same game, number of games, seed and opening plies): A's moving first
// says the index's parity, and the opening its pair. It returns an error
// naming the first game that is not of this match, or that no free index
// of the match fits, as a PlaceError.
func Place(g env.Game, opts ArenaOptions, a, b string, games []ArenaGame) ([]ArenaGame, error) {
	plies := openingPlies(g, opts.OpeningPlies)
	// free[parity][opening] lists the indices of that colour whose
	// opening is that move sequence, lowest first; two pairs of games
	// may share an opening.
	var free [2]map[string][]int
	for parity := range free {
		free[parity] = make(map[string][]int)
	}
	for k := 0; k < opts.Games; k++ {
		key := openingKey(g, Opening(g, plies, opts.Seed, k/2))
		free[k%2][key] = append(free[k%2][key], k)
	}
	out := make([]ArenaGame, len(games))
	for i, rec := range games {
		parity := 0
		switch rec.Players {
		case [2]string{a, b}:
		case [2]string{b, a}:
			parity = 1
		default:
			return nil, PlaceError{i, fmt.Errorf("played by %s and %s, not this match's %s and %s", rec.Players[0], rec.Players[1], a, b)}
		}
		placed := false
		for n := min(plies, len(rec.Moves)); n >= 0 && !placed; n-- {
			key := strings.Join(rec.Moves[:n], ";")
			if k := free[parity][key]; len(k) > 0 {
				rec.Index, rec.OpeningPlies = k[0], n
				free[parity][key] = k[1:]
				placed = true
			}
		}
		if !placed {
			return nil, PlaceError{i, fmt.Errorf("no game of this match (%d games, seed %d) is left that opens with its moves and has %s move first",
				opts.Games, opts.Seed, rec.Players[0])}
		}
		out[i] = rec
	}
	return out, nil
}

func openingKey(g env.Game, moves []int) string {
	names := make([]string, len(moves))
	for i, a := range moves {
		names[i] = g.FormatAction(a)
	}
	return strings.Join(names, ";")
}
