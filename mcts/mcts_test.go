package mcts

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/tictactoe"
)

// recorder is an evaluator that counts what it is asked.
type recorder struct {
	inner   Evaluator
	batches []int
	err     error
	value   float32 // when inner is nil: this value for every position
}

func (r *recorder) Evaluate(states []env.State, priors, values []float32) error {
	r.batches = append(r.batches, len(states))
	if r.err != nil {
		return r.err
	}
	if r.inner != nil {
		return r.inner.Evaluate(states, priors, values)
	}
	for i := range priors {
		priors[i] = 1
	}
	for i := range values {
		values[i] = r.value
	}
	return nil
}

func (r *recorder) leaves() int {
	n := 0
	for _, b := range r.batches {
		n += b
	}
	return n
}

func newTree(t testing.TB, cfg Config, s env.State) *Tree {
	t.Helper()
	tree, err := NewTree(cfg, s)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

func play(t testing.TB, g env.Game, moves string) env.State {
	t.Helper()
	s, err := env.Play(g, moves)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newRollout(t testing.TB, seed uint64) *Rollout {
	t.Helper()
	r, err := NewRollout(1, rand.New(rand.NewPCG(seed, 7)))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Config)
		ok     bool
	}{
		{"default", func(*Config) {}, true},
		{"negative cpuct", func(c *Config) { c.CPUCT = -1 }, false},
		{"NaN fpu", func(c *Config) { c.FPUReduction = math.NaN() }, false},
		{"infinite root fpu", func(c *Config) { c.RootFPUReduction = math.Inf(1) }, false},
		{"noise weight above 1", func(c *Config) { c.DirichletWeight = 1.5 }, false},
		{"noise without alpha", func(c *Config) { c.DirichletAlphaTotal = 0 }, false},
		{"no noise, no alpha", func(c *Config) { c.DirichletAlphaTotal, c.DirichletWeight = 0, 0 }, true},
		{"no leaves", func(c *Config) { c.LeavesPerTree = 0 }, false},
		{"too many leaves", func(c *Config) { c.LeavesPerTree = 100000 }, false},
		{"negative virtual loss", func(c *Config) { c.VirtualLoss = -1 }, false},
		{"policy temperature 1.4", func(c *Config) { c.PolicyTemperature = 1.4 }, true},
		{"policy temperature 0", func(c *Config) { c.PolicyTemperature = 0 }, false},
		{"negative policy temperature", func(c *Config) { c.PolicyTemperature = -1 }, false},
		{"infinite policy temperature", func(c *Config) { c.PolicyTemperature = math.Inf(1) }, false},
		{"NaN policy temperature", func(c *Config) { c.PolicyTemperature = math.NaN() }, false},
	}
	for _, tt := range tests {
		cfg := DefaultConfig()
		tt.change(&cfg)
		err := cfg.Validate()
		if (err == nil) != tt.ok {
			t.Errorf("%s: Validate() = %v, want ok %v", tt.name, err, tt.ok)
		}
		if _, err2 := NewTree(cfg, tictactoe.Game{}.NewState()); (err2 == nil) != tt.ok {
			t.Errorf("%s: NewTree error %v, want ok %v", tt.name, err2, tt.ok)
		}
	}
}

func TestNodeIsSmall(t *testing.T) {
	if NodeBytes > 24 {
		t.Errorf("a node takes %d bytes, want at most 24", NodeBytes)
	}
}

