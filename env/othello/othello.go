// Package othello is Reversi/Othello on bitboards, in three variants:
//
//   - reversi: the rulebook's rules, a tie is won by White (the second
//     player);
//   - othello: the international rules, a tie is a draw;
//   - reversi-single: the rulebook's single-line capture, where a move
//     flips along one direction of the mover's choosing (ties as reversi).
//
// Notation: squares a1..h8 with a1 the top-left corner and rows counted
// from the top, "pass", and for reversi-single a square and a direction,
// "f5:n", n being towards row 1. Black moves first and is player 0.
//
// Actions: for reversi and othello the 64 squares (8*row + column, a1 = 0)
// and 64 for the pass; for reversi-single 8*square + direction (directions
// in the order n ne e se s sw w nw) and 512 for the pass.
//
// The encoding is planes of 8×8 from the mover's point of view: the
// mover's discs, the opponent's discs, the mover's legal squares, and a
// plane of ones (so that convolutions see the board's edge). reversi and
// reversi-single add a fifth plane, all ones when White is to move: their
// tie goes to White, so the same board is worth more to White than to
// Black and the network must be told who moves. othello's rules are the
// same for both colours, so it keeps 4 planes (and its networks).
package othello

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/flipzero/flipzero/env"
)

type variant uint8

const (
	variantReversi variant = iota
	variantOthello
	variantSingle
)

const (
	// Squares is the number of squares of the board.
	Squares = 64
	// Pass is the pass action of reversi and othello.
	Pass = Squares
	// SinglePass is the pass action of reversi-single.
	SinglePass = Squares * numDirs

	// planes is the most planes any variant encodes; a buffer of
	// planes*Squares holds any variant's encoding.
	planes = 5
)

// Game is one of the three variants. Get it from Reversi, Othello or
// Single.
type Game struct{ variant variant }

// Reversi is the rulebook's game: a tie is won by White.
func Reversi() env.Game { return Game{variantReversi} }

// Othello is the international game: a tie is a draw.
func Othello() env.Game { return Game{variantOthello} }

// Single is the single-line capture variant: a move flips along one
// chosen direction; a tie is won by White, as in the rulebook.
func Single() env.Game { return Game{variantSingle} }

// symmetries is per variant: the action maps differ. Read-only after init.
var symmetries = [3][]env.Symmetry{
	variantReversi: buildSymmetries(false),
	variantOthello: buildSymmetries(false),
	variantSingle:  buildSymmetries(true),
}

func buildSymmetries(single bool) []env.Symmetry {
	maps, names := env.SquareCellMaps(8)
	syms := make([]env.Symmetry, len(maps))
	for k, cell := range maps {
		var action []int
		if single {
			// A direction maps as the step from a central square does.
			var dirMap [numDirs]int
			for d, step := range dirSteps {
				from, to := cell[3*8+3], cell[(3+step[0])*8+3+step[1]]
				dr, dc := to/8-from/8, to%8-from%8
				for e, other := range dirSteps {
					if other == [2]int{dr, dc} {
						dirMap[d] = e
					}
				}
			}
			action = make([]int, SinglePass+1)
			for s := 0; s < Squares; s++ {
				for d := 0; d < numDirs; d++ {
					action[s*numDirs+d] = cell[s]*numDirs + dirMap[d]
				}
			}
			action[SinglePass] = SinglePass
		} else {
			action = append(append([]int(nil), cell...), Pass)
		}
		syms[k] = env.Symmetry{Name: names[k], Cell: cell, Action: action}
	}
	return syms
}

func (g Game) Name() string {
	switch g.variant {
	case variantOthello:
		return "othello"
	case variantSingle:
		return "reversi-single"
	}
	return "reversi"
}

func (g Game) NewState() env.State {
	s := NewState(g)
	return &s
}

// NewState returns the start position of g as a value; d4 and e5 are
// White's, d5 and e4 Black's, and Black moves.
func NewState(g Game) State {
	const d4, e4, d5, e5 = 3*8 + 3, 3*8 + 4, 4*8 + 3, 4*8 + 4
	return State{
		own:     1<<d5 | 1<<e4,
		opp:     1<<d4 | 1<<e5,
		variant: g.variant,
	}
}

func (g Game) PlayerName(p env.Player) string {
	if p == 0 {
		return "black"
	}
	return "white"
}

func (g Game) ActionSpace() int {
	if g.variant == variantSingle {
		return SinglePass + 1
	}
	return Pass + 1
}

