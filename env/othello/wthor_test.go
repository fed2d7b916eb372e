package othello

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env"
)

// wthorGame is a game to write into a test file.
type wthorGame struct {
	moves      []string // passes are left out of the file
	blackScore byte
}

// encodeWTHOR writes a WTHOR file holding games.
func encodeWTHOR(t *testing.T, games []wthorGame) []byte {
	t.Helper()
	out := make([]byte, wthorHeaderSize, wthorHeaderSize+wthorRecordSize*len(games))
	out[0], out[1], out[2], out[3] = 20, 24, 1, 1
	binary.LittleEndian.PutUint32(out[4:], uint32(len(games)))
	binary.LittleEndian.PutUint16(out[10:], 2024)
	out[12] = 8
	for _, g := range games {
		var rec [wthorRecordSize]byte
		rec[6], rec[7] = g.blackScore, g.blackScore
		k := 8
		for _, m := range g.moves {
			if m == "pass" {
				continue
			}
			sq, err := ParseSquare(m)
			if err != nil {
				t.Fatal(err)
			}
			rec[k] = byte(10*(sq/8+1) + sq%8 + 1)
			k++
		}
		out = append(out, rec[:]...)
	}
	return out
}

// randomGames plays random othello games to the end, passes included.
func randomGames(n int, seed uint64) []wthorGame {
	rng := rand.New(rand.NewPCG(seed, seed))
	buf := make([]int, 0, Pass+1)
	var games []wthorGame
	for len(games) < n {
		s := Othello().NewState().(*State)
		var moves []string
		for !s.Terminal() {
			legal := s.LegalActions(buf)
			a := legal[rng.IntN(len(legal))]
			moves = append(moves, Othello().FormatAction(a))
			s.Apply(a)
		}
		black, _ := s.FinalScore()
		games = append(games, wthorGame{moves, byte(black)})
	}
	return games
}

func outcomeOf(score byte) string {
	switch {
	case score > 32:
		return "black"
	case score < 32:
		return "white"
	}
	return "draw"
}

// TestWTHORRoundTrip writes random games, passes left out, and reads them
// back: the passes must be put back where they were.
func TestWTHORRoundTrip(t *testing.T) {
	games := randomGames(300, 1)
	passes := 0
	for _, g := range games {
		passes += strings.Count(strings.Join(g.moves, ";"), "pass")
	}
	if passes == 0 {
		t.Fatal("the random games have no pass; pick another seed")
	}
	games = append(games, wthorGame{[]string{"f5", "d6", "c3"}, 40})
	records, err := ReadWTHOR(bytes.NewReader(encodeWTHOR(t, games)))
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != len(games) {
		t.Fatalf("%d records, want %d", len(records), len(games))
	}
	for i, rec := range records {
		if !slices.Equal(rec.Moves, games[i].moves) {
			t.Fatalf("record %d: moves\n%v\nwant\n%v", i+1, rec.Moves, games[i].moves)
		}
		if rec.Game != "othello" || rec.Outcome != outcomeOf(games[i].blackScore) {
			t.Errorf("record %d: game %q outcome %q, want othello %s", i+1, rec.Game, rec.Outcome, outcomeOf(games[i].blackScore))
		}
	}
}

func TestWTHORSample(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "WTH_1977.wtb"))
	if err != nil {
		t.Fatal(err)
	}
	records, err := ReadWTHOR(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if want := int(binary.LittleEndian.Uint32(data[4:])); len(records) != want || want == 0 {
		t.Fatalf("%d records, want the header's %d", len(records), want)
	}
	for i, rec := range records {
		raw := data[wthorHeaderSize+i*wthorRecordSize:]
		first := raw[8]
		if want := SquareName(8*int(first/10-1) + int(first%10) - 1); rec.Moves[0] != want {
			t.Errorf("record %d starts with %s, the file with %s", i+1, rec.Moves[0], want)
		}
		if rec.Outcome != outcomeOf(raw[6]) {
			t.Errorf("record %d: outcome %s, score %d", i+1, rec.Outcome, raw[6])
		}
	}
}

