package cpu

import "fmt"

// The global pooling's loops over a position's rows (a pixel's channels
// side by side): its sums and maxima, and its bias added back. Where the
// CPU has AVX2 and the channels come in eights, poolrows_amd64.s runs
// them eight channels at a time; these are the loops for the rest.

// checkRows panics unless every row the loops would touch lies in act:
// rows pix[i] for i < n, or the first n where pix is nil.
func checkRows(act []float32, pix []int32, n, channels int) {
	if pix != nil && len(pix) < n {
		panic(fmt.Sprintf("nn: %d rows pooled from %d indices", n, len(pix)))
	}
	for i := range n {
		r := i
		if pix != nil {
			r = int(pix[i])
		}
		if r < 0 || (r+1)*channels > len(act) {
			panic(fmt.Sprintf("nn: pooled row %d past %d values of %d channels", r, len(act), channels))
		}
	}
}

// poolRowsGo is poolRows one value at a time.
func poolRowsGo(act []float32, pix []int32, n, channels int, sum, most []float32) {
	sum, most = sum[:channels], most[:channels]
	for i := range n {
		r := i
		if pix != nil {
			r = int(pix[i])
		}
		for ch, v := range act[r*channels : (r+1)*channels] {
			sum[ch] += v
			most[ch] = max(most[ch], v)
		}
	}
}

// addRowsGo is addRows one value at a time.
func addRowsGo(act []float32, pix []int32, channels int, bias []float32) {
	bias = bias[:channels]
	for _, r := range pix {
		row := act[int(r)*channels : (int(r)+1)*channels]
		for ch, b := range bias {
			row[ch] += b
		}
	}
}
