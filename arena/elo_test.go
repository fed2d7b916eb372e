package arena

import (
	"math"
	"math/rand/v2"
	"testing"
)

// simulate plays games between players of known Elo, with draws.
func simulate(rng *rand.Rand, elos map[string]float64, pairs [][2]string, gamesPerPair int) []Match {
	const drawRate = 0.2
	var matches []Match
	for _, p := range pairs {
		expected := 1 / (1 + math.Pow(10, (elos[p[1]]-elos[p[0]])/400))
		var s Score
		for g := 0; g < gamesPerPair; g++ {
			// Draws take drawRate of the games, keeping the expected score.
			pWin := expected - drawRate/2
			if pWin < 0 {
				pWin = 0
			}
			switch r := rng.Float64(); {
			case r < pWin:
				s.Wins++
			case r < pWin+drawRate:
				s.Draws++
			default:
				s.Losses++
			}
		}
		matches = append(matches, Match{A: p[0], B: p[1], Score: s})
	}
	return matches
}

func TestFitRatingsRecoversKnownStrengths(t *testing.T) {
	elos := map[string]float64{"random": 0, "mcts:100": 250, "gen-1": 150, "gen-2": 400, "gen-3": 520}
	pairs := [][2]string{
		{"mcts:100", "random"}, {"gen-1", "random"}, {"gen-2", "gen-1"}, {"gen-3", "gen-2"},
		{"gen-3", "mcts:100"}, {"gen-2", "mcts:100"}, {"gen-1", "mcts:100"},
	}
	inside, total := 0, 0
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		ratings, err := FitRatings(simulate(rng, elos, pairs, 400), "random")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range ratings {
			truth := elos[r.Player]
			if r.Player == "random" {
				if r.Elo != 0 {
					t.Fatalf("anchor rated %v", r.Elo)
				}
				continue
			}
			half := (r.High - r.Low) / 2
			if half <= 0 || half > 100 {
				t.Fatalf("%s: interval ±%.1f", r.Player, half)
			}
			total++
			if truth >= r.Low && truth <= r.High {
				inside++
			}
			if math.Abs(r.Elo-truth) > 2*half {
				t.Errorf("seed %d: %s rated %.0f [%.0f, %.0f], truth %.0f", seed, r.Player, r.Elo, r.Low, r.High, truth)
			}
		}
	}
	// 95% intervals: about 76 of 80 should hold the truth.
	if inside < total*85/100 {
		t.Errorf("the truth is inside the interval %d times of %d", inside, total)
	}
}

func TestFitRatingsNeedsConnectedPlayers(t *testing.T) {
	_, err := FitRatings([]Match{{A: "a", B: "random", Score: Score{5, 0, 5}}, {A: "b", B: "c", Score: Score{1, 1, 1}}}, "random")
	if err == nil {
		t.Error("players unconnected to the anchor got ratings")
	}
}

func TestScoreElo(t *testing.T) {
	s := Score{Wins: 60, Draws: 20, Losses: 20}
	elo, low, high := s.Elo()
	// 70% score is 147 Elo.
	if math.Abs(elo-147.2) > 0.5 || !(low < elo && elo < high) || high-low > 200 {
		t.Errorf("Elo %v [%v, %v]", elo, low, high)
	}
	if e, _, _ := (Score{Wins: 10, Losses: 10}).Elo(); e != 0 {
		t.Errorf("even score: %v", e)
	}
}

// TestEloOfAlikeGames: a match whose games all ended alike still has an
// interval of some width, narrower the more games there were.
func TestEloOfAlikeGames(t *testing.T) {
	for _, s := range []Score{{Draws: 50}, {Wins: 20}, {Losses: 12}} {
		elo, low, high := s.Elo()
		if !(low < elo || elo < high) || !(low <= elo && elo <= high) {
			t.Errorf("%+v: elo %g [%g, %g], want an interval around it", s, elo, low, high)
		}
	}
	_, low50, high50 := Score{Draws: 50}.Elo()
	_, low200, high200 := Score{Draws: 200}.Elo()
	if !(high50-low50 > high200-low200 && high200 > low200) || low50 > -10 || high50 < 10 {
		t.Errorf("50 draws [%g, %g], 200 draws [%g, %g]", low50, high50, low200, high200)
	}
}

func TestSPRT(t *testing.T) {
	sprt := DefaultSPRT()
	rng := rand.New(rand.NewPCG(3, 3))
	play := func(elo float64) (int, int) {
		elos := map[string]float64{"a": elo, "b": 0}
		var s Score
		for n := 1; n <= 20000; n++ {
			m := simulate(rng, elos, [][2]string{{"a", "b"}}, 1)[0].Score
			s.Wins += m.Wins
			s.Draws += m.Draws
			s.Losses += m.Losses
			if d := sprt.Decide(s); d != 0 {
				return d, n
			}
		}
		return 0, 20000
	}
	if d, n := play(100); d != 1 {
		t.Errorf("a 100 Elo stronger side: decision %d after %d games, want H1", d, n)
	}
	if d, n := play(-50); d != -1 {
		t.Errorf("a weaker side: decision %d after %d games, want H0", d, n)
	}
}

func TestSPRTDecidesPerfectAndDrawnMatches(t *testing.T) {
	sprt := DefaultSPRT()
	if d := sprt.Decide(Score{Wins: 30}); d != 1 {
		t.Errorf("30 wins and no loss: decision %d, want H1", d)
	}
	if d := sprt.Decide(Score{Losses: 30}); d != -1 {
		t.Errorf("30 losses: decision %d, want H0", d)
	}
	if d := sprt.Decide(Score{Draws: 60}); d != -1 {
		t.Errorf("60 draws: decision %d, want H0 (no gain)", d)
	}
	if d := sprt.Decide(Score{Wins: 2}); d != 0 {
		t.Errorf("2 wins: decision %d, want to keep playing", d)
	}
}

func TestScoreForms(t *testing.T) {
	for _, tc := range []struct {
		s             Score
		text, counts  string
		reversed, sum Score
	}{
		{Score{10, 1, 9}, "W-D-L 10-1-9", "10-1-9", Score{9, 1, 10}, Score{19, 2, 19}},
		{Score{0, 20, 0}, "W-D-L 0-20-0", "0-20-0", Score{0, 20, 0}, Score{0, 40, 0}},
		{Score{}, "W-D-L 0-0-0", "0-0-0", Score{}, Score{}},
	} {
		if got := tc.s.String(); got != tc.text {
			t.Errorf("%+v prints %q, want %q", tc.s, got, tc.text)
		}
		if got := tc.s.Counts(); got != tc.counts {
			t.Errorf("%+v counts %q, want %q", tc.s, got, tc.counts)
		}
		if got := tc.s.Reversed(); got != tc.reversed {
			t.Errorf("%+v reversed is %+v, want %+v", tc.s, got, tc.reversed)
		}
		if got := tc.s.Add(tc.s.Reversed()); got != tc.sum {
			t.Errorf("%+v and its reverse add to %+v, want %+v", tc.s, got, tc.sum)
		}
	}
}
