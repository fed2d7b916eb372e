package yinsh

import (
	"slices"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/envtest"
)

func TestConformance(t *testing.T) {
	for _, g := range []env.Game{Full(), Blitz()} {
		t.Run(g.Name(), func(t *testing.T) {
			envtest.Run(t, g, envtest.Options{Playouts: 500, Positions: 200, Seed: 7})
		})
	}
}

func TestTables(t *testing.T) {
	// The counts the rules document gives for the board.
	if n := allPoints.count(); n != 85 {
		t.Errorf("%d points, want 85", n)
	}
	pairs := 0
	for from := 0; from < Points; from++ {
		for to := 0; to < Points; to++ {
			if geo.moveID[from][to] >= 0 {
				pairs++
			}
		}
	}
	if pairs != 1848 || ActionCount != 2142 {
		t.Errorf("%d ring moves and %d actions, want 1848 and 2142", pairs, ActionCount)
	}
	for _, bad := range []string{"A1", "A6", "F1", "F11", "K6", "K11", "L5", "A7", "K5"} {
		if _, err := ParsePoint(bad); err == nil {
			t.Errorf("%s accepted as a point", bad)
		}
	}
	for _, good := range []string{"A2", "A5", "B1", "B7", "F6", "F10", "K7", "K10", "E10"} {
		p, err := ParsePoint(good)
		if err != nil || PointName(p) != good {
			t.Errorf("%s: %d %v", good, p, err)
		}
	}
}

func TestNotation(t *testing.T) {
	g := Full()
	tests := []struct {
		text string
		ok   bool
	}{
		{"P E5", true}, {"M E5 E9", true}, {"R C4 G4", true}, {"X K8", true}, {"pass", true},
		{"M E5 F7", false},    // not on a line
		{"R G4 C4", false},    // ends out of order
		{"R C4 H4", false},    // 6 points
		{"R C4 C5", false},    // 2 points
		{"P E5 E6", false},    // too many points
		{"M E5", false},       // too few
		{"P A1", false},       // a missing corner
		{"p E5", false},       // lower-case verb
		{"P E05", false},      // leading zero
		{"Pass", false},       // capital
		{"Q E5", false},       // no such verb
		{"M E5 E5", false},    // no move
		{"X", false},          // no point
		{"R E1 E5 E6", false}, // three points
	}
	for _, tt := range tests {
		a, err := g.ParseAction(tt.text)
		if (err == nil) != tt.ok {
			t.Errorf("%q: error %v, want ok=%v", tt.text, err, tt.ok)
			continue
		}
		if tt.ok && g.FormatAction(a) != tt.text {
			t.Errorf("%q formats back as %q", tt.text, g.FormatAction(a))
		}
	}
	// Every action prints and parses back to itself.
	for a := 0; a < ActionCount; a++ {
		if back, err := g.ParseAction(g.FormatAction(a)); err != nil || back != a {
			t.Errorf("action %d %q parses as %d, %v", a, g.FormatAction(a), back, err)
		}
	}
}

// position builds a state where player toMove is to move a ring: rings
// and markers of each colour as points separated by spaces. Rings not on
// the board count as removed.
func position(t *testing.T, g env.Game, whiteRings, blackRings, whiteMarkers, blackMarkers string, toMove env.Player) *State {
	t.Helper()
	s := g.(Game).Start()
	s.placed = 2 * RingsEach
	for i, list := range []string{whiteRings, blackRings, whiteMarkers, blackMarkers} {
		for _, name := range strings.Fields(list) {
			p, err := ParsePoint(name)
			if err != nil {
				t.Fatal(err)
			}
			if s.occupied().has(p) {
				t.Fatalf("%s used twice", name)
			}
			if i < 2 {
				s.rings[i].set(p)
			} else {
				s.markers[i-2].set(p)
			}
		}
	}
	s.supply = uint8(Markers - s.markers[0].count() - s.markers[1].count())
	s.removed = [2]uint8{uint8(RingsEach - s.rings[0].count()), uint8(RingsEach - s.rings[1].count())}
	s.startMove(toMove)
	return s
}

