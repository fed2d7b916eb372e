package records

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/flipzero/flipzero/env"
)

// Evaluator scores a batch of positions: each one's priors over the
// action space and its value for the player to move, as the search's
// evaluator over a network (nn.BatchEvaluator) does.
type Evaluator interface {
	Evaluate(states []env.State, priors, values []float32) error
}

// Estimate is a measured figure with its 95% interval.
type Estimate struct {
	Value float64 `json:"value"`
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
}

// Agreement is how a network's policy and value compare with games
// played: how often the move played is the policy's first choice, or
// among its first three, and the value's mean squared error against each
// game's result. Positions of one game are alike, so the intervals come
// from resampling whole games (a bootstrap over games), not positions.
type Agreement struct {
	Games     int      `json:"games"`
	Positions int      `json:"positions"`
	Top1      Estimate `json:"top1"`
	Top3      Estimate `json:"top3"`
	// ValueMSE is over the positions of games with a result; nil where
	// none has one. ConstantMSE is what a value of 0 everywhere scores,
	// the mean squared result: the error a value head must beat.
	ValueMSE    *Estimate `json:"value_mse,omitempty"`
	ConstantMSE float64   `json:"constant_mse,omitempty"`
}

// MeasureOptions size a measurement.
type MeasureOptions struct {
	// MaxPositions, above 0, measures that many of the games' decisions,
	// drawn at random by Seed: the same ones every time for the same
	// games and seed, so that networks measured apart are compared on
	// the same positions.
	MaxPositions int
	// Batch is how many positions are evaluated at once (default 256).
	Batch int
	// Seed draws the positions and the bootstrap's resamples.
	Seed uint64
	// Resamples of the bootstrap (default 1000).
	Resamples int
}

func (o *MeasureOptions) defaults() {
	if o.Batch <= 0 {
		o.Batch = 256
	}
	if o.Resamples <= 0 {
		o.Resamples = 1000
	}
}

// gameTally is what one game's measured positions add up to; a
// position's top-k hits may be fractions where priors tie.
type gameTally struct {
	positions, top1, top3 float64
	valued, squaredError  float64
	squaredResult         float64
}

// pending is a position waiting in a batch.
type pending struct {
	tally  int // index in the tallies
	played int
	result float32
	valued bool
}

// Measure evaluates the decisions of games (or MaxPositions of them)
// with eval and compares its policy with the moves played and its value
// with the results.
func Measure(ctx context.Context, eval Evaluator, g env.Game, games []Game, opts MeasureOptions) (Agreement, error) {
	opts.defaults()
	total := 0
	for i := range games {
		total += len(games[i].plies)
	}
	if total == 0 {
		return Agreement{}, errors.New("measure: no positions: the records hold no decision")
	}
	want := total
	if opts.MaxPositions > 0 {
		want = min(want, opts.MaxPositions)
	}
	m := measurer{eval: eval, game: g, actions: g.ActionSpace(),
		states:  make([]env.State, opts.Batch),
		priors:  make([]float32, opts.Batch*g.ActionSpace()),
		values:  make([]float32, opts.Batch),
		legal:   make([]int, 0, g.ActionSpace()),
		pending: make([]pending, 0, opts.Batch)}
	for i := range m.states {
		m.states[i] = g.NewState()
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0xa9ee))
	state := g.NewState()
	start := g.NewState()
	remaining := total
	for gi := range games {
		if err := ctx.Err(); err != nil {
			return Agreement{}, err
		}
		game := &games[gi]
		state.CopyFrom(start)
		next, tally := 0, -1
		for ply, a := range game.actions {
			if next < len(game.plies) && int(game.plies[next]) == ply {
				next++
				// Selection sampling: each position is taken with the
				// chance that leaves want of the remaining ones, so that
				// every set of want positions is as likely.
				take := rng.IntN(remaining) < want
				remaining--
				if take {
					want--
					if tally < 0 {
						m.tallies = append(m.tallies, gameTally{})
						tally = len(m.tallies) - 1
					}
					if err := m.add(state, tally, int(a), game); err != nil {
						return Agreement{}, err
					}
				}
			}
			state.Apply(int(a))
		}
	}
	if err := m.flush(); err != nil {
		return Agreement{}, err
	}
	return summarize(m.tallies, rng, opts.Resamples), nil
}

// measurer batches positions for the evaluator and tallies its answers.
type measurer struct {
	eval    Evaluator
	game    env.Game
	actions int
	states  []env.State
	priors  []float32
	values  []float32
	legal   []int
	pending []pending
	tallies []gameTally
}

