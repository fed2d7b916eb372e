// Package mcts is the PUCT search (AlphaZero's selection rule) over the game
// contract of package env, written against an Evaluator that scores a batch
// of positions, and Gumbel AlphaZero's search over the same tree (see
// gumbel.go and Config.Mode).
//
// A Tree is the search of one game. Its simulations are the textbook ones:
// descend by the PUCT rule to a leaf, have the leaf evaluated, expand it
// with the evaluator's prior, back its value up the path. A Batcher runs
// many trees in lockstep in one goroutine and gathers their leaves into one
// Evaluate call; within a tree, virtual loss lets several leaves wait for
// the same call. Terminal leaves take the exact result and no batch slot.
//
// Values are stored from player 0's point of view and turned to the mover's
// at each decision, so a player who decides several times in a row (YINSH
// removals) or passes needs nothing special, and a one-player game, whose
// player is always player 0, is never turned at all. A terminal leaf's
// value is env.Value, which is a one-player game's normalised score.
//
// Chance nodes (env.ChanceState) are expanded as soon as a descent reaches
// them, without the evaluator, one child per outcome with the outcome's
// probability as its prior. The descent then takes the outcome furthest
// below its share of the node's visits (prior/(1+visits)), as Stochastic
// MuZero and OpenSpiel's chance handling do, without random numbers: the
// visits follow the probabilities, so a chance node's mean value is the
// expectation over its outcomes and the search is expectimax MCTS.
//
// Nodes live in an arena: a slice of small structs, each node's children
// contiguous, linked by indices. Advancing the root copies the kept subtree
// into a second arena and swaps the two, so a game's memory is bounded by
// twice its largest live tree and, after warm-up, the search allocates
// nothing. Reset starts a new game in the same arenas.
package mcts

import (
	"fmt"
	"math"
	"math/rand/v2"
	"unsafe"

	"github.com/flipzero/flipzero/env"
)

// Evaluator scores a batch of positions. Implementations: Uniform and
// Rollout here; the network later. One Evaluator value is used by one
// goroutine at a time.
type Evaluator interface {
	// Evaluate writes for each states[i] a prior over the game's whole
	// action space into priors[i*A:(i+1)*A] (A = ActionSpace(); only legal
	// entries are read; the search renormalizes over legal actions) and
	// the expected result for the player to move, in [-1, 1], into
	// values[i].
	Evaluate(states []env.State, priors, values []float32) error
}

type nodeStatus uint8

const (
	unexpanded nodeStatus = iota
	// awaiting: the leaf is in a batch waiting for its evaluation.
	awaiting
	expanded
	terminal
	// chance: an expanded chance node; its children are the outcomes.
	chance
)

// open reports whether a node has children to descend to.
func (s nodeStatus) open() bool { return s == expanded || s == chance }

// node is one position of the tree, 24 bytes.
type node struct {
	// valueSum is the sum of the values backed up through this node, from
	// player 0's point of view. float32 keeps the node small; its rounding
	// moves a mean over a million visits by about 1e-5.
	valueSum float32
	// first is the index of the first child; the children are contiguous.
	first  int32
	prior  float32
	visits int32
	// action leads from the parent to this node.
	action uint16
	// children is the number of children of an expanded node.
	children uint16
	// inFlight counts the paths through this node whose leaf evaluation is
	// outstanding: the virtual loss.
	inFlight uint16
	status   nodeStatus
	// player is the mover of an expanded node and the winner of a terminal
	// one (env.NoPlayer for a draw).
	player env.Player
}

// maxActions is the largest action space a node's uint16 action holds.
const maxActions = math.MaxUint16 + 1

// NodeBytes is the size of one node in the arena.
const NodeBytes = int(unsafe.Sizeof(node{}))

// leaf is a simulation waiting for its evaluation: the position reached and
// the path of node indices from the root to it.
type leaf struct {
	state env.State
	path  []int32
}

