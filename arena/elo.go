package arena

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// Score is a match result from one side's point of view.
type Score struct {
	Wins, Draws, Losses int
}

// Games is the number of games played.
func (s Score) Games() int { return s.Wins + s.Draws + s.Losses }

// String is the score in the one form every printer of flipzero's uses,
// labelled, from the side it belongs to: "W-D-L 10-1-9", wins, draws
// and losses.
func (s Score) String() string { return "W-D-L " + s.Counts() }

// Counts is the score's numbers alone, "10-1-9", for where the W-D-L
// label is already said: a table's heading, the second of two results.
func (s Score) Counts() string { return fmt.Sprintf("%d-%d-%d", s.Wins, s.Draws, s.Losses) }

// Reversed is the score from the other side's point of view.
func (s Score) Reversed() Score { return Score{Wins: s.Losses, Draws: s.Draws, Losses: s.Wins} }

// Add is the two scores together.
func (s Score) Add(o Score) Score {
	return Score{Wins: s.Wins + o.Wins, Draws: s.Draws + o.Draws, Losses: s.Losses + o.Losses}
}

// Fraction is the points won per game, draws counting half.
func (s Score) Fraction() float64 {
	if s.Games() == 0 {
		return 0.5
	}
	return (float64(s.Wins) + 0.5*float64(s.Draws)) / float64(s.Games())
}

// eloOf converts an expected score to an Elo difference.
func eloOf(score float64) float64 {
	score = math.Min(math.Max(score, 1e-6), 1-1e-6)
	return -400 * math.Log10(1/score-1)
}

// Elo is the Elo difference the score implies, with a 95% interval from
// the per-game variance of the result (wins, draws and losses counted
// apart, as fishtest and lc0 do).
func (s Score) Elo() (elo, low, high float64) {
	n := float64(s.Games())
	if n == 0 {
		return 0, math.Inf(-1), math.Inf(1)
	}
	mu := s.Fraction()
	_, variance := s.pseudoCounted()
	se := math.Sqrt(variance / n)
	return eloOf(mu), eloOf(mu - 1.96*se), eloOf(mu + 1.96*se)
}

// pseudoCounted is the mean and the per-game variance of the score, each
// of the three outcomes given half a game of pseudo-count as fishtest's
// SPRT does: a match whose games all ended alike (50 draws, 20 wins)
// shows no spread, which does not make its result certain. Over a hundred games the
// pseudo-counts move an interval by less than an Elo point.
func (s Score) pseudoCounted() (mean, variance float64) {
	const pseudo = 0.5
	w, d, l := float64(s.Wins)+pseudo, float64(s.Draws)+pseudo, float64(s.Losses)+pseudo
	n := w + d + l
	mean = (w + 0.5*d) / n
	return mean, (w*(1-mean)*(1-mean) + d*(0.5-mean)*(0.5-mean) + l*mean*mean) / n
}

// SPRT is a sequential probability ratio test of H0: the Elo difference is
// Elo0 against H1: it is Elo1, with error rates Alpha and Beta (fishtest's
// generalized SPRT on the trinomial result).
type SPRT struct {
	Elo0, Elo1, Alpha, Beta float64
}

// DefaultSPRT tests "no gain" against "a gain of 30 Elo" at 5% errors.
func DefaultSPRT() SPRT { return SPRT{Elo0: 0, Elo1: 30, Alpha: 0.05, Beta: 0.05} }

// LLR is the log-likelihood ratio of the results so far, from the
// score's pseudo-counted mean and variance, so that a side that never loses, or a
// match of only draws, still yields a decision.
func (t SPRT) LLR(s Score) float64 {
	if s.Games() < 2 {
		return 0
	}
	mu, variance := s.pseudoCounted()
	expected := func(elo float64) float64 { return 1 / (1 + math.Pow(10, -elo/400)) }
	mu0, mu1 := expected(t.Elo0), expected(t.Elo1)
	return float64(s.Games()) * (mu1 - mu0) * (2*mu - mu0 - mu1) / (2 * variance)
}

// Decide says whether the test has ended: +1 accepts H1 (the first side
// is better by Elo1), -1 accepts H0, 0 keeps playing.
func (t SPRT) Decide(s Score) int {
	llr := t.LLR(s)
	switch {
	case llr >= math.Log((1-t.Beta)/t.Alpha):
		return 1
	case llr <= math.Log(t.Beta/(1-t.Alpha)):
		return -1
	}
	return 0
}

// Match is the result of games between two players, from A's side.
type Match struct {
	A, B  string
	Score Score
}

