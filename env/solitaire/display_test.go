package solitaire

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/envtest"
)

// TestDisplay: the cells the pages draw say what String draws on every
// square, the status gives the score, and a placement is picked by its
// square and a reveal marks the token turning up.
func TestDisplay(t *testing.T) {
	want := map[byte]string{'.': "", 'g': "gold", 'b': "black", '#': "token", '?': "token-turning", 'G': "token-gold", 'B': "token-black"}
	for _, g := range []Game{Default(), DefaultSum()} {
		reveals := 0
		for _, st := range envtest.RandomPositions(g, 300, 4) {
			s := st.(*State)
			var d env.Display = s
			rows := strings.Split(s.String(), "\n")[1:9]
			cells := d.Cells()
			if len(cells) != 64 || d.Layout() != "square" {
				t.Fatalf("%d cells, layout %s", len(cells), d.Layout())
			}
			for sq, c := range cells {
				ch := rows[sq/8][2+2*(sq%8)]
				if c.Name != SquareName(sq) || !strings.HasPrefix(c.Piece, want[ch]) || (want[ch] == "") != (c.Piece == "") {
					t.Fatalf("%s: cell %+v, the picture shows %q\n%v", g.Name(), c, ch, s)
				}
				if g.r.layout.Sum && (ch == 'G' || ch == 'B') && !strings.Contains(s.String(), c.Name+"="+strings.TrimPrefix(c.Piece, "token-")) {
					t.Fatalf("%s: cell %+v, the face listed differs\n%v", g.Name(), c, s)
				}
			}
			if !strings.Contains(d.Status(), fmtScore(s)) {
				t.Errorf("status %q does not give the score %v", d.Status(), s.Score())
			}
			for _, a := range s.LegalActions(nil) {
				kind, points := d.Targets(a)
				if kind != "point" || len(points) != 1 {
					t.Fatalf("targets of %s: %s %v", g.FormatAction(a), kind, points)
				}
				if a >= Reveal {
					reveals++
					if cells[squareOf(points[0])].Piece != "token-turning" {
						t.Fatalf("%s marks %s, not the token turning up", g.FormatAction(a), points[0])
					}
				} else if !strings.HasPrefix(g.FormatAction(a), points[0]+":") {
					t.Fatalf("%s is picked at %s", g.FormatAction(a), points[0])
				}
			}
		}
		if reveals == 0 {
			t.Errorf("%s: no chance node among the positions", g.Name())
		}
	}
}

// fmtScore is how the status gives the score so far.
func fmtScore(s *State) string {
	if s.r.layout.Sum {
		return fmt.Sprintf("score %g of", s.Score())
	}
	return fmt.Sprintf("captured %d of", s.Captured())
}

func squareOf(name string) int {
	sq, _ := ParseSquare(name)
	return sq
}
