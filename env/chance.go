package env

import (
	"fmt"
	"math/rand/v2"
)

// The contract for games with chance events and for one-player games
// follows OpenSpiel's model: a chance event is a state of its own, a
// chance node, whose legal actions are its outcomes; a one-player game's
// result is a score. Games that implement neither interface are the
// two-player, deterministic, win/loss/draw games the rest of this package
// describes, and every helper here treats them as before.

// Outcome is one outcome of a chance node and its probability.
type Outcome struct {
	Action int
	// Prob is float64 so that exact solvers and the tests comparing
	// against them do not accumulate float32 rounding over long chains of
	// chance events.
	Prob float64
}

// ChanceState is implemented by states of games with chance events. At a
// chance node nobody decides: LegalActions lists the outcomes that can
// happen, in increasing order, and Apply makes one of them happen. Their
// probabilities come from ChanceOutcomes. ToMove at a chance node is the
// player who decides next, which a search ignores.
type ChanceState interface {
	State
	// IsChance reports whether the state is a chance node. A terminal
	// state is not one.
	IsChance() bool
	// ChanceOutcomes appends the outcomes of a chance node, with positive
	// probabilities summing to 1, in increasing order of action, to
	// buf[:0] and returns the result. A buffer of ActionSpace() capacity
	// never grows. It returns buf[:0] at a decision node.
	ChanceOutcomes(buf []Outcome) []Outcome
}

// IsChance reports whether s is a chance node.
func IsChance(s State) bool {
	c, ok := s.(ChanceState)
	return ok && c.IsChance()
}

// Endgame is implemented by states of two-player games that can be
// solved exactly near their end. Solved reports the winner under perfect
// play by both sides (NoPlayer: a draw) when the position is within limit
// of the end by the game's own measure (Othello: empty squares), and ok
// false, at no cost, when it is not.
type Endgame interface {
	Solved(limit int) (winner Player, ok bool)
}

// Scorer is implemented by states of one-player games, whose result is a
// score rather than a winner. Score and MaxScore are in the game's own
// units (tokens captured, points); the helpers here turn them into the
// contract's value range.
type Scorer interface {
	// Score is the result so far; at a terminal state, the final result.
	Score() float64
	// MaxScore is the best result the game allows, > 0.
	MaxScore() float64
}

// Solo is implemented by games with a single player, player 0, who makes
// every decision.
type Solo interface {
	Solo() bool
}

// Players is the number of players of g: 1 for a Solo game, otherwise 2.
func Players(g Game) int {
	if s, ok := g.(Solo); ok && s.Solo() {
		return 1
	}
	return 2
}

// NormalizedScore maps a score in [0, max] to the value range [-1, 1]:
// 0 is -1 and max is 1. The search, the network's value head and the
// training targets see a one-player game's result only in this form.
func NormalizedScore(score, best float64) float32 {
	if !(best > 0) {
		return 0
	}
	return float32(min(1, max(2*score/best-1, -1)))
}

// Random draws actions for random play without allocating: at a chance
// node an outcome by its probability, elsewhere a legal action uniformly.
// One Random is used by one goroutine at a time.
type Random struct {
	rng      *rand.Rand
	legal    []int
	outcomes []Outcome
}

// NewRandom returns a Random for states of g that draws from rng.
func NewRandom(g Game, rng *rand.Rand) *Random {
	return &Random{
		rng:      rng,
		legal:    make([]int, 0, g.ActionSpace()),
		outcomes: make([]Outcome, 0, g.ActionSpace()),
	}
}

// Action returns a random action of s, which must not be terminal. For a
// deterministic game it draws exactly as legal[rng.IntN(len(legal))], so
// random games of those games are the same as before chance existed.
func (r *Random) Action(s State) int {
	if c, ok := s.(ChanceState); ok && c.IsChance() {
		r.outcomes = c.ChanceOutcomes(r.outcomes)
		return SampleOutcome(r.outcomes, r.rng.Float64())
	}
	r.legal = s.LegalActions(r.legal)
	return r.legal[r.rng.IntN(len(r.legal))]
}

// SampleOutcome picks the outcome that u, uniform in [0, 1), falls on
// when the outcomes' probabilities are laid end to end. Rounding that
// leaves u past the last one picks the last.
func SampleOutcome(outcomes []Outcome, u float64) int {
	for _, o := range outcomes {
		u -= o.Prob
		if u < 0 {
			return o.Action
		}
	}
	return outcomes[len(outcomes)-1].Action
}

// CheckOutcomes reports whether outcomes are a valid distribution over
// distinct actions in increasing order, as ChanceOutcomes promises.
func CheckOutcomes(outcomes []Outcome) error {
	if len(outcomes) == 0 {
		return fmt.Errorf("a chance node without outcomes")
	}
	sum := 0.0
	for i, o := range outcomes {
		if !(o.Prob > 0) || o.Prob > 1 {
			return fmt.Errorf("outcome %d has probability %v", o.Action, o.Prob)
		}
		if i > 0 && o.Action <= outcomes[i-1].Action {
			return fmt.Errorf("outcomes not in increasing order of action: %d after %d", o.Action, outcomes[i-1].Action)
		}
		sum += o.Prob
	}
	if sum < 1-1e-9 || sum > 1+1e-9 {
		return fmt.Errorf("outcome probabilities sum to %v, not 1", sum)
	}
	return nil
}

// Dealer is implemented by games whose chance outcomes can all be fixed
// before the game begins, as shuffling cards or face-down tokens fixes
// them. Players who play the same deal meet the same luck, so a
// comparison of one-player games on shared deals measures skill alone.
type Dealer interface {
	// Deal fixes every chance outcome of one game from seed: the same
	// seed, the same deal.
	Deal(seed uint64) Deal
}

// Deal answers the chance nodes of one game with the outcomes it fixed.
// The states a player sees never hold the deal, so a search cannot peek
// at what is still hidden. A Deal is used by one goroutine at a time.
type Deal interface {
	// Outcome is the outcome dealt at chance node s; false when s is not
	// a chance node or could not arise from the deal.
	Outcome(s State) (int, bool)
}

// NewDeal is the deal of seed for a game of g: the game's own when it is
// a Dealer; otherwise outcomes drawn by their probabilities from a
// generator seeded by seed, which gives two players the same outcomes
// only while they meet the same chance nodes in the same order.
func NewDeal(g Game, seed uint64) Deal {
	if d, ok := g.(Dealer); ok {
		return d.Deal(seed)
	}
	return &drawnDeal{rng: rand.New(rand.NewPCG(seed, 0xdea1)), outcomes: make([]Outcome, 0, g.ActionSpace())}
}

type drawnDeal struct {
	rng      *rand.Rand
	outcomes []Outcome
}

func (d *drawnDeal) Outcome(s State) (int, bool) {
	c, ok := s.(ChanceState)
	if !ok || !c.IsChance() {
		return 0, false
	}
	d.outcomes = c.ChanceOutcomes(d.outcomes)
	if len(d.outcomes) == 0 {
		return 0, false
	}
	return SampleOutcome(d.outcomes, d.rng.Float64()), true
}
