package tictactoe

import "github.com/flipzero/flipzero/env"

// Picture is the board as String draws it.
func (s *State) Picture() string { return s.String() + "X black, O white\n" }

// Layout is a grid of squares.
func (s *State) Layout() string { return "square" }

// Cells lists the nine cells, row 3 on top as String draws them.
func (s *State) Cells() []env.Cell {
	cells := make([]env.Cell, 0, Cells)
	for cell := 0; cell < Cells; cell++ {
		c := env.Cell{Name: Game{}.FormatAction(cell), Col: cell % 3, Row: cell/3 + 1, X: float64(cell % 3), Y: float64(2 - cell/3)}
		switch {
		case s.marks[0]&(1<<cell) != 0:
			c.Piece = "black"
		case s.marks[1]&(1<<cell) != 0:
			c.Piece = "white"
		}
		cells = append(cells, c)
	}
	return cells
}

// Status is empty: the game has no running score.
func (s *State) Status() string { return "" }

// Tally is one point for the player who made the line.
func (s *State) Tally() (first, second int) {
	switch s.Winner() {
	case 0:
		return 1, 0
	case 1:
		return 0, 1
	}
	return 0, 0
}

// Prompt is empty: every decision is a mark to place.
func (s *State) Prompt() string { return "" }

// Targets: a move is picked by its cell.
func (s *State) Targets(action int) (kind string, points []string) {
	return "point", []string{Game{}.FormatAction(action)}
}

// Ownership writes 1 on p's marks, −1 on the other player's.
func (s *State) Ownership(p env.Player, dst []float32) {
	dst = dst[:Cells]
	for c := range dst {
		dst[c] = float32(s.marks[p]>>c&1) - float32(s.marks[p.Other()]>>c&1)
	}
}

// ScoreMargin is the result for p: 1, 0 or −1.
func (s *State) ScoreMargin(p env.Player) float32 { return env.Value(s, p) }

var (
	_ env.Display   = (*State)(nil)
	_ env.Tally     = (*State)(nil)
	_ env.Ownership = (*State)(nil)
)
