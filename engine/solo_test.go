package engine

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/solitaire"
	"github.com/flipzero/flipzero/mcts"
)

// TestEngineSolitaire plays the solitaire as play and serve do: the
// engine answers chance nodes from its deal, a placement taken back and
// played again turns up the same faces, a new game is another deal, and
// the evaluation is an expected score.
func TestEngineSolitaire(t *testing.T) {
	g := solitaire.Default()
	eval, err := mcts.NewRollout(1, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEngine(g, eval, EngineOptions{Playouts: 50, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := e.Chance(); err == nil {
		t.Error("a chance outcome at the start, where a decision is due")
	}
	// Play the game out with the engine, answering every chance node.
	var first []int
	for !e.State().Terminal() {
		if env.IsChance(e.State()) {
			got, err := e.Chances()
			if err != nil || len(got) == 0 || env.IsChance(e.State()) {
				t.Fatalf("chances %v, %v", got, err)
			}
			continue
		}
		a, err := e.GenMove(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(a.Summary(g), "expects a score of ") {
			t.Fatalf("summary %q, want an expected score", a.Summary(g))
		}
		if best, _ := ExpectedScore(g, a.Value); best < 0 || best > 24 {
			t.Fatalf("expected score %v out of range", best)
		}
	}
	first = slices.Clone(e.History())
	// Take back to the last placement and play it again: the same faces.
	last := e.LastDecision(func(env.Player) bool { return true })
	if last < 0 || env.IsChance(replay(t, g, first[:last])) {
		t.Fatalf("last decision at %d", last)
	}
	for len(e.History()) > last {
		e.Undo()
	}
	if err := e.Play(first[last]); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Chances(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(e.History(), first[:len(e.History())]) {
		t.Errorf("replayed %v, first time %v", e.History(), first)
	}
	// New games are new deals: their first reveals differ somewhere. The
	// decisions before the first reveal do not depend on the deal, so each
	// new game plays them as the first game did.
	reveal := 0
	for s := g.NewState(); !env.IsChance(s); reveal++ {
		s.Apply(first[reveal])
	}
	differ := false
	for k := 0; k < 10 && !differ; k++ {
		if err := e.NewGame(); err != nil {
			t.Fatal(err)
		}
		for _, a := range first[:reveal] {
			if err := e.Play(a); err != nil {
				t.Fatal(err)
			}
		}
		got, err := e.Chances()
		if err != nil {
			t.Fatal(err)
		}
		differ = !slices.Equal(got, first[reveal:reveal+len(got)])
	}
	if !differ {
		t.Error("ten new games dealt the faces of the first")
	}
}

func replay(t *testing.T, g env.Game, actions []int) env.State {
	t.Helper()
	s := g.NewState()
	for _, a := range actions {
		s.Apply(a)
	}
	return s
}
