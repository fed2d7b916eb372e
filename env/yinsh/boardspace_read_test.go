package yinsh

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func readRecordFile(t *testing.T, name string) (game, outcome string, moves []string) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "boardspace", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec, err := ReadBoardspace(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return rec.Game, rec.Outcome, rec.Moves
}

// TestReadBoardspaceFiles reads records that show each step of the
// dialect; what each test expects can be read off the file.
func TestReadBoardspaceFiles(t *testing.T) {
	tests := []struct {
		file, game, outcome string
		has, hasNot         []string
		first, last         string
	}{
		// "place w D 8", "drop board D 1", "pick board D 8", "drop board C 7".
		{file: "pick-board.sgf", game: "yinsh", outcome: "black", has: []string{"M D8 C7"}, hasNot: []string{"M D8 D1"}, first: "P D4", last: "X C3"},
		// "pick wr", "drop wr" before the first placement change nothing.
		{file: "reserve-ring.sgf", game: "yinsh", outcome: "black", first: "P F9", last: "X G3"},
		// A drop taken back twice, then the row G7–G11.
		{file: "pick-board-twice.sgf", game: "yinsh", outcome: "white", has: []string{"M G11 E9", "R G7 G11"}, last: "X H5"},
		// SU[yinsh-blitz]: the first row wins.
		{file: "blitz.sgf", game: "yinsh-blitz", outcome: "black", has: []string{"M G2 B2", "R G2 G6"}, last: "X H4"},
		// The two-step move before the resignation is played.
		{file: "resign.sgf", game: "yinsh", outcome: "unfinished", last: "M G8 G10"},
	}
	for _, tt := range tests {
		game, outcome, moves := readRecordFile(t, tt.file)
		if game != tt.game || outcome != tt.outcome {
			t.Errorf("%s: game %s outcome %s, want %s %s", tt.file, game, outcome, tt.game, tt.outcome)
		}
		for _, m := range tt.has {
			if !slices.Contains(moves, m) {
				t.Errorf("%s: no move %s in %v", tt.file, m, moves)
			}
		}
		for _, m := range tt.hasNot {
			if slices.Contains(moves, m) {
				t.Errorf("%s: move %s should not be there", tt.file, m)
			}
		}
		if tt.first != "" && moves[0] != tt.first {
			t.Errorf("%s: first move %s, want %s", tt.file, moves[0], tt.first)
		}
		if moves[len(moves)-1] != tt.last {
			t.Errorf("%s: last move %s, want %s", tt.file, moves[len(moves)-1], tt.last)
		}
	}
}

func TestReadBoardspaceErrors(t *testing.T) {
	const head = "(;GM[24]SU[Yinsh]P0[id \"a\"]\n;P0[0 Start White]"
	tests := []struct {
		record, want string
	}{
		{"", "not an SGF record"},
		{"(", "without ')'"},
		{"()", "no nodes"},
		{"(;GM[24]SU[chess])", `node 1: SU "chess"`},
		{"(;SU[yinsh];P0[1 place wr E 4", "node 2: property P0: unterminated"},
		{"(;SU[yinsh](;P0[1 place wr E 4]))", "node 1: variations"},
		{"(;SU[yinsh];P0 ;P1[x])", "node 2: property P0 has no value"},
		{head + ";P0[1 place wr Z 4])", "node 3: "},
		{head + ";P0[1 place wr A 1])", "node 3: "},
		{head + ";P1[1 place br E 4])", `node 3: P1 "1 place br E 4": P E4 by black, but white is to decide`},
		{head + ";P0[1 place br E 4])", "node 3: "},
		{head + ";P0[1 place wr E 4];P1[2 place br E 4])", `node 4: P1 "2 place br E 4": P E4 is not legal here`},
		{head + ";P0[1 drop board E 4])", `node 3: P0 "1 drop board E 4": drop board E4 with no ring in hand`},
		{head + ";P0[1 fly E 4])", "node 3: "},
		{head + ";P0[1 move E 4])", "node 3: "},
		{head + ";P0[1 remove w E 4])", "node 3: "},
		{head + ";P0[1 resign];P1[2 place br E 4])", `node 4: P1 "2 place br E 4": a move after the resignation`},
		{head + ";P0[1 pick wr];P1[2 place br E 4])", "node 4: "},
		{head + ";P0[]", "node 3: "},
	}
	for _, tt := range tests {
		_, err := ReadBoardspace(strings.NewReader(tt.record))
		if err == nil {
			t.Errorf("%q: no error, want %q", tt.record, tt.want)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %q, want one line with %q", tt.record, err, tt.want)
		}
	}
}

// TestReplayPasses checks that a record that goes on with the other
// player when the player to move cannot move gets the pass the rules
// require, and that a blocked player's own move is refused.
func TestReplayPasses(t *testing.T) {
	blocked := position(t, Full(), "A2 B1", "A3 B2 B3 C1 C2", "", "", White)
	blocked.removed[White] = 2
	rp := &replay{game: Full().(Game), state: blocked}
	if err := rp.play(Black, "M C2 D3"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rp.moves, []string{"pass", "M C2 D3"}) {
		t.Errorf("moves %v, want a pass first", rp.moves)
	}
	rp = &replay{game: Full().(Game), state: position(t, Full(), "A2 B1", "A3 B2 B3 C1 C2", "", "", White)}
	if err := rp.play(White, "M A2 A4"); err == nil {
		t.Error("a blocked ring moved")
	}
	// A drop taken back must name the ring's start or where it was dropped.
	const record = "(;SU[yinsh];P0[place wr A 2];P1[place br A 3];P0[place wr B 1];P1[place br B 2];" +
		"P0[place wr K 7];P1[place br B 3];P0[place wr K 8];P1[place br C 1];P0[place wr K 9];P1[place br C 2];" +
		"P0[place w K 7];P0[drop board J 7];P0[pick board %s];P0[drop board I 7])"
	for _, tt := range []struct {
		picked string
		ok     bool
	}{{"K 7", true}, {"J 7", true}, {"E 5", false}} {
		rec, err := ReadBoardspace(strings.NewReader(strings.Replace(record, "%s", tt.picked, 1)))
		if (err == nil) != tt.ok {
			t.Errorf("pick board %s: error %v, want ok=%v", tt.picked, err, tt.ok)
			continue
		}
		if tt.ok && rec.Moves[len(rec.Moves)-1] != "M K7 I7" {
			t.Errorf("pick board %s: last move %s, want M K7 I7", tt.picked, rec.Moves[len(rec.Moves)-1])
		}
	}
}
