package main

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/flipzero/flipzero/engine"
	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/mcts"
	"github.com/flipzero/flipzero/nn"
)

// evaluatorFlag builds the evaluator named on the command line and the
// search settings that suit it.
func evaluatorFlag(name string, rollouts int, seed uint64) (mcts.Evaluator, mcts.Config, error) {
	switch name {
	case "uniform":
		return mcts.Uniform{}, mcts.RolloutConfig(), nil
	case "rollout":
		if rollouts < 1 {
			return nil, mcts.Config{}, usagef("--rollouts must be at least 1, got %d", rollouts)
		}
		eval, err := mcts.NewRollout(rollouts, rand.New(rand.NewPCG(seed, 0x5eed)))
		if err != nil {
			return nil, mcts.Config{}, usageError{err}
		}
		return eval, mcts.RolloutConfig(), nil
	}
	return nil, mcts.Config{}, usagef("unknown --evaluator %q (known: uniform, rollout)", name)
}

func runAnalyze(ctx context.Context, args []string, io stdio) error {
	if wantsRecords(args) {
		return runAnalyzeRecords(ctx, args, io)
	}
	fs := newFlags("analyze", "analyze --game G [--moves SEQ] --playouts N [--evaluator uniform|rollout]\n"+
		"       analyze --model FILE [--moves SEQ] --playouts N\n"+
		"       analyze --records FILE… --model FILE [--positions N]\n\n"+
		"Searches the position (with a model's network, or a built-in evaluator) and prints the best action alone on the first line, then one\n"+
		"line per legal action, most visited first: action, visits, prior, and mean value\n"+
		"for the player to move (\"-\" when unvisited), then \"proven win\", \"proven draw\" or\n"+
		"\"proven loss\" when a model's search proved the action's result.\n\n"+
		"With --records it measures the network on the records' games instead: the top-1 and\n"+
		"top-3 agreement of its policy with the moves played and its value's error against\n"+
		"the results, with 95% intervals (docs/records.md).", io.out)
	gameName := fs.String("game", "", "game: "+strings.Join(games.Names(), ", "))
	moves := fs.String("moves", "", "moves played first, separated by ';'")
	playouts := fs.Int("playouts", 0, "simulations to run (1 or more)")
	evalName := fs.String("evaluator", "rollout", "leaf evaluator: uniform or rollout")
	rollouts := fs.Int("rollouts", 1, "random games per leaf with --evaluator rollout")
	seed := fs.Uint64("seed", 1, "seed of the random playouts")
	model := fs.String("model", "", "model or checkpoint file whose network guides the search (sets the game)")
	dev := addDeviceFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *playouts < 1 {
		return usagef("--playouts must be at least 1, got %d", *playouts)
	}
	var (
		g    env.Game
		eval mcts.Evaluator
		cfg  mcts.Config
		err  error
	)
	if *model != "" {
		g, eval, err = modelEvaluator(*model, *gameName, dev)
		if err != nil {
			return err
		}
		cfg = mcts.PlayConfig()
	} else {
		if g, err = gameFlag(*gameName); err != nil {
			return err
		}
		if eval, cfg, err = evaluatorFlag(*evalName, *rollouts, *seed); err != nil {
			return err
		}
	}
	s, err := livePosition(g, *moves)
	if err != nil {
		return err
	}
	tree, err := mcts.NewTree(cfg, s)
	if err != nil {
		return err
	}
	if err := tree.Search(ctx, eval, *playouts); err != nil {
		return err
	}
	var r mcts.Result
	tree.Result(&r)
	children := slices.Clone(r.Children)
	slices.SortStableFunc(children, func(a, b mcts.Child) int { return cmp.Compare(b.Visits, a.Visits) })
	var out strings.Builder
	fmt.Fprintln(&out, g.FormatAction(r.Best))
	for _, c := range children {
		value := "-"
		if !math.IsNaN(float64(c.Value)) {
			value = fmt.Sprintf("%+.4f", c.Value)
		}
		fmt.Fprintf(&out, "%s %d %.4f %s", g.FormatAction(c.Action), c.Visits, c.Prior, value)
		if c.Proof != mcts.Unproven {
			fmt.Fprintf(&out, " proven %v", c.Proof)
		}
		out.WriteByte('\n')
	}
	_, err = io.out.Write([]byte(out.String()))
	return err
}

// modelEvaluator loads a model or checkpoint file and returns its game and
// an evaluator over its network. gameName, when given, must be the
// model's game.
func modelEvaluator(path, gameName string, dev deviceFlag) (env.Game, mcts.Evaluator, error) {
	ckpt, g, err := engine.LoadModel(path, nil)
	if err != nil {
		return nil, nil, usageError{err}
	}
	if gameName != "" && gameName != g.Name() {
		return nil, nil, usagef("--game %s, but the model %s plays %s", gameName, path, g.Name())
	}
	backend, _, err := dev.open()
	if err != nil {
		return nil, nil, err
	}
	eval, err := nn.NewEvaluator(backend, ckpt.Network.Fold(), mcts.PlayConfig().LeavesPerTree)
	if err != nil {
		return nil, nil, err
	}
	return g, eval, nil
}