// The root's children's visits add up to exactly the playouts asked for,
// whatever the batching, and the policy target is their distribution.
func TestVisitsSumToPlayouts(t *testing.T) {
	tests := []struct {
		moves    string
		playouts int
		leaves   int
		rollout  bool
	}{
		{"", 1, 1, false},
		{"", 7, 4, false},
		{"", 100, 1, true},
		{"a1;b2", 1000, 4, true},
		{"a1;b2;c3", 2000, 16, false},
		{"a1;b1;a2;b2", 500, 8, true}, // black can win at once: many terminal leaves
	}
	for _, tt := range tests {
		cfg := DefaultConfig()
		cfg.LeavesPerTree = tt.leaves
		tree := newTree(t, cfg, play(t, tictactoe.Game{}, tt.moves))
		var eval Evaluator = Uniform{}
		if tt.rollout {
			eval = newRollout(t, 1)
		}
		if err := tree.Search(context.Background(), eval, tt.playouts); err != nil {
			t.Fatal(err)
		}
		var r Result
		tree.Result(&r)
		sum, policy := 0, float32(0)
		for _, c := range r.Children {
			sum += c.Visits
			policy += r.Policy[c.Action]
		}
		if sum != tt.playouts || r.Playouts != tt.playouts || tree.Playouts() != tt.playouts {
			t.Errorf("%q, %d playouts: children's visits sum to %d (Result %d, Tree %d)", tt.moves, tt.playouts, sum, r.Playouts, tree.Playouts())
		}
		if math.Abs(float64(policy)-1) > 1e-5 {
			t.Errorf("%q: policy target sums to %v", tt.moves, policy)
		}
		if best := r.Children[slices.IndexFunc(r.Children, func(c Child) bool { return c.Action == r.Best })]; slices.ContainsFunc(r.Children, func(c Child) bool { return c.Visits > best.Visits }) {
			t.Errorf("%q: best %d is not the most visited", tt.moves, r.Best)
		}
	}
}

// In a game where player 0 decides twice in a row, the search must see the
// second decision as player 0's own: a = 1 then b = 1 wins.
func TestSignWhenOnePlayerMovesTwice(t *testing.T) {
	for _, eval := range []Evaluator{Uniform{}, newRollout(t, 3)} {
		g := twiceGame()
		tree := newTree(t, DefaultConfig(), g.NewState())
		if err := tree.Search(context.Background(), eval, 400); err != nil {
			t.Fatal(err)
		}
		var r Result
		tree.Result(&r)
		if r.Best != 1 || r.Value < 0.8 {
			t.Errorf("%T: root best %d value %.3f, want 1 and a value near +1 (children %+v)", eval, r.Best, r.Value, r.Children)
		}
		if err := tree.Advance(1); err != nil {
			t.Fatal(err)
		}
		tree.Result(&r)
		if r.Mover != 0 || r.Best != 1 || r.Value < 0.8 {
			t.Errorf("%T: after a = 1: mover %d best %d value %.3f, want player 0 to take b = 1 and a value near +1", eval, r.Mover, r.Best, r.Value)
		}
		if r.Children[1].Value != 1 {
			t.Errorf("%T: b = 1 wins at once but has mean value %v", eval, r.Children[1].Value)
		}
	}
}

// Terminal leaves take the exact result and never reach the evaluator.
func TestTerminalLeavesTakeNoBatchSlot(t *testing.T) {
	g := oneMoveGame()
	rec := &recorder{value: 0.5}
	tree := newTree(t, DefaultConfig(), g.NewState())
	if err := tree.Search(context.Background(), rec, 300); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rec.batches, []int{1}) {
		t.Errorf("evaluator saw batches %v, want only the root's [1]", rec.batches)
	}
	var r Result
	tree.Result(&r)
	want := []float32{-1, 0, 1}
	for i, c := range r.Children {
		if c.Visits > 0 && c.Value != want[i] {
			t.Errorf("action %d: mean value %v, want the exact %v", i, c.Value, want[i])
		}
	}
	if r.Best != 2 || r.Playouts != 300 {
		t.Errorf("best %d after %d playouts, want 2 after 300", r.Best, r.Playouts)
	}
}

// The evaluator's value is for the leaf's mover: a constant +v evaluator
// makes every leaf good for whoever moves there, so the root's mean value
// for its mover is −v (each child is the opponent's position).
func TestValueSignFromEvaluator(t *testing.T) {
	for _, v := range []float32{0.5, -0.25} {
		tree := newTree(t, DefaultConfig(), play(t, chainGame(), ""))
		if err := tree.Search(context.Background(), &recorder{value: v}, 40); err != nil {
			t.Fatal(err)
		}
		var r Result
		tree.Result(&r)
		for _, c := range r.Children {
			if c.Visits == 1 && math.Abs(float64(c.Value+v)) > 1e-6 {
				t.Errorf("evaluator value %v: a child visited once has mean %v for the root's mover, want %v", v, c.Value, -v)
			}
		}
	}
}

