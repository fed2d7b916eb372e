package arena

import (
	"errors"
	"fmt"
	"math"

	"github.com/flipzero/flipzero/runfolder"
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
// need be.
func AppendMatch(path string, m MatchRecord) error {
	if err := m.check(); err != nil {
		return fmt.Errorf("append match: %w", err)
	}
	return runfolder.AppendRecord(path, m)
}

// maxMatchesBytes bounds what is read of a match log: two matches a
// generation of some 250 bytes each.
const maxMatchesBytes = 256 << 20

// ReadMatches reads the matches of the log at path under the run
// folder's policy for record files (runfolder.ReadRecords): a line that
// is not a match record, or one whose figures do not add up, is skipped,
// and skipped says how many were.
func ReadMatches(path string) (matches []MatchRecord, skipped int, err error) {
	matches, skipped, err = runfolder.ReadRecords(path, maxMatchesBytes, runfolder.Start, func(line []byte) (MatchRecord, error) {
		m, err := runfolder.JSONRecord[MatchRecord](line)
		if err == nil {
			err = m.check()
		}
		return m, err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("matches: %w", err)
	}
	return matches, skipped, nil
}

// Anchor is the player a run's ratings are fitted against: random where
// it has played, else fallback.
func Anchor(records []MatchRecord, fallback string) string {
	for _, r := range records {
		if r.A == "random" || r.B == "random" {
			return "random"
		}
	}
	return fallback
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
