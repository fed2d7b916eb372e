package mcts

import (
	"fmt"

	"github.com/flipzero/flipzero/env"
)

// scriptGame is a small game for tests, defined by functions of the move
// history: who moves, when it ends and who wins.
type scriptGame struct {
	name    string
	actions int
	mover   func(h []uint8) env.Player
	// over reports whether the game has ended after h, and the winner.
	over func(h []uint8) (bool, env.Player)
}

type scriptState struct {
	g *scriptGame
	h [64]uint8
	n int
}

func (g *scriptGame) Name() string                   { return g.name }
func (g *scriptGame) NewState() env.State            { return &scriptState{g: g} }
func (g *scriptGame) PlayerName(p env.Player) string { return fmt.Sprint("player", p) }
func (g *scriptGame) ActionSpace() int               { return g.actions }
func (g *scriptGame) FormatAction(a int) string      { return fmt.Sprint(a) }
func (g *scriptGame) EncodedShape() (int, int, int)  { return 1, 1, 1 }
func (g *scriptGame) Symmetries() []env.Symmetry {
	ids := make([]int, g.actions)
	for i := range ids {
		ids[i] = i
	}
	return []env.Symmetry{{Name: "identity", Cell: []int{0}, Action: ids}}
}
func (g *scriptGame) ParseAction(text string) (int, error) {
	var a int
	if _, err := fmt.Sscan(text, &a); err != nil || a < 0 || a >= g.actions {
		return 0, fmt.Errorf("bad action %q", text)
	}
	return a, nil
}

func (s *scriptState) history() []uint8          { return s.h[:s.n] }
func (s *scriptState) Game() env.Game            { return s.g }
func (s *scriptState) ToMove() env.Player        { return s.g.mover(s.history()) }
func (s *scriptState) Clone() env.State          { c := *s; return &c }
func (s *scriptState) CopyFrom(o env.State)      { *s = *o.(*scriptState) }
func (s *scriptState) Transformed(int) env.State { return s.Clone() }
func (s *scriptState) Encode(dst []float32)      { dst[0] = float32(s.n) }
func (s *scriptState) String() string            { return fmt.Sprint(s.history()) }
func (s *scriptState) Apply(a int)               { s.h[s.n] = uint8(a); s.n++ }
func (s *scriptState) Terminal() bool {
	over, _ := s.g.over(s.history())
	return over || s.n == len(s.h)
}
func (s *scriptState) Winner() env.Player {
	_, w := s.g.over(s.history())
	return w
}
func (s *scriptState) IsLegal(a int) bool { return a >= 0 && a < s.g.actions && !s.Terminal() }
func (s *scriptState) LegalActions(buf []int) []int {
	buf = buf[:0]
	if s.Terminal() {
		return buf
	}
	for a := 0; a < s.g.actions; a++ {
		buf = append(buf, a)
	}
	return buf
}

// twiceGame: player 0 decides twice in a row (a, then b), then player 1
// decides c. Player 0 wins exactly when a = b = 1; otherwise player 1 wins
// with c = 1 and c = 0 is a draw. A search that flips the sign at every
// ply believes player 0's second decision is player 1's, and avoids b = 1.
func twiceGame() *scriptGame {
	return &scriptGame{
		name:    "twice",
		actions: 2,
		mover: func(h []uint8) env.Player {
			if len(h) < 2 {
				return 0
			}
			return 1
		},
		over: func(h []uint8) (bool, env.Player) {
			switch {
			case len(h) >= 2 && h[0] == 1 && h[1] == 1:
				return true, 0
			case len(h) == 3 && h[2] == 1:
				return true, 1
			case len(h) == 3:
				return true, env.NoPlayer
			}
			return false, env.NoPlayer
		},
	}
}

// chainGame alternates players over three actions and ends in a draw
// after 60 plies: a tree that small searches never see the end of.
func chainGame() *scriptGame {
	return &scriptGame{
		name:    "chain",
		actions: 3,
		mover:   func(h []uint8) env.Player { return env.Player(len(h) % 2) },
		over: func(h []uint8) (bool, env.Player) {
			return len(h) >= 60, env.NoPlayer
		},
	}
}

// oneMoveGame ends after player 0's single move; action 2 wins, action 0
// loses, action 1 draws.
func oneMoveGame() *scriptGame {
	return &scriptGame{
		name:    "one-move",
		actions: 3,
		mover:   func(h []uint8) env.Player { return env.Player(len(h) % 2) },
		over: func(h []uint8) (bool, env.Player) {
			if len(h) == 0 {
				return false, env.NoPlayer
			}
			return true, [3]env.Player{1, env.NoPlayer, 0}[h[0]]
		},
	}
}
