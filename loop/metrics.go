package loop

import (
	"fmt"
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/internal/atomicfile"
	"github.com/flipzero/flipzero/runfolder"
	"github.com/flipzero/flipzero/selfplay"
)

// GenerationMetrics is one line of a run's metrics.jsonl: what one
// generation of the loop did.
type GenerationMetrics struct {
	Generation int     `json:"generation"`
	Time       string  `json:"time"`
	Seconds    float64 `json:"seconds"`     // wall time of the generation
	RunSeconds float64 `json:"run_seconds"` // wall time of the run so far
	Games      int     `json:"games"`
	Positions  int     `json:"positions"` // recorded as training samples
	// Reused says the generation's games were played by an earlier
	// invocation that stopped before its checkpoint: its positions came
	// from the saved shard, its counts from the saved game records, and
	// it has no self-play rates.
	Reused bool `json:"reused_selfplay,omitempty"`
	Moves  int  `json:"moves"` // searched, recorded or not
	// The self-play rates, absent where they were not measured: games
	// reused (Reused), evaluations made by workers elsewhere.
	PositionsS float64 `json:"positions_per_s,omitempty"`
	EvalsS     float64 `json:"evals_per_s,omitempty"` // network evaluations per second in self-play
	// CacheShare is the share of self-play's positions that the
	// evaluation cache (selfplay.eval_cache) answered instead.
	CacheShare  float64 `json:"cache_share,omitempty"`
	Resigned    int     `json:"resigned"`
	FalseResign int     `json:"false_resignations"`     // no-resign games the resigning side would have drawn or won
	NoResign    int     `json:"no_resign_games"`        // games played out where resignation would have happened
	Forked      int     `json:"forked_games,omitempty"` // games started from a fork (selfplay.fork_fraction)
	Results     [3]int  `json:"results"`                // first player wins, second player wins, draws
	Steps       int     `json:"steps"`                  // training steps this generation
	Step        int     `json:"step"`                   // training steps over the run
	Samples     int     `json:"samples_total"`          // samples produced over the run
	Window      int     `json:"window"`
	LR          float64 `json:"learning_rate"`
	PolicyLoss  float64 `json:"policy_loss"`
	ValueLoss   float64 `json:"value_loss"`
	// The auxiliary heads' mean squared errors, where the network has
	// them (nn.Losses).
	OwnershipLoss float64 `json:"ownership_loss,omitempty"`
	ScoreLoss     float64 `json:"score_loss,omitempty"`
	// SoftPolicyLoss is the soft policy head's cross-entropy, where the
	// network has it.
	SoftPolicyLoss float64  `json:"soft_policy_loss,omitempty"`
	TrainS         float64  `json:"train_samples_per_s"`
	Rating         *float64 `json:"rating,omitempty"` // Elo against the run's anchor, when the arena ran
	// Baseline and BaselineResult are the arena's match against the
	// config's baseline, when it ran: the new network's wins, draws and
	// losses.
	Baseline       string  `json:"baseline,omitempty"`
	BaselineResult *[3]int `json:"baseline_result,omitempty"`
	// PolicyResult is the match of the new network's policy alone (one
	// playout) against the baseline, when arena.policy_match has it
	// played: its wins, draws and losses.
	PolicyResult *[3]int `json:"policy_result,omitempty"`
	Best         int     `json:"best"` // the generation whose network plays the next games
	// The generation's time by phase: self-play (with writing its
	// shard), training (with the checkpoint), and the arena, which
	// Seconds leaves out.
	SelfPlaySeconds float64 `json:"selfplay_seconds"`
	TrainSeconds    float64 `json:"train_seconds"`
	ArenaSeconds    float64 `json:"arena_seconds"`
	// Score is a one-player game's mean final score over the
	// generation's self-play games, in the game's units (tokens
	// captured); absent for other games. Results count the games that
	// reach the best score as wins and the others as draws.
	Score *float64 `json:"score,omitempty"`
	// ArenaScore is a one-player game's new network's mean score over
	// the arena's deals, when the arena ran: unlike Score, measured
	// without self-play's noise and temperature.
	ArenaScore *float64 `json:"arena_score,omitempty"`
	// PolicySurprise is the mean policy surprise of the positions played
	// for this generation (selfplay.Tally): how far the search moved the
	// network's policy, in nats, falling as the network learns what its
	// search finds; absent where none was played now.
	PolicySurprise *float64 `json:"policy_surprise,omitempty"`
	// Agreement is the network's agreement with the held-out records of
	// eval.records, in the generations measured (EvalConfig), and
	// EvalSeconds what measuring took, which Seconds leaves out.
	Agreement   *Agreement `json:"agreement,omitempty"`
	EvalSeconds float64    `json:"eval_seconds,omitempty"`
	// Pretrained is what a generation 0 that flipzero pretrain trained
	// learned from.
	Pretrained *Pretrained `json:"pretrained,omitempty"`
}

