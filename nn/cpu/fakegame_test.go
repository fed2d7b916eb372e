package cpu

import (
	"fmt"
	"math/rand/v2"

	"github.com/flipzero/flipzero/env"
)

// fakeGame declares a game's shape without rules, to build networks for
// games whose engines live elsewhere (e.g. Othello's 4×8×8 planes and 65
// actions). Its states are random encodings with random legal actions.
type fakeGame struct {
	name                  string
	planes, height, width int
	actions               int
}

var (
	fakeOthello = fakeGame{"fake-othello", 4, 8, 8, 65}
	fakeYinsh   = fakeGame{"fake-yinsh", 12, 11, 11, 2142}
)

func (g fakeGame) Name() string                    { return g.name }
func (g fakeGame) NewState() env.State             { return &fakeState{game: g} }
func (g fakeGame) PlayerName(p env.Player) string  { return fmt.Sprint(p) }
func (g fakeGame) ActionSpace() int                { return g.actions }
func (g fakeGame) ParseAction(string) (int, error) { return 0, fmt.Errorf("no notation") }
func (g fakeGame) FormatAction(a int) string       { return fmt.Sprint(a) }
func (g fakeGame) EncodedShape() (int, int, int)   { return g.planes, g.height, g.width }
func (g fakeGame) Symmetries() []env.Symmetry      { return nil }

// randomStates draws n positions: 0/1 planes and a random legal set.
func (g fakeGame) randomStates(n int, seed uint64) []env.State {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([]env.State, n)
	for i := range out {
		s := &fakeState{game: g, encoding: make([]float32, g.planes*g.height*g.width)}
		for j := range s.encoding {
			s.encoding[j] = float32(rng.IntN(2))
		}
		for a := 0; a < g.actions; a++ {
			if rng.IntN(3) == 0 {
				s.legal = append(s.legal, a)
			}
		}
		if len(s.legal) == 0 {
			s.legal = append(s.legal, rng.IntN(g.actions))
		}
		out[i] = s
	}
	return out
}

type fakeState struct {
	game     fakeGame
	encoding []float32
	legal    []int
}

// Game returns a pointer so that the call does not allocate.
func (s *fakeState) Game() env.Game            { return &s.game }
func (s *fakeState) ToMove() env.Player        { return 0 }
func (s *fakeState) Apply(int)                 {}
func (s *fakeState) Terminal() bool            { return len(s.legal) == 0 }
func (s *fakeState) Winner() env.Player        { return env.NoPlayer }
func (s *fakeState) Encode(dst []float32)      { copy(dst, s.encoding) }
func (s *fakeState) String() string            { return "fake" }
func (s *fakeState) Transformed(int) env.State { return s.Clone() }
func (s *fakeState) LegalActions(buf []int) []int {
	return append(buf[:0], s.legal...)
}
func (s *fakeState) IsLegal(a int) bool {
	for _, l := range s.legal {
		if l == a {
			return true
		}
	}
	return false
}
func (s *fakeState) Clone() env.State {
	c := &fakeState{}
	c.CopyFrom(s)
	return c
}
func (s *fakeState) CopyFrom(src env.State) {
	o := src.(*fakeState)
	s.game = o.game
	s.encoding = append(s.encoding[:0], o.encoding...)
	s.legal = append(s.legal[:0], o.legal...)
}