// Tree is the search tree of one game, rooted at the current position.
// A Tree is used by one goroutine at a time.
type Tree struct {
	cfg   Config
	game  env.Game
	root  env.State
	nodes []node
	// spare is the second arena that Advance copies the kept subtree into.
	spare []node
	// leaves[:pending] are waiting for the evaluator.
	leaves  []leaf
	pending int
	legal   []int
	// outcomes is the buffer for chance outcomes; hasChance says whether
	// the game has chance nodes at all, so that other games skip the test.
	outcomes  []env.Outcome
	hasChance bool

	// noiseRNG, when set, mixes Dirichlet noise into the root prior; the
	// root's own prior is kept in cleanPriors to undo it.
	noiseRNG    *rand.Rand
	noised      bool
	cleanPriors []float32
	noise       []float64
	// noiseScale multiplies a Gumbel root's noise (SetNoiseScale).
	noiseScale float64

	single *singleSearch
	// err is why the last descent failed (leafFailed).
	err error

	// gumbel is the Gumbel search's state; nil for PUCT.
	gumbel *gumbelState
	// choose is the selection rule, chosen when the tree is made (mctx's
	// shape): PUCT's, or Gumbel's at the root and, unless
	// GumbelPUCTBelowRoot, below it.
	choose func(id int32) int32
	// solve: the solver proves results (Config.Solver, in a game it
	// applies to; see solver.go). ownStates and ownLegal are its
	// scratch, one of each per decision it looks ahead.
	solve     bool
	endgame   int // Config.EndgameSolve where the game solves endgames; 0 otherwise
	ownStates []env.State
	ownLegal  [][]int
}

// NewTree starts a search at a copy of root, which must not be over.
func NewTree(cfg Config, root env.State) (*Tree, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("search config: %w", err)
	}
	g := root.Game()
	if g.ActionSpace() > maxActions {
		return nil, fmt.Errorf("mcts: %s has %d actions, the search handles at most %d", g.Name(), g.ActionSpace(), maxActions)
	}
	t := &Tree{
		cfg:        cfg,
		game:       g,
		root:       root.Clone(),
		legal:      make([]int, 0, g.ActionSpace()),
		noiseScale: 1,
	}
	if _, ok := root.(env.ChanceState); ok {
		t.hasChance = true
		t.outcomes = make([]env.Outcome, 0, g.ActionSpace())
	}
	t.nodes = append(t.nodes, node{})
	t.solve = cfg.Solver && solvable(root)
	if _, ok := root.(env.Endgame); ok && t.solve {
		t.endgame = cfg.EndgameSolve
	}
	t.choose = t.selectPUCT
	if cfg.Mode == Gumbel {
		t.gumbel = newGumbelState(g.ActionSpace())
		t.choose = t.gumbelSelect
		if cfg.GumbelPUCTBelowRoot {
			t.choose = func(id int32) int32 {
				if id == 0 {
					return t.gumbelSelect(id)
				}
				return t.selectPUCT(id)
			}
		}
	}
	return t, nil
}

// Config returns the tree's settings.
func (t *Tree) Config() Config { return t.cfg }

// Root returns the position at the root. The caller must not change it.
func (t *Tree) Root() env.State { return t.root }

// Reset starts a new search at a copy of root, keeping the arenas'
// memory: one tree can serve game after game without allocating.
func (t *Tree) Reset(root env.State) error {
	if t.pending != 0 {
		return fmt.Errorf("mcts: reset during a search")
	}
	if root.Game().Name() != t.game.Name() {
		return fmt.Errorf("mcts: reset a %s tree with a %s position", t.game.Name(), root.Game().Name())
	}
	t.root.CopyFrom(root)
	t.nodes = append(t.nodes[:0], node{})
	t.clearNoise()
	return nil
}

