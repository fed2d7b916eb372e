// Package data holds training samples: what self-play records for each
// searched position, the shard files that keep them on disk (versioned,
// compressed, checksummed, written atomically), the replay window over the
// newest samples, and augmentation by the game's symmetries.
package data

import (
	"fmt"

	"github.com/flipzero/flipzero/env"
)

// Sample is one training position.
type Sample struct {
	// Planes is the position encoded from the mover's point of view
	// (env.State.Encode).
	Planes []float32
	// Legal lists the legal actions in increasing order; Policy holds the
	// search's visit distribution over them, in the same order.
	Legal  []int32
	Policy []float32
	// Outcome is the value target: the game's final result for the
	// mover (mixed with the search's value where selfplay's
	// search_value_weight says), in [-1, 1]: 1 win,
	// 0 draw, -1 loss in a two-player game; a one-player game's final
	// score normalised as env.Value gives it (2·score/max − 1), the same
	// range and the same number the search backs up from the game's end,
	// so that the value head learns what the search expects of it.
	Outcome float32
	// Weight scales the sample's loss (1 for an ordinary sample; at most
	// MaxWeight).
	Weight float32
	// Ownership and Margin are the auxiliary targets from the end of the
	// game, from the mover's point of view (env.Ownership): one value of
	// −1, 0 or 1 for each cell of the encoding's grid, and the final
	// score margin in [−1, 1]. Ownership is empty, and Margin 0, where the
	// game does not say (a resigned game never reached its end).
	Ownership []int8
	Margin    float32
}

// MaxWeight is the most a sample from another machine may weigh, and
// what self-play gives one at most: a weight counts ordinary samples, and
// one worth more than a hundred of them is a fault or a message trying
// to steer the training.
const MaxWeight = 100

// HasOwnership says whether the sample has the auxiliary targets.
func (s *Sample) HasOwnership() bool { return len(s.Ownership) > 0 }

// Validate checks a sample against the game's shapes.
func (s *Sample) Validate(g env.Game) error {
	planes, h, w := g.EncodedShape()
	if len(s.Planes) != planes*h*w {
		return fmt.Errorf("sample has %d plane values, want %d", len(s.Planes), planes*h*w)
	}
	if len(s.Legal) == 0 || len(s.Legal) != len(s.Policy) {
		return fmt.Errorf("sample has %d legal actions and %d policy entries", len(s.Legal), len(s.Policy))
	}
	prev := int32(-1)
	for _, a := range s.Legal {
		if a <= prev || int(a) >= g.ActionSpace() {
			return fmt.Errorf("sample's legal actions out of order or range at %d", a)
		}
		prev = a
	}
	// Written so that NaN fails too: shards come from other machines.
	if !(s.Outcome >= -1 && s.Outcome <= 1) {
		return fmt.Errorf("sample outcome %v is not a number in [-1, 1]", s.Outcome)
	}
	if !(s.Weight >= 0) {
		return fmt.Errorf("sample weight %v is not a non-negative number", s.Weight)
	}
	if len(s.Ownership) == 0 {
		if s.Margin != 0 {
			return fmt.Errorf("sample has a score margin (%v) without ownership", s.Margin)
		}
		return nil
	}
	if len(s.Ownership) != h*w {
		return fmt.Errorf("sample has %d ownership values, want %d", len(s.Ownership), h*w)
	}
	for c, o := range s.Ownership {
		if o < -1 || o > 1 {
			return fmt.Errorf("sample's ownership of cell %d is %d, want -1, 0 or 1", c, o)
		}
	}
	if !(s.Margin >= -1 && s.Margin <= 1) {
		return fmt.Errorf("sample's score margin %v is not a number in [-1, 1]", s.Margin)
	}
	return nil
}

// Augmenter applies the game's symmetries to samples.
type Augmenter struct {
	syms      []env.Symmetry
	planeSize int
	order     []int // scratch for sorting transformed actions
}

// NewAugmenter prepares augmentation for g.
func NewAugmenter(g env.Game) *Augmenter {
	_, h, w := g.EncodedShape()
	return &Augmenter{syms: g.Symmetries(), planeSize: h * w}
}

// Symmetries is how many symmetries there are to choose from.
func (a *Augmenter) Symmetries() int { return len(a.syms) }

// Transform writes into dst sample src under symmetry k, reusing dst's
// slices. Legal actions stay sorted, and each keeps its policy value.
func (a *Augmenter) Transform(dst, src *Sample, k int) {
	sym := a.syms[k]
	dst.Planes = resize(dst.Planes, len(src.Planes))
	sym.TransformEncoding(dst.Planes, src.Planes, a.planeSize)
	n := len(src.Legal)
	dst.Legal = resizeInt32(dst.Legal, n)
	dst.Policy = resize(dst.Policy, n)
	a.order = a.order[:0]
	for i := range src.Legal {
		a.order = append(a.order, i)
	}
	// Insertion sort by transformed action: lists are short and mostly
	// ordered already, and this allocates nothing.
	for i := 1; i < n; i++ {
		for j := i; j > 0 && sym.Action[src.Legal[a.order[j]]] < sym.Action[src.Legal[a.order[j-1]]]; j-- {
			a.order[j], a.order[j-1] = a.order[j-1], a.order[j]
		}
	}
	for i, from := range a.order {
		dst.Legal[i] = int32(sym.Action[src.Legal[from]])
		dst.Policy[i] = src.Policy[from]
	}
	dst.Outcome = src.Outcome
	dst.Weight = src.Weight
	dst.Ownership = dst.Ownership[:0]
	if src.HasOwnership() {
		dst.Ownership = resizeInt8(dst.Ownership, len(src.Ownership))
		for c, to := range sym.Cell {
			dst.Ownership[to] = src.Ownership[c]
		}
	}
	dst.Margin = src.Margin
}

func resize(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

func resizeInt8(s []int8, n int) []int8 {
	if cap(s) < n {
		return make([]int8, n)
	}
	return s[:n]
}

func resizeInt32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}
