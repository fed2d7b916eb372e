package records

import (
	"fmt"
	"testing"
)

// games makes n games in each of the groups: a year (file "") or a file.
func groupedGames(n int, groups ...any) []Game {
	var out []Game
	for _, g := range groups {
		for i := range n {
			game := Game{Index: i + 1}
			switch v := g.(type) {
			case int:
				game.Year, game.File = v, fmt.Sprintf("WTH_%d.wtb", v)
			case string:
				game.File = v
			}
			out = append(out, game)
		}
	}
	return out
}

func TestSplit(t *testing.T) {
	count := func(games []Game, group any) int {
		n := 0
		for _, g := range games {
			if g.Year == group || g.File == group {
				n++
			}
		}
		return n
	}
	cases := []struct {
		name     string
		games    []Game
		fraction float64
		held     []any // groups held out whole
		kept     []any // groups trained on whole
		heldN    int
	}{
		{"the newest year", groupedGames(10, 2001, 2003, 2002), 0.1, []any{2003}, []any{2001, 2002}, 10},
		{"years until the share is reached", groupedGames(10, 2001, 2003, 2002), 0.4, []any{2003, 2002}, []any{2001}, 20},
		{"never every group", groupedGames(10, 2001, 2002), 0.99, []any{2002}, []any{2001}, 10},
		{"nothing held out", groupedGames(10, 2001, 2002), 0, nil, []any{2001, 2002}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			train, held := Split(c.games, c.fraction)
			if len(train)+len(held) != len(c.games) || len(held) != c.heldN {
				t.Fatalf("%d trained and %d held out of %d, want %d held out", len(train), len(held), len(c.games), c.heldN)
			}
			for _, g := range c.held {
				if count(held, g) != count(c.games, g) {
					t.Errorf("group %v not held out whole", g)
				}
			}
			for _, g := range c.kept {
				if count(train, g) != count(c.games, g) {
					t.Errorf("group %v not trained on whole", g)
				}
			}
		})
	}

	// Files are held out whole, in an order their names fix, not their
	// order in the list.
	files := groupedGames(3, "a.sgf", "b.sgf", "c.sgf", "d.sgf", "e.sgf", "f.sgf", "g.sgf", "h.sgf")
	_, held := Split(files, 0.25)
	again := append([]Game(nil), files...)
	again[0], again[len(again)-1] = again[len(again)-1], again[0]
	_, heldAgain := Split(again, 0.25)
	if len(held) != 6 || len(heldAgain) != 6 {
		t.Fatalf("held out %d and %d games of 24 at a quarter, want two files' 6", len(held), len(heldAgain))
	}
	for _, g := range held {
		if count(held, g.File) != 3 || count(heldAgain, g.File) != 3 {
			t.Fatalf("file %s split", g.File)
		}
	}

	// One file's games are split game by game.
	one := groupedGames(1000, "all.txt")
	train, held := Split(one, 0.1)
	if len(held) < 60 || len(held) > 140 || len(train)+len(held) != 1000 {
		t.Errorf("one file of 1000 games at a tenth: %d held out", len(held))
	}
}

func TestDescribe(t *testing.T) {
	cases := []struct {
		games []Game
		want  string
	}{
		{groupedGames(2, 2018), "the games of 2018 (2 games)"},
		{groupedGames(1, 2017, 2018), "the games of 2017–2018 (2 games)"},
		{groupedGames(3, "x.sgf"), "games of x.sgf (3 games)"},
		{groupedGames(1, "x.sgf", "y.sgf"), "2 files (2 games)"},
	}
	for _, c := range cases {
		if got := Describe(c.games); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}