func TestWTHORErrors(t *testing.T) {
	good := encodeWTHOR(t, randomGames(3, 2))
	// moveBytes writes moves as WTHOR move bytes.
	moveBytes := func(moves ...string) []byte {
		return encodeWTHOR(t, []wthorGame{{moves: moves}})[wthorHeaderSize+8:][:len(moves)]
	}
	tests := []struct {
		name    string
		file    func() []byte
		records int      // good records still returned
		wantErr []string // parts of the error message
	}{
		{"empty file", func() []byte { return nil }, 0, []string{"header"}},
		{"short header", func() []byte { return good[:10] }, 0, []string{"header"}},
		{"10×10 board", func() []byte {
			f := slices.Clone(good)
			f[12] = 10
			return f
		}, 0, []string{"board size 10"}},
		{"truncated", func() []byte { return good[:len(good)-30] }, 2, []string{"record 3 of 3", "38 bytes"}},
		{"missing records", func() []byte {
			f := slices.Clone(good)
			binary.LittleEndian.PutUint32(f[4:], 5)
			return f
		}, 3, []string{"record 4 of 5", "0 bytes"}},
		{"trailing data", func() []byte { return append(slices.Clone(good), 1, 2) }, 3, []string{"after the 3 records"}},
		{"not a square", func() []byte {
			f := slices.Clone(good)
			f[wthorHeaderSize+8+4] = 19
			return f
		}, 2, []string{"record 1: move 5: byte 19 is not a square"}},
		{"illegal move", func() []byte {
			f := slices.Clone(good)
			copy(f[wthorHeaderSize+wthorRecordSize+8:], moveBytes("f5", "f5"))
			return f
		}, 2, []string{"record 2: move 2 (f5) is illegal"}},
		{"score", func() []byte {
			f := slices.Clone(good)
			f[wthorHeaderSize+2*wthorRecordSize+6] = 65
			return f
		}, 2, []string{"record 3: black's score 65"}},
		{"move after the end", func() []byte {
			f := slices.Clone(good)
			copy(f[wthorHeaderSize+8:], append(moveBytes("f5"), 0, 43))
			return f
		}, 2, []string{"record 1: move byte 3 (43) follows the end"}},
		{"after the game is over", func() []byte {
			f := slices.Clone(good)
			// The shortest game, a wipeout in 9 moves, then one more.
			copy(f[wthorHeaderSize+8:], moveBytes("d3", "c3", "b3", "d2", "e1", "d6", "d7", "e3", "f4", "g4"))
			return f
		}, 2, []string{"record 1: move 10 (g4): the game is already over"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := tt.file()
			records, err := ReadWTHOR(bytes.NewReader(data))
			if err == nil {
				t.Fatal("no error")
			}
			for _, part := range tt.wantErr {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not say %q", err, part)
				}
			}
			if len(records) != tt.records {
				t.Errorf("%d records returned, want %d", len(records), tt.records)
			}
		})
	}
	// The bad records are reported as such.
	f := slices.Clone(good)
	f[wthorHeaderSize+6] = 99
	_, err := ReadWTHOR(bytes.NewReader(f))
	var bad BadRecords
	if !errors.As(err, &bad) || len(bad) != 1 || bad[0].Record != 1 {
		t.Errorf("error %v: want BadRecords naming record 1", err)
	}
}

// sharedWTHOR is the WTHOR database beside the repository.
var sharedWTHOR = filepath.Join("..", "..", "..", "shared", "data", "othello", "wthor")

// TestWTHORDatabase reads every game of the federation's database and
// replays it through the engine: every move must be legal, and a game
// whose moves end it must finish with the recorded black score.
func TestWTHORDatabase(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(sharedWTHOR, "*.wtb"))
	if len(files) == 0 {
		t.Skipf("no WTHOR files in %s: the shared data folder is absent", sharedWTHOR)
	}
	games, unfinished := 0, 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		records, err := ReadWTHOR(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for i, rec := range records {
			games++
			s, err := Replay(rec)
			if err != nil {
				t.Fatalf("%s record %d: %v", file, i+1, err)
			}
			score := data[wthorHeaderSize+i*wthorRecordSize+6]
			if rec.Outcome != outcomeOf(score) {
				t.Errorf("%s record %d: outcome %s, recorded score %d", file, i+1, rec.Outcome, score)
			}
			if !s.Terminal() {
				unfinished++
				continue
			}
			if black, _ := s.FinalScore(); black != int(score) {
				t.Errorf("%s record %d: final score %d, recorded %d", file, i+1, black, score)
			}
			if env.ResultName(s) != rec.Outcome {
				t.Errorf("%s record %d: result %s, recorded %s", file, i+1, env.ResultName(s), rec.Outcome)
			}
		}
	}
	t.Logf("%d games in %d files; %d stop before the end of the game", games, len(files), unfinished)
	if games < 100000 {
		t.Errorf("only %d games read, want the whole database (about 120,000)", games)
	}
	if unfinished*100 > games {
		t.Errorf("%d of %d games stop before the end: more than 1%%", unfinished, games)
	}
}

func TestReplay(t *testing.T) {
	tests := []struct {
		rec      env.Record
		terminal bool
		err      string
	}{
		{env.Record{Game: "othello", Moves: []string{"d3", "c3", "b3", "d2", "e1", "d6", "d7", "e3", "f4"}}, true, ""},
		{env.Record{Game: "reversi", Moves: []string{"f5", "d6"}}, false, ""},
		{env.Record{Game: "reversi-single", Moves: []string{"f5:w", "d6:n"}}, false, ""},
		{env.Record{Game: "othello", Moves: []string{"f5", "f5"}}, false, "move 2"},
		{env.Record{Game: "yinsh", Moves: nil}, false, "yinsh"},
	}
	for _, tt := range tests {
		s, err := Replay(tt.rec)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%v: error %v, want one saying %q", tt.rec, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", tt.rec, err)
		}
		if s.Terminal() != tt.terminal || s.Game().Name() != tt.rec.Game {
			t.Errorf("%v: terminal %v game %s, want %v %s", tt.rec, s.Terminal(), s.Game().Name(), tt.terminal, tt.rec.Game)
		}
	}
}
