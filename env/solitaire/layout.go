package solitaire

import (
	_ "embed"
	"fmt"
	"math/bits"
	"os"
	"strconv"
	"strings"
)

//go:embed default.layout
var defaultLayout string

// maxNumber is the largest number a token may carry. It bounds the
// action space: one reveal action per distinct face.
const maxNumber = 50

// maxKinds is the most distinct faces a token set can have: each colour
// with numbers 1..maxNumber and a blank.
const maxKinds = 2 * (maxNumber + 1)

// Face is what a token shows once it is turned up.
type Face struct {
	// Gold is the face's colour: gold, or else black.
	Gold bool
	// Number is the number printed on it, 0 for a blank.
	Number int
}

// String writes the face as the notation does: "gold-7", "black-blank".
func (f Face) String() string {
	c := "black"
	if f.Gold {
		c = "gold"
	}
	if f.Number == 0 {
		return c + "-blank"
	}
	return c + "-" + strconv.Itoa(f.Number)
}

// Layout is a parsed layout file: where the tokens and the start discs
// lie, the token faces, and how the result is scored.
type Layout struct {
	// Tokens, Gold and Black are bitboards: bit 8*row+column, a1 = bit 0.
	Tokens, Gold, Black uint64
	// Faces are the faces of the tokens, one per token.
	Faces []Face
	// Sum selects the variant's scoring: the sum of the captured tokens'
	// numbers, doubled when every blank was captured. Otherwise the
	// result is the number of tokens captured.
	Sum bool
}

// DefaultLayout returns the layout embedded in the package,
// default.layout.
func DefaultLayout() Layout {
	l, err := ParseLayout("default.layout", defaultLayout)
	if err != nil {
		// The embedded file is part of the program; its tests parse it.
		panic(err)
	}
	return l
}

// LoadLayout reads and parses a layout file.
func LoadLayout(path string) (Layout, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Layout{}, fmt.Errorf("layout: %w", err)
	}
	return ParseLayout(path, string(data))
}

// ParseLayout parses the text of a layout file; name is the file's name
// for error messages, which read "name:line: problem".
func ParseLayout(name, text string) (Layout, error) {
	var l Layout
	fail := func(line int, format string, args ...any) (Layout, error) {
		return Layout{}, fmt.Errorf("layout %s:%d: %s", name, line, fmt.Sprintf(format, args...))
	}
	lines := strings.Split(text, "\n")
	sawBoard, sawScoring := false, false
	boardLine := 0
	for i := 0; i < len(lines); i++ {
		n := i + 1
		line := lines[i]
		if j := strings.IndexByte(line, '#'); j >= 0 {
			line = line[:j]
		}
		words := strings.Fields(line)
		if len(words) == 0 {
			continue
		}
		switch words[0] {
		case "board":
			if sawBoard {
				return fail(n, "a second board (the first is at line %d)", boardLine)
			}
			if len(words) != 1 {
				return fail(n, "\"board\" takes no arguments; the 8 rows follow on their own lines")
			}
			sawBoard, boardLine = true, n
			for row := 0; row < 8; row++ {
				i++
				if i >= len(lines) || i == len(lines)-1 && strings.TrimSpace(lines[i]) == "" {
					return fail(n, "the board has %d rows, want 8", row)
				}
				cells := strings.Join(strings.Fields(lines[i]), "")
				if len(cells) != 8 {
					return fail(i+1, "board row %d has %d cells, want 8 of . t g b", row+1, len(cells))
				}
				for col := 0; col < 8; col++ {
					bit := uint64(1) << (8*row + col)
					switch cells[col] {
					case '.':
					case 't':
						l.Tokens |= bit
					case 'g':
						l.Gold |= bit
					case 'b':
						l.Black |= bit
					default:
						return fail(i+1, "board row %d: cell %q is not one of . t g b", row+1, cells[col])
					}
				}
			}
		case "gold", "black":
			for _, w := range words[1:] {
				f := Face{Gold: words[0] == "gold"}
				if w != "blank" {
					v, err := strconv.Atoi(w)
					if err != nil || v < 1 || v > maxNumber {
						return fail(n, "token %q: want a number 1..%d or blank", w, maxNumber)
					}
					f.Number = v
				}
				l.Faces = append(l.Faces, f)
			}
		case "scoring":
			if sawScoring {
				return fail(n, "a second scoring line")
			}
			sawScoring = true
			if len(words) != 2 || words[1] != "count" && words[1] != "sum" {
				return fail(n, "want \"scoring count\" or \"scoring sum\"")
			}
			l.Sum = words[1] == "sum"
		default:
			return fail(n, "unknown keyword %q: want board, gold, black or scoring", words[0])
		}
	}
	end := len(lines)
	if strings.HasSuffix(text, "\n") {
		end--
	}
	switch {
	case !sawBoard:
		return fail(end, "no board")
	case !sawScoring:
		return fail(end, "no scoring line")
	case l.Tokens == 0:
		return fail(boardLine, "the board has no token")
	case bits.OnesCount64(l.Tokens) != len(l.Faces):
		return fail(boardLine, "the board has %d tokens but the token lines list %d faces", bits.OnesCount64(l.Tokens), len(l.Faces))
	}
	// A token needs a square on each side of it along some line to be
	// captured: one in a corner never is, and every token captured could
	// never happen.
	const corners = 1<<0 | 1<<7 | 1<<56 | 1<<63
	if c := l.Tokens & corners; c != 0 {
		return fail(boardLine, "a token in corner %s can never be captured", cornerName(c))
	}
	if l.Sum {
		total := 0
		for _, f := range l.Faces {
			total += f.Number
		}
		if total == 0 {
			return fail(end, "scoring sum with no numbered token: every result would be 0")
		}
	}
	s := newRules("check", l).start
	if s.Terminal() {
		return fail(boardLine, "no legal placement at the start")
	}
	return l, nil
}

func cornerName(c uint64) string {
	sq := bits.TrailingZeros64(c)
	return string([]byte{byte('a' + sq%8), byte('1' + sq/8)})
}
