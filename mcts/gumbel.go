package mcts

import (
	"math"
	"math/bits"
	"math/rand/v2"
)

// Gumbel AlphaZero's search (Danihelka et al., "Policy improvement by
// planning with Gumbel", ICLR 2022; DeepMind mctx's gumbel_muzero_policy),
// selected by Config.Mode = Gumbel. The tree, the batching and the
// backups are PUCT's; what changes is how a simulation picks its path,
// the move the search proposes and the policy target.
//
// At the root: each legal action a gets a Gumbel(0, 1) draw g(a) (zero
// without root noise, as in evaluation). Sequential halving spends the
// search's budget of n simulations on m = min(GumbelConsidered, legal)
// actions in ⌈log₂ m⌉ phases: the first phase gives the m actions with
// the highest g(a) + logit(a) max(1, ⌊n/(⌈log₂ m⌉·m)⌋) simulations each;
// each later phase keeps the better half (at least 2) by g(a) + logit(a)
// + σ(q̂(a)) and gives each survivor max(1, ⌊n/(⌈log₂ m⌉·survivors)⌋)
// more, the last pair taking what is left. Like mctx, the schedule is a
// table of "considered visit counts", one per simulation: simulation k
// goes to the best-scored action that has exactly table[k] simulations
// of this search, which replays sequential halving exactly while letting
// scores change as values come in, and lets waiting leaves (counted as
// simulations) keep to it.
//
// Below the root, the paper's deterministic rule (as mctx): the action
// maximising π′(a) − N(a)/(1 + Σ_b N(b)), π′ = softmax(logit + σ(q̂)),
// which makes the visit distribution follow the improved policy. Leaves
// waiting for the evaluator count as visits there (virtual loss, as in
// PUCT), so that one tree's several waiting leaves take different paths.
// The rule trusts the prior; Config.GumbelPUCTBelowRoot selects by PUCT
// there instead.
//
// Completed Q (q̂): a visited action's mean value for the node's mover; an
// unvisited action gets the mixed value v_mix = (v + Σ_b N(b)·Σ_visited
// π(a)q(a)/Σ_visited π(a)) / (1 + Σ_b N(b)) (the paper's eq. 33, v the
// node's own evaluation, π the prior); the node's completed values are
// then rescaled to [0, 1] by their minimum and maximum, and σ(q̂) =
// (GumbelCVisit + max_b N(b))·GumbelCScale·q̂.
//
// The proposed move (Result.Best) is the action with the most simulations
// of this search, ties (the last phase's pair) broken by g + logit +
// σ(q̂): with noise a sample that needs no temperature. The policy target
// (Result.Policy) is π′ at the root over the legal actions, not the visit
// counts. Dirichlet noise and forced playouts do not apply.
//
// A search's budget counts only its own simulations: sequential halving
// schedules it from its first simulation, and the visits kept by tree
// reuse inform the values but are not simulations of this search.

// logitFloor stands for the logit of a zero prior, finite so that the
// sums below stay numbers.
const logitFloor = -1e9

// gumbelState is a Gumbel tree's root bookkeeping and scratch buffers,
// sized once for the game's action space.
type gumbelState struct {
	// budget is this search's simulations; started counts those started
	// (waiting ones included) below the root.
	budget, started int
	// prepared: the root's per-search state below is set up for the
	// current search; it is set up at the search's first root selection.
	prepared bool
	// table[k] is the number of this search's simulations the action of
	// simulation k must have (sequential halving's schedule).
	table []int32
	// sims[i] and noise[i] belong to the root's i-th child: this search's
	// simulations through it (waiting ones included) and its Gumbel draw.
	sims  []int32
	noise []float64
	// logits[i] is the log prior of the root's i-th child, kept for the
	// search since the root's prior does not change.
	logits []float64
	// sigma holds σ(q̂) for the children of the node being scored.
	sigma []float64
}

func newGumbelState(actions int) *gumbelState {
	return &gumbelState{
		sims:   make([]int32, 0, actions),
		noise:  make([]float64, 0, actions),
		logits: make([]float64, 0, actions),
		sigma:  make([]float64, actions),
	}
}

// beginSearch starts a search of budget simulations at the current root.
func (t *Tree) beginSearch(budget int) {
	if g := t.gumbel; g != nil {
		g.budget, g.started, g.prepared = max(budget, 0), 0, false
	}
}