func legalTexts(s env.State) []string {
	g := s.Game()
	var out []string
	for _, a := range s.LegalActions(make([]int, 0, ActionCount)) {
		out = append(out, g.FormatAction(a))
	}
	return out
}

func apply(t *testing.T, s env.State, moves ...string) {
	t.Helper()
	for _, m := range moves {
		a, err := env.ParseLegal(s, m)
		if err != nil {
			t.Fatalf("%s: %v; legal: %v\n%v", m, err, legalTexts(s), s)
		}
		s.Apply(a)
	}
}

func TestRingMoves(t *testing.T) {
	tests := []struct {
		name           string
		wr, br, wm, bm string
		ring           string
		want           []string // targets of the ring
	}{
		// F6 alone on the board reaches every point of its three lines.
		{"open", "F6", "A2", "", "", "F6", []string{"A6x", "B2", "B6", "C3", "C6", "D4", "D6", "E5", "E6", "F10", "F2", "F3", "F4", "F5", "F7", "F8", "F9", "G6", "G7", "H6", "H8", "I6", "I9", "J10", "J6", "K6x"}},
		// Over empty points, over one group of markers (any colours), and
		// then only the first empty point; never over a ring.
		{"jump", "E5", "E9 G5", "E6 F6", "E7 D4", "E5", []string{"A5", "B5", "C5", "D5", "E2", "E3", "E4", "E8", "F5", "E1", "C3", "G7"}},
	}
	for _, tt := range tests {
		s := position(t, Full(), tt.wr, tt.br, tt.wm, tt.bm, White)
		from, _ := ParsePoint(tt.ring)
		var got, want []string
		s.targets(from).forEach(func(p int) { got = append(got, PointName(p)) })
		for _, w := range tt.want {
			if !strings.HasSuffix(w, "x") {
				want = append(want, w)
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: targets %v, want %v", tt.name, got, want)
		}
	}
}

func TestFlipAndRows(t *testing.T) {
	// White moves E5 over E6 (white) E7 (black) to E8: E5 gets a white
	// marker, E6 turns black and E7 white.
	s := position(t, Full(), "E5 A2 A3", "B1 B2 B3", "E6", "E7", White)
	apply(t, s, "M E5 E8")
	want := position(t, Full(), "E8 A2 A3", "B1 B2 B3", "E5 E7", "E6", Black)
	if s.String() != want.String() {
		t.Errorf("after the move:\n%s\nwant\n%s", s, want)
	}
	if s.supply != Markers-3 {
		t.Errorf("supply %d", s.supply)
	}
}

func TestRowRemoval(t *testing.T) {
	t.Run("own row, then the opponent moves", func(t *testing.T) {
		// C5..F5 are white; the marker the ring leaves on B5 is the fifth.
		s := position(t, Full(), "B5 K7 K8 K9 K10", "G2 H3 I4 I5 I6", "C5 D5 E5 F5", "", White)
		apply(t, s, "M B5 B4")
		if got := legalTexts(s); !slices.Equal(got, []string{"R B5 F5"}) || s.ToMove() != White {
			t.Fatalf("legal %v for %d, want white to remove R B5 F5", got, s.ToMove())
		}
		apply(t, s, "R B5 F5")
		if got := legalTexts(s); !slices.Equal(got, []string{"X B4", "X K7", "X K8", "X K9", "X K10"}) {
			t.Fatalf("ring removals %v", got)
		}
		apply(t, s, "X K8")
		if s.ToMove() != Black || s.phase != phaseMove || s.removed[White] != 1 || s.supply != Markers {
			t.Fatalf("after the removal:\n%v", s)
		}
	})
	t.Run("a run of 6 gives two choices", func(t *testing.T) {
		s := position(t, Full(), "B5 K7 K8 K9 K10", "G2 H3 I4 I5 I6", "C5 D5 E5 F5 G5", "", White)
		apply(t, s, "M B5 B4")
		if got := legalTexts(s); !slices.Equal(got, []string{"R B5 F5", "R C5 G5"}) {
			t.Fatalf("legal %v", got)
		}
		apply(t, s, "R C5 G5", "X K7")
		if s.ToMove() != Black || s.markers[White].count() != 1 {
			t.Fatalf("after removing 5 of 6:\n%v", s)
		}
	})
	t.Run("intersecting rows: one removal ends the other", func(t *testing.T) {
		// With B4 empty, the marker left on B5 completes B5–F5 only.
		s := position(t, Full(), "B5 K7 K8 K9 K10", "G2 H3 I4 I5 I6", "C5 D5 E5 F5 B1 B2 B3", "", White)
		apply(t, s, "M B5 B6")
		if got := legalTexts(s); !slices.Equal(got, []string{"R B5 F5"}) {
			t.Fatalf("legal %v", got)
		}
		s = position(t, Full(), "B5 K7 K8 K9 K10", "G2 H3 I4 I5 I6", "C5 D5 E5 F5 B1 B2 B3 B4", "", White)
		// With B4 white, the marker on B5 completes B1–B5 and B5–F5,
		// which share B5.
		apply(t, s, "M B5 B6")
		if got := legalTexts(s); !slices.Equal(got, []string{"R B1 B5", "R B5 F5"}) {
			t.Fatalf("legal %v", got)
		}
		apply(t, s, "R B1 B5", "X K7")
		if s.ToMove() != Black || s.phase != phaseMove {
			t.Fatalf("the other row should be gone:\n%v", s)
		}
	})
	t.Run("two separate rows: each removed with a ring", func(t *testing.T) {
		// E1 to E5 jumps E3 and E4, whose flips complete A3–E3 and A4–E4.
		s := position(t, Full(), "E1 K7 K8 K9 K10", "G2 H3 I4 I5 I6", "A3 B3 C3 D3 A4 B4 C4 D4", "E3 E4", White)
		apply(t, s, "M E1 E5")
		if got := legalTexts(s); !slices.Equal(got, []string{"R A3 E3", "R A4 E4"}) {
			t.Fatalf("legal %v", got)
		}
		apply(t, s, "R A3 E3", "X K7")
		if got := legalTexts(s); !slices.Equal(got, []string{"R A4 E4"}) || s.ToMove() != White {
			t.Fatalf("second row: legal %v", got)
		}
		apply(t, s, "R A4 E4", "X K8")
		if s.ToMove() != Black || s.removed[White] != 2 {
			t.Fatalf("after two rows:\n%v", s)
		}
	})
	t.Run("the opponent's row is removed by the opponent, who then moves", func(t *testing.T) {
		// White's move flips E4 to black, completing A4..E4 for black.
		s := position(t, Full(), "E1 K7 K8 K9 K10", "G2 H3 I4 I5 I6", "E4", "A4 B4 C4 D4", White)
		apply(t, s, "M E1 E5")
		if got := legalTexts(s); !slices.Equal(got, []string{"R A4 E4"}) || s.ToMove() != Black {
			t.Fatalf("legal %v for %d", got, s.ToMove())
		}
		apply(t, s, "R A4 E4", "X I4")
		if s.ToMove() != Black || s.phase != phaseMove {
			t.Fatalf("black should move next:\n%v", s)
		}
	})
	t.Run("both players' rows: the mover first", func(t *testing.T) {
		// The marker left on E2 completes white A2–E2; the flip of E4
		// completes black A4–E4.
		s := position(t, Full(), "E2 K7 K8 K9 K10", "G2 H3 I4 I5 I6", "A2 B2 C2 D2 E4", "A4 B4 C4 D4", White)
		apply(t, s, "M E2 E5")
		if got := legalTexts(s); !slices.Equal(got, []string{"R A2 E2"}) || s.ToMove() != White {
			t.Fatalf("mover first: legal %v for %d", got, s.ToMove())
		}
		apply(t, s, "R A2 E2", "X K7")
		if got := legalTexts(s); !slices.Equal(got, []string{"R A4 E4"}) || s.ToMove() != Black {
			t.Fatalf("then the opponent: legal %v for %d", got, s.ToMove())
		}
		apply(t, s, "R A4 E4", "X G2")
		if s.ToMove() != Black || s.phase != phaseMove {
			t.Fatalf("black moves next:\n%v", s)
		}
	})
}

func TestWins(t *testing.T) {
	t.Run("third ring wins", func(t *testing.T) {
		s := position(t, Full(), "B5 K7 K8", "G2 H3 I4", "C5 D5 E5 F5", "", White)
		s.removed[White] = 2
		apply(t, s, "M B5 B4", "R B5 F5", "X K7")
		if !s.Terminal() || s.Winner() != White {
			t.Fatalf("white should have won:\n%v", s)
		}
	})
	t.Run("blitz: first ring wins", func(t *testing.T) {
		s := position(t, Blitz(), "B5 K7 K8 K9 K10", "G2 H3 I4 I5 I6", "C5 D5 E5 F5", "", White)
		apply(t, s, "M B5 B4", "R B5 F5", "X K7")
		if !s.Terminal() || s.Winner() != White {
			t.Fatalf("white should have won:\n%v", s)
		}
	})
	t.Run("both complete the third row: the mover wins", func(t *testing.T) {
		s := position(t, Full(), "E2 K7 K8", "G2 H3 I4", "A2 B2 C2 D2 E4", "A4 B4 C4 D4", White)
		s.removed = [2]uint8{2, 2}
		apply(t, s, "M E2 E5", "R A2 E2", "X K7")
		if !s.Terminal() || s.Winner() != White {
			t.Fatalf("white should have won:\n%v", s)
		}
	})
	t.Run("markers run out: more rings removed wins", func(t *testing.T) {
		s := position(t, Full(), "E2 K7 K8", "G2 H3 I4", "", "", White)
		s.supply = 1
		apply(t, s, "M E2 E3")
		if !s.Terminal() || s.Winner() != env.NoPlayer {
			t.Fatalf("equal removals should draw:\n%v", s)
		}
		s = position(t, Full(), "E2 K7 K8 K9", "G2 H3 I4", "", "", White)
		s.supply = 1
		apply(t, s, "M E2 E3")
		if !s.Terminal() || s.Winner() != Black {
			t.Fatalf("black removed more:\n%v", s)
		}
	})
}

func mustPoint(t *testing.T, name string) int {
	t.Helper()
	p, err := ParsePoint(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPass(t *testing.T) {
	// White's rings A2 and B1 are walled in by black rings: white must
	// pass, without using a marker, and black moves.
	s := position(t, Full(), "A2 B1", "A3 B2 B3 C1 C2", "", "", White)
	// Only the blocking matters here: white has 2 rings and has not won.
	s.removed[White] = 2
	if got := legalTexts(s); !slices.Equal(got, []string{"pass"}) {
		t.Fatalf("legal %v, want pass", got)
	}
	apply(t, s, "pass")
	if s.Terminal() || s.ToMove() != Black || s.supply != Markers {
		t.Fatalf("after the pass:\n%v", s)
	}

	// Both blocked: every point a ring could reach holds a marker (50 of
	// them, coloured so that no line has 3 alike in a row), so the pass
	// ends the game, scored by rings removed.
	for _, tt := range []struct {
		removed [2]uint8
		winner  env.Player
	}{{[2]uint8{2, 2}, env.NoPlayer}, {[2]uint8{2, 1}, White}, {[2]uint8{0, 2}, Black}} {
		s = position(t, Full(), "C1 C8 D2", "D9 I9 K9", "", "", White)
		rings := s.rings[White].or(s.rings[Black])
		rings.forEach(func(p int) {
			for h := 0; h < 6; h++ {
				for i := 0; i < int(geo.rayLen[p][h]); i++ {
					q := int(geo.ray[p][h][i])
					if rings.has(q) {
						break
					}
					s.markers[(int(geo.col[q])+int(geo.row[q]))%3/2].set(q)
				}
			}
		})
		s.supply = uint8(Markers - s.markers[0].count() - s.markers[1].count())
		s.removed = tt.removed
		if s.supply == 0 || s.hasRow(White) || s.hasRow(Black) {
			t.Fatalf("bad set-up: supply %d\n%v", s.supply, s)
		}
		if got := legalTexts(s); !slices.Equal(got, []string{"pass"}) {
			t.Fatalf("legal %v, want pass", got)
		}
		apply(t, s, "pass")
		if !s.Terminal() || s.Winner() != tt.winner {
			t.Errorf("removed %v: terminal %v winner %d, want the end with %d\n%v", tt.removed, s.Terminal(), s.Winner(), tt.winner, s)
		}
	}
}
