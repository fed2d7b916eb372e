package yinsh

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env"
)

// FuzzParseAction: any text either fails to parse or parses to an action
// in range that prints back as text that parses to the same action.
func FuzzParseAction(f *testing.F) {
	for _, seed := range []string{"P E5", "M E5 E9", "R C4 G4", "X K8", "pass", "M A2 K10", "R G4 C4", "P  E10 ", "X A1", ""} {
		f.Add(seed)
	}
	g := Full()
	f.Fuzz(func(t *testing.T, text string) {
		a, err := g.ParseAction(text)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		if a < 0 || a >= ActionCount {
			t.Fatalf("%q parsed as %d, out of range", text, a)
		}
		back, err := g.ParseAction(g.FormatAction(a))
		if err != nil || back != a {
			t.Fatalf("%q → %d → %q → %d, %v", text, a, g.FormatAction(a), back, err)
		}
	})
}

// FuzzReadBoardspace: any input either fails with a one-line error or
// gives a record whose moves replay legally under its variant, with an
// outcome that agrees with the replay.
func FuzzReadBoardspace(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "boardspace", "*.sgf"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("(;SU[yinsh-blitz];P0[1 place wr E 4];P1[2 place br F 6])"))
	f.Add([]byte("(;SU[yinsh];P0[pick wr];P0[drop board E4];P1[resign])"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := ReadBoardspace(strings.NewReader(string(data)))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		var g env.Game = Full()
		if rec.Game == "yinsh-blitz" {
			g = Blitz()
		} else if rec.Game != "yinsh" {
			t.Fatalf("game %q", rec.Game)
		}
		s, err := env.Play(g, strings.Join(rec.Moves, ";"))
		if err != nil {
			t.Fatalf("moves %v do not replay: %v", rec.Moves, err)
		}
		want := "unfinished"
		if s.Terminal() {
			want = env.ResultName(s)
		}
		if rec.Outcome != want {
			t.Fatalf("outcome %s, replay gives %s", rec.Outcome, want)
		}
	})
}
