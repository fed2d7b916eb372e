package othello

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env"
)

// FuzzReadWTHOR feeds arbitrary bytes to the WTHOR reader: it must not
// panic, must return no more records than the header announces, and
// every record it returns must replay legally.
func FuzzReadWTHOR(f *testing.F) {
	sample, err := os.ReadFile(filepath.Join("testdata", "WTH_1977.wtb"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sample)
	f.Add(sample[:wthorHeaderSize+wthorRecordSize+10])
	f.Add(sample[:wthorHeaderSize])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		records, err := ReadWTHOR(bytes.NewReader(data))
		if len(data) < wthorHeaderSize {
			if err == nil || len(records) != 0 {
				t.Fatalf("a %d-byte file: %d records, error %v", len(data), len(records), err)
			}
			return
		}
		if announced := binary.LittleEndian.Uint32(data[4:]); uint64(len(records)) > uint64(announced) {
			t.Fatalf("%d records from a header announcing %d", len(records), announced)
		}
		if err == nil && len(data) != wthorHeaderSize+wthorRecordSize*len(records) {
			t.Fatalf("no error, but %d records do not fill %d bytes", len(records), len(data))
		}
		for i, rec := range records {
			if _, err := env.Play(Othello(), strings.Join(rec.Moves, ";")); err != nil {
				t.Fatalf("record %d returned but does not replay: %v", i+1, err)
			}
			switch rec.Outcome {
			case "black", "white", "draw":
			default:
				t.Fatalf("record %d: outcome %q", i+1, rec.Outcome)
			}
		}
	})
}

// FuzzParseMoves feeds arbitrary text to the move parser of every
// variant, alone and as a move sequence: no panic, and whatever parses
// prints back as text that parses to the same action.
func FuzzParseMoves(f *testing.F) {
	for _, seed := range []string{"f5", "pass", "f5:n", "F5:NE", "a1", "h8", "i9", "f5;d6;c3", "d3:s;c3:e", " e6 ", ":", "f5:", "pass;pass"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, g := range allGames {
			if a, err := g.ParseAction(text); err == nil {
				if a < 0 || a >= g.ActionSpace() {
					t.Fatalf("%s: %q parsed as %d, out of range", g.Name(), text, a)
				}
				back, err := g.ParseAction(g.FormatAction(a))
				if err != nil || back != a {
					t.Fatalf("%s: %q parsed as %d, which prints as %q and parses back as %d (%v)", g.Name(), text, a, g.FormatAction(a), back, err)
				}
			}
			if s, err := env.Play(g, text); err == nil {
				// Each move that is not a pass adds one disc.
				placed := 0
				if strings.TrimSpace(text) != "" {
					for _, m := range strings.Split(text, ";") {
						if !strings.EqualFold(strings.TrimSpace(m), "pass") {
							placed++
						}
					}
				}
				st := s.(*State)
				if b, w := st.Discs(); b+w != 4+placed || st.own&st.opp != 0 {
					t.Fatalf("%s: %q places %d discs but leaves %d+%d on the board", g.Name(), text, placed, b, w)
				}
			}
		}
	})
}
