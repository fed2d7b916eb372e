package solitaire

import (
	"math/bits"
	"math/rand/v2"

	"github.com/flipzero/flipzero/env"
)

// Deal fixes which face lies under every token, as shuffling the
// cardboard tokens does before a real game. Answering every chance node
// from one Deal gives the same distribution as drawing each face when it
// turns up, and lets several players, or the same player twice, play the
// same deal: a one-player arena's comparisons then differ by skill, not by
// luck.
type Deal struct {
	kind [64]uint8
}

// NewDeal shuffles the faces of g's token set over its token squares.
func NewDeal(g Game, rng *rand.Rand) Deal {
	var pool []uint8
	start := &g.r.start
	for k := range g.r.kinds {
		for i := 0; i < int(start.hidden[k]); i++ {
			pool = append(pool, uint8(k))
		}
	}
	rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	var d Deal
	i := 0
	for b := start.tokens; b != 0; b &= b - 1 {
		d.kind[bits.TrailingZeros64(b)] = pool[i]
		i++
	}
	return d
}

// Deal is the game's env.Dealer: NewDeal from a generator seeded by seed.
func (g Game) Deal(seed uint64) env.Deal {
	d := NewDeal(g, rand.New(rand.NewPCG(seed, 0x5eed)))
	return &d
}

// Outcome is the reveal action at chance node s: the face dealt to the
// token turning up. It is false when s is not a chance node of the
// solitaire or the face is no longer face down there, as when s was
// reached by reveals from another deal.
func (d *Deal) Outcome(state env.State) (int, bool) {
	s, ok := state.(*State)
	if !ok || s.pending == 0 {
		return 0, false
	}
	k := d.kind[bits.TrailingZeros64(s.pending)]
	if s.hidden[k] == 0 {
		return 0, false
	}
	return Reveal + int(k), true
}
