package env

import "strings"

// Record is one game read from a file of records made elsewhere, with its
// moves in this project's notation.
type Record struct {
	// Game is the registry name of the game the record is played under.
	Game string
	// Moves in this project's notation, passes included.
	Moves []string
	// Outcome is "white", "black", "draw", or "unfinished" when the record
	// stops before the game is decided (a resignation, an abandoned game).
	Outcome string
}

// Line is the record as "flipzero convert" prints it: the moves joined by
// ";", a tab, the outcome, a tab, the game's name.
func (r Record) Line() string {
	return strings.Join(r.Moves, ";") + "\t" + r.Outcome + "\t" + r.Game
}
