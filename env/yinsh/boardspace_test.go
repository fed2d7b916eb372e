package yinsh

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env"
)

// boardspaceDir holds the 878 boardspace.net games, in the shared folder
// beside the repository.
const boardspaceDir = "../../../shared/data/yinsh/boardspace-2005"

// TestBoardspaceGames converts every game, replays it move by move under
// its own variant, and checks that a game that was not resigned either
// ends exactly at its last move or is marked unfinished.
func TestBoardspaceGames(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(boardspaceDir, "*.sgf"))
	if len(files) == 0 {
		t.Skipf("no boardspace games in %s (the shared folder is absent)", boardspaceDir)
	}
	if len(files) != 878 {
		t.Errorf("%d games, want 878", len(files))
	}
	counts := map[string]int{}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := ReadBoardspace(strings.NewReader(string(data)))
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(name), err)
			continue
		}
		wantGame := "yinsh"
		if strings.Contains(strings.ToLower(string(data)), "su[yinsh-blitz]") {
			wantGame = "yinsh-blitz"
		}
		if rec.Game != wantGame {
			t.Errorf("%s: game %s, want %s", filepath.Base(name), rec.Game, wantGame)
		}
		g := Full()
		if rec.Game == "yinsh-blitz" {
			g = Blitz()
		}
		s := g.NewState()
		for i, m := range rec.Moves {
			if s.Terminal() {
				t.Errorf("%s: move %d %q after the end", filepath.Base(name), i+1, m)
				break
			}
			a, err := env.ParseLegal(s, m)
			if err != nil {
				t.Errorf("%s: move %d: %v", filepath.Base(name), i+1, err)
				break
			}
			s.Apply(a)
		}
		resigned := strings.Contains(strings.ToLower(string(data)), "resign]")
		switch {
		case s.Terminal() && rec.Outcome != env.ResultName(s):
			t.Errorf("%s: outcome %s, but the replay ends with %s", filepath.Base(name), rec.Outcome, env.ResultName(s))
		case !s.Terminal() && rec.Outcome != "unfinished":
			t.Errorf("%s: outcome %s of a game that has not ended", filepath.Base(name), rec.Outcome)
		}
		key := rec.Game + " " + rec.Outcome
		if resigned {
			key += " resigned"
		}
		counts[key]++
	}
	t.Logf("outcomes: %v", counts)
}
