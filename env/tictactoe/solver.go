package tictactoe

import "github.com/flipzero/flipzero/env"

// Solver is an exact minimax solver of tic-tac-toe with a table of every
// position's value, the perfect player the pipeline is measured against.
// Build it once with NewSolver; it is then read-only and safe to share.
type Solver struct {
	// values holds, per position key, the value for the player to move:
	// 1 win, 0 draw, -1 loss, computed with perfect play by both sides.
	values map[uint32]int8
}

// NewSolver solves the game (5,478 positions).
func NewSolver() *Solver {
	sv := &Solver{values: make(map[uint32]int8, 6000)}
	sv.solve(&State{})
	return sv
}

func key(s *State) uint32 {
	return uint32(s.marks[0]) | uint32(s.marks[1])<<9 | uint32(s.toMove)<<18
}

func (sv *Solver) solve(s *State) int8 {
	k := key(s)
	if v, ok := sv.values[k]; ok {
		return v
	}
	var v int8
	if s.Terminal() {
		// The player to move never has a line: the previous mover made it.
		if s.Winner() != env.NoPlayer {
			v = -1
		}
	} else {
		v = -1
		var buf [Cells]int
		for _, a := range s.LegalActions(buf[:0]) {
			child := *s
			child.Apply(a)
			if cv := -sv.solve(&child); cv > v {
				v = cv
			}
		}
	}
	sv.values[k] = v
	return v
}

// Value is the value of s for the player to move under perfect play:
// 1 win, 0 draw, -1 loss.
func (sv *Solver) Value(s *State) int8 { return sv.solve(s) }

// BestActions appends to buf[:0] every action that keeps the best value.
func (sv *Solver) BestActions(s *State, buf []int) []int {
	best := sv.Value(s)
	var legal [Cells]int
	out := buf[:0]
	for _, a := range s.LegalActions(legal[:0]) {
		child := *s
		child.Apply(a)
		if -sv.Value(&child) == best {
			out = append(out, a)
		}
	}
	return out
}

// Solve solves the game (env.Solvable).
func (Game) Solve() env.Solver { return NewSolver() }

// PerfectActions is BestActions for any state of the game (env.Solver).
func (sv *Solver) PerfectActions(s env.State, buf []int) []int {
	return sv.BestActions(s.(*State), buf)
}