func (g Game) EncodedShape() (int, int, int) { return g.variant.planes(), 8, 8 }
func (g Game) Symmetries() []env.Symmetry    { return symmetries[g.variant] }

// planes is the variant's plane count: the variants whose tie goes to
// White encode who is to move.
func (v variant) planes() int {
	if v == variantOthello {
		return 4
	}
	return 5
}

// ParseSquare reads a square "a1".."h8" (upper case accepted) as 8*row +
// column.
func ParseSquare(text string) (int, error) {
	if len(text) != 2 {
		return 0, fmt.Errorf("bad square %q: want a1..h8", text)
	}
	col, row := text[0]|0x20, text[1] // |0x20 lowers an ASCII letter
	if col < 'a' || col > 'h' || row < '1' || row > '8' {
		return 0, fmt.Errorf("bad square %q: want a1..h8", text)
	}
	return int(row-'1')*8 + int(col-'a'), nil
}

// SquareName writes square s (0..63) as "a1".."h8".
func SquareName(s int) string {
	return string([]byte{byte('a' + s%8), byte('1' + s/8)})
}

func (g Game) ParseAction(text string) (int, error) {
	t := strings.TrimSpace(text)
	if strings.EqualFold(t, "pass") {
		if g.variant == variantSingle {
			return SinglePass, nil
		}
		return Pass, nil
	}
	if g.variant != variantSingle {
		s, err := ParseSquare(t)
		if err != nil {
			return 0, fmt.Errorf("bad %s move %q: want a square a1..h8 or pass", g.Name(), text)
		}
		return s, nil
	}
	square, dir, ok := strings.Cut(t, ":")
	s, err := ParseSquare(square)
	if !ok || err != nil {
		return 0, fmt.Errorf("bad %s move %q: want a square and a direction such as f5:n, or pass", g.Name(), text)
	}
	for d, name := range dirNames {
		if strings.EqualFold(dir, name) {
			return s*numDirs + d, nil
		}
	}
	return 0, fmt.Errorf("bad %s move %q: direction %q is not one of %s", g.Name(), text, dir, strings.Join(dirNames[:], " "))
}

func (g Game) FormatAction(action int) string {
	if action < 0 || action >= g.ActionSpace() {
		return fmt.Sprintf("?%d", action)
	}
	if action == g.ActionSpace()-1 {
		return "pass"
	}
	if g.variant == variantSingle {
		return SquareName(action/numDirs) + ":" + dirNames[action%numDirs]
	}
	return SquareName(action)
}

// State is a position: the discs of the player to move and of the
// opponent as bitboards, and who is to move. It is a small value; copying
// it copies the position.
type State struct {
	own, opp uint64
	toMove   env.Player
	variant  variant
}

func (s *State) Game() env.Game         { return Game{s.variant} }
func (s *State) ToMove() env.Player     { return s.toMove }
func (s *State) Clone() env.State       { c := *s; return &c }
func (s *State) CopyFrom(src env.State) { *s = *src.(*State) }

// Discs returns the number of discs of each colour.
func (s *State) Discs() (black, white int) {
	b, w := bits.OnesCount64(s.own), bits.OnesCount64(s.opp)
	if s.toMove == 1 {
		b, w = w, b
	}
	return b, w
}

// Boards returns the discs of each colour as bitboards (bit 8*row +
// column).
func (s *State) Boards() (black, white uint64) {
	if s.toMove == 1 {
		return s.opp, s.own
	}
	return s.own, s.opp
}

// FinalScore is the score by WOF counting, as WTHOR records it: the
// empty squares go to the player with more discs, and are shared on a tie.
func (s *State) FinalScore() (black, white int) {
	black, white = s.Discs()
	empty := Squares - black - white
	switch {
	case black > white:
		black += empty
	case white > black:
		white += empty
	default:
		black += empty / 2
		white += empty / 2
	}
	return black, white
}

// MoveMask returns the squares where the player to move may place a disc.
func (s *State) MoveMask() uint64 { return moveMask(s.own, s.opp) }

// passAction is the pass action of the state's variant.
func (s *State) passAction() int {
	if s.variant == variantSingle {
		return SinglePass
	}
	return Pass
}