// Advance plays action at the root and keeps the subtree below it (tree
// reuse). The kept nodes are copied into the spare arena, which becomes the
// tree's, so the discarded rest of the tree takes no memory.
func (t *Tree) Advance(action int) error {
	if t.pending != 0 {
		return fmt.Errorf("mcts: advance during a search")
	}
	if t.root.Terminal() || !t.root.IsLegal(action) {
		return fmt.Errorf("mcts: move %s is not legal at the root", t.game.FormatAction(action))
	}
	kept := int32(-1)
	if r := t.nodes[0]; r.status.open() {
		for i := r.first; i < r.first+int32(r.children); i++ {
			if int(t.nodes[i].action) == action {
				kept = i
				break
			}
		}
	}
	t.root.Apply(action)
	t.spare = t.spare[:0]
	if kept < 0 {
		t.spare = append(t.spare, node{})
	} else {
		// Breadth first: the spare arena is its own queue, and every
		// node's children stay contiguous.
		t.spare = append(t.spare, t.nodes[kept])
		for i := 0; i < len(t.spare); i++ {
			n := t.spare[i]
			if !n.status.open() {
				continue
			}
			first := int32(len(t.spare))
			t.spare = append(t.spare, t.nodes[n.first:n.first+int32(n.children)]...)
			t.spare[i].first = first
		}
	}
	t.nodes, t.spare = t.spare, t.nodes
	if t.nodes[0].status == terminal && !t.root.Terminal() {
		// A proven position is searched afresh as the root, so that its
		// moves are there to choose from; the solver proves it again.
		t.nodes = append(t.nodes[:0], node{})
	}
	t.clearNoise()
	return nil
}

// Nodes is the number of nodes in the tree.
func (t *Tree) Nodes() int { return len(t.nodes) }

// ArenaBytes is the memory the tree's two arenas hold.
func (t *Tree) ArenaBytes() int { return (cap(t.nodes) + cap(t.spare)) * NodeBytes }

// Playouts is the number of finished simulations below the root: the sum
// of the root children's visits.
func (t *Tree) Playouts() int {
	switch r := &t.nodes[0]; r.status {
	case expanded:
		return max(int(r.visits)-1, 0)
	case chance:
		return int(r.visits)
	}
	return 0
}

// started counts the simulations finished or waiting below the root. A
// decision root's first visit is its own evaluation, not a playout; a
// chance root is never evaluated.
func (t *Tree) started() int {
	switch r := &t.nodes[0]; r.status {
	case expanded:
		return int(r.visits) - 1 + int(r.inFlight)
	case chance:
		return int(r.visits) + int(r.inFlight)
	}
	return 0
}

// leafOutcome says how one descent ended.
type leafOutcome int

const (
	// leafWaiting: the leaf must be evaluated; it holds a batch slot.
	leafWaiting leafOutcome = iota
	// leafResolved: the leaf was terminal and its result is backed up.
	leafResolved
	// leafCollided: the leaf already waits for an evaluation in this batch;
	// the descent's virtual loss is undone.
	leafCollided
	// leafFailed: a chance node could not be expanded; the error is in
	// t.err and the descent's virtual loss is undone.
	leafFailed
)

// descend runs the selection half of one simulation. On leafWaiting the
// leaf is t.leaves[t.pending-1].
func (t *Tree) descend() leafOutcome {
	if t.pending == len(t.leaves) {
		t.leaves = append(t.leaves, leaf{state: t.game.NewState()})
	}
	l := &t.leaves[t.pending]
	l.state.CopyFrom(t.root)
	l.path = append(l.path[:0], 0)
	id := int32(0)
	t.nodes[0].inFlight++
descent:
	for {
		if t.hasChance && t.nodes[id].status == unexpanded && env.IsChance(l.state) {
			if err := t.expandChance(id, l.state); err != nil {
				t.err = err
				t.undo(l.path)
				return leafFailed
			}
		}
		switch t.nodes[id].status {
		case expanded:
			id = t.selectChild(id)
		case chance:
			id = t.selectOutcome(id)
		default:
			break descent
		}
		t.nodes[id].inFlight++
		l.state.Apply(int(t.nodes[id].action))
		l.path = append(l.path, id)
	}
	n := &t.nodes[id]
	over := false
	switch n.status {
	case awaiting:
		t.undo(l.path)
		return leafCollided
	case unexpanded:
		if l.state.Terminal() {
			n.status, n.player = terminal, l.state.Winner()
			over = true
			break
		}
		// The root is never marked: its moves stay there to choose from.
		if t.endgame > 0 && id != 0 {
			if w, ok := l.state.(env.Endgame).Solved(t.endgame); ok {
				n.status, n.player = terminal, w
				over = true
				break
			}
		}
		n.status = awaiting
		t.pending++
		return leafWaiting
	}
	if t.solve {
		// The leaf is over or proven (its state need not be over): its
		// winner is its result.
		t.backup(l.path, provenValue(n.player))
		if over {
			t.propagate(l.path)
		}
		return leafResolved
	}
	// The leaf's state is the finished game: env.Value reads its result,
	// a winner or a one-player game's score, from player 0's view.
	t.backup(l.path, float64(env.Value(l.state, 0)))
	return leafResolved
}

