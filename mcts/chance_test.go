package mcts

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/solitaire"
)

// coinLayout: gold's only placement, a3, flips a2 and turns up a4, which
// shows gold with chance 3/4 (then nothing more can happen: score 0) and
// black with chance 1/4 (then a5:gold captures it: score 1 of 4). The
// tokens on row 8 are out of reach.
const coinLayout = `board
g.......
b.......
........
t.......
........
........
........
....ttt.
gold 1 2 3
black 4
scoring count
`

func coinGame(t testing.TB) solitaire.Game {
	t.Helper()
	l, err := solitaire.ParseLayout("coin", coinLayout)
	if err != nil {
		t.Fatal(err)
	}
	return solitaire.New(l)
}

// childOf returns the node of action a below node id.
func childOf(t *testing.T, tree *Tree, id int32, a int) int32 {
	t.Helper()
	n := tree.nodes[id]
	for i := n.first; i < n.first+int32(n.children); i++ {
		if int(tree.nodes[i].action) == a {
			return i
		}
	}
	t.Fatalf("no child %d", a)
	return 0
}

func TestChanceVisitsFollowProbabilities(t *testing.T) {
	g := coinGame(t)
	a3, _ := g.ParseAction("a3:gold")
	gold, _ := g.ParseAction("reveal:gold")
	black, _ := g.ParseAction("reveal:black")
	for _, playouts := range []int{1, 2, 3, 4, 7, 100, 1001} {
		tree := newTree(t, DefaultConfig(), g.NewState())
		if err := tree.Search(context.Background(), Uniform{}, playouts); err != nil {
			t.Fatal(err)
		}
		c := childOf(t, tree, 0, a3)
		if tree.nodes[c].status != chance {
			t.Fatalf("a3:gold is not a chance node")
		}
		n := float64(tree.nodes[c].visits)
		g, b := float64(tree.nodes[childOf(t, tree, c, gold)].visits), float64(tree.nodes[childOf(t, tree, c, black)].visits)
		if g+b != n || math.Abs(g-0.75*n) > 1 || math.Abs(b-0.25*n) > 1 {
			t.Errorf("%d playouts: outcomes visited %v and %v times of %v, want 3/4 and 1/4 within one", playouts, g, b, n)
		}
		// The chance node's value tends to the expectation 3/4·(-1) +
		// 1/4·(-0.5); the black face's first visit is the evaluator's 0.
		var r Result
		tree.Result(&r)
		if playouts >= 100 && math.Abs(float64(r.Children[0].Value)+0.875) > 0.01 {
			t.Errorf("%d playouts: value %v, want about -0.875", playouts, r.Children[0].Value)
		}
	}
}

