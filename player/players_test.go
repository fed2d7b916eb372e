package player

import (
	"context"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/envtest"
)

// TestMoversAllocateNothing: the simple players' moves, called for every
// move of every arena game, allocate nothing.
func TestMoversAllocateNothing(t *testing.T) {
	tests := []struct{ game, player string }{
		{"othello", "random"},
		{"othello", "greedy"},
		{"yinsh", "greedy"},
		{"reversi-solitaire", "greedy"},
		{"yinsh-blitz", "alphabeta:2"},
		{"tictactoe", "perfect"},
	}
	ctx := context.Background()
	for _, tc := range tests {
		g := game(t, tc.game)
		seat, err := player(t, tc.player).Seat(g, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		var live []env.State
		for _, s := range envtest.RandomPositions(g, 40, 2) {
			if !s.Terminal() {
				live = append(live, s)
			}
		}
		slots, moves := []int{0}, []int{0}
		states := []env.State{nil}
		i := 0
		allocs := testing.AllocsPerRun(20, func() {
			states[0] = live[i%len(live)]
			i++
			if err := seat.Moves(ctx, slots, states, moves); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s in %s: %v allocations per move", tc.player, tc.game, allocs)
		}
		if !states[0].IsLegal(moves[0]) {
			t.Errorf("%s in %s: illegal move %s", tc.player, tc.game, g.FormatAction(moves[0]))
		}
		seat.Close()
	}
}

func TestAlphaBetaMakesTheWinningRow(t *testing.T) {
	// After these, White (to move) has four markers E2..E5 and its ring
	// on E6: moving the ring away leaves a fifth marker, a row, and in
	// blitz removing it and a ring wins: three decisions.
	moves := "P E2;P J5;P B1;P J6;P B2;P J7;P B3;P J8;P B4;P J9;" +
		"M E2 E3;M J5 I5;M E3 E4;M I5 H5;M E4 E5;M H5 G5;M E5 E6;M G5 F5"
	g := game(t, "yinsh-blitz")
	s, err := env.Play(g, moves)
	if err != nil {
		t.Fatal(err)
	}
	seat, err := player(t, "alphabeta:3").Seat(g, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer seat.Close()
	for ply := 0; ply < 3 && !s.Terminal(); ply++ {
		out := []int{0}
		if err := seat.Moves(context.Background(), []int{0}, []env.State{s}, out); err != nil {
			t.Fatal(err)
		}
		if s.ToMove() != 0 {
			t.Fatalf("ply %d: black to move, White's win was missed", ply)
		}
		s.Apply(out[0])
	}
	if !s.Terminal() || s.Winner() != 0 {
		t.Fatalf("alpha-beta to depth 3 did not make the winning row, remove it and a ring:\n%v", s)
	}
}
