package cpu

import (
	"math"
	"testing"

	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/nn"
)

// TestSoftPolicyHead, beside the dense and the convolutional policy head
// (with Othello's pass from the pooled board):
//   - a network with the head has the arrays of one without it, in the
//     same order, and the head's after them (checkpoints stay readable);
//   - with its last layer zero its loss is the cross-entropy of the soft
//     target against a uniform policy over the legal actions, log of
//     their number, whatever the targets;
//   - at weight 0 it changes nothing else of a step, and at its default
//     weight it teaches the tower.
func TestSoftPolicyHead(t *testing.T) {
	g := othello.Othello()
	for _, tc := range policyHeadCases() {
		t.Run(tc.name, func(t *testing.T) {
			soft := tc.cfg
			soft.SoftPolicy = true
			batch := randomBatch(g, 12, 3)
			// step trains a copy of base (with or without the head) one
			// step at the soft policy weight w.
			base, err := nn.New(g, tc.cfg, 5)
			if err != nil {
				t.Fatal(err)
			}
			step := func(cfg nn.Config, w float64, neutral bool) (*nn.Network, nn.Losses) {
				t.Helper()
				net, err := nn.New(g, cfg, 9)
				if err != nil {
					t.Fatal(err)
				}
				copyShared(t, net, base)
				if neutral {
					net.NeutralHeads()
				}
				train := nn.DefaultTrainConfig()
				train.SoftPolicyWeight = w
				tr, err := Backend().NewTraining(nn.TrainingState{Network: net, Config: train})
				if err != nil {
					t.Fatal(err)
				}
				losses, err := tr.Step(batch)
				if err != nil {
					t.Fatal(err)
				}
				if err := tr.Sync(); err != nil {
					t.Fatal(err)
				}
				return tr.Network(), losses
			}

			_, l := step(soft, 8, true)
			want, weights := 0.0, 0.0
			A := g.ActionSpace()
			for i := range batch.Weights {
				legal := 0.0
				for _, m := range batch.Legal[i*A : (i+1)*A] {
					legal += float64(m)
				}
				want += float64(batch.Weights[i]) * math.Log(legal)
				weights += float64(batch.Weights[i])
			}
			want /= weights
			if math.Abs(l.SoftPolicy-want) > 1e-4*want {
				t.Errorf("soft policy loss from a zero head %g, want log(legal actions) %g", l.SoftPolicy, want)
			}
			if d := l.Total - (l.Policy + l.Value + 8*l.SoftPolicy + l.L2); math.Abs(d) > 1e-6*l.Total {
				t.Errorf("total %g counts the soft policy loss %g times 8 off by %g", l.Total, l.SoftPolicy, d)
			}

			without, lw := step(tc.cfg, 8, false)
			if lw.SoftPolicy != 0 {
				t.Errorf("soft policy loss %g without the head", lw.SoftPolicy)
			}
			idle, _ := step(soft, 0, false)
			taught, _ := step(soft, 8, false)
			shared := len(without.Learnables())
			if d := maxDiff(idle.Learnables()[:shared], without.Learnables()); d > 1e-6 {
				t.Errorf("at weight 0 the head moved the other weights by %g", d)
			}
			if d := maxDiff(taught.Learnables()[:shared], without.Learnables()); d < 1e-6 {
				t.Errorf("at weight 8 the head moved the other weights by %g: it teaches the tower nothing", d)
			}
		})
	}
}

// copyShared copies into net the arrays it shares with base, checking
// that they come first in net and in base's order, with base's names.
func copyShared(t *testing.T, net, base *nn.Network) {
	t.Helper()
	for _, pair := range [][2][]nn.Tensor{{net.Learnables(), base.Learnables()}, {net.Statistics(), base.Statistics()}} {
		dst, src := pair[0], pair[1]
		if len(dst) < len(src) {
			t.Fatalf("%d arrays, fewer than the %d of the network without the head", len(dst), len(src))
		}
		for i, s := range src {
			if dst[i].Name != s.Name || len(dst[i].Data) != len(s.Data) {
				t.Fatalf("array %d is %s (%d values), want %s (%d)", i, dst[i].Name, len(dst[i].Data), s.Name, len(s.Data))
			}
			copy(dst[i].Data, s.Data)
		}
	}
}

// maxDiff is the largest difference between two lists of arrays.
func maxDiff(a, b []nn.Tensor) float64 {
	d := 0.0
	for i := range a {
		for j, v := range a[i].Data {
			d = max(d, math.Abs(float64(v-b[i].Data[j])))
		}
	}
	return d
}
