package nn

import "math"

// naiveForward is the network's definition written as plain loops over
// one position, straight from the unfolded weights: the reference both
// forward passes are checked against.
func naiveForward(n *Network, input []float32) (logits, wdl []float32) {
	sh := n.shape
	h, w := sh.height, sh.width
	convBN := func(c *conv, x []float32, relu bool) []float32 {
		out := make([]float32, c.out*h*w)
		pad := c.kernel / 2
		for o := 0; o < c.out; o++ {
			scale := float64(c.gamma.data[o]) / math.Sqrt(float64(c.variance.data[o])+bnEpsilon)
			for y := 0; y < h; y++ {
				for xx := 0; xx < w; xx++ {
					sum := 0.0
					for i := 0; i < c.in; i++ {
						for ky := 0; ky < c.kernel; ky++ {
							for kx := 0; kx < c.kernel; kx++ {
								sy, sx := y+ky-pad, xx+kx-pad
								if sy < 0 || sy >= h || sx < 0 || sx >= w {
									continue
								}
								sum += float64(c.w.data[((o*c.in+i)*c.kernel+ky)*c.kernel+kx]) * float64(x[(i*h+sy)*w+sx])
							}
						}
					}
					v := (sum-float64(c.mean.data[o]))*scale + float64(c.beta.data[o])
					if relu && v < 0 {
						v = 0
					}
					out[(o*h+y)*w+xx] = float32(v)
				}
			}
		}
		return out
	}
	fc := func(d dense, x []float32) []float32 {
		out := make([]float32, d.out)
		for j := 0; j < d.out; j++ {
			sum := float64(d.b.data[j])
			for i := 0; i < d.in; i++ {
				sum += float64(x[i]) * float64(d.w.data[i*d.out+j])
			}
			out[j] = float32(sum)
		}
		return out
	}
	x := convBN(&n.stem, input, true)
	for i := range n.blocks {
		y := convBN(&n.blocks[i][0], x, true)
		y = convBN(&n.blocks[i][1], y, false)
		for j := range x {
			x[j] = max(x[j]+y[j], 0)
		}
	}
	logits = fc(n.policyFC, convBN(&n.policyConv, x, true))
	hidden := fc(n.valueFC1, convBN(&n.valueConv, x, true))
	for i := range hidden {
		hidden[i] = max(hidden[i], 0)
	}
	wdl = fc(n.valueFC2, hidden)
	softmaxInPlace(wdl)
	return logits, wdl
}