// progress is how far the current search is towards its target: the
// simulations below the root, kept ones included, for PUCT; this search's
// own for Gumbel.
func (t *Tree) progress() int {
	if t.gumbel != nil {
		return t.gumbel.started
	}
	return t.started()
}

// forgetRoot drops the per-search state of a root that is no longer the
// root (Advance, Reset).
func (g *gumbelState) forgetRoot() {
	g.prepared = false
	g.sims, g.noise, g.logits = g.sims[:0], g.noise[:0], g.logits[:0]
}

// prepareRoot sets up the expanded root for the search: no simulations
// yet, fresh Gumbel draws (zeros without root noise), and the schedule.
func (t *Tree) prepareRoot() {
	g := t.gumbel
	r := t.nodes[0]
	k := int(r.children)
	g.sims, g.noise, g.logits = g.sims[:0], g.noise[:0], g.logits[:0]
	for i := 0; i < k; i++ {
		x := 0.0
		if t.noiseRNG != nil {
			x = t.noiseScale * gumbelDraw(t.noiseRNG)
		}
		g.sims = append(g.sims, 0)
		g.noise = append(g.noise, x)
		g.logits = append(g.logits, logit(t.nodes[r.first+int32(i)].prior))
	}
	g.table = consideredVisits(g.table[:0], min(t.cfg.GumbelConsidered, k), g.budget)
	g.prepared = true
}

// gumbelDraw is a Gumbel(0, 1) sample, −log(−log U).
func gumbelDraw(rng *rand.Rand) float64 {
	u := rng.Float64()
	for u == 0 {
		u = rng.Float64()
	}
	return -math.Log(-math.Log(u))
}

// consideredVisits appends to dst sequential halving's schedule for m
// considered actions and n simulations (mctx's
// get_sequence_of_considered_visits): for each simulation, how many
// simulations its action must already have. Each phase gives every
// surviving action max(1, ⌊n/(⌈log₂ m⌉·survivors)⌋) more, then halves
// the survivors (never below 2).
func consideredVisits(dst []int32, m, n int) []int32 {
	if m <= 1 {
		for k := 0; k < n; k++ {
			dst = append(dst, int32(k))
		}
		return dst
	}
	start := len(dst)
	log2m := bits.Len(uint(m - 1)) // ⌈log₂ m⌉
	considered, visits := m, int32(0)
	for len(dst)-start < n {
		extra := max(1, n/(log2m*considered))
		for e := 0; e < extra; e++ {
			// Every survivor has the same count: they were all given
			// the same shares since the start.
			for i := 0; i < considered; i++ {
				dst = append(dst, visits)
			}
			visits++
		}
		considered = max(2, considered/2)
	}
	return dst[:start+n]
}

// logit is a prior's logit (up to the node's constant).
func logit(p float32) float64 {
	if p > 0 {
		return math.Log(float64(p))
	}
	return logitFloor
}

// gumbelScore fills g.sigma for the children of node id, and returns the
// children's total visits, waiting ones counted.
func (t *Tree) gumbelScore(id int32) (visits float64) {
	g := t.gumbel
	n := &t.nodes[id]
	kids := t.nodes[n.first : n.first+int32(n.children)]
	sign := 1.0
	if n.player == 1 {
		sign = -1
	}
	vl := t.cfg.VirtualLoss

	// The node's own evaluation: every backup through it after its first
	// went through one of its children.
	childSum, realVisits := 0.0, 0.0
	visitedPrior, visitedQ := 0.0, 0.0
	for i := range kids {
		c := &kids[i]
		childSum += float64(c.valueSum)
		if c.visits > 0 {
			p := max(float64(c.prior), math.SmallestNonzeroFloat32)
			realVisits += float64(c.visits)
			visitedPrior += p
			visitedQ += p * sign * float64(c.valueSum) / float64(c.visits)
		}
	}
	raw := sign * (float64(n.valueSum) - childSum)
	mixed := raw
	if visitedPrior > 0 {
		mixed = (raw + realVisits*visitedQ/visitedPrior) / (1 + realVisits)
	}

	lo, hi, maxN := math.Inf(1), math.Inf(-1), 0.0
	for i := range kids {
		c := &kids[i]
		q := t.childValue(c, sign, mixed, vl)
		g.sigma[i] = q
		lo, hi = min(lo, q), max(hi, q)
		cn := float64(c.visits) + float64(c.inFlight)
		maxN = max(maxN, cn)
		visits += cn
	}
	scale := (t.cfg.GumbelCVisit + maxN) * t.cfg.GumbelCScale / max(hi-lo, 1e-8)
	for i := range kids {
		g.sigma[i] = (g.sigma[i] - lo) * scale
	}
	return visits
}

