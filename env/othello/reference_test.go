package othello

import "github.com/flipzero/flipzero/env"

// refBoard is a deliberately plain engine — a board of 64 cells walked
// square by square and direction by direction — written from the rules
// alone, to check the bitboard engine against.
type refBoard struct {
	cells  [64]int8 // 0 empty, 1 black, 2 white
	toMove int8     // 1 black, 2 white
	single bool
}

func refStart(single bool) refBoard {
	var b refBoard
	b.cells[3*8+3], b.cells[4*8+4] = 2, 2 // d4, e5 white
	b.cells[3*8+4], b.cells[4*8+3] = 1, 1 // e4, d5 black
	b.toMove = 1
	b.single = single
	return b
}

// refFlips lists the cells a disc of colour c at (row, col) would flip
// in direction (dr, dc).
func (b *refBoard) refFlips(c int8, row, col, dr, dc int) []int {
	var line []int
	r, k := row+dr, col+dc
	for r >= 0 && r < 8 && k >= 0 && k < 8 {
		switch b.cells[8*r+k] {
		case 0:
			return nil
		case c:
			return line
		default:
			line = append(line, 8*r+k)
		}
		r, k = r+dr, k+dc
	}
	return nil
}

// refMove is a move of the reference engine: a cell and the discs it
// flips; the direction is -1 for the full game.
type refMove struct {
	cell, dir int
	flips     []int
}

func (b *refBoard) moves(c int8) []refMove {
	var out []refMove
	for cell := 0; cell < 64; cell++ {
		if b.cells[cell] != 0 {
			continue
		}
		var all []int
		for d, step := range dirSteps {
			f := b.refFlips(c, cell/8, cell%8, step[0], step[1])
			if len(f) == 0 {
				continue
			}
			if b.single {
				out = append(out, refMove{cell, d, f})
			}
			all = append(all, f...)
		}
		if !b.single && len(all) > 0 {
			out = append(out, refMove{cell, -1, all})
		}
	}
	return out
}

func (b *refBoard) play(m refMove) {
	b.cells[m.cell] = b.toMove
	for _, f := range m.flips {
		b.cells[f] = b.toMove
	}
	b.toMove = 3 - b.toMove
}

func (b *refBoard) over() bool {
	return len(b.moves(1)) == 0 && len(b.moves(2)) == 0
}

// action is the move's index in the engine's action space.
func (m refMove) action() int {
	if m.dir >= 0 {
		return m.cell*numDirs + m.dir
	}
	return m.cell
}

// refPerft counts leaves by the rules doc's convention.
func refPerft(b refBoard, depth int) uint64 {
	if depth == 0 || b.over() {
		return 1
	}
	moves := b.moves(b.toMove)
	if len(moves) == 0 {
		b.toMove = 3 - b.toMove
		return refPerft(b, depth-1)
	}
	var n uint64
	for _, m := range moves {
		child := b
		child.play(m)
		n += refPerft(child, depth-1)
	}
	return n
}

// sameAs reports whether the engine's state holds the same position.
func (b *refBoard) sameAs(s *State) bool {
	black, white := s.Boards()
	for cell, c := range b.cells {
		want := int8(black>>cell&1) + 2*int8(white>>cell&1)
		if c != want {
			return false
		}
	}
	return env.Player(b.toMove-1) == s.ToMove()
}
