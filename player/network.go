package player

import (
	"fmt"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/mcts"
	"github.com/flipzero/flipzero/nn"
)

// NetworkPlayer searches playouts simulations per move with the network
// f's priors and values, computed by backend, named label
// (the loop names checkpoints by generation). Each seat has its own
// evaluator over f's shared, read-only weights, sized for the seat's
// batches.
func NetworkPlayer(backend nn.Backend, label string, f *nn.Folded, playouts int) *SearchPlayer {
	return &SearchPlayer{
		Label:    label,
		Playouts: playouts,
		Config:   mcts.PlayConfig(),
		NewEvaluator: func(g env.Game, maxBatch int, _ uint64) (mcts.Evaluator, error) {
			if backend == nil {
				return nil, fmt.Errorf("player %s: no compute backend given (nn/device.Open chooses one by name)", label)
			}
			if g.Name() != f.Game().Name() {
				return nil, fmt.Errorf("the network plays %s, not %s", f.Game().Name(), g.Name())
			}
			ev, err := nn.NewEvaluator(backend, f, maxBatch)
			if err != nil {
				return nil, err
			}
			return ev, ev.UseCache(nn.PlayCacheEntries)
		},
	}
}

// LoadNetworkPlayer reads a checkpoint or model file of game g and makes
// a NetworkPlayer of it on backend, named by the path.
func LoadNetworkPlayer(backend nn.Backend, path string, g env.Game, playouts int) (*SearchPlayer, error) {
	c, err := nn.LoadCheckpoint(path, g)
	if err != nil {
		return nil, fmt.Errorf("player %s: %w", path, err)
	}
	return NetworkPlayer(backend, path, c.Network.Fold(), playouts), nil
}
