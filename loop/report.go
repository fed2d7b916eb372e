package loop

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
)

// Report sums up a run's metrics for a person at a terminal: how far the
// run got and how fast, what its network learned, and the signs of a run
// going wrong that the numbers show (Checks). Rates are medians over
// generations, which one slow generation (a checkpoint, a page opened)
// does not move.
type Report struct {
	Generation int     // the newest generation's number
	Seconds    float64 // the run's wall time at its end
	// MedianSeconds is a generation's median wall time.
	MedianSeconds float64
	Steps         int
	// PretrainSteps are the steps of a pretrained generation 0, which
	// Steps counts too.
	PretrainSteps int
	Positions     int // training positions self-play produced over the run
	Games         int
	// PositionsPerGame over the first and the last few generations:
	// games that shorten as the network learns are most games' sign of
	// progress.
	FirstPositionsPerGame, LastPositionsPerGame float64
	EvalsS                                      float64 // self-play's network evaluations a second
	CacheShare                                  float64 // over the last few generations
	TrainShare                                  float64 // of the run's time
	TrainS                                      float64 // training samples a second
	LearningRate                                float64 // the newest generation's
	// FirstLosses and LastLosses are the policy's and the value's
	// losses over the first and the last few generations.
	FirstLosses, LastLosses         [2]float64
	Resigned, NoResign, FalseResign int
	// Agreement is the newest held-out measure and its generation.
	Agreement           *Agreement
	AgreementGeneration int
	// Rating, Baseline and BaselineResult are the newest arena's, and
	// ArenaGeneration its generation (0: the arena never ran).
	Rating          *float64
	Baseline        string
	BaselineResult  *[3]int
	ArenaGeneration int
	Pretrained      *Pretrained
	// Checks are the signs of a run going wrong that the metrics show.
	Checks []Check
}

// Check is one sign of a run going wrong: which sign, the generation a
// stretch of it starts at (0 for a sign judged on the newest games), and
// a sentence that says it and what to do.
type Check struct {
	Sign string
	From int
	Text string
}

// The signs a Report checks.
const (
	SignFalseResignations = "false resignations"
	SignSlowTraining      = "slow training"
)

// ReportSpan is how many generations "the first few" and "the last few"
// are.
const ReportSpan = 10

// falseResignShare is the share of played-out games that would have been
// resigned and were not lost above which resignation is judged to cost
// the run wrong value targets: AlphaGo Zero chose its threshold to keep
// it under 5%.
const falseResignShare = 0.05

// minPlayedOut is the fewest played-out games the share is judged on;
// it is judged on the newest generations that together played out ten
// times that many (a few dozen generations of the shipped configs).
const minPlayedOut = 20

// slowShare is how far below the run's median a generation's training
// samples a second must fall to count as slow: training's batches have
// the same shape all run, so its rate is the machine's, and a stretch at
// three quarters of it had its cores shared (or a slower machine).
// slowSpan is how many slow generations in a row make a stretch: two
// Othello runs on an idle machine had 0 and 6 slow generations, none
// two in a row.
const (
	slowShare = 0.75
	slowSpan  = 5
)

// NewReport sums up a run's metrics, oldest generation first. A
// pretrained generation 0 is the start, not a generation of the loop:
// it is reported as Pretrained and left out of the rates.
func NewReport(ms []GenerationMetrics) Report {
	var r Report
	var loop []GenerationMetrics
	for _, m := range ms {
		if m.Pretrained != nil {
			r.Pretrained, r.PretrainSteps = m.Pretrained, m.Step
		}
		if m.Generation > 0 {
			loop = append(loop, m)
		}
		if m.Agreement != nil {
			r.Agreement, r.AgreementGeneration = m.Agreement, m.Generation
		}
		if m.Rating != nil || m.BaselineResult != nil {
			r.Rating, r.Baseline, r.BaselineResult, r.ArenaGeneration = m.Rating, m.Baseline, m.BaselineResult, m.Generation
		}
	}
	if len(loop) == 0 {
		return r
	}
	last := loop[len(loop)-1]
	r.Generation, r.Seconds, r.Steps, r.Positions, r.LearningRate = last.Generation, last.RunSeconds, last.Step, last.Samples, last.LR
	var trainSeconds, seconds float64
	for _, m := range loop {
		r.Games += m.Games
		r.Resigned += m.Resigned
		r.NoResign += m.NoResign
		r.FalseResign += m.FalseResign
		trainSeconds += m.TrainSeconds
		seconds += m.Seconds
	}
	if seconds > 0 {
		r.TrainShare = trainSeconds / seconds
	}
	first, end := loop[:min(ReportSpan, len(loop))], loop[max(0, len(loop)-ReportSpan):]
	r.FirstPositionsPerGame, r.LastPositionsPerGame = positionsPerGame(first), positionsPerGame(end)
	r.FirstLosses, r.LastLosses = meanLosses(first), meanLosses(end)
	r.MedianSeconds = medianOf(loop, func(m GenerationMetrics) float64 { return m.Seconds })
	r.EvalsS = medianOf(loop, func(m GenerationMetrics) float64 { return m.EvalsS })
	r.CacheShare = medianOf(end, func(m GenerationMetrics) float64 { return m.CacheShare })
	r.TrainS = medianOf(loop, func(m GenerationMetrics) float64 { return m.TrainS })
	r.Checks = append(falseResignChecks(loop), slowChecks(loop, r.TrainS)...)
	return r
}

