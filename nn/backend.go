package nn

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/flipzero/flipzero/env"
)

// Backend computes networks: the search's batched inference and the
// trainer's steps. Everything else about a network — its definition, its
// files, folding — is the same whatever computes it, so a network trained
// by one backend loads and plays on another. The CPU backend (CPU) is this
// package's own code; a GPU backend implements the same interface and the
// callers never know which they have (lc0's network.h is the model).
type Backend interface {
	// Name says what computes, for logs: "cpu (OpenBLAS ...)", "cuda (H100 ...)".
	Name() string
	// NewInference prepares batched inference of a snapshot for batches
	// of up to maxBatch positions, for one goroutine at a time.
	NewInference(f *Folded, maxBatch int) (Inference, error)
	// NewTraining trains s.Network from its current weights, resuming
	// the optimizer from s.
	NewTraining(s TrainingState) (Training, error)
}

// TrainingState is what training starts or resumes from, as a
// checkpoint holds it: the weights being trained, the optimizer's
// configuration, its momentum (parallel to Network.Learnables; nil: at
// rest) and the steps taken. It is data, so that a checkpoint written by
// one backend resumes on any other.
type TrainingState struct {
	Network  *Network
	Config   TrainConfig
	Velocity [][]float32
	Steps    int64
}

// CheckVelocity says whether the momentum, where there is any, fits the
// network's learnables array for array.
func (s TrainingState) CheckVelocity() error {
	if s.Velocity == nil {
		return nil
	}
	if len(s.Velocity) != len(s.Network.learnables) {
		return fmt.Errorf("training: %d momentum arrays for %d learnables", len(s.Velocity), len(s.Network.learnables))
	}
	for i, v := range s.Velocity {
		if p := s.Network.learnables[i]; len(v) != len(p.data) {
			return fmt.Errorf("training: momentum of %s holds %d values, want %d", p.name, len(v), len(p.data))
		}
	}
	return nil
}

// Inference runs a network on a batch of encoded positions.
type Inference interface {
	// MaxBatch is the largest batch Forward takes.
	MaxBatch() int
	// Forward runs the network on count positions (count × planes ×
	// height × width values) and returns the policy logits (count ×
	// actions) and win/draw/loss probabilities (count × 3), valid until
	// the next call.
	Forward(inputs []float32, count int) (logits, wdl []float32, err error)
}

// Training takes optimizer steps on a network.
type Training interface {
	// Step takes one step on the batch and returns its losses, computed
	// before the update.
	Step(b Batch) (Losses, error)
	// SetLearningRate changes the learning rate from the next step on.
	SetLearningRate(lr float64) error
	// Steps counts the steps taken, those before a resume included.
	Steps() int64
	// Config is the optimizer's current configuration.
	Config() TrainConfig
	// Network is the network being trained. Its arrays hold the trained
	// weights after Sync.
	Network() *Network
	// Velocity is the optimizer's momentum, parallel to
	// Network().Learnables(), after Sync.
	Velocity() [][]float32
	// Sync brings the network's arrays and the velocity up to date with
	// the backend's (a no-op where they are the same memory): call it
	// before saving a checkpoint or folding the network.
	Sync() error
}

// NewEvaluator is the search's evaluator of network f on backend, for
// batches of up to maxBatch positions: every backend's inference behind
// one Evaluate, which encodes the states and turns the logits into
// priors over the legal actions.
func NewEvaluator(backend Backend, f *Folded, maxBatch int) (*BatchEvaluator, error) {
	inf, err := backend.NewInference(f, maxBatch)
	if err != nil {
		return nil, err
	}
	return NewBatchEvaluator(f.Game(), inf)
}

// NewBatchEvaluator is the search's evaluator over any backend's
// inference: it encodes the states, runs them through inf in batches and
// turns the logits into priors over the legal actions. It allocates
// nothing per call and is used by one goroutine at a time.
func NewBatchEvaluator(g env.Game, inf Inference) (*BatchEvaluator, error) {
	sh, err := gameShape(g)
	if err != nil {
		return nil, err
	}
	n := inf.MaxBatch()
	return &BatchEvaluator{game: g, inf: inf, shape: sh,
		input:   make([]float32, n*sh.planes*sh.cells()),
		legal:   make([]int, 0, sh.actions),
		waiting: make([]int, 0, n), keys: make([]uint64, 0, n)}, nil
}

