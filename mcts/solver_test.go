package mcts

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/env/yinsh"
)

func solverConfig(mode Mode) Config {
	c := RolloutConfig()
	c.Mode = mode
	c.Solver = true
	return c
}

// checkProofs walks the tree below node id, whose position is s, and
// fails on any node marked proven whose result differs from perfect
// play's. It returns how many proven nodes whose game is not over it
// checked.
func checkProofs(t *testing.T, tree *Tree, sv *tictactoe.Solver, id int32, s *tictactoe.State) int {
	t.Helper()
	n := tree.nodes[id]
	checked := 0
	if n.status == terminal && !s.Terminal() {
		mover := s.ToMove()
		want := sv.Value(s) // for the mover
		got := int8(provenValue(n.player))
		if mover == 1 {
			got = -got
		}
		if got != want {
			t.Errorf("proven %d for the mover, perfect play says %d, in\n%v", got, want, s)
		}
		checked++
	}
	if !n.status.open() {
		return checked
	}
	for i := n.first; i < n.first+int32(n.children); i++ {
		child := *s
		child.Apply(int(tree.nodes[i].action))
		checked += checkProofs(t, tree, sv, i, &child)
	}
	return checked
}

// Every position the solver proves, in searches of random tic-tac-toe
// positions with rollouts, has the result perfect play gives it, and so
// does every root move it reports proven.
func TestSolverProofsAreExact(t *testing.T) {
	sv := tictactoe.NewSolver()
	g := tictactoe.Game{}
	for _, mode := range []Mode{PUCT, Gumbel} {
		t.Run(mode.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			eval := newRollout(t, 5)
			var r Result
			var legal []int
			proven, rootProofs := 0, 0
			for pos := 0; pos < 40; pos++ {
				s := g.NewState().(*tictactoe.State)
				for plies := rng.IntN(6); plies > 0 && !s.Terminal(); plies-- {
					legal = s.LegalActions(legal)
					s.Apply(legal[rng.IntN(len(legal))])
				}
				if s.Terminal() {
					continue
				}
				tree := newTree(t, solverConfig(mode), s)
				if err := tree.Search(context.Background(), eval, 400); err != nil {
					t.Fatal(err)
				}
				proven += checkProofs(t, tree, sv, 0, s)
				tree.Result(&r)
				for _, c := range r.Children {
					if c.Proof == Unproven {
						continue
					}
					rootProofs++
					child := *s
					child.Apply(c.Action)
					want := -sv.Value(&child) // tic-tac-toe's players alternate
					if got := map[Proof]int8{ProvenWin: 1, ProvenDraw: 0, ProvenLoss: -1}[c.Proof]; got != want {
						t.Errorf("move %s reported %v, perfect play gives %d, in\n%v", g.FormatAction(c.Action), c.Proof, want, s)
					}
				}
			}
			// The check must have had something to check.
			if proven < 100 || rootProofs < 40 {
				t.Errorf("only %d proven positions and %d proven root moves", proven, rootProofs)
			}
			t.Logf("%d proven positions, %d proven root moves, all exact", proven, rootProofs)
		})
	}
}

// X (black) threatens c1 twice over after a1, b1 with O elsewhere: O must
// block at c1, and every other move loses at once. With a uniform
// evaluator, which sees no threat, the solver proves each of those moves
// lost; the search then plays c1 and Choose never draws a lost move.
func TestSolverAvoidsProvenLoss(t *testing.T) {
	g := tictactoe.Game{}
	s := play(t, g, "a1;b2;b1")
	c1, _ := g.ParseAction("c1")
	for _, mode := range []Mode{PUCT, Gumbel} {
		t.Run(mode.String(), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Mode, cfg.Solver = mode, true
			tree := newTree(t, cfg, s)
			if err := tree.Search(context.Background(), Uniform{}, 200); err != nil {
				t.Fatal(err)
			}
			var r Result
			tree.Result(&r)
			if r.Best != c1 {
				t.Errorf("best %s, want c1", g.FormatAction(r.Best))
			}
			for _, c := range r.Children {
				if c.Action != c1 && c.Proof != ProvenLoss {
					t.Errorf("move %s: %v, want a proven loss", g.FormatAction(c.Action), c.Proof)
				}
			}
			rng := rand.New(rand.NewPCG(1, 2))
			for i := 0; i < 200; i++ {
				if a := r.Choose(1, rng); a != c1 {
					t.Fatalf("Choose at temperature 1 drew %s, a proven loss", g.FormatAction(a))
				}
			}
		})
	}
}

// Without the solver, the same search values the lost moves by their
// means and may well prefer one: the uniform evaluator makes every
// unfinished position look even.
func TestWithoutSolverNothingIsProven(t *testing.T) {
	g := tictactoe.Game{}
	s := play(t, g, "a1;b2;b1")
	tree := newTree(t, DefaultConfig(), s)
	if err := tree.Search(context.Background(), Uniform{}, 200); err != nil {
		t.Fatal(err)
	}
	var r Result
	tree.Result(&r)
	for _, c := range r.Children {
		if c.Proof != Unproven {
			t.Errorf("move %s reported %v without the solver", g.FormatAction(c.Action), c.Proof)
		}
	}
}

