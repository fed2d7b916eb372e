package yinsh

import (
	"fmt"
	"strconv"
	"strings"
)

// PointName is the notation of point p, e.g. "E5".
func PointName(p int) string {
	if p < 0 || p >= Points {
		return fmt.Sprintf("?%d", p)
	}
	return string(rune('A'+geo.col[p])) + strconv.Itoa(int(geo.row[p]))
}

// ParsePoint reads a point: a column letter A..K and a row number, e.g. "E5".
func ParsePoint(text string) (int, error) {
	if len(text) < 2 || len(text) > 3 || text[0] < 'A' || text[0] > 'K' {
		return 0, fmt.Errorf("bad point %q: want a letter A..K and a row number", text)
	}
	digits := text[1:]
	if digits[0] < '1' || digits[0] > '9' || (len(digits) == 2 && (digits[1] < '0' || digits[1] > '9')) {
		return 0, fmt.Errorf("bad point %q: want a letter A..K and a row number", text)
	}
	row, _ := strconv.Atoi(digits)
	p := geo.pointAt(int(text[0]-'A'), row)
	if p < 0 {
		return 0, fmt.Errorf("point %q is not on the board", text)
	}
	return p, nil
}

// ParseAction reads one decision: "P E5", "M E5 E9", "R C4 G4", "X K8" or
// "pass".
func (Game) ParseAction(text string) (int, error) {
	f := strings.Fields(text)
	if len(f) == 1 && f[0] == "pass" {
		return actPass, nil
	}
	if len(f) == 0 {
		return 0, fmt.Errorf("empty move")
	}
	var want int
	switch f[0] {
	case "P", "X":
		want = 1
	case "M", "R":
		want = 2
	default:
		return 0, fmt.Errorf("bad move %q: want P, M, R, X or pass", text)
	}
	if len(f) != want+1 {
		return 0, fmt.Errorf("bad move %q: %s takes %d point(s)", text, f[0], want)
	}
	a, err := ParsePoint(f[1])
	if err != nil {
		return 0, fmt.Errorf("move %q: %w", text, err)
	}
	switch f[0] {
	case "P":
		return actPlace + a, nil
	case "X":
		return actRing + a, nil
	}
	b, err := ParsePoint(f[2])
	if err != nil {
		return 0, fmt.Errorf("move %q: %w", text, err)
	}
	if f[0] == "M" {
		m := geo.moveID[a][b]
		if m < 0 {
			return 0, fmt.Errorf("bad move %q: %s and %s are not on one line", text, f[1], f[2])
		}
		return actMove + int(m), nil
	}
	if a > b {
		return 0, fmt.Errorf("bad move %q: the ends of a row go in sorted order, %s first", text, f[2])
	}
	w := geo.windowID[a][b]
	if w < 0 {
		return 0, fmt.Errorf("bad move %q: %s and %s are not the ends of 5 points on a line", text, f[1], f[2])
	}
	return actRow + int(w), nil
}

// FormatAction writes an action in the notation ParseAction reads.
func (Game) FormatAction(action int) string {
	switch {
	case action < 0 || action >= ActionCount:
		return fmt.Sprintf("?%d", action)
	case action < actMove:
		return "P " + PointName(action-actPlace)
	case action < actRow:
		m := action - actMove
		return "M " + PointName(int(geo.moveFrom[m])) + " " + PointName(int(geo.moveTo[m]))
	case action < actRing:
		e := geo.windowEnds[action-actRow]
		return "R " + PointName(int(e[0])) + " " + PointName(int(e[1]))
	case action < actPass:
		return "X " + PointName(action-actRing)
	}
	return "pass"
}