func (m *measurer) add(s env.State, tally, played int, game *Game) error {
	k := len(m.pending)
	m.states[k].CopyFrom(s)
	m.pending = append(m.pending, pending{tally: tally, played: played,
		result: game.result[s.ToMove()], valued: game.hasResult})
	if len(m.pending) == len(m.states) {
		return m.flush()
	}
	return nil
}

func (m *measurer) flush() error {
	n := len(m.pending)
	if n == 0 {
		return nil
	}
	if err := m.eval.Evaluate(m.states[:n], m.priors[:n*m.actions], m.values[:n]); err != nil {
		return fmt.Errorf("measure: %w", err)
	}
	for k, p := range m.pending {
		priors := m.priors[k*m.actions : (k+1)*m.actions]
		m.legal = m.states[k].LegalActions(m.legal)
		t := &m.tallies[p.tally]
		t.positions++
		t.top1 += topK(priors, m.legal, p.played, 1)
		t.top3 += topK(priors, m.legal, p.played, 3)
		if p.valued {
			d := float64(m.values[k] - p.result)
			t.valued++
			t.squaredError += d * d
			t.squaredResult += float64(p.result) * float64(p.result)
		}
	}
	m.pending = m.pending[:0]
	return nil
}

// topK is the chance that the move played is among the policy's first k
// choices, ties among equal priors broken at random: an untrained
// network's uniform policy agrees with one move in as many as there are,
// not with every one.
func topK(priors []float32, legal []int, played, k int) float64 {
	p := priors[played]
	above, tied := 0, 0
	for _, a := range legal {
		switch {
		case a == played:
		case priors[a] > p:
			above++
		case priors[a] == p:
			tied++
		}
	}
	return min(1, max(0, float64(k-above)/float64(tied+1)))
}

// summarize turns the games' tallies into the figures and their
// intervals: the 2.5th and 97.5th percentiles of each figure over
// resamples of the games drawn with replacement.
func summarize(tallies []gameTally, rng *rand.Rand, resamples int) Agreement {
	var sum gameTally
	for _, t := range tallies {
		sum.add(t)
	}
	a := Agreement{Games: len(tallies), Positions: int(sum.positions)}
	top1 := make([]float64, resamples)
	top3 := make([]float64, resamples)
	mse := make([]float64, resamples)
	for r := range resamples {
		var s gameTally
		for range tallies {
			s.add(tallies[rng.IntN(len(tallies))])
		}
		top1[r], top3[r] = s.top1/s.positions, s.top3/s.positions
		if s.valued > 0 {
			mse[r] = s.squaredError / s.valued
		}
	}
	a.Top1 = interval(sum.top1/sum.positions, top1)
	a.Top3 = interval(sum.top3/sum.positions, top3)
	if sum.valued > 0 {
		e := interval(sum.squaredError/sum.valued, mse)
		a.ValueMSE = &e
		a.ConstantMSE = sum.squaredResult / sum.valued
	}
	return a
}

func (t *gameTally) add(o gameTally) {
	t.positions += o.positions
	t.top1 += o.top1
	t.top3 += o.top3
	t.valued += o.valued
	t.squaredError += o.squaredError
	t.squaredResult += o.squaredResult
}

// interval is value with the 95% percentile interval of its resamples.
func interval(value float64, resampled []float64) Estimate {
	slices.Sort(resampled)
	n := len(resampled)
	lo := resampled[int(0.025*float64(n))]
	hi := resampled[min(n-1, int(0.975*float64(n)))]
	// A percentile interval of a skewed figure may leave out the figure
	// itself by a hair: widen it to hold it.
	return Estimate{Value: value, Low: min(lo, value), High: max(hi, value)}
}

// String is the agreement in three lines, as flipzero analyze prints it.
func (a Agreement) String() string {
	s := fmt.Sprintf("top-1 %s\ntop-3 %s\n", percent(a.Top1), percent(a.Top3))
	if a.ValueMSE == nil {
		return s + "value error: no game with a result\n"
	}
	e := *a.ValueMSE
	return s + fmt.Sprintf("value error %.3f [%.3f, %.3f] (mean squared, against the result; %.3f for a value of 0 everywhere)\n",
		e.Value, e.Low, e.High, a.ConstantMSE)
}

// Short is the agreement on one line, for a generation's log line.
func (a Agreement) Short() string {
	s := fmt.Sprintf("top-1 %.1f%% top-3 %.1f%%", 100*a.Top1.Value, 100*a.Top3.Value)
	if a.ValueMSE != nil {
		s += fmt.Sprintf(" value error %.3f", a.ValueMSE.Value)
	}
	return s
}

func percent(e Estimate) string {
	return fmt.Sprintf("%.1f%% [%.1f, %.1f]", 100*e.Value, 100*e.Low, 100*e.High)
}
