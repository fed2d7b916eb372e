package cpu

import "math"

// The batch norm's loops over rows of one image's channels. A float64
// sum taken one value after another waits on the last addition at every
// value; these keep four sums in flight, and test no condition per
// value, so that the loops run at the rate the CPU issues arithmetic
// rather than at its adder's latency or its branch predictor's misses
// (a ReLU's zeros fall at random). Each call takes a run of an image's
// channels, a row each (rows), with each row's own sums or parameters:
// a row of Othello's is 64 values, a few dozen cycles, about what a call
// costs, and an image's channels lie one after another, which the CPU's
// prefetchers follow where a channel's rows across a batch, an image
// apart, they do not (1.8 times the speed). Where the CPU has AVX2 and
// FMA, rowsums_amd64.s runs all but each row's last width mod 8 values,
// eight at a time; these are the loops for those and for other CPUs.

// rows names count rows of width values in a slice, the first from
// index first, each next one stride values after the start of the one
// before.
type rows struct{ first, count, width, stride int }

// imageChannels returns image b's channels lo..hi−1 in a batch of
// planes (NCHW) of channels planes of cells values: a row each.
func imageChannels(b, lo, hi, channels, cells int) rows {
	return rows{first: (b*channels + lo) * cells, count: hi - lo, width: cells, stride: cells}
}

// end is the length a slice must have to hold the rows.
func (r rows) end() int {
	if r.first < 0 || r.count < 0 || r.width < 0 || r.stride < 0 {
		panic("nn: rows with a negative size")
	}
	if r.count == 0 {
		return 0
	}
	return r.first + (r.count-1)*r.stride + r.width
}

// row returns row i of v.
func (r rows) row(v []float32, i int) []float32 {
	at := r.first + i*r.stride
	return v[at : at+r.width]
}

// tail returns the rows' values from column from on: none where from
// is the width, so that the loops over them do not walk the rows.
func (r rows) tail(from int) rows {
	if from >= r.width {
		return rows{}
	}
	return rows{first: r.first + from, count: r.count, width: r.width - from, stride: r.stride}
}

// sumRowsGo adds the sum of each of v's rows to its float64 in out.
func sumRowsGo(v []float32, r rows, out []float64) {
	for i := range r.count {
		out[i] += sum64Go(r.row(v, i))
	}
}

// squareRowsGo adds the sum of (v − mean)² over each of v's rows, each
// about its own mean, to its float64 in out.
func squareRowsGo(v []float32, r rows, mean, out []float64) {
	for i := range r.count {
		out[i] += squares64Go(r.row(v, i), mean[i])
	}
}

// sumDotRowsGo adds the sums of g and of g·x over each row to its
// float64s in sum and dot.
func sumDotRowsGo(g, x []float32, r rows, sum, dot []float64) {
	for i := range r.count {
		s, d := sumDot64Go(r.row(g, i), r.row(x, i))
		sum[i], dot[i] = sum[i]+s, dot[i]+d
	}
}

// maskSumDotRowsGo is maskSumDot64Go over rows, each row's sums added to
// its float64s in sum and dot.
func maskSumDotRowsGo(dst, g, y, x []float32, r rows, sum, dot []float64) {
	for i := range r.count {
		s, d := maskSumDot64Go(r.row(dst, i), r.row(g, i), r.row(y, i), r.row(x, i))
		sum[i], dot[i] = sum[i]+s, dot[i]+d
	}
}

// affineRowsGo is affineRowGo over rows, each with its own scale and
// shift (the skip's read for affineSkipRelu only).
func affineRowsGo(dst, x, skip []float32, r rows, scale, shift []float32, kind int) {
	for i := range r.count {
		var sk []float32
		if kind == affineSkipRelu {
			sk = r.row(skip, i)
		}
		affineRowGo(r.row(dst, i), r.row(x, i), sk, scale[i], shift[i], kind)
	}
}

// gradXRowsGo is gradXRowGo over rows, each with its own s, a and k.
func gradXRowsGo(dst, g, x []float32, r rows, s, a, k []float32) {
	for i := range r.count {
		gradXRowGo(r.row(dst, i), r.row(g, i), r.row(x, i), s[i], a[i], k[i])
	}
}