// Pure MCTS with 2,000 playouts never loses tic-tac-toe to the perfect
// player, from either side, reusing its tree from move to move.
func TestTicTacToeAgainstPerfectPlayer(t *testing.T) {
	games := 100
	if testing.Short() {
		games = 10
	}
	solver := tictactoe.NewSolver()
	rng := rand.New(rand.NewPCG(11, 12))
	eval := newRollout(t, 13)
	var best []int
	for game := 0; game < 2*games; game++ {
		searcher := env.Player(game % 2)
		s := tictactoe.Game{}.NewState().(*tictactoe.State)
		tree := newTree(t, RolloutConfig(), s)
		var r Result
		var record []string
		for !s.Terminal() {
			var a int
			if s.ToMove() == searcher {
				if err := tree.Search(context.Background(), eval, 2000); err != nil {
					t.Fatal(err)
				}
				tree.Result(&r)
				a = r.Best
			} else {
				best = solver.BestActions(s, best)
				a = best[rng.IntN(len(best))]
			}
			record = append(record, tictactoe.Game{}.FormatAction(a))
			s.Apply(a)
			if err := tree.Advance(a); err != nil {
				t.Fatal(err)
			}
		}
		if w := s.Winner(); w != env.NoPlayer && w != searcher {
			t.Fatalf("game %d: the search (player %d) lost: %s", game, searcher, strings.Join(record, ";"))
		}
	}
}

// Advance keeps the chosen child's statistics and drops the rest.
func TestTreeReuse(t *testing.T) {
	// A game whose end no search here reaches, so that every playout is
	// one evaluation.
	g := chainGame()
	tree := newTree(t, DefaultConfig(), g.NewState())
	if err := tree.Search(context.Background(), Uniform{}, 3000); err != nil {
		t.Fatal(err)
	}
	var r Result
	tree.Result(&r)
	before := tree.Nodes()
	kept := r.Children[slices.IndexFunc(r.Children, func(c Child) bool { return c.Action == r.Best })]
	if err := tree.Advance(r.Best); err != nil {
		t.Fatal(err)
	}
	// The kept child's first visit was its own evaluation.
	if got := tree.Playouts(); got != kept.Visits-1 {
		t.Errorf("after advancing, the root has %d playouts, want the kept child's %d visits − 1", got, kept.Visits)
	}
	if tree.Nodes() >= before {
		t.Errorf("the tree still has %d nodes of %d after dropping siblings", tree.Nodes(), before)
	}
	// A search asking no more than what is kept costs no evaluation.
	rec := &recorder{}
	if err := tree.Search(context.Background(), rec, kept.Visits-1); err != nil {
		t.Fatal(err)
	}
	if len(rec.batches) != 0 {
		t.Errorf("a search already satisfied by the kept subtree evaluated %v", rec.batches)
	}
	if err := tree.Search(context.Background(), rec, kept.Visits+99); err != nil {
		t.Fatal(err)
	}
	if rec.leaves() != 100 || tree.Playouts() != kept.Visits+99 {
		t.Errorf("100 more playouts evaluated %d leaves, root has %d playouts", rec.leaves(), tree.Playouts())
	}
	// Every node kept is reachable: the arena holds exactly the subtree.
	if reach := countReachable(tree, 0); reach != tree.Nodes() {
		t.Errorf("%d nodes reachable from the root, arena holds %d", reach, tree.Nodes())
	}
	if err := tree.Advance(g.ActionSpace() + 3); err == nil {
		t.Error("advancing by an action out of range succeeded")
	}
	ttt := newTree(t, DefaultConfig(), play(t, tictactoe.Game{}, "a1"))
	if err := ttt.Advance(0); err == nil {
		t.Error("advancing by an occupied cell succeeded")
	}
}

func countReachable(t *Tree, id int32) int {
	n := t.nodes[id]
	count := 1
	if n.status.open() {
		for c := n.first; c < n.first+int32(n.children); c++ {
			count += countReachable(t, c)
		}
	}
	return count
}

