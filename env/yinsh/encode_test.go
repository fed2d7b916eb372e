package yinsh

import "testing"

func TestEncode(t *testing.T) {
	cell := func(name string) int {
		p, err := ParsePoint(name)
		if err != nil {
			t.Fatal(err)
		}
		return cellOf[p]
	}
	// After the placements and white's M C4 E4, black is to move: white's
	// ring from C4 is on E4 and its marker on C4.
	s := play(t, Full(), placements+";M C4 E4")
	dst := make([]float32, Planes*planeSize)
	s.Encode(dst)
	at := func(plane, c int) float32 { return dst[plane*planeSize+c] }
	checks := []struct {
		what  string
		plane int
		cell  int
		want  float32
	}{
		{"black's own ring", 0, cell("G6"), 1},
		{"white's ring is the opponent's", 1, cell("E4"), 1},
		{"white's marker is the opponent's", 3, cell("C4"), 1},
		{"no own marker", 2, cell("C4"), 0},
		{"a point of the board", 4, cell("A2"), 1},
		{"the missing corner A1", 4, 0, 0},
		{"off the board", 4, 10, 0},
		{"not placing", 5, 0, 0},
		{"moving", 6, 60, 1},
		{"not removing", 7, 0, 0},
		{"not removing", 8, 0, 0},
		{"no clean-up", 9, 0, 0},
		{"own removed", 10, 5, 0},
		{"supply", 12, 120, 50.0 / 51},
	}
	for _, c := range checks {
		if got := at(c.plane, c.cell); got != c.want {
			t.Errorf("%s: plane %d cell %d = %v, want %v", c.what, c.plane, c.cell, got, c.want)
		}
	}
	sum := func(plane int) (n float32) {
		for c := 0; c < planeSize; c++ {
			n += at(plane, c)
		}
		return n
	}
	for plane, want := range []float32{5, 5, 0, 1, 85} {
		if got := sum(plane); got != want {
			t.Errorf("plane %d holds %v ones, want %v", plane, got, want)
		}
	}

	// Removing a row after one's own move sets plane 9; scores are /3.
	r := position(t, Full(), "B5 K7 K8 K9", "G2 H3 I4", "C5 D5 E5 F5", "", White)
	r.Apply(mustAction(t, "M B5 B4"))
	r.Encode(dst)
	if at(7, 0) != 1 || at(9, 0) != 1 || at(10, 3) != float32(1)/3 || at(11, 3) != float32(2)/3 {
		t.Errorf("remove-row planes: %v %v %v %v", at(7, 0), at(9, 0), at(10, 3), at(11, 3))
	}
}

func mustAction(t *testing.T, text string) int {
	t.Helper()
	a, err := Full().ParseAction(text)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestSymmetryMaps(t *testing.T) {
	syms := Full().Symmetries()
	if len(syms) != 12 {
		t.Fatalf("%d symmetries, want 12", len(syms))
	}
	g := Full()
	tests := []struct {
		sym      int
		from, to string
	}{
		{1, "P F6", "P F6"},       // the centre stays
		{6, "P A5", "P E1"},       // the mirror swaps the two axes
		{3, "P A2", "P K10"},      // a half turn
		{1, "P K7", "P J11"},      // 60°: (5,1) → (4,5)
		{3, "M E5 E9", "M G7 G3"}, // a move turns with its ends
		{3, "R C4 G4", "R E8 I8"}, // a row keeps its ends sorted
		{6, "pass", "pass"},
	}
	for _, tt := range tests {
		a, b := mustAction(t, tt.from), mustAction(t, tt.to)
		if got := syms[tt.sym].Action[a]; got != b {
			t.Errorf("%s maps %s to %s, want %s", syms[tt.sym].Name, tt.from, g.FormatAction(got), tt.to)
		}
	}
	// Six turns of 60° and two mirrors are the identity.
	for a := 0; a < ActionCount; a++ {
		b, c := a, syms[6].Action[syms[6].Action[a]]
		for i := 0; i < 6; i++ {
			b = syms[1].Action[b]
		}
		if b != a || c != a {
			t.Fatalf("%s: six turns give %s, two mirrors %s", g.FormatAction(a), g.FormatAction(b), g.FormatAction(c))
		}
	}
}
