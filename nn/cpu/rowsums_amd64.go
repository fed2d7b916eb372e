//go:build amd64

package cpu

import (
	"fmt"

	"golang.org/x/sys/cpu"
)

// The row loops of rowsums_amd64.s. Each takes rows of a positive
// multiple of 8 values; the wrappers below give them all but each row's
// last width mod 8, which the scalar loops of rowsums.go finish, and
// check the rows against every slice first (rows.bulk), so that the
// assembly never reads or writes past one.

//go:noescape
func rowSumAVX2(v *float32, n, rows, stride int, out *float64)

//go:noescape
func rowSquaresAVX2(v *float32, n, rows, stride int, mean, out *float64)

//go:noescape
func rowSumDotAVX2(grad, x *float32, n, rows, stride int, sum, dot *float64)

//go:noescape
func rowMaskSumDotAVX2(dst, grad, y, x *float32, n, rows, stride int, sum, dot *float64)

//go:noescape
func rowAffineAVX2(dst, x, skip *float32, n, rows, stride int, scale, shift *float32, kind int)

//go:noescape
func rowGradXAVX2(dst, grad, x *float32, n, rows, stride int, s, a, k *float32)

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

// bulk is how many of each row's values the assembly takes, after
// checking that the rows lie within each slice: none where there are no
// rows or no assembly.
func (r rows) bulk(slices ...[]float32) int {
	end := r.end()
	for _, s := range slices {
		if len(s) < end {
			panic(fmt.Sprintf("nn: rows to %d in a slice of %d", end, len(s)))
		}
	}
	if r.count == 0 {
		return 0
	}
	return rowBulk(r.width)
}

// perRow checks that each of a row's own values has a place.
func perRow[T float32 | float64](r rows, each ...[]T) {
	for _, v := range each {
		if len(v) < r.count {
			panic(fmt.Sprintf("nn: %d rows with %d values of their own", r.count, len(v)))
		}
	}
}

// sum64 adds the sum of each of v's rows to its float64 in out.
func sum64(v []float32, r rows, out []float64) {
	perRow(r, out)
	if n := r.bulk(v); n > 0 {
		rowSumAVX2(&v[r.first], n, r.count, r.stride, &out[0])
		r = r.tail(n)
	}
	sumRowsGo(v, r, out)
}

// squares64 adds the sum of (v − mean)² over each of v's rows, each
// about its own mean, to its float64 in out.
func squares64(v []float32, r rows, mean, out []float64) {
	perRow(r, mean, out)
	if n := r.bulk(v); n > 0 {
		rowSquaresAVX2(&v[r.first], n, r.count, r.stride, &mean[0], &out[0])
		r = r.tail(n)
	}
	squareRowsGo(v, r, mean, out)
}

// sumDot64 adds the sums of g and of g·x over each row to its float64s
// in sum and dot.
func sumDot64(g, x []float32, r rows, sum, dot []float64) {
	perRow(r, sum, dot)
	if n := r.bulk(g, x); n > 0 {
		rowSumDotAVX2(&g[r.first], &x[r.first], n, r.count, r.stride, &sum[0], &dot[0])
		r = r.tail(n)
	}
	sumDotRowsGo(g, x, r, sum, dot)
}

// maskSumDot64 writes g where y > 0 into dst's rows and adds the sums of
// dst and of dst·x over each row to its float64s in sum and dot.
func maskSumDot64(dst, g, y, x []float32, r rows, sum, dot []float64) {
	perRow(r, sum, dot)
	if n := r.bulk(dst, g, y, x); n > 0 {
		rowMaskSumDotAVX2(&dst[r.first], &g[r.first], &y[r.first], &x[r.first], n, r.count, r.stride, &sum[0], &dot[0])
		r = r.tail(n)
	}
	maskSumDotRowsGo(dst, g, y, x, r, sum, dot)
}

// affineRows writes batch norm's output rows into dst: x·scale + shift,
// each row with its own scale and shift, then what kind says (the skip
// is read for affineSkipRelu only).
func affineRows(dst, x, skip []float32, r rows, scale, shift []float32, kind int) {
	perRow(r, scale, shift)
	if n := r.bulk(dst, x); n > 0 {
		skipAt := &x[r.first] // not read
		if kind == affineSkipRelu {
			r.bulk(skip)
			skipAt = &skip[r.first]
		}
		rowAffineAVX2(&dst[r.first], &x[r.first], skipAt, n, r.count, r.stride, &scale[0], &shift[0], kind)
		r = r.tail(n)
	}
	affineRowsGo(dst, x, skip, r, scale, shift, kind)
}

// gradXRows writes s·g − a·x + k into dst's rows, each row with its own
// s, a and k.
func gradXRows(dst, g, x []float32, r rows, s, a, k []float32) {
	perRow(r, s, a, k)
	if n := r.bulk(dst, g, x); n > 0 {
		rowGradXAVX2(&dst[r.first], &g[r.first], &x[r.first], n, r.count, r.stride, &s[0], &a[0], &k[0])
		r = r.tail(n)
	}
	gradXRowsGo(dst, g, x, r, s, a, k)
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
