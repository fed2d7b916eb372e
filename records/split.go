package records

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"slices"
	"strconv"
)

// Split divides games into those to train on and those held out to
// measure the training by. It holds out whole groups of games — a year
// where the files say (WTHOR: a year's tournaments), a file elsewhere (a
// boardspace game, a run's generation) — so that no held-out game comes
// from the tournament or the file of one trained on, newest years first
// (what a network will meet next is newer play), then files in an order
// fixed by their names' hash, until at least fraction of the games are
// held out, never every group. Games of a single group are divided one
// by one, by a hash of their place (the file's name, not its folder, so
// that the split stays where the records move). A fraction of 0 holds
// out nothing.
func Split(games []Game, fraction float64) (train, held []Game) {
	if fraction <= 0 || len(games) == 0 {
		return games, nil
	}
	groups := map[string][]int{}
	var keys []string
	for i := range games {
		k := groupKey(&games[i])
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], i)
	}
	want := int(fraction*float64(len(games)) + 0.5)
	want = max(1, min(want, len(games)-1))
	heldOut := make([]bool, len(games))
	if len(keys) == 1 {
		for i := range games {
			heldOut[i] = hashOf(strconv.Itoa(games[i].Index)+"\x00"+filepath.Base(games[i].File))%1000 < uint64(fraction*1000)
		}
	} else {
		slices.SortFunc(keys, func(a, b string) int {
			ya, yb := games[groups[a][0]].Year, games[groups[b][0]].Year
			if c := cmp.Compare(yb, ya); c != 0 {
				return c
			}
			return cmp.Compare(hashOf(filepath.Base(a)), hashOf(filepath.Base(b)))
		})
		n := 0
		for _, k := range keys[:len(keys)-1] {
			if n >= want {
				break
			}
			for _, i := range groups[k] {
				heldOut[i] = true
			}
			n += len(groups[k])
		}
	}
	for i := range games {
		if heldOut[i] {
			held = append(held, games[i])
		} else {
			train = append(train, games[i])
		}
	}
	return train, held
}

// groupKey is the group a game is held out with: its year, or its file.
func groupKey(g *Game) string {
	if g.Year > 0 {
		return fmt.Sprintf("year %d", g.Year)
	}
	return g.File
}

func hashOf(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// Describe names what a held-out part holds, for a log: "the games of
// 2018 (4,120 games)" or "12 files (340 games)".
func Describe(held []Game) string {
	years := map[int]bool{}
	files := map[string]bool{}
	for i := range held {
		if held[i].Year > 0 {
			years[held[i].Year] = true
		} else {
			files[held[i].File] = true
		}
	}
	var parts []string
	if len(years) > 0 {
		ys := make([]int, 0, len(years))
		for y := range years {
			ys = append(ys, y)
		}
		slices.Sort(ys)
		text := "the games of " + strconv.Itoa(ys[0])
		if len(ys) > 1 {
			text += "–" + strconv.Itoa(ys[len(ys)-1])
		}
		parts = append(parts, text)
	}
	if len(files) == 1 {
		for f := range files {
			parts = append(parts, "games of "+f)
		}
	} else if len(files) > 1 {
		parts = append(parts, strconv.Itoa(len(files))+" files")
	}
	s := ""
	for i, p := range parts {
		if i > 0 {
			s += " and "
		}
		s += p
	}
	return fmt.Sprintf("%s (%d games)", s, len(held))
}