// In yinsh-blitz positions where the mover can complete a row, a search
// with the solver proves the win and plays it even with an evaluator
// that knows nothing (uniform prior, value 0), in a few hundred
// playouts.
func TestSolverFindsYinshBlitzRows(t *testing.T) {
	positions := yinshRowChances(8, 3)
	for _, s := range positions {
		cfg := DefaultConfig()
		cfg.Solver = true
		tree := newTree(t, cfg, s)
		if err := tree.Search(context.Background(), Uniform{}, 600); err != nil {
			t.Fatal(err)
		}
		var r Result
		tree.Result(&r)
		child := s.Clone()
		child.Apply(r.Best)
		if !winsAlone(child, s.ToMove(), nil) {
			t.Errorf("chose %s, which does not complete a row, in\n%v", s.Game().FormatAction(r.Best), s)
			continue
		}
		best := r.Children[0]
		for _, c := range r.Children {
			if c.Action == r.Best {
				best = c
			}
		}
		if best.Proof != ProvenWin {
			t.Errorf("the winning move %s is %v, want proven", s.Game().FormatAction(r.Best), best.Proof)
		}
	}
}

// Advancing into a proven position keeps the tree usable: the new root
// is searched afresh and its winning move found again.
func TestSolverAdvanceIntoProvenPosition(t *testing.T) {
	g := tictactoe.Game{}
	s := play(t, g, "a1;b2;b1")
	cfg := DefaultConfig()
	cfg.Solver = true
	tree := newTree(t, cfg, s)
	if err := tree.Search(context.Background(), Uniform{}, 200); err != nil {
		t.Fatal(err)
	}
	a3, _ := g.ParseAction("a3") // loses: X then plays c1
	if err := tree.Advance(a3); err != nil {
		t.Fatal(err)
	}
	if err := tree.Search(context.Background(), Uniform{}, 50); err != nil {
		t.Fatal(err)
	}
	var r Result
	tree.Result(&r)
	if got := g.FormatAction(r.Best); got != "c1" {
		t.Errorf("after a3, best %s, want the win c1", got)
	}
	if len(r.Children) != 5 {
		t.Errorf("the new root lists %d moves, want the 5 empty squares", len(r.Children))
	}
}

// Where the solver does not apply (a one-player game with chance) it
// changes nothing: the same search with and without it gives the same
// result.
func TestSolverIgnoredInSolitaire(t *testing.T) {
	g := coinGame(t)
	var results [2]Result
	for i, solve := range []bool{false, true} {
		cfg := DefaultConfig()
		cfg.Solver = solve
		tree := newTree(t, cfg, g.NewState())
		if err := tree.Search(context.Background(), Uniform{}, 300); err != nil {
			t.Fatal(err)
		}
		tree.Result(&results[i])
	}
	if !sameChildren(results[0].Children, results[1].Children) || results[0].Best != results[1].Best {
		t.Errorf("with the solver %+v, without %+v", results[1].Children, results[0].Children)
	}
}

// The solver allocates nothing once the tree's buffers have grown.
func TestSolverAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates by itself; the run without -race checks this")
	}
	g := tictactoe.Game{}
	start := g.NewState()
	tree := newTree(t, solverConfig(PUCT), start)
	eval := newRollout(t, 9)
	var r Result
	rng := rand.New(rand.NewPCG(1, 1))
	run := func() {
		if err := tree.Reset(start); err != nil {
			t.Fatal(err)
		}
		if err := tree.Search(context.Background(), eval, 500); err != nil {
			t.Fatal(err)
		}
		tree.Result(&r)
		r.Choose(1, rng)
	}
	run()
	if allocs := testing.AllocsPerRun(5, run); allocs != 0 {
		t.Errorf("%v allocations per search, want none", allocs)
	}
}

