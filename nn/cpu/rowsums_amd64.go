//go:build amd64

package cpu

import "golang.org/x/sys/cpu"

// The row loops of rowsums_amd64.s. Each takes a positive multiple of 8
// values; the wrappers below give them all but the last n mod 8, which
// the scalar loops of rowsums.go finish, and check every row's length
// first, so that the assembly never reads or writes past a slice.

//go:noescape
func rowSumAVX2(v *float32, n int) float64

//go:noescape
func rowSquaresAVX2(v *float32, n int, mean float64) float64

//go:noescape
func rowSumDotAVX2(grad, x *float32, n int) (sum, dot float64)

//go:noescape
func rowMaskSumDotAVX2(dst, grad, y, x *float32, n int) (sum, dot float64)

//go:noescape
func rowAffineAVX2(dst, x, skip *float32, n int, scale, shift float32, kind int)

//go:noescape
func rowGradXAVX2(dst, grad, x *float32, n int, s, a, k float32)

//go:noescape
func toPixelsAVX2(dst, src *float32, pix *int32, blocks, cells, channels int)

//go:noescape
func fromPixelsAVX2(dst, src *float32, blocks, cells, channels int)

// rowBulk is how many of n values the assembly takes: none without AVX2
// and FMA.
func rowBulk(n int) int {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		return n &^ 7
	}
	return 0
}

// sum64 returns the sum of v, in float64.
func sum64(v []float32) float64 {
	n, s := rowBulk(len(v)), 0.0
	if n > 0 {
		s = rowSumAVX2(&v[0], n)
	}
	return s + sum64Go(v[n:])
}

// squares64 returns the sum of (v − mean)², in float64.
func squares64(v []float32, mean float64) float64 {
	n, s := rowBulk(len(v)), 0.0
	if n > 0 {
		s = rowSquaresAVX2(&v[0], n, mean)
	}
	return s + squares64Go(v[n:], mean)
}

// sumDot64 returns the sums of g and of g·x, in float64; x is at least
// as long as g.
func sumDot64(g, x []float32) (sum, dot float64) {
	x = x[:len(g)]
	n := rowBulk(len(g))
	if n > 0 {
		sum, dot = rowSumDotAVX2(&g[0], &x[0], n)
	}
	s, d := sumDot64Go(g[n:], x[n:])
	return sum + s, dot + d
}

// maskSumDot64 writes g where y > 0 into dst and returns the sums of dst
// and of dst·x; g, y and x are at least as long as dst.
func maskSumDot64(dst, g, y, x []float32) (sum, dot float64) {
	g, y, x = g[:len(dst)], y[:len(dst)], x[:len(dst)]
	n := rowBulk(len(dst))
	if n > 0 {
		sum, dot = rowMaskSumDotAVX2(&dst[0], &g[0], &y[0], &x[0], n)
	}
	s, d := maskSumDot64Go(dst[n:], g[n:], y[n:], x[n:])
	return sum + s, dot + d
}

// affineRow writes batch norm's output row into dst: x·scale + shift,
// then what kind says (the skip is read for affineSkipRelu only).
func affineRow(dst, x, skip []float32, scale, shift float32, kind int) {
	x = x[:len(dst)]
	n := rowBulk(len(dst))
	if n > 0 {
		skipAt := &x[0] // not read
		if kind == affineSkipRelu {
			skip = skip[:len(dst)]
			skipAt = &skip[0]
		}
		rowAffineAVX2(&dst[0], &x[0], skipAt, n, scale, shift, kind)
	}
	if kind == affineSkipRelu {
		skip = skip[n:]
	}
	affineRowGo(dst[n:], x[n:], skip, scale, shift, kind)
}

// gradXRow writes s·g − a·x + k into dst.
func gradXRow(dst, g, x []float32, s, a, k float32) {
	g, x = g[:len(dst)], x[:len(dst)]
	n := rowBulk(len(dst))
	if n > 0 {
		rowGradXAVX2(&dst[0], &g[0], &x[0], n, s, a, k)
	}
	gradXRowGo(dst[n:], g[n:], x[n:], s, a, k)
}

// toPixels writes one image's planes (channels × len(pix) values) into
// pixels: channel c of cell i at dst[pix[i]·channels + c].
func toPixels(dst, src []float32, pix []int32, channels int) {
	cells := len(pix)
	blocks := rowBulk(cells) / 8
	if blocks == 0 || channels < 8 {
		toPixelsGo(dst, src, pix, channels, 0)
		return
	}
	// Every store must land in dst, every load in src.
	top := int32(0)
	for _, q := range pix {
		if q < 0 {
			panic("nn: a negative pixel index")
		}
		top = max(top, q)
	}
	if (int(top)+1)*channels > len(dst) || channels*cells > len(src) {
		panic("nn: pixels past their buffers")
	}
	for c := 0; c+8 <= channels; c += 8 {
		toPixelsAVX2(&dst[c], &src[c*cells], &pix[0], blocks, cells, channels)
	}
	toPixelsGo(dst, src, pix, channels, blocks*8)
}

// fromPixels writes one image's compact pixels (cells × channels values,
// no border) into planes: dst[c·cells + i] = src[i·channels + c].
func fromPixels(dst, src []float32, channels, cells int) {
	blocks := rowBulk(cells) / 8
	if blocks == 0 || channels < 8 {
		fromPixelsGo(dst, src, channels, cells, 0)
		return
	}
	if channels*cells > min(len(dst), len(src)) {
		panic("nn: pixels past their buffers")
	}
	for c := 0; c+8 <= channels; c += 8 {
		fromPixelsAVX2(&dst[c*cells], &src[c], blocks, cells, channels)
	}
	fromPixelsGo(dst, src, channels, cells, blocks*8)
}