// BatchEvaluator: see NewBatchEvaluator.
type BatchEvaluator struct {
	game  env.Game
	inf   Inference
	shape shape
	input []float32
	legal []int
	// waiting are the indices of the states encoded in input, awaiting
	// Forward, and keys their cache keys where there is a cache.
	waiting []int
	keys    []uint64
	cache   *cacheReader // nil: no cache
	// closed is set by Close (from the worker's goroutine) and read by
	// Evaluators.Reload.
	closed atomic.Bool
}

// Inference is the backend's inference the evaluator runs.
func (e *BatchEvaluator) Inference() Inference { return e.inf }

// Close releases the inference's device memory, if it holds any.
func (e *BatchEvaluator) Close() error {
	e.closed.Store(true)
	if c, ok := e.inf.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// Evaluate writes each state's priors over the action space and its value
// for the player to move, as (*Evaluator).Evaluate does. With a cache,
// the positions it remembers are answered from it and only the others
// go through the network, in batches of its largest.
func (e *BatchEvaluator) Evaluate(states []env.State, priors, values []float32) error {
	sh := e.shape
	if len(priors) < len(states)*sh.actions || len(values) < len(states) {
		return fmt.Errorf("evaluate %d states: priors hold %d values and values %d, want %d and %d",
			len(states), len(priors), len(values), len(states)*sh.actions, len(states))
	}
	if e.cache != nil {
		e.cache.begin()
	}
	size := sh.planes * sh.cells()
	e.waiting, e.keys = e.waiting[:0], e.keys[:0]
	for i, s := range states {
		if s.Game().Name() != e.game.Name() {
			return fmt.Errorf("evaluate: state %d is a %s position, the network plays %s", i, s.Game().Name(), e.game.Name())
		}
		n := len(e.waiting)
		in := e.input[n*size : (n+1)*size]
		s.Encode(in)
		if e.cache != nil {
			key := cacheKey(in)
			var hit bool
			e.legal, hit = e.cache.lookup(key, s, priors[i*sh.actions:(i+1)*sh.actions], &values[i], e.legal)
			if hit {
				continue
			}
			e.keys = append(e.keys, key)
		}
		e.waiting = append(e.waiting, i)
		if len(e.waiting) == cap(e.waiting) {
			if err := e.forward(states, priors, values); err != nil {
				return err
			}
		}
	}
	return e.forward(states, priors, values)
}

// forward runs the waiting positions through the network, writes their
// answers (and remembers them, with a cache) and empties the wait.
func (e *BatchEvaluator) forward(states []env.State, priors, values []float32) error {
	n := len(e.waiting)
	if n == 0 {
		return nil
	}
	sh := e.shape
	logits, wdl, err := e.inf.Forward(e.input[:n*sh.planes*sh.cells()], n)
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	for j, i := range e.waiting {
		dst := priors[i*sh.actions : (i+1)*sh.actions]
		e.legal = legalSoftmax(states[i], logits[j*sh.actions:(j+1)*sh.actions], dst, e.legal)
		values[i] = wdl[j*valueOutputs] - wdl[j*valueOutputs+2]
		if e.cache != nil {
			e.cache.store(e.keys[j], e.legal, dst, values[i])
		}
	}
	e.waiting, e.keys = e.waiting[:0], e.keys[:0]
	return nil
}

// legalSoftmax writes the softmax of s's legal actions' logits into dst
// and zero elsewhere, listing the legal actions in legal (returned).
func legalSoftmax(s env.State, logits, dst []float32, legal []int) []int {
	clear(dst)
	legal = s.LegalActions(legal)
	if len(legal) == 0 {
		return legal
	}
	m := float32(math.Inf(-1))
	for _, a := range legal {
		m = max(m, logits[a])
	}
	var sum float32
	for _, a := range legal {
		p := float32(math.Exp(float64(logits[a] - m)))
		dst[a] = p
		sum += p
	}
	for _, a := range legal {
		dst[a] /= sum
	}
	return legal
}