// Rating is a player's fitted Elo with a 95% interval.
type Rating struct {
	Player    string
	Elo       float64
	Low, High float64
	Games     int
}

// FitRatings fits maximum-likelihood Elo ratings (Bradley–Terry, a draw
// counting as half a win for each side) to the matches, with anchor fixed
// at 0. Intervals come from the inverse of the Fisher information. Players
// not connected to the anchor by games cannot be rated: an error.
func FitRatings(matches []Match, anchor string) ([]Rating, error) {
	index := map[string]int{}
	var names []string
	add := func(p string) {
		if _, ok := index[p]; !ok {
			index[p] = len(names)
			names = append(names, p)
		}
	}
	add(anchor)
	for _, m := range matches {
		add(m.A)
		add(m.B)
	}
	n := len(names)
	// points[i][j]: points i scored against j; games[i][j]: games played.
	points := make([][]float64, n)
	games := make([][]float64, n)
	for i := range points {
		points[i] = make([]float64, n)
		games[i] = make([]float64, n)
	}
	played := make([]int, n)
	for _, m := range matches {
		a, b := index[m.A], index[m.B]
		if a == b {
			continue
		}
		g := float64(m.Score.Games())
		pa := float64(m.Score.Wins) + 0.5*float64(m.Score.Draws)
		points[a][b] += pa
		points[b][a] += g - pa
		games[a][b] += g
		games[b][a] += g
		played[a] += m.Score.Games()
		played[b] += m.Score.Games()
	}
	if err := connected(games, names); err != nil {
		return nil, err
	}
	// Strengths gamma = 10^(elo/400), by the MM algorithm (Hunter 2004),
	// with a tiny prior (one draw against a virtual player of the
	// anchor's strength) so that perfect scores stay finite.
	gamma := make([]float64, n)
	for i := range gamma {
		gamma[i] = 1
	}
	const prior = 0.5
	for iter := 0; iter < 10000; iter++ {
		maxChange := 0.0
		for i := 1; i < n; i++ {
			num, den := prior, 2*prior/(gamma[i]+1)
			for j := 0; j < n; j++ {
				if games[i][j] > 0 {
					num += points[i][j]
					den += games[i][j] / (gamma[i] + gamma[j])
				}
			}
			next := num / den
			maxChange = math.Max(maxChange, math.Abs(math.Log(next/gamma[i])))
			gamma[i] = next
		}
		if maxChange < 1e-10 {
			break
		}
	}
	// Fisher information in natural-log strength units, anchor removed.
	info := mat.NewSymDense(n-1, nil)
	for i := 1; i < n; i++ {
		for j := 0; j < n; j++ {
			if i == j || games[i][j] == 0 {
				continue
			}
			p := gamma[i] / (gamma[i] + gamma[j])
			w := games[i][j] * p * (1 - p)
			info.SetSym(i-1, i-1, info.At(i-1, i-1)+w)
			if j > 0 && j > i {
				info.SetSym(i-1, j-1, info.At(i-1, j-1)-w)
			}
		}
		info.SetSym(i-1, i-1, info.At(i-1, i-1)+prior/2)
	}
	variance := make([]float64, n)
	if n > 1 {
		var inv mat.Dense
		if err := inv.Inverse(info); err != nil {
			return nil, fmt.Errorf("ratings: the results do not pin the ratings down: %w", err)
		}
		for i := 1; i < n; i++ {
			variance[i] = inv.At(i-1, i-1)
		}
	}
	const eloPerNat = 400 / math.Ln10
	ratings := make([]Rating, n)
	for i, name := range names {
		elo := eloPerNat * math.Log(gamma[i])
		half := 1.96 * eloPerNat * math.Sqrt(variance[i])
		ratings[i] = Rating{Player: name, Elo: elo, Low: elo - half, High: elo + half, Games: played[i]}
	}
	sort.SliceStable(ratings, func(i, j int) bool { return ratings[i].Elo > ratings[j].Elo })
	return ratings, nil
}

func connected(games [][]float64, names []string) error {
	seen := make([]bool, len(names))
	stack := []int{0}
	seen[0] = true
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for j, g := range games[i] {
			if g > 0 && !seen[j] {
				seen[j] = true
				stack = append(stack, j)
			}
		}
	}
	for i, ok := range seen {
		if !ok {
			return fmt.Errorf("ratings: %s has played no one connected to the anchor %s", names[i], names[0])
		}
	}
	if len(names) == 0 {
		return errors.New("ratings: no players")
	}
	return nil
}
