package records

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/flipzero/flipzero/data"
	"github.com/flipzero/flipzero/env"
)

// Positions draws training samples from games: each one of their
// decisions, the position encoded from the mover's view, the move played
// as the policy target (smoothed), the game's result for the mover as the
// value target, and where the record reaches the end, the final board's
// ownership and margin. A sample is made when it is drawn, by replaying
// its game from the start, so that a set of a hundred thousand games
// costs its moves in memory rather than its encoded positions (a
// kilobyte each in Othello, six in YINSH); the replay costs microseconds
// beside a training step's milliseconds.
//
// Only games with a result give samples: the value has nothing to learn
// from the others. One Positions is used by one goroutine at a time.
type Positions struct {
	game  env.Game
	games []Game
	// ends[i] is the number of samples in games[:i+1].
	ends []int
	// smoothing is the policy target's share of the moves not played.
	smoothing float32
	start     env.State
	state     env.State
	legal     []int
	sample    data.Sample
}

// NewPositions prepares sampling of the decisions of the games that have
// a result, with the policy target smoothed: 1 − smoothing on the move
// played and smoothing shared by the other legal moves (label smoothing:
// a person's move is one good move, not the only one, and a network
// trained to give it all the probability grows overconfident).
func NewPositions(g env.Game, games []Game, smoothing float64) (*Positions, error) {
	if !(smoothing >= 0 && smoothing < 1) {
		return nil, fmt.Errorf("policy smoothing %v, want in [0, 1)", smoothing)
	}
	p := &Positions{game: g, smoothing: float32(smoothing), start: g.NewState(), state: g.NewState(),
		legal: make([]int, 0, g.ActionSpace())}
	total := 0
	for i := range games {
		if games[i].hasResult && len(games[i].plies) > 0 {
			p.games = append(p.games, games[i])
			total += len(games[i].plies)
			p.ends = append(p.ends, total)
		}
	}
	if total == 0 {
		return nil, errors.New("no positions to learn from: no game with a result and a decision")
	}
	planes, h, w := g.EncodedShape()
	p.sample.Planes = make([]float32, planes*h*w)
	p.sample.Legal = make([]int32, 0, g.ActionSpace())
	p.sample.Policy = make([]float32, 0, g.ActionSpace())
	p.sample.Ownership = make([]int8, 0, h*w)
	return p, nil
}

// Len is the number of samples.
func (p *Positions) Len() int { return p.ends[len(p.ends)-1] }

// Sample is a sample drawn uniformly, valid until the next call (the
// loop's batches copy it at once).
func (p *Positions) Sample(rng *rand.Rand) *data.Sample { return p.At(rng.IntN(p.Len())) }

// At is sample i (0 ≤ i < Len), valid until the next call.
func (p *Positions) At(i int) *data.Sample {
	gi := sort.SearchInts(p.ends, i+1)
	first := 0
	if gi > 0 {
		first = p.ends[gi-1]
	}
	game := &p.games[gi]
	ply := int(game.plies[i-first])
	p.state.CopyFrom(p.start)
	for _, a := range game.actions[:ply] {
		p.state.Apply(int(a))
	}
	s := &p.sample
	p.state.Encode(s.Planes)
	played := int(game.actions[ply])
	p.legal = p.state.LegalActions(p.legal)
	other := float32(0)
	if len(p.legal) > 1 {
		other = p.smoothing / float32(len(p.legal)-1)
	}
	s.Legal, s.Policy = s.Legal[:0], s.Policy[:0]
	for _, a := range p.legal {
		s.Legal = append(s.Legal, int32(a))
		if a == played {
			s.Policy = append(s.Policy, 1-p.smoothing)
		} else {
			s.Policy = append(s.Policy, other)
		}
	}
	mover := p.state.ToMove()
	s.Outcome = game.result[mover]
	s.Weight = 1
	s.Ownership, s.Margin = s.Ownership[:0], 0
	if game.owned != nil {
		sign := int8(1)
		if mover != 0 {
			sign = -1
		}
		for _, o := range game.owned {
			s.Ownership = append(s.Ownership, sign*o)
		}
		s.Margin = game.margin[mover]
	}
	return s
}