// count puts the generation's games into its metrics: the counts, the
// mean policy surprise, and in a one-player game the mean score.
func (m *GenerationMetrics) count(t selfplay.Tally, g env.Game) {
	m.Games, m.Moves, m.Results = t.Games, t.Moves, t.Results
	m.Resigned, m.NoResign, m.FalseResign, m.Forked = t.Resigned, t.NoResign, t.FalseResign, t.Forked
	if _, scored := g.NewState().(env.Scorer); scored && t.Games > 0 {
		mean := t.Score / float64(t.Games)
		m.Score = &mean
	}
	if t.SurpriseSamples > 0 {
		mean := t.Surprise / float64(t.SurpriseSamples)
		m.PolicySurprise = &mean
	}
}

// maxMetricsBytes bounds what is read of a metrics file: a line a
// generation, some 600 bytes, so years of generations.
const maxMetricsBytes = 256 << 20

// ReadMetrics reads a metrics file under the run folder's policy for
// record files (runfolder.ReadRecords): a line that is not a
// generation's, such as one a crash cut short, is skipped.
func ReadMetrics(path string) ([]GenerationMetrics, error) {
	ms, _, err := runfolder.ReadRecords(path, maxMetricsBytes, runfolder.End, runfolder.JSONRecord[GenerationMetrics])
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return ms, nil
}

// AppendMetrics adds a generation's line to the metrics file.
func AppendMetrics(path string, m GenerationMetrics) error {
	return runfolder.AppendRecord(path, m)
}

// PlotMetrics draws the loss curves (and ratings, when there are any)
// against the generation to a PNG.
func PlotMetrics(metrics []GenerationMetrics, out string) error {
	if len(metrics) == 0 {
		return fmt.Errorf("plot: no generations to draw")
	}
	losses := plot.New()
	losses.Title.Text = "training loss"
	losses.X.Label.Text = "generation"
	losses.Y.Label.Text = "loss"
	losses.Legend.Top = true
	policy, value := make(plotter.XYs, 0, len(metrics)), make(plotter.XYs, 0, len(metrics))
	var ratings plotter.XYs
	for _, m := range metrics {
		if m.Steps > 0 {
			policy = append(policy, plotter.XY{X: float64(m.Generation), Y: m.PolicyLoss})
			value = append(value, plotter.XY{X: float64(m.Generation), Y: m.ValueLoss})
		}
		if m.Rating != nil {
			ratings = append(ratings, plotter.XY{X: float64(m.Generation), Y: *m.Rating})
		}
	}
	if err := addLine(losses, "policy", policy, color.RGBA{R: 200, A: 255}); err != nil {
		return err
	}
	if err := addLine(losses, "value", value, color.RGBA{B: 200, A: 255}); err != nil {
		return err
	}
	// Headroom above the curves for the legend, so that it covers none.
	if lo, hi, ok := yRange(policy, value); ok {
		losses.Y.Min, losses.Y.Max = lo, hi+0.25*(hi-lo+1e-9)
	}
	panels := []*plot.Plot{losses}
	if len(ratings) > 0 {
		rp := plot.New()
		rp.Title.Text = "rating"
		rp.X.Label.Text = "generation"
		rp.Y.Label.Text = "Elo"
		if err := addLine(rp, "Elo", ratings, color.RGBA{G: 150, A: 255}); err != nil {
			return err
		}
		panels = append(panels, rp)
	}
	const width, rowHeight = 8 * vg.Inch, 4 * vg.Inch
	img := vgimg.New(width, rowHeight*vg.Length(len(panels)))
	dc := draw.New(img)
	grid := make([][]*plot.Plot, len(panels))
	for i, p := range panels {
		grid[i] = []*plot.Plot{p}
	}
	canvases := plot.Align(grid, draw.Tiles{Rows: len(panels), Cols: 1}, dc)
	for i, p := range panels {
		p.Draw(canvases[i][0])
	}
	f := vgimg.PngCanvas{Canvas: img}
	return atomicfile.Write(out, func(w io.Writer) error {
		_, err := f.WriteTo(w)
		return err
	})
}

func addLine(p *plot.Plot, name string, points plotter.XYs, c color.Color) error {
	if len(points) == 0 {
		return nil
	}
	line, err := plotter.NewLine(points)
	if err != nil {
		return fmt.Errorf("plot %s: %w", name, err)
	}
	line.Color = c
	line.Width = vg.Points(1.5)
	p.Add(line)
	p.Legend.Add(name, line)
	return nil
}

// yRange is the least and the greatest y of the points, if there are any.
func yRange(series ...plotter.XYs) (lo, hi float64, ok bool) {
	for _, xys := range series {
		for _, p := range xys {
			if !ok || p.Y < lo {
				lo = p.Y
			}
			if !ok || p.Y > hi {
				hi = p.Y
			}
			ok = true
		}
	}
	return lo, hi, ok
}
