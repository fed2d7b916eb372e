package nn_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/nntest"
)

// TestDescribeCoversEveryArray: the description of each architecture
// option names every learnable and statistic exactly once, with the
// shapes the arrays have, and its layers fit together.
func TestDescribeCoversEveryArray(t *testing.T) {
	for _, c := range nntest.Cases(false) {
		t.Run(c.Name, func(t *testing.T) {
			net, err := nn.New(c.Game, c.Config, 1)
			if err != nil {
				t.Fatal(err)
			}
			d := net.Describe()
			learn, stats := net.Learnables(), net.Statistics()
			seenL, seenS := make([]int, len(learn)), make([]int, len(stats))
			check := func(what string, i int, shape ...int) {
				t.Helper()
				if i < 0 || i >= len(learn) {
					t.Fatalf("%s: learnable %d of %d", what, i, len(learn))
				}
				seenL[i]++
				if !slices.Equal(learn[i].Shape, shape) {
					t.Errorf("%s: %s has shape %v, the description says %v", what, learn[i].Name, learn[i].Shape, shape)
				}
			}
			for _, cv := range d.Convs() {
				check(cv.Name+" weights", cv.W, cv.Out, cv.In, cv.Kernel, cv.Kernel)
				check(cv.Name+" gamma", cv.Gamma, 1, cv.Out, 1, 1)
				check(cv.Name+" beta", cv.Beta, 1, cv.Out, 1, 1)
				for _, s := range []int{cv.Mean, cv.Variance} {
					seenS[s]++
					if len(stats[s].Data) != cv.Out {
						t.Errorf("%s: statistic %s has %d values, want %d", cv.Name, stats[s].Name, len(stats[s].Data), cv.Out)
					}
				}
			}
			for _, l := range d.Dense() {
				check(l.Name+" weights", l.W, l.In, l.Out)
				check(l.Name+" bias", l.B, 1, l.Out)
			}
			for i, n := range seenL {
				if n != 1 {
					t.Errorf("learnable %s described %d times", learn[i].Name, n)
				}
			}
			for i, n := range seenS {
				if n != 1 {
					t.Errorf("statistic %s described %d times", stats[i].Name, n)
				}
			}
			if err := fits(d); err != nil {
				t.Error(err)
			}
		})
	}
}

// fits checks that each layer's input is its producer's output.
func fits(d nn.Description) error {
	cells, f := d.Cells(), d.Stem.Out
	if d.Stem.In != d.Planes {
		return fmt.Errorf("stem reads %d planes of %d", d.Stem.In, d.Planes)
	}
	for i, b := range d.Blocks {
		if b.A.In != f || b.B.In != b.A.Out || b.B.Out != f {
			return fmt.Errorf("block %d: %d→%d→%d in a tower of %d", i, b.A.In, b.A.Out, b.B.Out, f)
		}
		if b.Pool != nil && (b.Pool.In != 2*b.A.Out || b.Pool.Out != b.A.Out) {
			return fmt.Errorf("block %d pools %d→%d", i, b.Pool.In, b.Pool.Out)
		}
	}
	switch {
	case !d.PolicyConv.ReLU || !d.ValueConv.ReLU:
		return fmt.Errorf("heads' convolutions without ReLU")
	case (d.PolicyFC == nil) == (d.PolicyOut == nil):
		return fmt.Errorf("policy head: dense %v, convolutional %v", d.PolicyFC != nil, d.PolicyOut != nil)
	case d.PolicyFC != nil && (d.PolicyFC.In != d.PolicyConv.Out*cells || d.PolicyFC.Out != d.Actions):
		return fmt.Errorf("policy fc %d→%d", d.PolicyFC.In, d.PolicyFC.Out)
	case d.PolicyOut != nil && (d.PolicyOut.In != d.PolicyConv.Out || d.PolicyOut.ReLU || len(d.PolicyIndex) != d.Actions):
		return fmt.Errorf("policy out %d→%d, %d indices", d.PolicyOut.In, d.PolicyOut.Out, len(d.PolicyIndex))
	case d.PolicyGlobal != nil && d.PolicyGlobal.In != 2*d.PolicyConv.Out:
		return fmt.Errorf("policy global reads %d", d.PolicyGlobal.In)
	case d.ValueFC1.In != d.ValueConv.Out*cells || d.ValueFC2.In != d.ValueFC1.Out || d.ValueFC2.Out != d.ValueOutputs:
		return fmt.Errorf("value head %d→%d→%d", d.ValueFC1.In, d.ValueFC2.In, d.ValueFC2.Out)
	case d.Ownership != nil && (d.Ownership.In != f || d.Ownership.Out != 1 || d.Ownership.ReLU):
		return fmt.Errorf("ownership %d→%d", d.Ownership.In, d.Ownership.Out)
	case d.Score != nil && (d.Score.In != d.ValueFC1.Out || d.Score.Out != 1):
		return fmt.Errorf("score %d→%d", d.Score.In, d.Score.Out)
	case d.SoftPolicy() && !sameLayer(d.SoftPolicyFC, d.PolicyFC):
		return fmt.Errorf("soft policy fc %v beside policy fc %v", d.SoftPolicyFC, d.PolicyFC)
	case d.SoftPolicy() && !sameLayer(d.SoftPolicyGlobal, d.PolicyGlobal):
		return fmt.Errorf("soft policy global %v beside policy global %v", d.SoftPolicyGlobal, d.PolicyGlobal)
	case d.SoftPolicy() && (d.SoftPolicyOut == nil) != (d.PolicyOut == nil):
		return fmt.Errorf("soft policy out %v beside policy out %v", d.SoftPolicyOut, d.PolicyOut)
	case d.SoftPolicyOut != nil && (d.SoftPolicyOut.In != d.PolicyOut.In || d.SoftPolicyOut.Out != d.PolicyOut.Out || d.SoftPolicyOut.ReLU):
		return fmt.Errorf("soft policy out %d→%d", d.SoftPolicyOut.In, d.SoftPolicyOut.Out)
	}
	if d.PolicyOut != nil {
		spatial, global := d.PolicyOut.Out*cells, 0
		if d.PolicyGlobal != nil {
			global = d.PolicyGlobal.Out
		}
		for a, i := range d.PolicyIndex {
			if i < 0 || int(i) >= spatial+global {
				return fmt.Errorf("action %d reads logit %d of %d", a, i, spatial+global)
			}
		}
	}
	return nil
}

// sameLayer says whether two optional dense layers are both absent or of
// the same size: the soft policy head's and the policy head's.
func sameLayer(a, b *nn.DenseDesc) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.In == b.In && a.Out == b.Out
}
