package solitaire

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/flipzero/flipzero/env"
)

// Picture is the board as String draws it, with its coordinates, and a
// line's end, as the terminal prints it before a prompt.
func (s *State) Picture() string { return s.String() + "\n" }

// Layout is a grid of squares.
func (s *State) Layout() string { return "square" }

// Cells lists the 64 squares, a1 at the top left. A disc is "gold" or
// "black"; a token is "token" face down, "token-turning" while it turns
// up, and face up "token-gold" or "token-black", followed under sum
// scoring by its number or "blank" ("token-gold-7", "token-black-blank").
func (s *State) Cells() []env.Cell {
	cells := make([]env.Cell, 0, 64)
	for sq := 0; sq < 64; sq++ {
		bit := uint64(1) << sq
		c := env.Cell{Name: SquareName(sq), Col: sq % 8, Row: sq/8 + 1, X: float64(sq % 8), Y: float64(sq / 8)}
		switch {
		case s.gold&bit != 0:
			c.Piece = "gold"
		case s.black&bit != 0:
			c.Piece = "black"
		case s.pending&bit != 0:
			c.Piece = "token-turning"
		case (s.upGold|s.upBlack)&bit != 0:
			c.Piece = "token-" + s.faceName(sq)
		case s.tokens&bit != 0:
			c.Piece = "token"
		}
		cells = append(cells, c)
	}
	return cells
}

// faceName is the face of the face-up token on sq: its colour, and its
// number under sum scoring ("gold-7", "black-blank").
func (s *State) faceName(sq int) string {
	f := s.r.kinds[s.face[sq]]
	colour := "black"
	if f.Gold {
		colour = "gold"
	}
	if !s.r.layout.Sum {
		return colour
	}
	if f.Number == 0 {
		return colour + "-blank"
	}
	return fmt.Sprintf("%s-%d", colour, f.Number)
}

// Status is the score so far and the tokens left face down.
func (s *State) Status() string {
	if s.r.layout.Sum {
		return fmt.Sprintf("score %g of %g, %d tokens captured, %d face down", s.Score(), s.r.maxScore, s.captured, s.hiddenTotal)
	}
	return fmt.Sprintf("captured %d of %d, %d face down", s.captured, len(s.r.layout.Faces), s.hiddenTotal)
}

// Prompt says what happens next: a token turning up, or a disc to place
// in either colour.
func (s *State) Prompt() string {
	if s.pending != 0 {
		return "a token turns up"
	}
	return "place a gold or a black disc (f5:gold)"
}

// Targets: a placement is picked by its square, its colour among the
// placements of that square; a reveal is the token turning up.
func (s *State) Targets(action int) (kind string, points []string) {
	if action >= Reveal {
		if s.pending == 0 {
			return "point", nil
		}
		return "point", []string{SquareName(bits.TrailingZeros64(s.pending))}
	}
	square, _, _ := strings.Cut(s.Game().FormatAction(action), ":")
	return "point", []string{square}
}

var _ env.Display = (*State)(nil)