// improvedWeights turns g.sigma, as gumbelScore left it for kids, into the
// unnormalized improved policy p·exp(σ − max σ), and returns its sum.
func (t *Tree) improvedWeights(kids []node) float64 {
	g := t.gumbel
	top := math.Inf(-1)
	for i := range kids {
		top = max(top, g.sigma[i])
	}
	z := 0.0
	for i := range kids {
		g.sigma[i] = float64(kids[i].prior) * math.Exp(g.sigma[i]-top)
		z += g.sigma[i]
	}
	return z
}

// gumbelSelect is Gumbel's selection rule: sequential halving at the
// root, the improved policy's deterministic selection below it.
func (t *Tree) gumbelSelect(id int32) int32 {
	n := &t.nodes[id]
	k := int(n.children)
	total := t.gumbelScore(id)
	g := t.gumbel
	if id != 0 {
		// argmax π′(a) − N(a)/(1 + ΣN), π′ = softmax(logit + σ): the
		// weights p·exp(σ) need no logarithm.
		kids := t.nodes[n.first : n.first+int32(k)]
		z := t.improvedWeights(kids)
		best, bestScore := 0, math.Inf(-1)
		for i := range kids {
			c := &kids[i]
			score := g.sigma[i]/z - (float64(c.visits)+float64(c.inFlight))/(1+total)
			if score > bestScore {
				best, bestScore = i, score
			}
		}
		return n.first + int32(best)
	}

	if !g.prepared {
		t.prepareRoot()
	}
	// The best-scored action with exactly the scheduled number of
	// simulations; past the schedule, or should none match, the one with
	// the fewest (ties: the best-scored).
	want := int32(-1)
	if g.started < len(g.table) {
		want = g.table[g.started]
	}
	best, bestScore := -1, math.Inf(-1)
	for i := 0; i < k; i++ {
		if g.sims[i] != want {
			continue
		}
		if s := g.noise[i] + g.logits[i] + g.sigma[i]; s > bestScore {
			best, bestScore = i, s
		}
	}
	if best < 0 {
		fewest := int32(math.MaxInt32)
		for i := 0; i < k; i++ {
			s := g.noise[i] + g.logits[i] + g.sigma[i]
			if g.sims[i] < fewest || g.sims[i] == fewest && s > bestScore {
				best, bestScore, fewest = i, s, g.sims[i]
			}
		}
	}
	g.sims[best]++
	g.started++
	return n.first + int32(best)
}

// gumbelUndo takes back the root simulation of a path that was not
// simulated.
func (t *Tree) gumbelUndo(path []int32) {
	g := t.gumbel
	if len(path) < 2 || !g.prepared {
		return
	}
	g.sims[path[1]-t.nodes[0].first]--
	g.started--
}

// gumbelResult writes the improved policy π′ as the policy target and the
// sequential-halving winner as Best.
func (t *Tree) gumbelResult(r *Result) {
	root := &t.nodes[0]
	kids := t.nodes[root.first : root.first+int32(root.children)]
	t.gumbelScore(0)
	g := t.gumbel
	// The winner is among the actions with the most simulations of this
	// search (of all visits when this root has had no search), by
	// g + logit + σ.
	count := func(i int) int32 {
		if g.prepared {
			return g.sims[i]
		}
		return kids[i].visits
	}
	most := int32(-1)
	for i := range kids {
		most = max(most, count(i))
	}
	best, bestScore := 0, math.Inf(-1)
	for i := range kids {
		if count(i) != most {
			continue
		}
		s := logit(kids[i].prior) + g.sigma[i]
		if g.prepared {
			s += g.noise[i]
		}
		if s > bestScore {
			best, bestScore = i, s
		}
	}
	r.Best = r.Children[best].Action
	z := t.improvedWeights(kids)
	for i, c := range r.Children {
		r.Policy[c.Action] = float32(g.sigma[i] / z)
	}
}
