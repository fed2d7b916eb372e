package selfplay

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/flipzero/flipzero/data"
	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/mcts"
)

func TestDrawOther(t *testing.T) {
	for _, tc := range []struct {
		name   string
		legal  []int32
		policy []float32
		played int
		want   []int // the draws possible; none: no draw
	}{
		{"weighted", []int32{1, 4, 7}, []float32{0.5, 0, 0.5}, 1, []int{7}},
		{"the played move's weight is not drawn", []int32{1, 4, 7}, []float32{0.98, 0.01, 0.01}, 1, []int{4, 7}},
		{"no weight left: even", []int32{2, 3, 5}, []float32{1, 0, 0}, 2, []int{3, 5}},
		{"nothing played (a resignation)", []int32{2, 3}, []float32{0, 1}, -1, []int{3}},
		{"no other move", []int32{6}, []float32{1}, 6, nil},
	} {
		rng := rand.New(rand.NewPCG(1, 2))
		seen := map[int]bool{}
		for range 200 {
			a, ok := drawOther(tc.legal, tc.policy, tc.played, rng)
			if ok != (tc.want != nil) {
				t.Fatalf("%s: drew %v (%d), want a draw: %v", tc.name, ok, a, tc.want != nil)
			}
			if !ok {
				break
			}
			if !slices.Contains(tc.want, a) {
				t.Fatalf("%s: drew %d, want one of %v", tc.name, a, tc.want)
			}
			seen[a] = true
		}
		if len(seen) != len(tc.want) {
			t.Errorf("%s: 200 draws gave %v, want each of %v", tc.name, seen, tc.want)
		}
	}
}

func TestForkQueueKeepsTheNewest(t *testing.T) {
	q := forkQueue{limit: 2}
	for i := range 3 {
		q.push(fork{ply: i})
	}
	for _, want := range []int{1, 2} {
		f, ok := q.pop()
		if !ok || f.ply != want {
			t.Fatalf("popped %+v, %v, want the fork of ply %d", f, ok, want)
		}
	}
	if f, ok := q.pop(); ok {
		t.Errorf("an empty queue popped %+v", f)
	}
	none := forkQueue{}
	none.push(fork{ply: 1})
	if _, ok := none.pop(); ok {
		t.Error("a queue of limit 0 kept a fork")
	}
}

// TestForkedGames plays two generations of tic-tac-toe with every game
// setting a fork aside, the second from the first one's forks: its games
// start from them, each record replays from the start with a move the
// earlier game did not play at the fork, and its samples begin after it.
func TestForkedGames(t *testing.T) {
	g := tictactoe.Game{}
	search := DefaultSearch()
	search.Full, search.Fast, search.FullFraction = 16, 16, 1
	settings := DefaultSettings()
	settings.Games, settings.Concurrent, settings.BatchSize, settings.Workers = 8, 8, 8, 1
	settings.ResignThreshold = -1
	settings.ForkFraction = 1
	settings.Forks = &Forks{}
	generation := func(seed uint64) (records []GameRecord, tally Tally) {
		_, err := PlayGames(context.Background(), g, search, settings, seed,
			func() (mcts.Evaluator, error) { return mcts.Uniform{}, nil },
			func(r GameRecord) { records = append(records, r); tally.Add(r) })
		if err != nil {
			t.Fatal(err)
		}
		return records, tally
	}
	first, t1 := generation(1)
	if t1.Forked != 0 {
		t.Fatalf("the first generation started %d games from forks, with none set aside", t1.Forked)
	}
	if n := settings.Forks.Len(); n == 0 || n > settings.Concurrent {
		t.Fatalf("%d forks set aside by 8 games, want 1..%d", n, settings.Concurrent)
	}
	second, t2 := generation(2)
	if t2.Forked == 0 {
		t.Fatal("no game of the second generation started from a fork")
	}
	forked := 0
	for _, r := range second {
		if r.Forked == 0 {
			continue
		}
		forked++
		s := g.NewState()
		for i, a := range r.Actions {
			if !s.IsLegal(a) {
				t.Fatalf("forked game: action %d (%d) is illegal", i, a)
			}
			s.Apply(a)
		}
		if !s.Terminal() {
			t.Errorf("forked game's record ends before the game does")
		}
		if !isForkOf(r, first) {
			t.Errorf("forked game %v: no game of the first generation played its first %d actions but the last", r.Actions, r.Forked)
		}
		// Its moves and samples are its own: at most one sample a
		// decision it made (a forced move is none).
		if len(r.Samples) > r.Moves || r.Moves != len(r.Actions)-r.Forked {
			t.Errorf("forked game: %d samples, %d moves, %d actions of which %d the fork's", len(r.Samples), r.Moves, len(r.Actions), r.Forked)
		}
	}
	if forked != t2.Forked {
		t.Errorf("tally counts %d forked games, the records %d", t2.Forked, forked)
	}
}

// isForkOf says whether an earlier game played r's fork up to its last
// action and another move there.
func isForkOf(r GameRecord, earlier []GameRecord) bool {
	prefix, last := r.Actions[:r.Forked-1], r.Actions[r.Forked-1]
	for _, e := range earlier {
		if len(e.Actions) >= r.Forked-1 && slices.Equal(e.Actions[:r.Forked-1], prefix) &&
			(len(e.Actions) == r.Forked-1 || e.Actions[r.Forked-1] != last) {
			return true
		}
	}
	return false
}

// TestNoForkPlaysTheSameGames: a fork fraction of 0 draws nothing from
// the generator, so a run's games stay what they were without forks.
func TestNoForkPlaysTheSameGames(t *testing.T) {
	plain := sameGames(t, DefaultSearch(), 5, func(*Settings) {})
	zero := sameGames(t, DefaultSearch(), 5, func(s *Settings) { s.Forks = &Forks{} })
	if len(plain) != len(zero) {
		t.Fatalf("%d games and %d", len(plain), len(zero))
	}
	for i := range plain {
		if !slices.Equal(plain[i].Actions, zero[i].Actions) {
			t.Errorf("game %d: %v without forks, %v with a fraction of 0", i, plain[i].Actions, zero[i].Actions)
		}
	}
}

// TestSetAsideDropsEndingForks: a fork whose move would end the game is
// not kept. X holds 0 and 1, O 3 and 4, X to move: the game played 5;
// of the others the policy target weighs 2 (X's win, which ends the
// game) and 6 alike.
func TestSetAsideDropsEndingForks(t *testing.T) {
	g := tictactoe.Game{}
	actions := []int{0, 3, 1, 4, 5, 6, 2}
	pending := []pendingSample{{
		sample: data.Sample{Legal: []int32{2, 5, 6, 7, 8}, Policy: []float32{0.4, 0.2, 0.4, 0, 0}},
		at:     4, ply: 4,
	}}
	rng := rand.New(rand.NewPCG(3, 4))
	kept, dropped := 0, 0
	for range 100 {
		f, ok := setAside(g, actions, pending, rng)
		if !ok {
			dropped++
			continue
		}
		kept++
		if want := []int{0, 3, 1, 4, 6}; !slices.Equal(f.actions, want) || f.ply != 5 {
			t.Fatalf("fork %+v, want actions %v and ply 5", f, want)
		}
	}
	if kept == 0 || dropped == 0 {
		t.Errorf("%d forks kept and %d dropped of 100, want some of each (the winning move is drawn half the time)", kept, dropped)
	}
}
