package othello

import (
	"fmt"
	"strings"

	"github.com/flipzero/flipzero/env"
)

// Picture is the board as String draws it, with its coordinates.
func (s *State) Picture() string { return s.String() + "X black, O white\n" }

// Layout is a grid of squares.
func (s *State) Layout() string { return "square" }

// Cells lists the 64 squares, a1 at the top left.
func (s *State) Cells() []env.Cell {
	black, white := s.Boards()
	cells := make([]env.Cell, 0, Squares)
	for sq := 0; sq < Squares; sq++ {
		c := env.Cell{Name: SquareName(sq), Col: sq % 8, Row: sq/8 + 1, X: float64(sq % 8), Y: float64(sq / 8)}
		switch {
		case black>>sq&1 != 0:
			c.Piece = "black"
		case white>>sq&1 != 0:
			c.Piece = "white"
		}
		cells = append(cells, c)
	}
	return cells
}

// Status counts the discs.
func (s *State) Status() string {
	b, w := s.Discs()
	return fmt.Sprintf("black %d, white %d", b, w)
}

// Tally is the discs of each side, the empty squares going to the winner
// once the game is over (the World Othello Federation's count).
func (s *State) Tally() (first, second int) {
	if s.Terminal() {
		return s.FinalScore()
	}
	return s.Discs()
}

// Ownership writes 1 on p's discs, −1 on the other player's, 0 on the
// empty squares.
func (s *State) Ownership(p env.Player, dst []float32) {
	mine, theirs := s.own, s.opp
	if p != s.toMove {
		mine, theirs = theirs, mine
	}
	dst = dst[:Squares]
	for c := range dst {
		dst[c] = float32(mine>>c&1) - float32(theirs>>c&1)
	}
}

// ScoreMargin is p's disc difference over 64, as FinalScore counts once
// the game is over (the empty squares to the winner).
func (s *State) ScoreMargin(p env.Player) float32 {
	black, white := s.Tally()
	margin := float32(black-white) / Squares
	if p == 1 {
		margin = -margin
	}
	return margin
}

// Prompt is empty: every decision is a disc to place.
func (s *State) Prompt() string { return "" }

// Targets: a move is picked by its square (a single-line move's
// direction is chosen among the moves of that square).
func (s *State) Targets(action int) (kind string, points []string) {
	text := s.Game().FormatAction(action)
	if text == "pass" {
		return "pass", nil
	}
	square, _, _ := strings.Cut(text, ":")
	return "point", []string{square}
}

var (
	_ env.Display   = (*State)(nil)
	_ env.Ownership = (*State)(nil)
	_ env.Tally     = (*State)(nil)
)
