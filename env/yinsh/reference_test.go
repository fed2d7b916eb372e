package yinsh

import (
	"slices"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/envtest"
)

// naiveDecisions lists the decisions of the player to decide straight
// from the rules, stepping over (column, row) coordinates without the
// engine's ray tables, move numbers or bit sets.
func naiveDecisions(s *State) []string {
	me := s.toMove
	piece := func(c, r int) byte {
		p := geo.pointAt(c, r)
		switch {
		case p < 0:
			return 'x'
		case s.rings[0].has(p) || s.rings[1].has(p):
			return 'R'
		case s.markers[me].has(p):
			return 'm'
		case s.markers[me.Other()].has(p):
			return 'o'
		}
		return '.'
	}
	name := func(c, r int) string { return string(rune('A'+c)) + itoa(r) }
	var out []string
	switch s.phase {
	case phaseMove:
		for c := 0; c < 11; c++ {
			for r := 1; r <= 11; r++ {
				if p := geo.pointAt(c, r); p < 0 || !s.rings[me].has(p) {
					continue
				}
				for _, d := range [][2]int{{0, 1}, {1, 0}, {1, 1}, {0, -1}, {-1, 0}, {-1, -1}} {
					jumped := false
				walk:
					for tc, tr := c+d[0], r+d[1]; ; tc, tr = tc+d[0], tr+d[1] {
						switch piece(tc, tr) {
						case 'x', 'R':
							break walk
						case 'm', 'o':
							jumped = true
						default:
							out = append(out, "M "+name(c, r)+" "+name(tc, tr))
							if jumped {
								break walk
							}
						}
					}
				}
			}
		}
		if len(out) == 0 {
			out = append(out, "pass")
		}
	case phaseRemoveRow:
		for c := 0; c < 11; c++ {
			for r := 1; r <= 11; r++ {
				for _, d := range [][2]int{{0, 1}, {1, 0}, {1, 1}} {
					n := 0
					for n < 5 && piece(c+n*d[0], r+n*d[1]) == 'm' {
						n++
					}
					if n == 5 {
						out = append(out, "R "+name(c, r)+" "+name(c+4*d[0], r+4*d[1]))
					}
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

func itoa(n int) string {
	if n >= 10 {
		return string(rune('0'+n/10)) + string(rune('0'+n%10))
	}
	return string(rune('0' + n))
}

// TestAgainstNaiveRules compares the engine's ring moves and row choices
// with naiveDecisions in positions from random games.
func TestAgainstNaiveRules(t *testing.T) {
	checked := map[phase]int{}
	for _, g := range []env.Game{Full(), Blitz()} {
		for _, st := range envtest.RandomPositions(g, 3000, 11) {
			s := st.(*State)
			if s.phase != phaseMove && s.phase != phaseRemoveRow {
				continue
			}
			got := legalTexts(s)
			slices.Sort(got)
			if want := naiveDecisions(s); !slices.Equal(got, want) {
				t.Fatalf("engine %v\nrules  %v\nin\n%v", got, want, s)
			}
			checked[s.phase]++
		}
	}
	if checked[phaseMove] < 1000 || checked[phaseRemoveRow] < 10 {
		t.Errorf("too few positions checked: %v", checked)
	}
}
