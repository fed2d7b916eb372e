package cpu

import (
	"math"
	"testing"

	"github.com/flipzero/flipzero/env/envtest"
	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/nn"
)

// TestNeutralHeads: a network with neutral heads gives every action the
// same logit and win, draw and loss a third each on every position, where
// the same network drawn from its seed does not; and one training step
// moves both heads off neutral.
func TestNeutralHeads(t *testing.T) {
	g := tictactoe.Game{}
	for _, tc := range policyHeadCases() {
		t.Run(tc.name, func(t *testing.T) {
			states := envtest.RandomPositions(g, 16, 3)
			inputs := encodeAll(states)
			spread := func(net *nn.Network) (logit, wdl float64) {
				inf, err := Backend().NewInference(net.Fold(), len(states))
				if err != nil {
					t.Fatal(err)
				}
				logits, probs, err := inf.Forward(inputs, len(states))
				if err != nil {
					t.Fatal(err)
				}
				A := g.ActionSpace()
				for i := range states {
					row := logits[i*A : (i+1)*A]
					for _, l := range row {
						logit = max(logit, math.Abs(float64(l-row[0])))
					}
					for _, p := range probs[i*3 : i*3+3] {
						wdl = max(wdl, math.Abs(float64(p)-1.0/3))
					}
				}
				return logit, wdl
			}
			net, err := nn.New(g, tc.cfg, 7)
			if err != nil {
				t.Fatal(err)
			}
			if l, w := spread(net); l < 1e-3 || w < 1e-3 {
				t.Fatalf("drawn from its seed: logits spread %g, win/draw/loss off a third by %g: already neutral", l, w)
			}
			net.NeutralHeads()
			if l, w := spread(net); l > 1e-6 || w > 1e-6 {
				t.Fatalf("neutral heads: logits spread %g, win/draw/loss off a third by %g, want 0", l, w)
			}
			tr, err := Backend().NewTraining(nn.TrainingState{Network: net, Config: nn.DefaultTrainConfig()})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tr.Step(randomBatch(g, 16, 5)); err != nil {
				t.Fatal(err)
			}
			if err := tr.Sync(); err != nil {
				t.Fatal(err)
			}
			if l, w := spread(tr.Network()); l < 1e-6 || w < 1e-6 {
				t.Errorf("after a step: logits spread %g, win/draw/loss off a third by %g: a head did not learn", l, w)
			}
		})
	}
}

// policyHeadCases are the tiny network with each policy head: dense, and
// convolutional with global pooling.
func policyHeadCases() []struct {
	name string
	cfg  nn.Config
} {
	conv := tinyConfig
	conv.PolicyHead, conv.GlobalPooling = "conv", true
	return []struct {
		name string
		cfg  nn.Config
	}{{"dense", tinyConfig}, {"conv+pooling", conv}}
}
