// Package tictactoe is the tiny game that proves the pipeline learns:
// small enough to solve exactly, so a trained network can be checked
// against perfect play.
//
// Actions are the 9 cells, index 3*row+column with row 0 = "1" and column
// 0 = "a"; notation "a1".."c3". The first player is black, the second
// white. The encoding has 3 planes of 3×3: the mover's marks, the
// opponent's marks, and a plane of ones (so that convolutions see the
// board's edge).
package tictactoe

import (
	"fmt"
	"strings"

	"github.com/flipzero/flipzero/env"
)

const (
	// Cells is the board size and the action space.
	Cells  = 9
	planes = 3
)

// lines are the 8 ways to win, as cell bitmasks.
var lines = [8]uint16{
	0007, 0070, 0700, // rows
	0111, 0222, 0444, // columns
	0421, 0124, // diagonals
}

// Game is tic-tac-toe. The zero value is ready to use.
type Game struct{}

var symmetries = buildSymmetries()

func buildSymmetries() []env.Symmetry {
	maps, names := env.SquareCellMaps(3)
	syms := make([]env.Symmetry, len(maps))
	for k := range maps {
		// The action space is the cells, so both maps are the same.
		syms[k] = env.Symmetry{Name: names[k], Cell: maps[k], Action: maps[k]}
	}
	return syms
}

func (Game) Name() string                  { return "tictactoe" }
func (Game) NewState() env.State           { return &State{} }
func (Game) ActionSpace() int              { return Cells }
func (Game) EncodedShape() (int, int, int) { return planes, 3, 3 }
func (Game) Symmetries() []env.Symmetry    { return symmetries }

func (Game) PlayerName(p env.Player) string {
	if p == 0 {
		return "black"
	}
	return "white"
}

func (Game) ParseAction(text string) (int, error) {
	t := strings.TrimSpace(text)
	if len(t) != 2 || t[0] < 'a' || t[0] > 'c' || t[1] < '1' || t[1] > '3' {
		return 0, fmt.Errorf("bad tic-tac-toe move %q: want a cell a1..c3", text)
	}
	return int(t[1]-'1')*3 + int(t[0]-'a'), nil
}

func (Game) FormatAction(action int) string {
	if action < 0 || action >= Cells {
		return fmt.Sprintf("?%d", action)
	}
	return string([]byte{byte('a' + action%3), byte('1' + action/3)})
}

// State is a tic-tac-toe position: a bitmask of cells per player.
type State struct {
	marks  [2]uint16
	toMove env.Player
}

func (s *State) Game() env.Game         { return Game{} }
func (s *State) ToMove() env.Player     { return s.toMove }
func (s *State) Clone() env.State       { c := *s; return &c }
func (s *State) CopyFrom(src env.State) { *s = *src.(*State) }

// Marks returns the cells of player p as a bitmask (bit 3*row+column).
func (s *State) Marks(p env.Player) uint16 { return s.marks[p] }

func (s *State) occupied() uint16 { return s.marks[0] | s.marks[1] }

func (s *State) LegalActions(buf []int) []int {
	buf = buf[:0]
	if s.Terminal() {
		return buf
	}
	free := ^s.occupied()
	for c := 0; c < Cells; c++ {
		if free&(1<<c) != 0 {
			buf = append(buf, c)
		}
	}
	return buf
}

func (s *State) IsLegal(action int) bool {
	return action >= 0 && action < Cells && s.occupied()&(1<<action) == 0 && !s.Terminal()
}

func (s *State) Apply(action int) {
	s.marks[s.toMove] |= 1 << action
	s.toMove = s.toMove.Other()
}

func hasLine(marks uint16) bool {
	for _, l := range lines {
		if marks&l == l {
			return true
		}
	}
	return false
}

func (s *State) Terminal() bool {
	return s.occupied() == 0777 || hasLine(s.marks[0]) || hasLine(s.marks[1])
}

func (s *State) Winner() env.Player {
	switch {
	case hasLine(s.marks[0]):
		return 0
	case hasLine(s.marks[1]):
		return 1
	}
	return env.NoPlayer
}

func (s *State) Encode(dst []float32) {
	own, opp := s.marks[s.toMove], s.marks[s.toMove.Other()]
	for c := 0; c < Cells; c++ {
		dst[c] = float32(own >> c & 1)
		dst[Cells+c] = float32(opp >> c & 1)
		dst[2*Cells+c] = 1
	}
}

func (s *State) Transformed(i int) env.State {
	sym := symmetries[i]
	t := &State{toMove: s.toMove}
	for p := range s.marks {
		for c := 0; c < Cells; c++ {
			if s.marks[p]&(1<<c) != 0 {
				t.marks[p] |= 1 << sym.Cell[c]
			}
		}
	}
	return t
}

// String draws the board with row 3 on top, X for black and O for white.
func (s *State) String() string {
	var b strings.Builder
	for row := 2; row >= 0; row-- {
		fmt.Fprintf(&b, "%d ", row+1)
		for col := 0; col < 3; col++ {
			c := uint(row*3 + col)
			switch {
			case s.marks[0]&(1<<c) != 0:
				b.WriteString(" X")
			case s.marks[1]&(1<<c) != 0:
				b.WriteString(" O")
			default:
				b.WriteString(" .")
			}
		}
		b.WriteByte('\n')
	}
	b.WriteString("   a b c\n")
	return b.String()
}
