package arena

import (
	"context"
	"github.com/flipzero/flipzero/nn/cpu"
	"github.com/flipzero/flipzero/player"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/mcts"
	"github.com/flipzero/flipzero/nn"
)

// saveModel writes an untrained network of game g to a model file.
func saveModel(t *testing.T, g env.Game) string {
	t.Helper()
	net, err := nn.New(g, nn.DefaultConfig(g), 1)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), g.Name()+".model")
	if err := nn.SaveModel(path, net, 0, nil); err != nil {
		t.Fatal(err)
	}
	return path
}

// batchCounter records the largest batch an evaluator is given.
type batchCounter struct {
	mcts.Evaluator
	largest *int
}

func (b batchCounter) Evaluate(states []env.State, priors, values []float32) error {
	*b.largest = max(*b.largest, len(states))
	return b.Evaluator.Evaluate(states, priors, values)
}

func TestNetworkPlayer(t *testing.T) {
	g := game(t, "tictactoe")
	p, err := player.LoadNetworkPlayer(cpu.Backend(), saveModel(t, g), g, 32)
	if err != nil {
		t.Fatal(err)
	}
	largest := 0
	newEval := p.NewEvaluator
	p.NewEvaluator = func(g env.Game, maxBatch int, seed uint64) (mcts.Evaluator, error) {
		e, err := newEval(g, maxBatch, seed)
		return batchCounter{e, &largest}, err
	}
	random := named(t, "random")
	r, err := RunArena(context.Background(), g, p, random, ArenaOptions{Games: 8, Workers: 1, PerWorker: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	checkMatch(t, g, p, random, r, 8)
	// Four games searched in lockstep fill batches beyond one tree's
	// leaves.
	if largest <= p.Config.LeavesPerTree {
		t.Errorf("largest batch %d: the games' searches were not batched together", largest)
	}
}

func TestLoadNetworkPlayerErrors(t *testing.T) {
	ttt := saveModel(t, game(t, "tictactoe"))
	if _, err := player.LoadNetworkPlayer(cpu.Backend(), ttt, game(t, "othello"), 10); err == nil || !strings.Contains(err.Error(), ttt) {
		t.Errorf("a tic-tac-toe model loaded for othello: error %v", err)
	}
	raw, err := os.ReadFile(ttt)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 0xff
	corrupt := filepath.Join(t.TempDir(), "corrupt.model")
	if err := os.WriteFile(corrupt, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := player.LoadNetworkPlayer(cpu.Backend(), corrupt, game(t, "tictactoe"), 10); err == nil || !strings.Contains(err.Error(), corrupt) {
		t.Errorf("a corrupt model: error %v", err)
	}
}
