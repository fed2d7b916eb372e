package yinsh

import (
	"fmt"
	"math"
	"strings"

	"github.com/flipzero/flipzero/env"
)

// piece is what stands on point p, as a letter: W B rings, w b markers,
// 0 for nothing.
func (s *State) piece(p int) byte {
	switch {
	case s.rings[White].has(p):
		return 'W'
	case s.rings[Black].has(p):
		return 'B'
	case s.markers[White].has(p):
		return 'w'
	case s.markers[Black].has(p):
		return 'b'
	}
	return 0
}

// Layout is the hexagonal grid of points.
func (s *State) Layout() string { return "hex" }

// Cells lists the 85 points. Columns are vertical and a point (column c,
// row r) sits √3/2·c across and c/2 − r down, so that the three
// directions of lines are 60° apart.
func (s *State) Cells() []env.Cell {
	names := map[byte]string{'W': "white-ring", 'B': "black-ring", 'w': "white-marker", 'b': "black-marker"}
	cells := make([]env.Cell, 0, Points)
	for p := 0; p < Points; p++ {
		col, row := int(geo.col[p]), int(geo.row[p])
		cells = append(cells, env.Cell{
			Name: PointName(p), Col: col, Row: row, Piece: names[s.piece(p)],
			X: float64(col) * math.Sqrt(3) / 2, Y: float64(col)/2 - float64(row),
		})
	}
	return cells
}

// Status counts the rings removed.
func (s *State) Status() string {
	return fmt.Sprintf("rings removed: white %d, black %d (of %d)", s.removed[White], s.removed[Black],
		Game{blitz: s.blitz}.RingsToWin())
}

// Tally is the rings each player removed.
func (s *State) Tally() (first, second int) { return int(s.removed[White]), int(s.removed[Black]) }

// Prompt names the decision of the phase.
func (s *State) Prompt() string {
	switch s.phase {
	case phasePlace:
		return "place a ring (P E5)"
	case phaseMove:
		return "move a ring (M E5 E9)"
	case phaseRemoveRow:
		return "remove a row (R C4 G4)"
	case phaseRemoveRing:
		return "remove one of your rings (X K8)"
	}
	return ""
}

// Targets: a placement or a ring removal is picked by its point, a ring
// move by its from and to, a row by its five points.
func (s *State) Targets(action int) (kind string, points []string) {
	f := strings.Fields(Game{blitz: s.blitz}.FormatAction(action))
	switch {
	case len(f) == 1:
		return "pass", nil
	case f[0] == "M":
		return "move", f[1:]
	case f[0] == "R":
		a, _ := ParsePoint(f[1])
		b, _ := ParsePoint(f[2])
		ca, ra := int(geo.col[a]), int(geo.row[a])
		cb, rb := int(geo.col[b]), int(geo.row[b])
		for i := 0; i <= 4; i++ {
			points = append(points, PointName(geo.pointAt(ca+(cb-ca)*i/4, ra+(rb-ra)*i/4)))
		}
		return "row", points
	}
	return "point", f[1:]
}

// Picture draws the board as its hexagon: a point (column c, row r) is
// drawn 4c characters across and c − 2r half-lines down. Column letters
// run above and below; each row's number stands at both of its ends.
func (s *State) Picture() string {
	const top, margin = 20, 4
	const height, width = top + 6, 4*11 + margin + 3
	grid := make([][]byte, height)
	for i := range grid {
		grid[i] = []byte(strings.Repeat(" ", width))
	}
	put := func(line, x int, text string) { copy(grid[line][x:], text) }
	var left, right [12]int // the first and last column of each row
	for r := range left {
		left[r], right[r] = 99, -1
	}
	for p := 0; p < Points; p++ {
		col, row := int(geo.col[p]), int(geo.row[p])
		symbol := "."
		if c := s.piece(p); c != 0 {
			symbol = string(c)
		}
		put(col-2*row+top, 4*col+margin, symbol)
		left[row], right[row] = min(left[row], col), max(right[row], col)
	}
	for col := 0; col < 11; col++ {
		letter := string(rune('A' + col))
		put(0, 4*col+margin, letter)
		put(height-1, 4*col+margin, letter)
	}
	for row := 1; row <= 11; row++ {
		l, r := left[row], right[row]
		put(l-2*row+top, 4*l+margin-3, fmt.Sprintf("%2d", row))
		put(r-2*row+top, 4*r+margin+2, fmt.Sprintf("%d", row))
	}
	var b strings.Builder
	for _, line := range grid {
		if t := strings.TrimRight(string(line), " "); t != "" {
			b.WriteString(t)
			b.WriteByte('\n')
		}
	}
	fmt.Fprintf(&b, "W B rings, w b markers. Rings removed: white %d, black %d (of %d); markers left %d\n",
		s.removed[White], s.removed[Black], Game{blitz: s.blitz}.RingsToWin(), s.supply)
	return b.String()
}

var (
	_ env.Display = (*State)(nil)
	_ env.Tally   = (*State)(nil)
)
