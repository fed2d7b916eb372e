// Package envtest is the conformance suite of the game contract. Every
// game's tests run it:
//
//	func TestConformance(t *testing.T) { envtest.Run(t, mygame.Game{}, envtest.Options{}) }
//
// Each check is also a plain function returning an error, so that a test
// can show the suite catches a broken game.
package envtest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/flipzero/flipzero/env"
)

// Options tunes the suite for a game.
type Options struct {
	// Playouts is the number of random games played to the end (default 2000).
	Playouts int
	// Positions is the number of random positions the per-position checks
	// look at (default 300).
	Positions int
	// MaxPlies bounds one game; a game still running after it fails the
	// suite (default 10000).
	MaxPlies int
	// Seed makes the random choices repeatable.
	Seed uint64
}

func (o Options) withDefaults() Options {
	if o.Playouts == 0 {
		o.Playouts = 2000
	}
	if o.Positions == 0 {
		o.Positions = 300
	}
	if o.MaxPlies == 0 {
		o.MaxPlies = 10000
	}
	return o
}

// Run runs every check on g as subtests.
func Run(t *testing.T, g env.Game, opts Options) {
	opts = opts.withDefaults()
	checks := []struct {
		name  string
		check func(env.Game, Options) error
	}{
		{"playouts", CheckPlayouts},
		{"notation", CheckNotation},
		{"garbage", CheckGarbage},
		{"clone", CheckClone},
		{"encoding", CheckEncoding},
		{"symmetries", CheckSymmetries},
		{"ownership", CheckOwnership},
		{"policy map", CheckPolicyMap},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if err := c.check(g, opts); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// RandomPositions plays random games and returns n positions met along
// the way, terminal ones included.
func RandomPositions(g env.Game, n int, seed uint64) []env.State {
	return env.RandomPositions(g, n, seed, true)
}

// CheckPlayouts plays random games to the end, checking on the way that
// legal actions are sorted, in range, agree with IsLegal, and that a
// non-terminal state always has an action. At a chance node the outcomes
// must be a distribution over exactly the legal actions, and the game
// goes on by drawing one. A one-player game's player is always player 0
// and its score stays within [0, MaxScore]; a two-player game's winner is
// a player or nobody.
func CheckPlayouts(g env.Game, opts Options) error {
	opts = opts.withDefaults()
	rng := rand.New(rand.NewPCG(opts.Seed, 1))
	random := env.NewRandom(g, rng)
	buf := make([]int, 0, g.ActionSpace())
	outcomes := make([]env.Outcome, 0, g.ActionSpace())
	solo := env.Players(g) == 1
	for game := 0; game < opts.Playouts; game++ {
		s := g.NewState()
		plies := 0
		for ; !s.Terminal(); plies++ {
			if plies >= opts.MaxPlies {
				return fmt.Errorf("game %d still running after %d plies", game, plies)
			}
			legal := s.LegalActions(buf)
			if len(legal) == 0 {
				return fmt.Errorf("game %d, ply %d: no legal action in a running game:\n%v", game, plies, s)
			}
			if cap(legal) != cap(buf) {
				return fmt.Errorf("LegalActions grew a buffer of ActionSpace() capacity")
			}
			if !slices.IsSorted(legal) {
				return fmt.Errorf("game %d, ply %d: legal actions not sorted: %v", game, plies, legal)
			}
			for _, a := range legal {
				if a < 0 || a >= g.ActionSpace() || !s.IsLegal(a) {
					return fmt.Errorf("game %d, ply %d: action %d listed as legal but out of range or refused by IsLegal", game, plies, a)
				}
			}
			// A sample of actions not listed must be refused by IsLegal.
			for k := 0; k < 4; k++ {
				a := rng.IntN(g.ActionSpace())
				if _, listed := slices.BinarySearch(legal, a); !listed && s.IsLegal(a) {
					return fmt.Errorf("game %d, ply %d: IsLegal accepts %s, which LegalActions does not list", game, plies, g.FormatAction(a))
				}
			}
			if solo && s.ToMove() != 0 {
				return fmt.Errorf("game %d, ply %d: player %d to move in a one-player game", game, plies, s.ToMove())
			}
			if env.IsChance(s) {
				outcomes = s.(env.ChanceState).ChanceOutcomes(outcomes)
				if err := env.CheckOutcomes(outcomes); err != nil {
					return fmt.Errorf("game %d, ply %d: %w, in\n%v", game, plies, err, s)
				}
				if len(outcomes) != len(legal) {
					return fmt.Errorf("game %d, ply %d: %d chance outcomes but %d legal actions", game, plies, len(outcomes), len(legal))
				}
				for i, o := range outcomes {
					if o.Action != legal[i] {
						return fmt.Errorf("game %d, ply %d: chance outcome %s is not legal action %s", game, plies, g.FormatAction(o.Action), g.FormatAction(legal[i]))
					}
				}
			} else if c, ok := s.(env.ChanceState); ok && len(c.ChanceOutcomes(outcomes)) != 0 {
				return fmt.Errorf("game %d, ply %d: a decision node lists chance outcomes", game, plies)
			}
			s.Apply(random.Action(s))
		}
		if got := s.LegalActions(buf); len(got) != 0 {
			return fmt.Errorf("game %d: terminal state lists legal actions %v", game, got)
		}
		if env.IsChance(s) {
			return fmt.Errorf("game %d: a terminal state is a chance node", game)
		}
		if w := s.Winner(); w != env.NoPlayer && w != 0 && (solo || w != 1) {
			return fmt.Errorf("game %d: winner %d", game, w)
		}
		if sc, ok := s.(env.Scorer); ok {
			if v, best := sc.Score(), sc.MaxScore(); !(best > 0) || v < 0 || v > best {
				return fmt.Errorf("game %d: score %v of %v", game, v, best)
			}
		} else if solo {
			return fmt.Errorf("a one-player game whose states do not implement env.Scorer")
		}
		if v := env.Value(s, 0); v < -1 || v > 1 {
			return fmt.Errorf("game %d: value %v outside [-1, 1]", game, v)
		}
	}
	return nil
}

// CheckNotation checks that every legal action in random positions prints
// and parses back to itself.
func CheckNotation(g env.Game, opts Options) error {
	opts = opts.withDefaults()
	buf := make([]int, 0, g.ActionSpace())
	for _, s := range RandomPositions(g, opts.Positions, opts.Seed+2) {
		for _, a := range s.LegalActions(buf) {
			text := g.FormatAction(a)
			back, err := g.ParseAction(text)
			if err != nil {
				return fmt.Errorf("action %d prints as %q, which does not parse: %w", a, text, err)
			}
			if back != a {
				return fmt.Errorf("action %d prints as %q, which parses as %d", a, text, back)
			}
		}
	}
	return nil
}

// garbage is notation no game accepts.
var garbage = []string{"", " ", "zz", "a0", "??", "pas", "1a", "P", "M", "x99", "\x00", "a1a1a1a1", "ü", "-1", "P Z9", "M A1 A1 A1"}

// CheckGarbage checks that garbage notation is rejected with an error, and
// that in random positions actions not legal there are refused by
// ParseLegal.
func CheckGarbage(g env.Game, opts Options) error {
	opts = opts.withDefaults()
	for _, text := range garbage {
		if a, err := g.ParseAction(text); err == nil {
			return fmt.Errorf("garbage %q parsed as action %d", text, a)
		}
	}
	buf := make([]int, 0, g.ActionSpace())
	for _, s := range RandomPositions(g, opts.Positions, opts.Seed+3) {
		legal := s.LegalActions(buf)
		for a := 0; a < g.ActionSpace(); a++ {
			if _, ok := slices.BinarySearch(legal, a); ok {
				continue
			}
			if _, err := env.ParseLegal(s, g.FormatAction(a)); err == nil {
				return fmt.Errorf("illegal action %s accepted in\n%v", g.FormatAction(a), s)
			}
		}
	}
	return nil
}

// CheckClone checks that clones and copies are independent of the original.
func CheckClone(g env.Game, opts Options) error {
	opts = opts.withDefaults()
	buf := make([]int, 0, g.ActionSpace())
	for _, s := range RandomPositions(g, opts.Positions, opts.Seed+4) {
		if s.Terminal() {
			continue
		}
		before := s.String()
		clone := s.Clone()
		copied := g.NewState()
		copied.CopyFrom(s)
		if clone.String() != before || copied.String() != before {
			return errors.New("a clone or copy differs from its original")
		}
		legal := clone.LegalActions(buf)
		clone.Apply(legal[0])
		legal = copied.LegalActions(buf)
		copied.Apply(legal[len(legal)-1])
		if s.String() != before {
			return fmt.Errorf("applying an action to a clone changed the original:\n%s\n%s", before, s)
		}
	}
	return nil
}

// CheckEncoding checks that Encode writes exactly the declared shape and
// does not read what is already in the buffer.
func CheckEncoding(g env.Game, opts Options) error {
	opts = opts.withDefaults()
	planes, h, w := g.EncodedShape()
	size := planes * h * w
	if size <= 0 {
		return fmt.Errorf("encoded shape %d×%d×%d is empty", planes, h, w)
	}
	const sentinel = float32(-12345)
	a := make([]float32, size+8)
	b := make([]float32, size)
	for _, s := range RandomPositions(g, opts.Positions, opts.Seed+5) {
		for i := range a {
			a[i] = sentinel
		}
		for i := range b {
			b[i] = 7
		}
		s.Encode(a[:size])
		s.Encode(b)
		for i := 0; i < size; i++ {
			if a[i] == sentinel {
				return fmt.Errorf("Encode left value %d of %d unwritten", i, size)
			}
			if a[i] != b[i] {
				return fmt.Errorf("Encode depends on the buffer's old contents at %d", i)
			}
		}
		for i := size; i < len(a); i++ {
			if a[i] != sentinel {
				return fmt.Errorf("Encode wrote past the declared shape %d×%d×%d", planes, h, w)
			}
		}
	}
	return nil
}

// CheckSymmetries checks, for every symmetry and random positions, that
// the maps are permutations, that the legal actions of the transformed
// position are the transformed legal actions, that encoding the
// transformed position equals transforming the encoding, and that the
// transformed position has the same player to move, result (winner or
// score) and kind of node (chance or decision).
func CheckSymmetries(g env.Game, opts Options) error {
	opts = opts.withDefaults()
	syms := g.Symmetries()
	if len(syms) == 0 {
		return errors.New("no symmetries: want at least the identity")
	}
	planes, h, w := g.EncodedShape()
	for i, sym := range syms {
		if err := isPermutation(sym.Cell, h*w); err != nil {
			return fmt.Errorf("symmetry %s: cell map: %w", sym.Name, err)
		}
		if err := isPermutation(sym.Action, g.ActionSpace()); err != nil {
			return fmt.Errorf("symmetry %s: action map: %w", sym.Name, err)
		}
		if i == 0 {
			for c, to := range sym.Cell {
				if c != to {
					return fmt.Errorf("the first symmetry, %s, is not the identity", sym.Name)
				}
			}
		}
	}
	size := planes * h * w
	enc, encT, want := make([]float32, size), make([]float32, size), make([]float32, size)
	buf := make([]int, 0, g.ActionSpace())
	bufT := make([]int, 0, g.ActionSpace())
	for _, s := range RandomPositions(g, opts.Positions, opts.Seed+6) {
		s.Encode(enc)
		legal := slices.Clone(s.LegalActions(buf))
		for i, sym := range syms {
			t := s.Transformed(i)
			if t.ToMove() != s.ToMove() || t.Terminal() != s.Terminal() {
				return fmt.Errorf("symmetry %s changes the player to move or the end of the game", sym.Name)
			}
			if s.Terminal() && t.Winner() != s.Winner() {
				return fmt.Errorf("symmetry %s changes the winner", sym.Name)
			}
			if sc, ok := s.(env.Scorer); ok && sc.Score() != t.(env.Scorer).Score() {
				return fmt.Errorf("symmetry %s changes the score", sym.Name)
			}
			if env.IsChance(s) != env.IsChance(t) {
				return fmt.Errorf("symmetry %s turns a chance node into a decision or back", sym.Name)
			}
			mapped := make([]int, len(legal))
			for k, a := range legal {
				mapped[k] = sym.Action[a]
			}
			slices.Sort(mapped)
			if got := t.LegalActions(bufT); !slices.Equal(got, mapped) {
				return fmt.Errorf("symmetry %s: legal actions of the transformed position %v, want the transformed legal actions %v, in\n%v",
					sym.Name, formatAll(g, got), formatAll(g, mapped), s)
			}
			t.Encode(encT)
			sym.TransformEncoding(want, enc, h*w)
			for k := range want {
				if want[k] != encT[k] {
					return fmt.Errorf("symmetry %s: the transformed position's encoding differs from the transformed encoding at plane %d cell %d, in\n%v",
						sym.Name, k/(h*w), k%(h*w), s)
				}
			}
		}
	}
	return nil
}

// CheckOwnership checks the auxiliary targets of a game that gives them
// (env.Ownership; others pass), at the end of random games: one value of
// −1, 0 or 1 per cell, the two players' views opposite, a margin in
// [−1, 1] that has the winner's sign, and both unchanged by a symmetry but
// for where the cells go.
func CheckOwnership(g env.Game, opts Options) error {
	opts = opts.withDefaults()
	if _, ok := g.NewState().(env.Ownership); !ok {
		return nil
	}
	_, h, w := g.EncodedShape()
	mine, theirs, moved := make([]float32, h*w), make([]float32, h*w), make([]float32, h*w)
	random := env.NewRandom(g, rand.New(rand.NewPCG(opts.Seed, 7)))
	for game := 0; game < 50; game++ {
		s := g.NewState()
		for plies := 0; !s.Terminal(); plies++ {
			if plies >= opts.MaxPlies {
				return fmt.Errorf("game %d still running after %d plies", game, plies)
			}
			s.Apply(random.Action(s))
		}
		o := s.(env.Ownership)
		o.Ownership(0, mine)
		o.Ownership(1, theirs)
		for c := range mine {
			if v := mine[c]; v != -1 && v != 0 && v != 1 {
				return fmt.Errorf("ownership %v of cell %d, want -1, 0 or 1, in\n%v", v, c, s)
			}
			if theirs[c] != -mine[c] {
				return fmt.Errorf("cell %d is %v for the first player and %v for the second, in\n%v", c, mine[c], theirs[c], s)
			}
		}
		m0, m1 := o.ScoreMargin(0), o.ScoreMargin(1)
		switch {
		case !(m0 >= -1 && m0 <= 1) || m1 != -m0:
			return fmt.Errorf("score margins %v and %v, want opposite numbers in [-1, 1], in\n%v", m0, m1, s)
		case s.Winner() == 0 && m0 < 0, s.Winner() == 1 && m0 > 0:
			return fmt.Errorf("%s won with a score margin of %v for the first player, in\n%v", g.PlayerName(s.Winner()), m0, s)
		}
		for i, sym := range g.Symmetries() {
			t := s.Transformed(i).(env.Ownership)
			t.Ownership(0, moved)
			for c, to := range sym.Cell {
				if moved[to] != mine[c] {
					return fmt.Errorf("symmetry %s: cell %d's ownership %v went to cell %d as %v, in\n%v", sym.Name, c, mine[c], to, moved[to], s)
				}
			}
			if t.ScoreMargin(0) != m0 {
				return fmt.Errorf("symmetry %s changes the score margin", sym.Name)
			}
		}
	}
	return nil
}

// CheckPolicyMap checks the layout of a game's actions on its board
// (env.PolicyMap; other games pass): every action at a plane and cell in
// range or about no cell, and no two at the same place.
func CheckPolicyMap(g env.Game, opts Options) error {
	pm, ok := g.(env.PolicyMap)
	if !ok {
		return nil
	}
	_, h, w := g.EncodedShape()
	planes := pm.PolicyPlanes()
	if planes < 1 {
		return fmt.Errorf("%d policy planes", planes)
	}
	at := map[[2]int]int{}
	spatial := 0
	for a := 0; a < g.ActionSpace(); a++ {
		plane, cell, ok := pm.PolicyCell(a)
		if !ok {
			continue
		}
		spatial++
		if plane < 0 || plane >= planes || cell < 0 || cell >= h*w {
			return fmt.Errorf("action %s at plane %d, cell %d: out of %d planes of %d cells", g.FormatAction(a), plane, cell, planes, h*w)
		}
		if b, taken := at[[2]int{plane, cell}]; taken {
			return fmt.Errorf("actions %s and %s both at plane %d, cell %d", g.FormatAction(b), g.FormatAction(a), plane, cell)
		}
		at[[2]int{plane, cell}] = a
	}
	if spatial == 0 {
		return errors.New("no action lies on the board")
	}
	if _, _, ok := pm.PolicyCell(g.ActionSpace()); ok {
		return errors.New("an action beyond the action space has a cell")
	}
	return nil
}

func isPermutation(m []int, n int) error {
	if len(m) != n {
		return fmt.Errorf("length %d, want %d", len(m), n)
	}
	seen := make([]bool, n)
	for i, to := range m {
		if to < 0 || to >= n || seen[to] {
			return fmt.Errorf("not a permutation: %d maps to %d", i, to)
		}
		seen[to] = true
	}
	return nil
}

func formatAll(g env.Game, actions []int) []string {
	out := make([]string, len(actions))
	for i, a := range actions {
		out[i] = g.FormatAction(a)
	}
	return out
}
