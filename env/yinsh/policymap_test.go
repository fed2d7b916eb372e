package yinsh

import (
	"strings"
	"testing"
)

// TestPolicyCells: every decision lies at the cell of the first point its
// notation names (the placed or removed ring, the moving ring's origin,
// the row's lower end); a move's plane says its distance, which the two
// points' coordinates give; every plane is used; the pass lies nowhere.
func TestPolicyCells(t *testing.T) {
	g := Full()
	used := make([]int, PolicyPlanes)
	for a := 0; a < ActionCount; a++ {
		plane, cell, ok := g.(Game).PolicyCell(a)
		text := g.FormatAction(a)
		if a == actPass {
			if ok {
				t.Fatalf("the pass lies at plane %d, cell %d", plane, cell)
			}
			continue
		}
		if !ok {
			t.Fatalf("%s lies nowhere", text)
		}
		used[plane]++
		f := strings.Fields(text)
		first, err := ParsePoint(f[1])
		if err != nil {
			t.Fatal(err)
		}
		if cell != cellOf[first] {
			t.Fatalf("%s at cell %d, its first point %s at %d", text, cell, f[1], cellOf[first])
		}
		if f[0] == "M" {
			to, _ := ParsePoint(f[2])
			dq, dr := int(geo.col[to])-int(geo.col[first]), int(geo.row[to])-int(geo.row[first])
			if dist := max(abs(dq), abs(dr), abs(dq-dr)); (plane-planeMove)%maxDistance+1 != dist {
				t.Fatalf("%s on plane %d (distance %d), its points %d apart", text, plane, (plane-planeMove)%maxDistance+1, dist)
			}
		}
	}
	for plane, n := range used {
		if n == 0 {
			t.Errorf("plane %d is never used", plane)
		}
	}
}
