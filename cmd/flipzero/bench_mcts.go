package main

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/mcts"
)

func runBenchMCTS(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("bench mcts", "bench mcts --game G [--evaluator uniform|rollout --playouts N --moves SEQ --seconds S]\n\n"+
		"Searches the position again and again on one core and prints simulations/s, the\n"+
		"bytes per node and the memory of one search's tree.", io.out)
	gameName := fs.String("game", "", "game: "+strings.Join(games.Names(), ", "))
	evalName := fs.String("evaluator", "uniform", "leaf evaluator: uniform or rollout")
	rollouts := fs.Int("rollouts", 1, "random games per leaf with --evaluator rollout")
	playouts := fs.Int("playouts", 100000, "simulations per search")
	moves := fs.String("moves", "", "position to search, as moves from the start")
	seconds := fs.Float64("seconds", 3, "how long to keep searching (at least one search runs)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	g, err := gameFlag(*gameName)
	if err != nil {
		return err
	}
	if *playouts < 1 {
		return usagef("--playouts must be at least 1, got %d", *playouts)
	}
	eval, cfg, err := evaluatorFlag(*evalName, *rollouts, 1)
	if err != nil {
		return err
	}
	s, err := env.Play(g, *moves)
	if err != nil {
		return usageError{fmt.Errorf("--moves: %w", err)}
	}
	if s.Terminal() {
		return usagef("--moves: the game is over (%s)", env.ResultName(s))
	}
	tree, err := mcts.NewTree(cfg, s)
	if err != nil {
		return err
	}

	// The first search grows the arena; it is measured for memory, the
	// later ones for speed.
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := tree.Search(ctx, eval, *playouts); err != nil {
		return err
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	nodes := tree.Nodes()
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)

	budget := time.Duration(*seconds * float64(time.Second))
	searches := 0
	begin := time.Now()
	for searches == 0 || time.Since(begin) < budget {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := tree.Reset(s); err != nil {
			return err
		}
		if err := tree.Search(ctx, eval, *playouts); err != nil {
			return err
		}
		searches++
	}
	elapsed := time.Since(begin).Seconds()
	sims := float64(searches) * float64(*playouts)
	fmt.Fprintf(io.out, "%s mcts %s: %.0f simulations/s (%d searches of %d playouts in %.2f s, one core)\n",
		g.Name(), *evalName, sims/elapsed, searches, *playouts, elapsed)
	fmt.Fprintf(io.out, "%s mcts tree: %d bytes per node, %.2f nodes per simulation, %d nodes = %.1f MB of nodes for %d playouts; arena %.1f MB, heap grew %.1f MB\n",
		g.Name(), mcts.NodeBytes, float64(nodes)/float64(*playouts), nodes, float64(nodes*mcts.NodeBytes)/1e6, *playouts,
		float64(tree.ArenaBytes())/1e6, float64(heap)/1e6)
	return nil
}
