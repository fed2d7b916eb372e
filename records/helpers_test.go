package records

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env"
)

// randomGame plays a random game of g to its end (or maxMoves) and
// returns its moves in notation with the final state.
func randomGame(t testing.TB, g env.Game, seed uint64, maxMoves int) ([]string, env.State) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	random := env.NewRandom(g, rng)
	s := g.NewState()
	var moves []string
	for !s.Terminal() && len(moves) < maxMoves {
		a := random.Action(s)
		moves = append(moves, g.FormatAction(a))
		s.Apply(a)
	}
	return moves, s
}

// line is a game as flipzero convert prints it.
func line(moves []string, outcome, game string) string {
	return strings.Join(moves, ";") + "\t" + outcome + "\t" + game
}

// writeFile writes text to a file of the test's folder.
func writeFile(t testing.TB, dir, name string, raw []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// wthorRecord is one WTHOR game: its moves (passes left out, as the
// format has them) and black's score.
type wthorRecord struct {
	moves      []string
	blackScore byte
}

// wthorBytes is a WTHOR file of year's games.
func wthorBytes(t testing.TB, year int, recs []wthorRecord) []byte {
	t.Helper()
	raw := make([]byte, wthorHeaderSize, wthorHeaderSize+68*len(recs))
	binary.LittleEndian.PutUint32(raw[4:], uint32(len(recs)))
	binary.LittleEndian.PutUint16(raw[10:], uint16(year))
	raw[12] = 8
	for _, r := range recs {
		var rec [68]byte
		rec[6] = r.blackScore
		k := 8
		for _, m := range r.moves {
			if m == "pass" {
				continue
			}
			col, row := int(m[0]-'a'), int(m[1]-'1')
			rec[k] = byte(10*(row+1) + col + 1)
			k++
		}
		raw = append(raw, rec[:]...)
	}
	return raw
}