// At a chance root the search spreads its playouts over the outcomes and
// Choose draws an outcome by its probability.
func TestChanceRoot(t *testing.T) {
	g := coinGame(t)
	s, err := env.Play(g, "a3:gold")
	if err != nil {
		t.Fatal(err)
	}
	tree := newTree(t, DefaultConfig(), s)
	if err := tree.Search(context.Background(), Uniform{}, 400); err != nil {
		t.Fatal(err)
	}
	var r Result
	tree.Result(&r)
	if !r.Chance || r.Playouts != 400 || tree.Playouts() != 400 {
		t.Fatalf("chance %v, playouts %d and %d, want a chance root with 400", r.Chance, r.Playouts, tree.Playouts())
	}
	if r.Children[0].Visits != 300 || math.Abs(float64(r.Value)+0.875) > 0.005 {
		t.Errorf("visits %d, value %v; want 300 and -0.875", r.Children[0].Visits, r.Value)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	gold := 0
	const draws = 20000
	for i := 0; i < draws; i++ {
		if r.Choose(0, rng) == r.Children[0].Action {
			gold++
		}
	}
	if f := float64(gold) / draws; math.Abs(f-0.75) > 0.015 {
		t.Errorf("Choose drew the gold face %.3f of the time, want 0.75", f)
	}
	// Playing the drawn outcome keeps its subtree.
	if err := tree.Advance(r.Children[1].Action); err != nil {
		t.Fatal(err)
	}
	if tree.Playouts() != 99 {
		t.Errorf("%d playouts kept below the black face, want 99 (100 visits, one the root's own)", tree.Playouts())
	}
}

// A chance root can be played without a search: Result lists its
// outcomes with their probabilities and Choose draws from them.
func TestChanceRootWithoutSearch(t *testing.T) {
	g := coinGame(t)
	s, err := env.Play(g, "a3:gold")
	if err != nil {
		t.Fatal(err)
	}
	tree := newTree(t, DefaultConfig(), s)
	var r Result
	tree.Result(&r)
	if !r.Chance || len(r.Children) != 2 || r.Children[0].Prior != 0.75 || r.Playouts != 0 {
		t.Fatalf("result %+v, want a chance root with outcomes 3/4 and 1/4", r)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	gold := 0
	const draws = 20000
	for i := 0; i < draws; i++ {
		if r.Choose(1, rng) == r.Children[0].Action {
			gold++
		}
	}
	if f := float64(gold) / draws; math.Abs(f-0.75) > 0.015 {
		t.Errorf("Choose drew the gold face %.3f of the time, want 0.75", f)
	}
	if err := tree.Advance(r.Children[1].Action); err != nil {
		t.Fatal(err)
	}
	if err := tree.Search(context.Background(), Uniform{}, 10); err != nil {
		t.Fatal(err)
	}
}

// solitaireEndgames plays random games and keeps from each the decision
// position nearest its end where a placement turns tokens up, the choice
// matters and the exact solver finishes quickly, with the exact values
// (normalised as the search sees them) of its legal actions.
func solitaireEndgames(t *testing.T, g solitaire.Game, n int, seed uint64) ([]env.State, []map[int]float64) {
	rng := rand.New(rand.NewPCG(seed, 5))
	random := env.NewRandom(g, rng)
	buf := make([]int, 0, g.ActionSpace())
	norm := func(s *solitaire.State, score float64) float64 { return 2*score/s.MaxScore() - 1 }
	var positions []env.State
	var values []map[int]float64
	for tries := 0; len(positions) < n && tries < 2000; tries++ {
		var line []*solitaire.State
		s := g.NewState()
		for !s.Terminal() {
			line = append(line, s.Clone().(*solitaire.State))
			s.Apply(random.Action(s))
		}
	search:
		for back := 1; back <= min(12, len(line)); back++ {
			p := line[len(line)-back]
			if p.IsChance() {
				continue
			}
			legal := p.LegalActions(buf)
			vals := map[int]float64{}
			lo, hi := math.Inf(1), math.Inf(-1)
			reveals := false
			for _, a := range legal {
				c := *p
				c.Apply(a)
				reveals = reveals || c.IsChance()
				score, ok := solitaire.SolveExactWithin(&c, 20000)
				if !ok {
					break search
				}
				v := norm(p, score)
				vals[a] = v
				lo, hi = min(lo, v), max(hi, v)
			}
			if reveals && hi-lo >= 0.05 {
				positions = append(positions, p)
				values = append(values, vals)
				break
			}
		}
	}
	if len(positions) < n {
		t.Fatalf("found %d positions, want %d", len(positions), n)
	}
	return positions, values
}

// With random rollouts, the search finds the best placement of small
// endgames with tokens still to turn up, and the value it gives it
// approaches the exact expectimax value.
func TestSearchApproachesExpectimax(t *testing.T) {
	var positions []env.State
	var values []map[int]float64
	// The default layout with 20 gold faces and 4 black ones: chance
	// outcomes far from even, so that weighting them wrongly shows.
	skewed := solitaire.DefaultLayout()
	for i := range skewed.Faces {
		skewed.Faces[i].Gold = i%6 != 0
	}
	for _, g := range []solitaire.Game{solitaire.Default(), solitaire.New(skewed)} {
		p, v := solitaireEndgames(t, g, 8, 3)
		positions, values = append(positions, p...), append(values, v...)
	}
	withChance := 0
	for i, p := range positions {
		tree := newTree(t, RolloutConfig(), p)
		if err := tree.Search(context.Background(), newRollout(t, uint64(i)), 20000); err != nil {
			t.Fatal(err)
		}
		var r Result
		tree.Result(&r)
		for _, n := range tree.nodes {
			if n.status == chance {
				withChance++
				break
			}
		}
		best := math.Inf(-1)
		for _, v := range values[i] {
			best = max(best, v)
		}
		var got float64
		for _, c := range r.Children {
			if c.Action == r.Best {
				got = float64(c.Value)
			}
		}
		if values[i][r.Best] < best-0.02 {
			t.Errorf("position %d: best %s is worth %.3f, the best move %.3f, in\n%v", i, p.Game().FormatAction(r.Best), values[i][r.Best], best, p)
		}
		// A mean over the visits sits a little below the best move's
		// value, as exploration visits worse replies below it (up to
		// 0.064 here); weighting outcomes uniformly instead of by their
		// chances misses by up to 0.3.
		if math.Abs(got-best) > 0.08 {
			t.Errorf("position %d: value %.3f, exact %.3f in\n%v", i, got, best, p)
		}
	}
	if withChance < len(positions)/2 {
		t.Errorf("only %d of %d searches met a chance node", withChance, len(positions))
	}
}

// The search is a function of its evaluator's seed: two runs agree on
// every visit and value.
func TestChanceSearchDeterministic(t *testing.T) {
	g := solitaire.Default()
	run := func() Result {
		tree := newTree(t, RolloutConfig(), g.NewState())
		if err := tree.Search(context.Background(), newRollout(t, 42), 3000); err != nil {
			t.Fatal(err)
		}
		var r Result
		tree.Result(&r)
		return r
	}
	a, b := run(), run()
	if a.Best != b.Best || a.Value != b.Value || len(a.Children) != len(b.Children) {
		t.Fatalf("two runs differ: %v %v / %v %v", a.Best, a.Value, b.Best, b.Value)
	}
	for i := range a.Children {
		if a.Children[i] != b.Children[i] {
			t.Fatalf("child %d differs: %+v / %+v", i, a.Children[i], b.Children[i])
		}
	}
}

// Whole solitaire games, chance roots included, allocate nothing after a
// warm-up: the caller searches every root and lets Choose draw at chance
// roots.
func TestSolitaireSearchAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates by itself; run without -race")
	}
	g := solitaire.Default()
	tree := newTree(t, DefaultConfig(), g.NewState())
	eval := newRollout(t, 9)
	rng := rand.New(rand.NewPCG(3, 3))
	start := g.NewState()
	var r Result
	playGame := func() {
		if err := tree.Reset(start); err != nil {
			t.Fatal(err)
		}
		for !tree.Root().Terminal() {
			if err := tree.Search(context.Background(), eval, 200); err != nil {
				t.Fatal(err)
			}
			tree.Result(&r)
			if err := tree.Advance(r.Choose(0, rng)); err != nil {
				t.Fatal(err)
			}
		}
	}
	playGame()
	playGame()
	if allocs := testing.AllocsPerRun(5, playGame); allocs != 0 {
		t.Errorf("a solitaire game of searches allocates %v times after warm-up", allocs)
	}
}

