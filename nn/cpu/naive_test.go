package cpu

import (
	"math"

	"github.com/flipzero/flipzero/nn"
)

// naiveForward is the network's definition written as plain loops over
// one position, straight from the unfolded weights: the reference both
// forward passes are checked against.
func naiveForward(n *nn.Network, input []float32) (logits, wdl []float32) {
	d, learn, stats := n.Describe(), n.Learnables(), n.Statistics()
	h, w := d.Height, d.Width
	convBN := func(c nn.ConvDesc, x []float32, relu bool) []float32 {
		out := make([]float32, c.Out*h*w)
		pad := c.Kernel / 2
		weights, gamma, beta := learn[c.W].Data, learn[c.Gamma].Data, learn[c.Beta].Data
		mean, variance := stats[c.Mean].Data, stats[c.Variance].Data
		for o := 0; o < c.Out; o++ {
			scale := float64(gamma[o]) / math.Sqrt(float64(variance[o])+bnEpsilon)
			for y := 0; y < h; y++ {
				for xx := 0; xx < w; xx++ {
					sum := 0.0
					for i := 0; i < c.In; i++ {
						for ky := 0; ky < c.Kernel; ky++ {
							for kx := 0; kx < c.Kernel; kx++ {
								sy, sx := y+ky-pad, xx+kx-pad
								if sy < 0 || sy >= h || sx < 0 || sx >= w {
									continue
								}
								sum += float64(weights[((o*c.In+i)*c.Kernel+ky)*c.Kernel+kx]) * float64(x[(i*h+sy)*w+sx])
							}
						}
					}
					v := (sum-float64(mean[o]))*scale + float64(beta[o])
					if relu && v < 0 {
						v = 0
					}
					out[(o*h+y)*w+xx] = float32(v)
				}
			}
		}
		return out
	}
	fc := func(l nn.DenseDesc, x []float32) []float32 {
		out := make([]float32, l.Out)
		weights, bias := learn[l.W].Data, learn[l.B].Data
		for j := 0; j < l.Out; j++ {
			sum := float64(bias[j])
			for i := 0; i < l.In; i++ {
				sum += float64(x[i]) * float64(weights[i*l.Out+j])
			}
			out[j] = float32(sum)
		}
		return out
	}
	x := convBN(d.Stem, input, true)
	for _, b := range d.Blocks {
		y := convBN(b.A, x, true)
		y = convBN(b.B, y, false)
		for j := range x {
			x[j] = max(x[j]+y[j], 0)
		}
	}
	logits = fc(*d.PolicyFC, convBN(d.PolicyConv, x, true))
	hidden := fc(d.ValueFC1, convBN(d.ValueConv, x, true))
	for i := range hidden {
		hidden[i] = max(hidden[i], 0)
	}
	wdl = fc(d.ValueFC2, hidden)
	softmaxInPlace(wdl)
	return logits, wdl
}