// sum64Go returns the sum of v, in float64.
func sum64Go(v []float32) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(v); i += 4 {
		w := v[i : i+4 : i+4]
		s0 += float64(w[0])
		s1 += float64(w[1])
		s2 += float64(w[2])
		s3 += float64(w[3])
	}
	for ; i < len(v); i++ {
		s0 += float64(v[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// squares64Go returns the sum of (v − mean)², in float64.
func squares64Go(v []float32, mean float64) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(v); i += 4 {
		w := v[i : i+4 : i+4]
		d0, d1, d2, d3 := float64(w[0])-mean, float64(w[1])-mean, float64(w[2])-mean, float64(w[3])-mean
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < len(v); i++ {
		d := float64(v[i]) - mean
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}

// sumDot64Go returns the sums of g and of g·x, in float64; x is at least
// as long as g.
func sumDot64Go(g, x []float32) (sum, dot float64) {
	x = x[:len(g)]
	var s0, s1, s2, s3, d0, d1, d2, d3 float64
	i := 0
	for ; i+4 <= len(g); i += 4 {
		a, b := g[i:i+4:i+4], x[i:i+4:i+4]
		a0, a1, a2, a3 := float64(a[0]), float64(a[1]), float64(a[2]), float64(a[3])
		s0 += a0
		s1 += a1
		s2 += a2
		s3 += a3
		d0 += a0 * float64(b[0])
		d1 += a1 * float64(b[1])
		d2 += a2 * float64(b[2])
		d3 += a3 * float64(b[3])
	}
	for ; i < len(g); i++ {
		a := float64(g[i])
		s0 += a
		d0 += a * float64(x[i])
	}
	return (s0 + s1) + (s2 + s3), (d0 + d1) + (d2 + d3)
}

// reluMask writes g where y > 0, else 0, into dst: the gradient that
// passes back through a ReLU whose outputs are y. y > 0 exactly where
// y's bits, read as an int32, are above 0 (for any y not NaN), so the
// test is an integer sign, turned into a mask without a branch.
func reluMask(dst, g, y []float32) {
	g, y = g[:len(dst)], y[:len(dst)]
	for j := range dst {
		keep := uint32((0 - int64(int32(math.Float32bits(y[j])))) >> 63)
		dst[j] = math.Float32frombits(math.Float32bits(g[j]) & keep)
	}
}

// maskSumDot64Go writes g where y > 0 into dst (reluMask) and returns the
// sums of dst and of dst·x: batch norm's gradient through its ReLU and
// the sums its gradients need, in one pass.
func maskSumDot64Go(dst, g, y, x []float32) (sum, dot float64) {
	reluMask(dst, g, y)
	return sumDot64Go(dst, x)
}

// What batch norm's output row is, after x·scale + shift.
const (
	affinePlain    = iota // nothing more
	affineRelu            // a ReLU
	affineSkipRelu        // a residual block's end: the skip added, then a ReLU
)

// affineRowGo writes batch norm's output row into dst: x·scale + shift,
// then what kind says.
func affineRowGo(dst, x, skip []float32, scale, shift float32, kind int) {
	x = x[:len(dst)]
	switch kind {
	case affineSkipRelu:
		skip = skip[:len(dst)]
		for j, v := range x {
			dst[j] = max(v*scale+shift+skip[j], 0)
		}
	case affineRelu:
		for j, v := range x {
			dst[j] = max(v*scale+shift, 0)
		}
	default:
		for j, v := range x {
			dst[j] = v*scale + shift
		}
	}
}

// gradXRowGo writes s·g − a·x + k into dst: batch norm's input gradient,
// one multiply-add per value.
func gradXRowGo(dst, g, x []float32, s, a, k float32) {
	g, x = g[:len(dst)], x[:len(dst)]
	for j, v := range x {
		dst[j] = s*g[j] - a*v + k
	}
}

// The direct convolution's trainer moves each batch between the training
// graph's planes (NCHW) and the kernels' pixels (each pixel's channels
// side by side) twice a convolution. These move eight channels at a
// time: each plane is read in order and each pixel's eight values are
// stored together. With AVX2, rowsums_amd64.s moves blocks of 8 cells × 8
// channels as one transpose; these loops then move the rest, the eights
// of channels from cell from on and the channels past the last eight
// from cell 0.

// toPixelsGo writes one image's planes (channels × len(pix) values) into
// pixels: channel c of cell i at dst[pix[i]·channels + c].
func toPixelsGo(dst, src []float32, pix []int32, channels, from int) {
	cells := len(pix)
	c := 0
	for ; c+8 <= channels; c += 8 {
		p := src[c*cells : (c+8)*cells]
		p0, p1, p2, p3 := p[:cells], p[cells:2*cells], p[2*cells:3*cells], p[3*cells:4*cells]
		p4, p5, p6, p7 := p[4*cells:5*cells], p[5*cells:6*cells], p[6*cells:7*cells], p[7*cells:8*cells]
		for i := from; i < cells; i++ {
			o := int(pix[i])*channels + c
			d := dst[o : o+8 : o+8]
			d[0], d[1], d[2], d[3] = p0[i], p1[i], p2[i], p3[i]
			d[4], d[5], d[6], d[7] = p4[i], p5[i], p6[i], p7[i]
		}
	}
	for ; c < channels; c++ {
		plane := src[c*cells : (c+1)*cells]
		for i, q := range pix {
			dst[int(q)*channels+c] = plane[i]
		}
	}
}

// fromPixelsGo writes one image's compact pixels (cells × channels
// values, no border) into planes: dst[c·cells + i] = src[i·channels + c].
func fromPixelsGo(dst, src []float32, channels, cells, from int) {
	c := 0
	for ; c+8 <= channels; c += 8 {
		p := dst[c*cells : (c+8)*cells]
		p0, p1, p2, p3 := p[:cells], p[cells:2*cells], p[2*cells:3*cells], p[3*cells:4*cells]
		p4, p5, p6, p7 := p[4*cells:5*cells], p[5*cells:6*cells], p[6*cells:7*cells], p[7*cells:8*cells]
		for i := from; i < cells; i++ {
			o := i*channels + c
			s := src[o : o+8 : o+8]
			p0[i], p1[i], p2[i], p3[i] = s[0], s[1], s[2], s[3]
			p4[i], p5[i], p6[i], p7[i] = s[4], s[5], s[6], s[7]
		}
	}
	for ; c < channels; c++ {
		plane := dst[c*cells : (c+1)*cells]
		for i := range plane {
			plane[i] = src[i*channels+c]
		}
	}
}