// positionsPerGame is the generations' positions over their games.
func positionsPerGame(ms []GenerationMetrics) float64 {
	positions, games := 0, 0
	for _, m := range ms {
		positions += m.Positions
		games += m.Games
	}
	if games == 0 {
		return 0
	}
	return float64(positions) / float64(games)
}

// meanLosses is the generations' mean policy and value losses.
func meanLosses(ms []GenerationMetrics) [2]float64 {
	var sum [2]float64
	for _, m := range ms {
		sum[0] += m.PolicyLoss
		sum[1] += m.ValueLoss
	}
	n := float64(len(ms))
	return [2]float64{sum[0] / n, sum[1] / n}
}

// medianOf is the median of the positive values of f over ms (a rate
// that was not measured is 0 there), 0 where there is none.
func medianOf(ms []GenerationMetrics, f func(GenerationMetrics) float64) float64 {
	var vs []float64
	for _, m := range ms {
		if v := f(m); v > 0 {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return 0
	}
	slices.Sort(vs)
	if n := len(vs); n%2 == 0 {
		return (vs[n/2-1] + vs[n/2]) / 2
	}
	return vs[len(vs)/2]
}

// falseResignChecks judges resignation over the newest generations that
// played out at least minPlayedOut games past a resignation: a false
// resignation teaches the value head a lost result for a position that
// was not lost, and the no-resign games are there to count them.
func falseResignChecks(ms []GenerationMetrics) []Check {
	played, wrong, from := 0, 0, 0
	for i := len(ms) - 1; i >= 0 && played < 10*minPlayedOut; i-- {
		played += ms[i].NoResign
		wrong += ms[i].FalseResign
		from = ms[i].Generation
	}
	if played < minPlayedOut || float64(wrong) <= falseResignShare*float64(played) {
		return nil
	}
	return []Check{{SignFalseResignations, 0, fmt.Sprintf("%d of the %d games played out past a resignation since generation %d were not lost by the side that would have resigned (%.0f%%, above the 5%% AlphaGo Zero allowed): stop the run, lower selfplay.resign_threshold (or raise resign_moves) in its config.yaml, and resume it",
		wrong, played, from, 100*float64(wrong)/float64(played))}}
}

// slowChecks names each stretch of at least slowSpan generations in a
// row whose training ran below slowShare of the run's median rate (a
// generation alone is that slow now and then): figures and strength from
// those generations are not the machine's own.
func slowChecks(ms []GenerationMetrics, median float64) []Check {
	if median <= 0 {
		return nil
	}
	slow := func(m GenerationMetrics) bool { return m.TrainS > 0 && m.TrainS < slowShare*median }
	var checks []Check
	for lo := 0; lo < len(ms); lo++ {
		if !slow(ms[lo]) {
			continue
		}
		hi := lo + 1
		for hi < len(ms) && slow(ms[hi]) {
			hi++
		}
		if hi-lo >= slowSpan {
			rate := medianOf(ms[lo:hi], func(m GenerationMetrics) float64 { return m.TrainS })
			checks = append(checks, Check{SignSlowTraining, ms[lo].Generation, fmt.Sprintf("generations %d-%d trained at %.0f samples/s, %.0f%% of the run's median %.0f: the cores were shared, throttled or another machine's, and the run's figures there are not this machine's",
				ms[lo].Generation, ms[hi-1].Generation, rate, 100*rate/median, median)})
		}
		lo = hi
	}
	return checks
}

// RunChecks reads a run's metrics file and returns the sentences of its
// checks (the run's page shows them); a file not there yet has none.
func RunChecks(metricsPath string) ([]string, error) {
	ms, err := ReadMetrics(metricsPath)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var texts []string
	for _, c := range NewReport(ms).Checks {
		texts = append(texts, c.Text)
	}
	return texts, nil
}

// checkLog says each check once while it holds: the loop logs a check
// when it appears, not again each generation it goes on holding.
type checkLog struct {
	history []GenerationMetrics
	shown   map[[2]any]bool
}

// add takes a generation's metrics and returns the checks that appear
// with it.
func (l *checkLog) add(m GenerationMetrics) []Check {
	l.history = append(l.history, m)
	holding := map[[2]any]bool{}
	var fresh []Check
	for _, c := range NewReport(l.history).Checks {
		key := [2]any{c.Sign, c.From}
		holding[key] = true
		if !l.shown[key] {
			fresh = append(fresh, c)
		}
	}
	l.shown = holding
	return fresh
}