// After a warm-up game, whole games with tree reuse allocate nothing.
func TestSearchAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates by itself; run without -race")
	}
	g := tictactoe.Game{}
	trees := []*Tree{newTree(t, DefaultConfig(), g.NewState())}
	b, err := NewBatcher(Uniform{}, 8)
	if err != nil {
		t.Fatal(err)
	}
	playouts := []int{500}
	var r Result
	start := g.NewState()
	playGame := func() {
		if err := trees[0].Reset(start); err != nil {
			t.Fatal(err)
		}
		for !trees[0].Root().Terminal() {
			if err := b.Search(context.Background(), trees, playouts); err != nil {
				t.Fatal(err)
			}
			trees[0].Result(&r)
			if err := trees[0].Advance(r.Best); err != nil {
				t.Fatal(err)
			}
		}
	}
	playGame()
	if allocs := testing.AllocsPerRun(5, playGame); allocs != 0 {
		t.Errorf("a game of searches allocates %v times after warm-up", allocs)
	}
	// The same through the one-tree helper, with the rollout evaluator.
	eval := newRollout(t, 9)
	oneTree := func() {
		tree := trees[0]
		if err := tree.Reset(start); err != nil {
			t.Fatal(err)
		}
		for !tree.Root().Terminal() {
			if err := tree.Search(context.Background(), eval, 300); err != nil {
				t.Fatal(err)
			}
			tree.Result(&r)
			if err := tree.Advance(r.Best); err != nil {
				t.Fatal(err)
			}
		}
	}
	oneTree()
	if allocs := testing.AllocsPerRun(5, oneTree); allocs != 0 {
		t.Errorf("a game of Tree.Search with rollouts allocates %v times after warm-up", allocs)
	}
}

// With 64 searches and batches of 32, every batch is full but the last.
func TestBatcherFillsBatches(t *testing.T) {
	const trees, batch = 64, 32
	tests := []struct {
		name     string
		leaves   int
		playouts func(i int) int
	}{
		// 24 trees of 100 playouts and 40 of 149: 24·101 + 40·150 = 8424
		// leaves (a root's evaluation is a leaf too) = 263 full batches
		// and one of 8.
		{"one leaf per tree", 1, func(i int) int {
			if i < 24 {
				return 100
			}
			return 149
		}},
		{"four leaves per tree", 4, func(i int) int { return 100 + i%3 }},
	}
	for _, tt := range tests {
		cfg := DefaultConfig()
		cfg.LeavesPerTree = tt.leaves
		rec := &recorder{value: 0.1}
		b, err := NewBatcher(rec, batch)
		if err != nil {
			t.Fatal(err)
		}
		ts := make([]*Tree, trees)
		playouts := make([]int, trees)
		total := 0
		for i := range ts {
			ts[i] = newTree(t, cfg, chainGame().NewState())
			playouts[i] = tt.playouts(i)
			total += playouts[i] + 1
		}
		if err := b.Search(context.Background(), ts, playouts); err != nil {
			t.Fatal(err)
		}
		if rec.leaves() != total {
			t.Errorf("%s: %d leaves evaluated, want %d", tt.name, rec.leaves(), total)
		}
		n := len(rec.batches)
		for k, size := range rec.batches[:n-1] {
			if size != batch {
				t.Errorf("%s: batch %d of %d holds %d positions, want %d: %v", tt.name, k, n, size, batch, rec.batches)
				break
			}
		}
		if last := rec.batches[n-1]; last < 1 || last > batch {
			t.Errorf("%s: last batch holds %d", tt.name, last)
		}
		for i, tree := range ts {
			if tree.Playouts() != playouts[i] {
				t.Errorf("%s: tree %d has %d playouts, want %d", tt.name, i, tree.Playouts(), playouts[i])
			}
		}
	}
}

// An evaluator's failure is reported and leaves the trees searchable.
func TestBatcherEvaluatorFailure(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name string
		eval *recorder
	}{
		{"error", &recorder{err: boom}},
		{"NaN value", &recorder{value: float32(math.NaN())}},
		{"infinite value", &recorder{value: float32(math.Inf(-1))}},
	}
	for _, tt := range tests {
		tree := newTree(t, DefaultConfig(), tictactoe.Game{}.NewState())
		if err := tree.Search(context.Background(), Uniform{}, 50); err != nil {
			t.Fatal(err)
		}
		err := tree.Search(context.Background(), tt.eval, 100)
		if err == nil {
			t.Fatalf("%s: search succeeded", tt.name)
		}
		if tt.eval.err != nil && !errors.Is(err, boom) {
			t.Errorf("%s: error %v does not wrap the evaluator's", tt.name, err)
		}
		if got := tree.Playouts(); got != 50 {
			t.Errorf("%s: %d playouts after the failed round, want the 50 before it", tt.name, got)
		}
		if err := tree.Search(context.Background(), Uniform{}, 120); err != nil {
			t.Fatalf("%s: searching again: %v", tt.name, err)
		}
		if got := tree.Playouts(); got != 120 {
			t.Errorf("%s: %d playouts, want 120", tt.name, got)
		}
		if reach := countInFlight(tree); reach != 0 {
			t.Errorf("%s: %d virtual losses left in the tree", tt.name, reach)
		}
	}
}