// noOutcomes is the coin game with chance nodes that list no outcome.
type noOutcomes struct{ solitaire.Game }

func (g noOutcomes) NewState() env.State {
	return &noOutcomesState{g.Game.NewState().(*solitaire.State)}
}

type noOutcomesState struct{ *solitaire.State }

func (s *noOutcomesState) Game() env.Game { return noOutcomes{s.State.Game().(solitaire.Game)} }
func (s *noOutcomesState) Clone() env.State {
	return &noOutcomesState{s.State.Clone().(*solitaire.State)}
}
func (s *noOutcomesState) CopyFrom(src env.State) { s.State.CopyFrom(src.(*noOutcomesState).State) }
func (s *noOutcomesState) ChanceOutcomes(buf []env.Outcome) []env.Outcome {
	return buf[:0]
}

// A chance node without outcomes fails the search with an error, and the
// tree is left with no path in flight.
func TestChanceWithoutOutcomes(t *testing.T) {
	tree := newTree(t, DefaultConfig(), noOutcomes{coinGame(t)}.NewState())
	err := tree.Search(context.Background(), Uniform{}, 10)
	if err == nil || !strings.Contains(err.Error(), "chance node with 0 outcomes") {
		t.Fatalf("error %v, want one about the chance node", err)
	}
	for i, n := range tree.nodes {
		if n.inFlight != 0 || n.status == awaiting {
			t.Errorf("node %d left in flight (%d, status %d)", i, n.inFlight, n.status)
		}
	}
}
