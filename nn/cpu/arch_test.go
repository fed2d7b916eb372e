package cpu

import (
	"fmt"
	"github.com/flipzero/flipzero/nn"
	"math"
	"path/filepath"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/envtest"
	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/env/yinsh"
)

// archCase is a network architecture option on a game that has what it
// needs.
type archCase struct {
	name string
	game env.Game
	cfg  nn.Config
}

// archCases are global pooling, the convolutional policy head (with a
// pass scored from the whole board in Othello and YINSH, without one in
// tic-tac-toe), both, and all with the auxiliary heads.
func archCases() []archCase {
	small := func(g env.Game, blocks, filters, policy int) nn.Config {
		c := nn.DefaultConfig(g)
		c.Blocks, c.Filters, c.PolicyFilters = blocks, filters, policy
		return c
	}
	var out []archCase
	for _, g := range []struct {
		game            env.Game
		blocks, filters int
	}{{tictactoe.Game{}, 2, 8}, {othello.Othello(), 3, 16}, {yinsh.Full(), 2, 16}} {
		pool := small(g.game, g.blocks, g.filters, 2)
		pool.GlobalPooling = true
		conv := small(g.game, g.blocks, g.filters, 8)
		conv.PolicyHead = "conv"
		both := conv
		both.GlobalPooling = true
		all := both
		all.Ownership, all.Score = true, true
		for _, c := range []struct {
			name string
			cfg  nn.Config
		}{{"pooling", pool}, {"conv-policy", conv}, {"both", both}, {"all", all}} {
			out = append(out, archCase{g.game.Name() + "/" + c.name, g.game, c.cfg})
		}
	}
	return out
}

// TestArchitecturesMatchGorgonia: both ways of convolving give the
// Gorgonia graph's outputs for every architecture option.
func TestArchitecturesMatchGorgonia(t *testing.T) {
	for _, c := range archCases() {
		t.Run(c.name, func(t *testing.T) {
			net, err := nn.New(c.game, c.cfg, 3)
			if err != nil {
				t.Fatal(err)
			}
			perturbBatchNorm(net, 4)
			const count = 5
			inputs := encodeAll(envtest.RandomPositions(c.game, count, 8))
			wantLogits, wantWDL, err := GorgoniaForward(net, inputs, count)
			if err != nil {
				t.Fatal(err)
			}
			for _, path := range convPaths() {
				t.Run(path.name, func(t *testing.T) {
					path.skipUnlessRun(t)
					ev, err := newEvaluator(net.Fold(), count+2, path.arch, path.direct)
					if err != nil {
						t.Fatal(err)
					}
					// Twice: a second pass must not see the first's scratch.
					for pass := 0; pass < 2; pass++ {
						logits, wdl, err := ev.Forward(inputs, count)
						if err != nil {
							t.Fatal(err)
						}
						if d := maxAbsDiff(logits, wantLogits); d > 1e-4 || len(logits) != len(wantLogits) {
							t.Fatalf("%s, pass %d: policy logits differ by %g", path.name, pass, d)
						}
						if d := maxAbsDiff(wdl, wantWDL); d > 1e-4 {
							t.Fatalf("%s, pass %d: value probabilities differ by %g", path.name, pass, d)
						}
					}
				})
			}
			spread := 0.0
			for _, v := range wantLogits {
				spread = max(spread, math.Abs(float64(v)))
			}
			if spread < 1e-2 {
				t.Errorf("logits all near zero (max |logit| %g): the comparison proves little", spread)
			}
		})
	}
}

// TestArchitecturesFiniteDifference checks the training gradient of each
// architecture option against central differences, on tiny networks.
func TestArchitecturesFiniteDifference(t *testing.T) {
	for _, c := range archCases() {
		if c.game.Name() == "yinsh" {
			continue // othello's covers the same code, faster
		}
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			cfg.Blocks, cfg.Filters = 1, 6
			checkFiniteDifference(t, c.game, cfg, 8)
		})
	}
}

// TestArchitecturesRoundTrip: a checkpoint and an exported model of each
// architecture load back to the same outputs, and the sizes a header
// promises are the file's.
func TestArchitecturesRoundTrip(t *testing.T) {
	for _, c := range archCases() {
		t.Run(c.name, func(t *testing.T) {
			net, err := nn.New(c.game, c.cfg, 5)
			if err != nil {
				t.Fatal(err)
			}
			perturbBatchNorm(net, 6)
			tr, err := NewTrainer(net, nn.DefaultTrainConfig())
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			ckpt, model := filepath.Join(dir, "c.ckpt"), filepath.Join(dir, "m.fznet")
			if err := nn.SaveCheckpoint(ckpt, tr, nil); err != nil {
				t.Fatal(err)
			}
			if err := nn.SaveFolded(model, net.Fold(), 0, nil); err != nil {
				t.Fatal(err)
			}
			inputs := encodeAll(envtest.RandomPositions(c.game, 4, 2))
			want, _ := NewEvaluator(net.Fold(), 4)
			wl, ww, _ := want.Forward(inputs, 4)
			for _, path := range []string{ckpt, model} {
				loaded, err := nn.LoadCheckpoint(path, c.game)
				if err != nil {
					t.Fatalf("%s: %v", filepath.Base(path), err)
				}
				ev, _ := NewEvaluator(loaded.Network.Fold(), 4)
				gl, gw, _ := ev.Forward(inputs, 4)
				if d := max(maxAbsDiff(wl, gl), maxAbsDiff(ww, gw)); d > 1e-5 {
					t.Errorf("%s: outputs differ by %g after loading", filepath.Base(path), d)
				}
			}
		})
	}
}

// TestConvPolicyNeedsAMap: a game without policy planes refuses the
// convolutional head with one line naming it.
func TestConvPolicyNeedsAMap(t *testing.T) {
	cfg := tinyConfig
	cfg.PolicyHead = "conv"
	_, err := nn.New(fakeOthello, cfg, 1)
	if err == nil || err.Error() != fmt.Sprintf("network config: policy_head: conv: %s does not lay its actions out on its board", fakeOthello.Name()) {
		t.Errorf("error %v", err)
	}
	cfg.PolicyHead = "transformer"
	if _, err := nn.New(tictactoe.Game{}, cfg, 1); err == nil {
		t.Error("an unknown policy head was accepted")
	}
}