// wonFor reports whether p wins s by force with the opponent deciding at
// most opp more times (p's own decisions are not counted): the brute
// force that checks the solver's shallow proofs.
func wonFor(s env.State, p env.Player, opp int) bool {
	if s.Terminal() {
		return s.Winner() == p
	}
	mine := s.ToMove() == p
	if !mine && opp == 0 {
		return false
	}
	for _, a := range s.LegalActions(nil) {
		child := s.Clone()
		child.Apply(a)
		switch won := wonFor(child, p, opp-b2i(!mine)); {
		case mine && won:
			return true
		case !mine && !won:
			return false
		}
	}
	return !mine
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// In yinsh-blitz middle games, with an evaluator that knows nothing, the
// root moves the solver proves won or lost are won or lost by brute
// force, and it proves some of each: decisive moves (a row made), and
// moves that let the opponent make one.
func TestSolverYinshBlitzProofsAreExact(t *testing.T) {
	g := yinsh.Blitz()
	rng := rand.New(rand.NewPCG(21, 22))
	counts := map[Proof]int{}
	var legal []int
	for found := 0; found < 12; {
		s := g.NewState()
		for plies := 10 + rng.IntN(40); plies > 0 && !s.Terminal(); plies-- {
			legal = s.LegalActions(legal)
			s.Apply(legal[rng.IntN(len(legal))])
		}
		if s.Terminal() {
			continue
		}
		cfg := DefaultConfig()
		cfg.Solver = true
		tree := newTree(t, cfg, s)
		if err := tree.Search(context.Background(), Uniform{}, 300); err != nil {
			t.Fatal(err)
		}
		var r Result
		tree.Result(&r)
		mover := s.ToMove()
		for _, c := range r.Children {
			if c.Proof == Unproven {
				continue
			}
			found++
			counts[c.Proof]++
			child := s.Clone()
			child.Apply(c.Action)
			var exact bool
			switch c.Proof {
			case ProvenWin:
				exact = wonFor(child, mover, 1)
			case ProvenLoss:
				exact = wonFor(child, mover.Other(), 1)
			}
			if !exact {
				t.Errorf("%s reported a proven %v, not so by brute force, in\n%v", g.FormatAction(c.Action), c.Proof, s)
			}
		}
	}
	if counts[ProvenWin] == 0 || counts[ProvenLoss] == 0 {
		t.Errorf("proofs %v, want wins and losses both", counts)
	}
	t.Logf("proofs checked: %v", counts)
}

// othelloEndgame plays random moves from the start until empties squares
// are left, on a position whose game is not over.
func othelloEndgame(t *testing.T, empties int, seed uint64) env.State {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 11))
	var legal []int
	for tries := 0; tries < 100; tries++ {
		s := othello.Othello().NewState()
		for !s.Terminal() {
			if e := emptySquares(s); e == empties {
				return s
			}
			legal = s.LegalActions(legal)
			s.Apply(legal[rng.IntN(len(legal))])
		}
	}
	t.Fatalf("no game reached %d empty squares", empties)
	return nil
}

func emptySquares(s env.State) int {
	enc := make([]float32, 4*64)
	s.Encode(enc)
	n := 0
	for c := 0; c < 64; c++ {
		if enc[c] == 0 && enc[64+c] == 0 {
			n++
		}
	}
	return n
}

// TestEndgameSolveProvesTheRootsMoves: with endgame_solve, the moves of
// an Othello position 9 squares from the end are proven on their first
// visit, each as perfect play says, and a winning one is played.
func TestEndgameSolveProvesTheRootsMoves(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		s := othelloEndgame(t, 9, seed)
		cfg := solverConfig(PUCT)
		cfg.EndgameSolve = 10
		tree, err := NewTree(cfg, s)
		if err != nil {
			t.Fatal(err)
		}
		if err := tree.Search(context.Background(), Uniform{}, 64); err != nil {
			t.Fatal(err)
		}
		var r Result
		tree.Result(&r)
		mover, anyWin := s.ToMove(), false
		for _, c := range r.Children {
			child := s.Clone()
			child.Apply(c.Action)
			w, ok := child.(env.Endgame).Solved(64)
			if !ok {
				t.Fatal("a position of 8 empty squares was not solved")
			}
			if want := proofFor(w, mover); c.Visits > 0 && c.Proof != want {
				t.Errorf("seed %d: move %d proven %v, perfect play says %v", seed, c.Action, c.Proof, want)
			}
			anyWin = anyWin || proofFor(w, mover) == ProvenWin
		}
		if best := r.Children[bestIndex(r)]; anyWin && best.Proof != ProvenWin {
			t.Errorf("seed %d: played %d (%v) with a proven win to hand", seed, best.Action, best.Proof)
		}
	}
	cfg := solverConfig(PUCT)
	cfg.Solver, cfg.EndgameSolve = false, 10
	if err := cfg.Validate(); err == nil {
		t.Error("endgame_solve without the solver accepted")
	}
}

func bestIndex(r Result) int {
	for i, c := range r.Children {
		if c.Action == r.Best {
			return i
		}
	}
	return 0
}

// TestActingOn: play's settings keep the exact endgame in Othello, lose it
// where positions cannot solve one (YINSH) and lose the solver too where
// the game has chance (the solitaire's coin).
func TestActingOn(t *testing.T) {
	play := PlayConfig()
	if play.EndgameSolve == 0 || !play.Solver {
		t.Fatalf("PlayConfig: solver %v, endgame %d", play.Solver, play.EndgameSolve)
	}
	tests := []struct {
		name    string
		game    env.Game
		solver  bool
		endgame int
	}{
		{"othello", othello.Othello(), true, play.EndgameSolve},
		{"yinsh blitz", yinsh.Blitz(), true, 0},
		{"coin solitaire", coinGame(t), false, 0},
	}
	for _, tt := range tests {
		got := play.ActingOn(tt.game)
		if got.Solver != tt.solver || got.EndgameSolve != tt.endgame {
			t.Errorf("%s: solver %v, endgame %d; want %v, %d", tt.name, got.Solver, got.EndgameSolve, tt.solver, tt.endgame)
		}
		if got.CPUCT != play.CPUCT || got.Mode != play.Mode {
			t.Errorf("%s: other settings changed: %+v", tt.name, got)
		}
	}
}
