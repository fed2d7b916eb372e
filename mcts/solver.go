package mcts

import "github.com/flipzero/flipzero/env"

// The solver (Config.Solver): MCTS-Solver (Winands, Björnsson and Saito,
// "Monte-Carlo Tree Search Solver", 2008), as lc0 propagates terminal
// results. A position is proven when its result no longer depends on the
// search: the game is over there, or its mover has a move to a position
// proven won for them, or all its moves lead to proven positions (the
// mover then gets the best of them, a draw before a loss). A proven node
// takes the status terminal with its proven winner as its player, the
// same shape as a finished game's node, so a descent stops there and
// backs up the exact result without an evaluation, and tree reuse and
// the arena need nothing new. The root is never marked: its moves stay
// there to choose from, and Result reports which of them are proven.
//
// Proofs start from the finished games the search reaches, and from
// decisive moves (Teytaud and Teytaud, "On the huge benefit of decisive
// moves in Monte-Carlo tree search algorithms", 2010): each time a node
// is expanded, its moves that end the game, or win it by the mover's own
// decisions alone, are marked at once, without being visited. In YINSH
// blitz a ring move that makes a row wins three decisions later (the
// row, then a ring), and a network's value only approximates that; with
// the check, a move that lets the opponent make a row is proven lost on
// its first visit, the anti-decisive move of the paper.
//
// Proofs run only in two-player games without chance, where a result is
// a winner: a one-player game's score and a chance node's expectation
// are not decided by one child.

// Proof is what the solver proved of a root move, for the root's mover.
type Proof int8

const (
	// Unproven: the search does not know the move's result for certain
	// (or it ran without the solver).
	Unproven Proof = iota
	// ProvenWin: the move wins against any defence.
	ProvenWin
	// ProvenDraw: the move draws with best play by both.
	ProvenDraw
	// ProvenLoss: the move loses against best play.
	ProvenLoss
)

// String names the proof as analysis prints it.
func (p Proof) String() string {
	switch p {
	case ProvenWin:
		return "win"
	case ProvenDraw:
		return "draw"
	case ProvenLoss:
		return "loss"
	}
	return ""
}

// solvable reports whether the solver can prove results in root's game.
func solvable(root env.State) bool {
	if _, ok := root.(env.Scorer); ok {
		return false
	}
	_, ok := root.(env.ChanceState)
	return !ok
}

// provenValue is the result of a proven node whose winner is w, from
// player 0's point of view.
func provenValue(w env.Player) float64 {
	switch w {
	case 0:
		return 1
	case env.NoPlayer:
		return 0
	}
	return -1
}

// proofFor is what a proven node with winner w means for player p.
func proofFor(w, p env.Player) Proof {
	switch w {
	case p:
		return ProvenWin
	case env.NoPlayer:
		return ProvenDraw
	}
	return ProvenLoss
}

// maxOwnDecisions bounds how many decisions in a row of one player
// markDecisive follows: YINSH's longest, two rows removed with their
// rings after one move, is four after the move.
const maxOwnDecisions = 6

// markDecisive marks the children of node id, at position s, whose game
// is over (with its result) or won by s's mover alone.
func (t *Tree) markDecisive(id int32, s env.State) {
	n := t.nodes[id]
	child := t.ownState(0)
	for i := n.first; i < n.first+int32(n.children); i++ {
		child.CopyFrom(s)
		child.Apply(int(t.nodes[i].action))
		switch c := &t.nodes[i]; {
		case child.Terminal():
			c.status, c.player = terminal, child.Winner()
		case t.winsAlone(child, n.player, 1):
			c.status, c.player = terminal, n.player
		}
	}
}

// winsAlone reports whether p wins from s by decisions of p's own alone,
// before the opponent decides, looking at most maxOwnDecisions ahead;
// depth is how far s is already.
func (t *Tree) winsAlone(s env.State, p env.Player, depth int) bool {
	if s.Terminal() {
		return s.Winner() == p
	}
	if s.ToMove() != p || depth >= maxOwnDecisions {
		return false
	}
	next := t.ownState(depth)
	t.ownLegal[depth] = s.LegalActions(t.ownLegal[depth])
	for _, a := range t.ownLegal[depth] {
		next.CopyFrom(s)
		next.Apply(a)
		if t.winsAlone(next, p, depth+1) {
			return true
		}
	}
	return false
}

// ownState is the scratch position of look-ahead depth, made once.
func (t *Tree) ownState(depth int) env.State {
	for len(t.ownStates) <= depth {
		t.ownStates = append(t.ownStates, t.game.NewState())
		t.ownLegal = append(t.ownLegal, make([]int, 0, t.game.ActionSpace()))
	}
	return t.ownStates[depth]
}

// propagate proves what the node at the end of path, just found over,
// decides above it: each parent in turn while one is proven, up to the
// root's children.
func (t *Tree) propagate(path []int32) {
	for i := len(path) - 2; i >= 1; i-- {
		if !t.settle(path[i]) {
			return
		}
	}
}

// settle marks expanded node id proven when its children decide it, and
// reports whether it did.
func (t *Tree) settle(id int32) bool {
	n := &t.nodes[id]
	if n.status != expanded {
		return false
	}
	mover := n.player
	decided, draw := true, false
	for _, c := range t.nodes[n.first : n.first+int32(n.children)] {
		switch {
		case c.status != terminal:
			decided = false
		case c.player == mover:
			n.status = terminal // won: its player, the mover, is the winner
			return true
		case c.player == env.NoPlayer:
			draw = true
		}
	}
	if !decided {
		return false
	}
	n.status, n.player = terminal, mover.Other()
	if draw {
		n.player = env.NoPlayer
	}
	return true
}

// applyProofs makes Best a proven win when the root has one, and
// otherwise never a proven loss while another move is not one: the
// most visited of those (ties: the higher prior).
func (r *Result) applyProofs() {
	pick := func(keep func(Child) bool) bool {
		best := -1
		for i, c := range r.Children {
			if keep(c) && (best < 0 || c.Visits > r.Children[best].Visits ||
				c.Visits == r.Children[best].Visits && c.Prior > r.Children[best].Prior) {
				best = i
			}
		}
		if best >= 0 {
			r.Best = r.Children[best].Action
		}
		return best >= 0
	}
	if pick(func(c Child) bool { return c.Proof == ProvenWin }) {
		return
	}
	for _, c := range r.Children {
		if c.Action == r.Best && c.Proof != ProvenLoss {
			return
		}
	}
	pick(func(c Child) bool { return c.Proof != ProvenLoss })
}

// ActingOn is c with what does nothing in game g turned off: the solver
// where g has chance or scores, the exact endgame where its positions
// cannot solve one. Said in words (a web page, an export's line), it
// names only what acts.
func (c Config) ActingOn(g env.Game) Config {
	root := g.NewState()
	if !solvable(root) {
		c.Solver = false
	}
	if _, ok := root.(env.Endgame); !ok || !c.Solver {
		c.EndgameSolve = 0
	}
	return c
}
