package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
)

// perftDefault gives the perft position the engine benchmark uses unless
// told otherwise: a depth that runs for a few seconds, from a position
// with the game's typical branching.
func perftDefault(game string) (moves string, depth int) {
	const yinshMidgame = "P C4;P G4;P H8;P G6;P J7;P C2;P F4;P I10;P C7;P E2;" +
		"M C4 E4;M E2 E1;M H8 G8;M E1 D1;M F4 D2;M C2 C5;M J7 H5;M G4 I4;M C7 I7;M I4 I6;" +
		"M I7 G7;M I6 I8;M G7 F6;M I8 J8;M H5 F3;M J8 J6;M E4 D4;M J6 I5;M G8 K8;M I5 G3"
	switch game {
	case "othello", "reversi":
		return "", 11
	case "reversi-single":
		return "", 10
	case "yinsh", "yinsh-blitz":
		return yinshMidgame, 5
	}
	return "", 9
}

func runBenchEnv(ctx context.Context, args []string, io stdio) error {
	fs := newFlags("bench env", "bench env --game G [--depth D --moves SEQ --seconds S]\n\nPrints perft leaves/s, random playouts/s and encodings/s on one core.", io.out)
	gameName := fs.String("game", "", "game: "+strings.Join(games.Names(), ", "))
	depth := fs.Int("depth", 0, "perft depth (default: the game's benchmark depth)")
	moves := fs.String("moves", "", "perft position as moves from the start (default: the game's benchmark position)")
	seconds := fs.Float64("seconds", 2, "how long to run the playout and encoding measurements")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	g, err := gameFlag(*gameName)
	if err != nil {
		return err
	}
	if *depth == 0 {
		defMoves, defDepth := perftDefault(g.Name())
		*depth = defDepth
		if *moves == "" {
			*moves = defMoves
		}
	}
	if *depth < 1 {
		return usagef("--depth must be at least 1")
	}
	s, err := env.Play(g, *moves)
	if err != nil {
		return usageError{fmt.Errorf("--moves: %w", err)}
	}
	start := time.Now()
	leaves := env.Perft(s, *depth)
	elapsed := time.Since(start).Seconds()
	fmt.Fprintf(io.out, "%s perft depth %d: %d leaves in %.2f s = %.1f M leaves/s\n", g.Name(), *depth, leaves, elapsed, float64(leaves)/elapsed/1e6)
	if err := ctx.Err(); err != nil {
		return err
	}

	budget := time.Duration(*seconds * float64(time.Second))
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]int, 0, g.ActionSpace())
	state := g.NewState()
	start0 := g.NewState()
	games, plies := 0, 0
	begin := time.Now()
	for time.Since(begin) < budget {
		for i := 0; i < 64; i++ {
			state.CopyFrom(start0)
			for !state.Terminal() {
				legal := state.LegalActions(buf)
				state.Apply(legal[rng.IntN(len(legal))])
				plies++
			}
			games++
		}
	}
	elapsed = time.Since(begin).Seconds()
	fmt.Fprintf(io.out, "%s random playouts: %.0f games/s (%.1f plies per game)\n", g.Name(), float64(games)/elapsed, float64(plies)/float64(games))

	positions := env.RandomPositions(g, 256, 1, false)
	planes, h, w := g.EncodedShape()
	dst := make([]float32, planes*h*w)
	encoded := 0
	begin = time.Now()
	for time.Since(begin) < budget {
		for _, p := range positions {
			p.Encode(dst)
		}
		encoded += len(positions)
	}
	elapsed = time.Since(begin).Seconds()
	fmt.Fprintf(io.out, "%s encodings: %.0f positions/s (%d×%d×%d floats each)\n", g.Name(), float64(encoded)/elapsed, planes, h, w)
	return nil
}