// expandChance gives chance node id one child per outcome of s, with the
// outcome's probability as prior.
func (t *Tree) expandChance(id int32, s env.State) error {
	t.outcomes = s.(env.ChanceState).ChanceOutcomes(t.outcomes)
	if len(t.outcomes) == 0 || len(t.outcomes) > math.MaxUint16 {
		return fmt.Errorf("mcts: a %s chance node with %d outcomes", t.game.Name(), len(t.outcomes))
	}
	first := len(t.nodes)
	if int64(first)+int64(len(t.outcomes)) > math.MaxInt32 {
		return fmt.Errorf("mcts: the tree is full (%d nodes)", first)
	}
	for _, o := range t.outcomes {
		t.nodes = append(t.nodes, node{action: uint16(o.Action), prior: float32(o.Prob)})
	}
	n := &t.nodes[id]
	n.first = int32(first)
	n.children = uint16(len(t.outcomes))
	n.status = chance
	n.player = s.ToMove()
	return nil
}

// selectOutcome picks the outcome of a chance node furthest below its
// share of the visits: the highest prior/(1+visits), waiting paths
// counted as visits so that a batch spreads over the outcomes.
func (t *Tree) selectOutcome(id int32) int32 {
	n := &t.nodes[id]
	kids := t.nodes[n.first : n.first+int32(n.children)]
	best, bestScore := 0, -1.0
	for i := range kids {
		c := &kids[i]
		score := float64(c.prior) / (1 + float64(c.visits) + float64(c.inFlight))
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	return n.first + int32(best)
}

// selectChild picks the child of an expanded node to descend into, by
// the tree's selection rule.
func (t *Tree) selectChild(id int32) int32 { return t.choose(id) }

// childValue is a child's value Q seen by the mover of its parent (sign
// +1 for player 0, −1 for player 1): its mean value, counting each
// simulation waiting below it as a loss of virtualLoss (so that a batch's
// descents spread out), unvisited's for a child with neither, and a
// result the solver proved, exactly. PUCT and Gumbel both read children
// through it.
func (t *Tree) childValue(c *node, sign, unvisited, virtualLoss float64) float64 {
	q := unvisited
	virtual := virtualLoss * float64(c.inFlight)
	if visits := float64(c.visits) + virtual; visits > 0 {
		q = (sign*float64(c.valueSum) - virtual) / visits
	}
	if t.solve && c.status == terminal {
		q = sign * provenValue(c.player)
	}
	return q
}

// selectPUCT picks the child with the highest PUCT score
// Q + CPUCT·P·√N/(1+n), Q seen by the node's mover, unvisited children
// valued at the first-play urgency.
func (t *Tree) selectPUCT(id int32) int32 {
	n := &t.nodes[id]
	sign := 1.0
	if n.player == 1 {
		sign = -1
	}
	kids := t.nodes[n.first : n.first+int32(n.children)]
	vl := t.cfg.VirtualLoss
	parentN := float64(n.visits) - 1 + float64(n.inFlight)
	sqrtN := math.Sqrt(max(parentN, 1))
	cpuct := t.cfg.CPUCT

	isRoot := id == 0
	if isRoot && t.forcedPlayouts() {
		// KataGo's forced playouts: a child below its share √(k·P·N)
		// is taken at once.
		for i := range kids {
			c := &kids[i]
			if float64(c.visits)+float64(c.inFlight) < math.Sqrt(t.cfg.ForcedPlayoutsK*float64(c.prior)*parentN) {
				return n.first + int32(i)
			}
		}
	}

	visitedPolicy := 0.0
	for i := range kids {
		if kids[i].visits > 0 || kids[i].inFlight > 0 {
			visitedPolicy += float64(kids[i].prior)
		}
	}
	reduction := t.cfg.FPUReduction
	if isRoot {
		reduction = t.cfg.RootFPUReduction
	}
	fpu := sign*float64(n.valueSum)/float64(max(n.visits, 1)) - reduction*math.Sqrt(visitedPolicy)

	best, bestScore := 0, math.Inf(-1)
	for i := range kids {
		c := &kids[i]
		q := t.childValue(c, sign, fpu, vl)
		score := q + cpuct*float64(c.prior)*sqrtN/(1+float64(c.visits)+float64(c.inFlight))
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	return n.first + int32(best)
}

// finish completes the simulation of waiting leaf slot with its
// evaluation: the leaf is expanded with prior (over the whole action
// space) and value (for the leaf's mover) is backed up.
func (t *Tree) finish(slot int, prior []float32, value float32) error {
	l := &t.leaves[slot]
	id := l.path[len(l.path)-1]
	if err := t.expand(id, l.state, prior); err != nil {
		return err
	}
	v := float64(value)
	if l.state.ToMove() == 1 {
		v = -v
	}
	// A move found decisive at expansion proves the leaf: its exact
	// result replaces the evaluation.
	proven := t.solve && id != 0 && t.settle(id)
	if proven {
		v = provenValue(t.nodes[id].player)
	}
	t.backup(l.path, v)
	if proven {
		t.propagate(l.path)
	}
	l.path = l.path[:0] // finished: abandon must not undo it again
	if id == 0 && t.noiseRNG != nil {
		t.applyNoise()
	}
	return nil
}

// expand gives node id one child per legal action of s, with the prior
// (shaped by the policy temperature) renormalized over them; a prior that
// is not a usable distribution becomes uniform.
func (t *Tree) expand(id int32, s env.State, prior []float32) error {
	legal := s.LegalActions(t.legal)
	if len(legal) == 0 || len(legal) > math.MaxUint16 {
		return fmt.Errorf("mcts: %d legal actions in a running game", len(legal))
	}
	first := len(t.nodes)
	if int64(first)+int64(len(legal)) > math.MaxInt32 {
		return fmt.Errorf("mcts: the tree is full (%d nodes)", first)
	}
	power := 1 / t.cfg.PolicyTemperature
	sum := float32(0)
	for _, a := range legal {
		p := shapedPrior(prior[a], power)
		sum += p
		t.nodes = append(t.nodes, node{action: uint16(a), prior: p})
	}
	uniform := !(sum > 0) || math.IsInf(float64(sum), 0)
	for i := first; i < len(t.nodes); i++ {
		c := &t.nodes[i]
		if uniform {
			c.prior = float32(1) / float32(len(legal))
		} else {
			c.prior /= sum
		}
	}
	n := &t.nodes[id]
	n.first = int32(first)
	n.children = uint16(len(legal))
	n.status = expanded
	n.player = s.ToMove()
	if t.solve {
		t.markDecisive(id, s)
	}
	return nil
}

// shapedPrior is what expand makes of one legal action's prior before
// renormalising: a negative or NaN counts as zero, and the policy
// temperature raises the rest to power = 1/PolicyTemperature.
func shapedPrior(p float32, power float64) float32 {
	switch {
	case !(p > 0):
		return 0
	case power == 1:
		return p
	}
	return float32(math.Pow(float64(p), power))
}

// backup adds one visit of value v (player 0's view) along path and
// removes the path's virtual loss.
func (t *Tree) backup(path []int32, v float64) {
	for _, id := range path {
		n := &t.nodes[id]
		n.visits++
		n.valueSum += float32(v)
		n.inFlight--
	}
}

// undo removes the virtual loss of a path that was not simulated.
func (t *Tree) undo(path []int32) {
	if t.gumbel != nil {
		t.gumbelUndo(path)
	}
	for _, id := range path {
		t.nodes[id].inFlight--
	}
}

// abandon drops every waiting leaf not yet finished, as if it had never
// been selected.
func (t *Tree) abandon() {
	for i := 0; i < t.pending; i++ {
		l := &t.leaves[i]
		if len(l.path) == 0 {
			continue
		}
		t.undo(l.path)
		if n := &t.nodes[l.path[len(l.path)-1]]; n.status == awaiting {
			n.status = unexpanded
		}
	}
	t.pending = 0
}

// forcedPlayouts reports whether this root's search uses forced playouts:
// only full searches, the ones with noise turned on, do.
func (t *Tree) forcedPlayouts() bool { return t.cfg.ForcedPlayouts && t.noiseRNG != nil }
