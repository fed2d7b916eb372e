package envtest

import (
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/solitaire"
	"github.com/flipzero/flipzero/env/tictactoe"
)

// brokenGame is tic-tac-toe with one wrong symmetry: it claims that
// rotating the board leaves the actions where they were.
type brokenGame struct{ tictactoe.Game }

func (brokenGame) Symmetries() []env.Symmetry {
	syms := append([]env.Symmetry(nil), tictactoe.Game{}.Symmetries()...)
	identity := syms[0].Action
	syms[1] = env.Symmetry{Name: "rot90-wrong-actions", Cell: syms[1].Cell, Action: identity}
	return syms
}

// brokenCells has a symmetry whose cell map disagrees with its action map.
type brokenCells struct{ tictactoe.Game }

func (brokenCells) Symmetries() []env.Symmetry {
	syms := append([]env.Symmetry(nil), tictactoe.Game{}.Symmetries()...)
	syms[2] = env.Symmetry{Name: "rot180-wrong-cells", Cell: syms[4].Cell, Action: syms[2].Action}
	return syms
}

// notPermutation maps two actions to one.
type notPermutation struct{ tictactoe.Game }

func (notPermutation) Symmetries() []env.Symmetry {
	syms := append([]env.Symmetry(nil), tictactoe.Game{}.Symmetries()...)
	bad := append([]int(nil), syms[1].Action...)
	bad[0] = bad[1]
	syms[1] = env.Symmetry{Name: "broken", Cell: syms[1].Cell, Action: bad}
	return syms
}

func TestSuiteCatchesWrongSymmetries(t *testing.T) {
	opts := Options{Positions: 50}
	for _, g := range []env.Game{brokenGame{}, brokenCells{}, notPermutation{}} {
		if err := CheckSymmetries(g, opts); err == nil {
			t.Errorf("%T: the symmetry check passed a broken game", g)
		} else {
			t.Logf("%T: %v", g, err)
		}
	}
	if err := CheckSymmetries(tictactoe.Game{}, opts); err != nil {
		t.Errorf("the real game fails: %v", err)
	}
}

// badNotation prints actions in a form it cannot read back.
type badNotation struct{ tictactoe.Game }

func (badNotation) FormatAction(a int) string { return "cell" + tictactoe.Game{}.FormatAction(a) }

func TestSuiteCatchesBadNotation(t *testing.T) {
	if err := CheckNotation(badNotation{}, Options{Positions: 20}); err == nil {
		t.Error("the notation check passed notation that does not parse back")
	}
}

// badChance is the solitaire with chance outcomes whose probabilities do
// not sum to 1.
type badChance struct{ solitaire.Game }

func (g badChance) NewState() env.State {
	return &badChanceState{g.Game.NewState().(*solitaire.State)}
}

type badChanceState struct{ *solitaire.State }

func (s *badChanceState) ChanceOutcomes(buf []env.Outcome) []env.Outcome {
	buf = s.State.ChanceOutcomes(buf)
	for i := range buf {
		buf[i].Prob /= 2
	}
	return buf
}

func TestSuiteCatchesBadChance(t *testing.T) {
	if err := CheckPlayouts(badChance{solitaire.Default()}, Options{Playouts: 20}); err == nil {
		t.Error("the playout check passed chance outcomes that do not sum to 1")
	}
	if err := CheckPlayouts(solitaire.Default(), Options{Playouts: 20}); err != nil {
		t.Errorf("the real game fails: %v", err)
	}
}

// selfishGame is tic-tac-toe whose final ownership gives every mark to
// whoever asks.
type selfishGame struct{ tictactoe.Game }

func (selfishGame) NewState() env.State { return &selfishState{&tictactoe.State{}} }

type selfishState struct{ *tictactoe.State }

func (s *selfishState) Ownership(p env.Player, dst []float32) {
	s.State.Ownership(p, dst)
	for c := range dst {
		dst[c] = max(dst[c], -dst[c])
	}
}

func (s *selfishState) Clone() env.State { return &selfishState{s.State.Clone().(*tictactoe.State)} }
func (s *selfishState) Transformed(i int) env.State {
	return &selfishState{s.State.Transformed(i).(*tictactoe.State)}
}

// crowdedMap puts two cells' marks at the same place of the policy.
type crowdedMap struct{ tictactoe.Game }

func (crowdedMap) PolicyCell(a int) (plane, cell int, ok bool) {
	return 0, min(a, 7), a >= 0 && a < 9
}

func TestSuiteCatchesBadOwnershipAndPolicyMaps(t *testing.T) {
	if err := CheckOwnership(selfishGame{}, Options{}); err == nil {
		t.Error("the ownership check passed a cell held by both players")
	} else {
		t.Log(err)
	}
	if err := CheckPolicyMap(crowdedMap{}, Options{}); err == nil {
		t.Error("the policy map check passed two actions in one place")
	} else {
		t.Log(err)
	}
	for _, check := range []func(env.Game, Options) error{CheckOwnership, CheckPolicyMap} {
		if err := check(tictactoe.Game{}, Options{}); err != nil {
			t.Errorf("the real game fails: %v", err)
		}
	}
}
