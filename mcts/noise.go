package mcts

import (
	"math"
	"math/rand/v2"
)

// SetNoise turns Dirichlet noise in the root prior on for the searches of
// the current root, drawn from rng, or off again with nil. Full searches,
// whose visits become training targets, get noise; fast ones do not.
// Advance and Reset turn it off. A Gumbel tree draws Gumbel noise from rng
// instead, anew at each search.
func (t *Tree) SetNoise(rng *rand.Rand) {
	t.noiseRNG = rng
	if rng == nil {
		t.restorePriors()
		return
	}
	if t.nodes[0].status == expanded {
		t.applyNoise()
	}
}

// SetNoiseScale scales a Gumbel root's noise from the next search on:
// the move it proposes is then the argmax of logit + σ(q̂) + scale·g, a
// sample at temperature scale of what sequential halving prefers, and
// scale 0 is no noise at all. Default 1, the paper's. PUCT's Dirichlet
// noise does not use it.
func (t *Tree) SetNoiseScale(scale float64) { t.noiseScale = scale }

// applyNoise mixes a Dirichlet sample into the expanded root's prior, once
// per root: P ← (1−w)·P + w·η, η ~ Dir(alpha) with alpha =
// DirichletAlphaTotal / number of legal actions.
func (t *Tree) applyNoise() {
	// A Gumbel search draws its own noise (gumbel.go).
	if t.noised || t.cfg.DirichletWeight == 0 || t.gumbel != nil {
		return
	}
	r := t.nodes[0]
	kids := t.nodes[r.first : r.first+int32(r.children)]
	t.cleanPriors = t.cleanPriors[:0]
	for i := range kids {
		t.cleanPriors = append(t.cleanPriors, kids[i].prior)
	}
	t.noise = dirichlet(t.noiseRNG, t.cfg.DirichletAlphaTotal/float64(len(kids)), t.noise[:0], len(kids))
	w := t.cfg.DirichletWeight
	for i := range kids {
		kids[i].prior = float32((1-w)*float64(kids[i].prior) + w*t.noise[i])
	}
	t.noised = true
}

// restorePriors takes the noise out of the root prior.
func (t *Tree) restorePriors() {
	if !t.noised {
		return
	}
	r := t.nodes[0]
	kids := t.nodes[r.first : r.first+int32(r.children)]
	for i := range kids {
		kids[i].prior = t.cleanPriors[i]
	}
	t.noised = false
}

// clearNoise forgets the noise of a root that is no longer the root.
func (t *Tree) clearNoise() {
	t.noiseRNG = nil
	t.noised = false
	if t.gumbel != nil {
		t.gumbel.forgetRoot()
	}
}

// dirichlet appends to dst a sample of n components from the symmetric
// Dirichlet distribution with concentration alpha: normalized Gamma(alpha)
// draws.
func dirichlet(rng *rand.Rand, alpha float64, dst []float64, n int) []float64 {
	sum := 0.0
	for i := 0; i < n; i++ {
		g := gamma(rng, alpha)
		dst = append(dst, g)
		sum += g
	}
	if !(sum > 0) {
		// Every draw underflowed (tiny alpha): the limit is all mass on
		// one component.
		for i := range dst {
			dst[i] = 0
		}
		dst[rng.IntN(n)] = 1
		return dst
	}
	for i := range dst {
		dst[i] /= sum
	}
	return dst
}

// gamma draws from Gamma(alpha, 1) by Marsaglia and Tsang's method, with
// the usual boost U^(1/alpha) for alpha < 1.
func gamma(rng *rand.Rand, alpha float64) float64 {
	if alpha < 1 {
		return gamma(rng, alpha+1) * math.Pow(rng.Float64(), 1/alpha)
	}
	d := alpha - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}
