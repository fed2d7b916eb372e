package nn

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/tictactoe"
)

// tinyConfig is a network small enough to build by the dozen.
var tinyConfig = Config{Blocks: 1, Filters: 6, PolicyFilters: 2, ValueFilters: 1, ValueHidden: 8}

func maxAbsDiff(a, b []float32) float64 {
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}

// perturbBatchNorm gives every batch norm random scales, offsets and
// running statistics, so that folding them is really exercised.
func perturbBatchNorm(n *Network, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	for _, c := range n.allConvs() {
		for i := 0; i < c.out; i++ {
			c.gamma.data[i] = float32(0.5 + rng.Float64())
			c.beta.data[i] = float32(rng.NormFloat64() * 0.2)
			c.mean.data[i] = float32(rng.NormFloat64() * 0.3)
			c.variance.data[i] = float32(0.5 + 2*rng.Float64())
		}
	}
}

// storedTraining is a Training that takes no steps: the optimizer state
// as data, for the files' tests, which need no backend.
type storedTraining struct{ s TrainingState }

func (t *storedTraining) Step(Batch) (Losses, error)    { return Losses{}, errors.New("no backend") }
func (t *storedTraining) SetLearningRate(float64) error { return nil }
func (t *storedTraining) Steps() int64                  { return t.s.Steps }
func (t *storedTraining) Config() TrainConfig           { return t.s.Config }
func (t *storedTraining) Network() *Network             { return t.s.Network }
func (t *storedTraining) Velocity() [][]float32         { return t.s.Velocity }
func (t *storedTraining) Sync() error                   { return nil }

// trainedTicTacToe is a tiny network as if after three steps: its
// weights, statistics and momentum all nonzero and distinct.
func trainedTicTacToe(t testing.TB) *storedTraining {
	t.Helper()
	net, err := New(tictactoe.Game{}, tinyConfig, 2)
	if err != nil {
		t.Fatal(err)
	}
	perturbBatchNorm(net, 4)
	rng := rand.New(rand.NewPCG(5, 6))
	s := TrainingState{Network: net, Config: DefaultTrainConfig(), Steps: 3}
	for _, p := range net.learnables {
		v := make([]float32, len(p.data))
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		s.Velocity = append(s.Velocity, v)
	}
	return &storedTraining{s}
}

// shapeGame has a game's name and shape and no rules: a network's files
// need no more.
type shapeGame struct {
	name                           string
	planes, height, width, actions int
}

func (g shapeGame) Name() string                    { return g.name }
func (g shapeGame) NewState() env.State             { return nil }
func (g shapeGame) PlayerName(p env.Player) string  { return fmt.Sprint(p) }
func (g shapeGame) ActionSpace() int                { return g.actions }
func (g shapeGame) ParseAction(string) (int, error) { return 0, errors.New("no notation") }
func (g shapeGame) FormatAction(a int) string       { return fmt.Sprint(a) }
func (g shapeGame) EncodedShape() (int, int, int)   { return g.planes, g.height, g.width }
func (g shapeGame) Symmetries() []env.Symmetry      { return nil }