func countInFlight(t *Tree) int {
	n := 0
	for _, nd := range t.nodes {
		n += int(nd.inFlight)
		if nd.status == awaiting {
			n++
		}
	}
	return n
}

func TestSearchRejects(t *testing.T) {
	g := tictactoe.Game{}
	over := newTree(t, DefaultConfig(), play(t, g, "a1;b1;a2;b2;a3"))
	fresh := newTree(t, DefaultConfig(), g.NewState())
	b, _ := NewBatcher(Uniform{}, 4)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name     string
		ctx      context.Context
		trees    []*Tree
		playouts []int
	}{
		{"game over", context.Background(), []*Tree{over}, []int{10}},
		{"lengths differ", context.Background(), []*Tree{fresh}, []int{10, 10}},
		{"two games", context.Background(), []*Tree{fresh, newTree(t, DefaultConfig(), chainGame().NewState())}, []int{10, 10}},
		{"cancelled", ctx, []*Tree{fresh}, []int{10}},
	}
	for _, tt := range tests {
		if err := b.Search(tt.ctx, tt.trees, tt.playouts); err == nil {
			t.Errorf("%s: search succeeded", tt.name)
		}
	}
	if _, err := NewBatcher(Uniform{}, 0); err == nil {
		t.Error("a batcher of size 0 was made")
	}
	if _, err := NewRollout(0, rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Error("a rollout evaluator of 0 playouts was made")
	}
}

// Batchers in different goroutines share nothing (run with -race).
func TestConcurrentBatchers(t *testing.T) {
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for w := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			eval, _ := NewRollout(1, rand.New(rand.NewPCG(uint64(w), 1)))
			b, _ := NewBatcher(eval, 8)
			trees := make([]*Tree, 8)
			playouts := make([]int, 8)
			for i := range trees {
				trees[i], _ = NewTree(DefaultConfig(), tictactoe.Game{}.NewState())
				trees[i].SetNoise(rand.New(rand.NewPCG(uint64(w), uint64(i))))
				playouts[i] = 200
			}
			errs[w] = b.Search(context.Background(), trees, playouts)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// fixedPrior gives every position the prior p (over tic-tac-toe's nine
// actions) and an even value.
type fixedPrior []float32

func (f fixedPrior) Evaluate(states []env.State, priors, values []float32) error {
	for i := range states {
		copy(priors[i*len(f):(i+1)*len(f)], f)
		values[i] = 0
	}
	return nil
}

// The policy temperature raises each legal action's prior to the power
// 1/temperature before renormalising over the legal actions.
func TestPolicyTemperature(t *testing.T) {
	prior := fixedPrior{0.4, 0.2, 0.1, 0.1, 0.05, 0.05, 0.04, 0.03, 0.03}
	for _, temperature := range []float64{1, 2, 0.5, 1.4} {
		cfg := PlayConfig()
		cfg.PolicyTemperature = temperature
		// a1 taken: eight legal actions, the prior renormalised over them.
		tree := newTree(t, cfg, play(t, tictactoe.Game{}, "a1"))
		if err := tree.Search(context.Background(), prior, 1); err != nil {
			t.Fatal(err)
		}
		var r Result
		tree.Result(&r)
		sum := 0.0
		for _, c := range r.Children {
			sum += math.Pow(float64(prior[c.Action]), 1/temperature)
		}
		if len(r.Children) != 8 {
			t.Fatalf("temperature %v: %d children, want 8", temperature, len(r.Children))
		}
		for _, c := range r.Children {
			want := math.Pow(float64(prior[c.Action]), 1/temperature) / sum
			if math.Abs(float64(c.Prior)-want) > 1e-6 {
				t.Errorf("temperature %v: action %d's prior %v, want %v", temperature, c.Action, c.Prior, want)
			}
		}
	}
}
