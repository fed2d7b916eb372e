package selfplay

import (
	"context"
	"testing"

	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/mcts"
)

// TestGameRecordActions replays every finished game's actions by the
// rules: they must all be legal, as many as the game's decisions, and end
// in the position whose result the record gives.
func TestGameRecordActions(t *testing.T) {
	settings := DefaultSettings()
	settings.Games, settings.Concurrent, settings.BatchSize, settings.Workers = 12, 4, 4, 2
	settings.ResignThreshold = -1
	search := DefaultSearch()
	search.Full, search.Fast = 8, 4
	var records []GameRecord
	_, err := PlayGames(context.Background(), tictactoe.Game{}, search, settings, 3,
		func() (mcts.Evaluator, error) { return mcts.Uniform{}, nil },
		func(r GameRecord) { records = append(records, r) })
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != settings.Games {
		t.Fatalf("%d records, want %d", len(records), settings.Games)
	}
	distinct := map[string]bool{}
	for i, r := range records {
		if len(r.Actions) != r.Moves {
			t.Fatalf("game %d: %d actions for %d moves", i, len(r.Actions), r.Moves)
		}
		s := tictactoe.Game{}.NewState()
		key := ""
		for _, a := range r.Actions {
			if s.Terminal() || !s.IsLegal(a) {
				t.Fatalf("game %d: action %d is not legal after %q", i, a, key)
			}
			s.Apply(a)
			key += tictactoe.Game{}.FormatAction(a) + ";"
		}
		if !s.Terminal() || s.Winner() != r.Winner {
			t.Fatalf("game %d (%s): terminal %v, winner %v, record says %v", i, key, s.Terminal(), s.Winner(), r.Winner)
		}
		distinct[key] = true
	}
	// A record sharing its slot's buffer would be overwritten by the
	// slot's next game.
	if len(distinct) < 2 {
		t.Errorf("all %d games have the same moves: %v", len(records), distinct)
	}
}
