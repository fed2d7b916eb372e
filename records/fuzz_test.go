package records

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/env/yinsh"
)

// FuzzLoad reads arbitrary bytes as a record file of each kind, for
// Othello and YINSH: never a panic, every file either read or counted
// unreadable, and every game kept replays under the rules with its
// decisions where Positions and Measure will look for them.
func FuzzLoad(f *testing.F) {
	wthor, err := os.ReadFile(filepath.Join("..", "env", "othello", "testdata", "WTH_1977.wtb"))
	if err != nil {
		f.Fatal(err)
	}
	sgf, err := os.ReadFile(filepath.Join("..", "env", "yinsh", "testdata", "boardspace", "resign.sgf"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(wthor, uint8(0))
	f.Add(wthor[:40], uint8(0))
	f.Add(sgf, uint8(1))
	f.Add([]byte("f5;d6;c3\tblack\tothello\nf5;f5\twhite\tothello\n\tdraw\n"), uint8(2))
	f.Add([]byte("P E5;P F6\tunfinished\tyinsh\n"), uint8(2))
	f.Fuzz(func(t *testing.T, raw []byte, kind uint8) {
		name := []string{"f.wtb", "f.sgf", "f.txt"}[int(kind)%3]
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, g := range []env.Game{othello.Othello(), yinsh.Full()} {
			for _, unfinished := range []bool{false, true} {
				set, err := Load(context.Background(), g, []string{path}, Options{Unfinished: unfinished, Report: func(string) {}})
				if err != nil {
					t.Fatalf("an existing file: %v", err)
				}
				if set.Files+set.Skipped.Files != 1 {
					t.Fatalf("%d files read and %d unreadable of 1", set.Files, set.Skipped.Files)
				}
				for i := range set.Games {
					checkGame(t, g, &set.Games[i], unfinished)
				}
			}
		}
	})
}

// checkGame replays a loaded game: every action legal, its decisions
// where the position has a choice.
func checkGame(t *testing.T, g env.Game, game *Game, unfinished bool) {
	t.Helper()
	if !game.hasResult && !unfinished {
		t.Fatal("a game without a result kept")
	}
	s := g.NewState()
	next := 0
	for ply, a := range game.actions {
		if !s.IsLegal(int(a)) {
			t.Fatalf("game %d: action %d at ply %d is not legal", game.Index, a, ply)
		}
		if next < len(game.plies) && int(game.plies[next]) == ply {
			if len(s.LegalActions(nil)) < 2 {
				t.Fatalf("game %d: ply %d is a decision without a choice", game.Index, ply)
			}
			next++
		}
		s.Apply(int(a))
	}
	if next != len(game.plies) {
		t.Fatalf("game %d: %d decisions past its end", game.Index, len(game.plies)-next)
	}
}
