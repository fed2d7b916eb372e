package selfplay

import (
	"testing"

	"github.com/flipzero/flipzero/data"
	"github.com/flipzero/flipzero/env"
)

// TestTally: games add up as the metrics and the workers' shards count
// them, and two tallies merge into the tally of all their games.
func TestTally(t *testing.T) {
	games := []GameRecord{
		{Moves: 30, Winner: 0, Score: 2, Samples: make([]data.Sample, 3), Surprise: 0.75},
		{Moves: 40, Winner: 1, Resigned: true, Samples: make([]data.Sample, 2), Surprise: 0.5},
		{Moves: 50, Winner: env.NoPlayer, WouldResign: true, FalseResign: true},
		{Moves: 20, Winner: 0, WouldResign: true},
	}
	var all, a, b Tally
	for i, g := range games {
		all.Add(g)
		if i < 2 {
			a.Add(g)
		} else {
			b.Add(g)
		}
	}
	want := Tally{Games: 4, Moves: 140, Results: [3]int{2, 1, 1}, Resigned: 1, NoResign: 2, FalseResign: 1, Score: 2, Surprise: 1.25, SurpriseSamples: 5}
	if all != want {
		t.Errorf("tally %+v, want %+v", all, want)
	}
	a.Merge(b)
	if a != want {
		t.Errorf("merged %+v, want %+v", a, want)
	}
}
