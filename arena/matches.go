package arena

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/flipzero/flipzero/internal/atomicfile"
)

// MatchRecord is one line of a run's matches.jsonl: a match between two
// players, from A's side.
type MatchRecord struct {
	Time string `json:"time,omitempty"`
	Game string `json:"game"`
	// A and B name the players: a checkpoint's name, or a baseline's
	// (random, greedy, mcts:N, ...).
	A      string `json:"a"`
	B      string `json:"b"`
	Wins   int    `json:"wins"`
	Draws  int    `json:"draws"`
	Losses int    `json:"losses"`
	// Generation of the loop that played the match, if it did.
	Generation int `json:"generation,omitempty"`
	// MeanA and MeanB are the players' mean scores in a one-player match
	// (RunSolo), where both played the same deals and Wins, Draws and
	// Losses compare their scores deal by deal; absent otherwise.
	MeanA *float64 `json:"mean_a,omitempty"`
	MeanB *float64 `json:"mean_b,omitempty"`
}

// SoloRecord is the match log's record of players i and j of a
// one-player match: their deal-by-deal comparison and mean scores.
func SoloRecord(r SoloResult, i, j int, game, time string) MatchRecord {
	s := r.Versus(i, j)
	a, b := r.Stats(i).Mean, r.Stats(j).Mean
	return MatchRecord{Time: time, Game: game, A: r.Players[i], B: r.Players[j],
		Wins: s.Wins, Draws: s.Draws, Losses: s.Losses, MeanA: &a, MeanB: &b}
}

// Match is the record as the rating fit takes it.
func (r MatchRecord) Match() Match {
	return Match{A: r.A, B: r.B, Score: Score{Wins: r.Wins, Draws: r.Draws, Losses: r.Losses}}
}

func (r MatchRecord) check() error {
	switch {
	case r.A == "" || r.B == "":
		return errors.New("a player has no name")
	case r.A == r.B:
		return fmt.Errorf("%s plays itself", r.A)
	case r.Wins < 0 || r.Draws < 0 || r.Losses < 0:
		return fmt.Errorf("negative count in %d/%d/%d", r.Wins, r.Draws, r.Losses)
	case r.MeanA != nil && !finite(*r.MeanA) || r.MeanB != nil && !finite(*r.MeanB):
		return errors.New("a mean score that is not a number")
	}
	return nil
}

// AppendMatch adds a match to the match log at path (one JSON object a
// line; a run keeps its log at runfolder's Matches), making its folder if
// need be and rewriting the file atomically so that a kill never leaves
// half a line.
func AppendMatch(path string, m MatchRecord) error {
	if err := m.check(); err != nil {
		return fmt.Errorf("append match: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("append match: %w", err)
	}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("append match: %w", err)
	}
	line, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("append match: %w", err)
	}
	if len(old) > 0 && old[len(old)-1] != '\n' {
		old = append(old, '\n')
	}
	return atomicfile.WriteBytes(path, append(append(old, line...), '\n'))
}

// ReadMatches reads every match of the log at path. A line that is not a
// match record is an error naming it.
func ReadMatches(path string) ([]MatchRecord, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("matches: %w", err)
	}
	var out []MatchRecord
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var m MatchRecord
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, line, err)
		}
		if err := m.check(); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, line, err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// Matches turns records into the rating fit's matches.
func Matches(records []MatchRecord) []Match {
	out := make([]Match, len(records))
	for i, r := range records {
		out[i] = r.Match()
	}
	return out
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