func (s *State) LegalActions(buf []int) []int {
	buf = buf[:0]
	if s.variant == variantSingle {
		dm := directionMasks(s.own, s.opp)
		playable := dm[0] | dm[1] | dm[2] | dm[3] | dm[4] | dm[5] | dm[6] | dm[7]
		if playable == 0 {
			if moveMask(s.opp, s.own) != 0 {
				buf = append(buf, SinglePass)
			}
			return buf
		}
		for m := playable; m != 0; m &= m - 1 {
			sq := bits.TrailingZeros64(m)
			// The directions of this square as the bits of a byte, so
			// the loop below visits only the playable ones.
			dirs := dm[0]>>sq&1 | dm[1]>>sq&1<<1 | dm[2]>>sq&1<<2 | dm[3]>>sq&1<<3 |
				dm[4]>>sq&1<<4 | dm[5]>>sq&1<<5 | dm[6]>>sq&1<<6 | dm[7]>>sq&1<<7
			for ; dirs != 0; dirs &= dirs - 1 {
				buf = append(buf, sq*numDirs+bits.TrailingZeros64(dirs))
			}
		}
		return buf
	}
	moves := moveMask(s.own, s.opp)
	if moves == 0 {
		if moveMask(s.opp, s.own) != 0 {
			buf = append(buf, Pass)
		}
		return buf
	}
	for m := moves; m != 0; m &= m - 1 {
		buf = append(buf, bits.TrailingZeros64(m))
	}
	return buf
}

func (s *State) IsLegal(action int) bool {
	if action < 0 || action > s.passAction() {
		return false
	}
	if action == s.passAction() {
		return moveMask(s.own, s.opp) == 0 && moveMask(s.opp, s.own) != 0
	}
	if s.variant == variantSingle {
		sq := action / numDirs
		empty := ^(s.own | s.opp)
		return empty>>sq&1 != 0 && flipsDir(sq, action%numDirs, s.own, s.opp) != 0
	}
	return moveMask(s.own, s.opp)>>action&1 != 0
}

func (s *State) Apply(action int) {
	if action != s.passAction() {
		var sq int
		var f uint64
		if s.variant == variantSingle {
			sq = action / numDirs
			f = flipsDir(sq, action%numDirs, s.own, s.opp)
		} else {
			sq = action
			f = flips(sq, s.own, s.opp)
		}
		s.own |= f | 1<<sq
		s.opp &^= f
	}
	s.own, s.opp = s.opp, s.own
	s.toMove = s.toMove.Other()
}

func (s *State) Terminal() bool {
	return moveMask(s.own, s.opp) == 0 && moveMask(s.opp, s.own) == 0
}

// Winner is the player with more discs; a tie goes to White under the
// rulebook's rules and is a draw under othello's. It is meaningful only
// once the game is over.
func (s *State) Winner() env.Player {
	black, white := s.Discs()
	switch {
	case black > white:
		return 0
	case white > black:
		return 1
	case s.variant == variantOthello:
		return env.NoPlayer
	}
	return 1
}

func (s *State) Encode(dst []float32) {
	_ = dst[s.variant.planes()*Squares-1]
	legal := moveMask(s.own, s.opp)
	for c := 0; c < Squares; c++ {
		dst[c] = float32(s.own >> c & 1)
		dst[Squares+c] = float32(s.opp >> c & 1)
		dst[2*Squares+c] = float32(legal >> c & 1)
		dst[3*Squares+c] = 1
	}
	if s.variant.planes() > 4 {
		white := float32(s.toMove) // player 1 is White
		for c := 4 * Squares; c < 5*Squares; c++ {
			dst[c] = white
		}
	}
}

func (s *State) Transformed(i int) env.State {
	cell := symmetries[s.variant][i].Cell
	t := &State{toMove: s.toMove, variant: s.variant}
	for c := 0; c < Squares; c++ {
		t.own |= s.own >> c & 1 << cell[c]
		t.opp |= s.opp >> c & 1 << cell[c]
	}
	return t
}

// String draws the board with row 1 on top, X for Black and O for White,
// and says who is to move.
func (s *State) String() string {
	black, white := s.Boards()
	var b strings.Builder
	b.WriteString("  a b c d e f g h\n")
	for row := 0; row < 8; row++ {
		fmt.Fprintf(&b, "%d", row+1)
		for col := 0; col < 8; col++ {
			sq := uint(8*row + col)
			switch {
			case black>>sq&1 != 0:
				b.WriteString(" X")
			case white>>sq&1 != 0:
				b.WriteString(" O")
			default:
				b.WriteString(" .")
			}
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "%s to move\n", Game{s.variant}.PlayerName(s.toMove))
	return b.String()
}
