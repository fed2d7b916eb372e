package nn

import (
	"errors"
	"fmt"
	"math"
)

// Weight averaging (KataGo's and lc0's SWA, as an exponential moving
// average): the network that plays is an average of the trained weights
// over the last few hundred steps rather than the newest weights. The
// average moves less from one step's noise than the weights do at a high
// learning rate, so it plays like a network trained at a lower rate while
// training goes on at the higher one.

// Clone is a copy of the network that shares no array with it.
func (n *Network) Clone() *Network {
	c, err := layout(n.game, n.cfg, false)
	if err != nil {
		// n was laid out from the same game and config.
		panic(fmt.Sprintf("nn: clone: %v", err))
	}
	c.copyFrom(n)
	return c
}

// MoveToward moves every weight and batch-norm statistic of n the share
// of the way from its value to src's: share 0 leaves n as it is, 1 makes
// it a copy of src. src must have n's game and architecture.
func (n *Network) MoveToward(src *Network, share float64) error {
	if !(share >= 0 && share <= 1) {
		return fmt.Errorf("average: share %v, want in [0, 1]", share)
	}
	if !n.sameLayout(src) {
		return fmt.Errorf("average: %s %v toward %s %v: %w", n.game.Name(), n.cfg, src.game.Name(), src.cfg, ErrWrongArch)
	}
	if share == 1 {
		// Exactly src: a + (v − a) can round away from v.
		n.copyFrom(src)
		return nil
	}
	from, s := src.arrays(), float32(share)
	for i, a := range n.arrays() {
		for j, v := range from[i] {
			a[j] += s * (v - a[j])
		}
	}
	return nil
}

// sameLayout says whether o has n's game and architecture, and so the
// same arrays in the same order.
func (n *Network) sameLayout(o *Network) bool {
	return n.game.Name() == o.game.Name() && n.cfg == o.cfg
}

// copyFrom copies src's arrays into n's, which has src's layout.
func (n *Network) copyFrom(src *Network) {
	from := src.arrays()
	for i, a := range n.arrays() {
		copy(a, from[i])
	}
}

// AverageShare is the share by which an exponential moving average with a
// half-life of halfLife training steps moves toward the trained weights
// after steps more steps, as if those steps had all ended at the newest
// weights (the average is updated once a generation, from the weights it
// ends with): 1 − 2^(−steps/halfLife).
func AverageShare(steps int, halfLife float64) (float64, error) {
	if steps < 0 || !(halfLife > 0) || math.IsInf(halfLife, 0) {
		return 0, errors.New("average: want steps ≥ 0 and a finite half-life > 0")
	}
	return 1 - math.Exp2(-float64(steps)/halfLife), nil
}
