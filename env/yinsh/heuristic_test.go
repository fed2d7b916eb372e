package yinsh

import (
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/envtest"
)

func TestFeaturesOfABuiltPosition(t *testing.T) {
	// White walks the ring from E2 up to E6, leaving markers on E2..E5:
	// the windows E1–E5 and E2–E6 hold 4 of them (the ring on E6 is
	// White's own, so it does not block), E3–E7 holds 3. Black walks the
	// ring from J5 to G5 along row 5, leaving H5, I5, J5: 3 in F5–J5.
	moves := "P E2;P J5;P B1;P J6;P B2;P J7;P B3;P J8;P B4;P J9;" +
		"M E2 E3;M J5 I5;M E3 E4;M I5 H5;M E4 E5;M H5 G5;M E5 E6"
	s, err := env.Play(Full(), moves)
	if err != nil {
		t.Fatal(err)
	}
	st := s.(*State)
	tests := []struct {
		p    env.Player
		want Features
	}{
		{White, Features{Markers: 4, Fours: 2, Threes: 1}},
		{Black, Features{Markers: 3, Threes: 1}},
	}
	for _, tc := range tests {
		got := st.Features(tc.p)
		got.RingMoves = 0 // checked below against the legal moves
		if got != tc.want {
			t.Errorf("%s: features %+v, want %+v\n%v", Full().PlayerName(tc.p), got, tc.want, s)
		}
	}
	if h := st.Heuristic(White); h <= 0 {
		t.Errorf("White has the better rows and more markers, but the heuristic gives it %v", h)
	}
}

func TestFeaturesAgreeWithTheRules(t *testing.T) {
	buf := make([]int, 0, ActionCount)
	pending := 0
	for _, g := range []env.Game{Full(), Blitz()} {
		for _, s := range envtest.RandomPositions(g, 400, 8) {
			st := s.(*State)
			for _, p := range []env.Player{White, Black} {
				f := st.Features(p)
				if f.Markers != st.MarkersOnBoard(p) {
					t.Fatalf("%d markers, the board shows %d", f.Markers, st.MarkersOnBoard(p))
				}
				if h, o := st.Heuristic(p), st.Heuristic(p.Other()); h != -o {
					t.Fatalf("heuristic %v for one side and %v for the other, want opposites", h, o)
				}
				if s.Terminal() || s.ToMove() != p {
					continue
				}
				legal := s.LegalActions(buf)
				switch first := g.FormatAction(legal[0]); {
				case strings.HasPrefix(first, "M "):
					if f.RingMoves != len(legal) {
						t.Fatalf("%d ring moves counted, %d legal", f.RingMoves, len(legal))
					}
				case strings.HasPrefix(first, "R "), strings.HasPrefix(first, "X "):
					pending++
					if f.RingsRemoved != st.Removed(p)+1 {
						t.Fatalf("a removal is pending, but RingsRemoved is %d with %d removed", f.RingsRemoved, st.Removed(p))
					}
				}
			}
		}
	}
	if pending == 0 {
		t.Error("no position with a pending removal was checked")
	}
}

func BenchmarkHeuristic(b *testing.B) {
	positions := envtest.RandomPositions(Full(), 256, 4)
	b.ReportAllocs()
	sum := 0.0
	for i := 0; i < b.N; i++ {
		sum += positions[i%len(positions)].(*State).Heuristic(White)
	}
	_ = sum
}
