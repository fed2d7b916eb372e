package cpu

import (
	"github.com/flipzero/flipzero/nn"
	"math"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/envtest"
	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/env/tictactoe"
)

// layersForward computes the network from nn.Layers alone, in plain NCHW
// loops as the comment at the top of layers.go defines it: what another
// backend or an export format must reproduce.
func layersForward(l nn.Layers, input []float32) (logits, wdl []float32) {
	h, w := l.Height, l.Width
	conv := func(c nn.ConvLayer, x []float32, relu bool) []float32 {
		out := make([]float32, c.Out*h*w)
		pad := c.Kernel / 2
		for o := 0; o < c.Out; o++ {
			for y := 0; y < h; y++ {
				for xx := 0; xx < w; xx++ {
					sum := float64(c.Bias[o])
					for i := 0; i < c.In; i++ {
						for ky := 0; ky < c.Kernel; ky++ {
							for kx := 0; kx < c.Kernel; kx++ {
								sy, sx := y+ky-pad, xx+kx-pad
								if sy >= 0 && sy < h && sx >= 0 && sx < w {
									sum += float64(c.Weights[((o*c.In+i)*c.Kernel+ky)*c.Kernel+kx]) * float64(x[(i*h+sy)*w+sx])
								}
							}
						}
					}
					if relu {
						sum = math.Max(sum, 0)
					}
					out[(o*h+y)*w+xx] = float32(sum)
				}
			}
		}
		return out
	}
	dense := func(d nn.DenseLayer, x []float32) []float32 {
		out := make([]float32, d.Out)
		for o := range out {
			sum := float64(d.Bias[o])
			for i := 0; i < d.In; i++ {
				sum += float64(x[i]) * float64(d.Weights[i*d.Out+o])
			}
			out[o] = float32(sum)
		}
		return out
	}
	x := conv(l.Stem, input, true)
	for _, b := range l.Blocks {
		y := conv(b[1], conv(b[0], x, true), false)
		for i := range y {
			y[i] = max(y[i]+x[i], 0)
		}
		x = y
	}
	logits = dense(l.PolicyFC, conv(l.PolicyConv, x, true))
	hidden := dense(l.ValueFC1, conv(l.ValueConv, x, true))
	for i := range hidden {
		hidden[i] = max(hidden[i], 0)
	}
	wdl = dense(l.ValueFC2, hidden)
	softmaxInPlace(wdl)
	return logits, wdl
}

func TestLayersDescribeTheForwardPass(t *testing.T) {
	for _, g := range []env.Game{tictactoe.Game{}, othello.Othello()} {
		net, err := nn.New(g, nn.Config{Blocks: 2, Filters: 8, PolicyFilters: 2, ValueFilters: 1, ValueHidden: 8}, 11)
		if err != nil {
			t.Fatal(err)
		}
		perturbBatchNorm(net, 3)
		states := envtest.RandomPositions(g, 6, 5)
		inputs := encodeAll(states)
		ev, err := NewEvaluator(net.Fold(), len(states))
		if err != nil {
			t.Fatal(err)
		}
		logits, wdl, err := ev.Forward(inputs, len(states))
		if err != nil {
			t.Fatal(err)
		}
		l := net.Fold().Layers()
		if l.Game != g.Name() || l.Actions != g.ActionSpace() || len(l.Blocks) != 2 {
			t.Fatalf("%s: layers describe %s with %d actions and %d blocks", g.Name(), l.Game, l.Actions, len(l.Blocks))
		}
		size := l.Planes * l.Height * l.Width
		for i := range states {
			wantLogits, wantWDL := layersForward(l, inputs[i*size:(i+1)*size])
			for a, v := range wantLogits {
				if d := math.Abs(float64(v - logits[i*l.Actions+a])); d > 1e-4 {
					t.Fatalf("%s position %d: logit %d is %g from nn.Layers, %g from the evaluator", g.Name(), i, a, v, logits[i*l.Actions+a])
				}
			}
			for k, v := range wantWDL {
				if d := math.Abs(float64(v - wdl[i*3+k])); d > 1e-5 {
					t.Fatalf("%s position %d: wdl %d is %g from nn.Layers, %g from the evaluator", g.Name(), i, k, v, wdl[i*3+k])
				}
			}
		}
	}
}
