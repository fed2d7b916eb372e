//go:build amd64

package cpu

import "golang.org/x/sys/cpu"

// The loops of poolrows_amd64.s, where the CPU has AVX2 and the channels
// come in eights; else poolrows.go's.

//go:noescape
func poolRowsAVX2(act *float32, pix *int32, n, channels int, sum, most *float32)

//go:noescape
func addRowsAVX2(act *float32, pix *int32, n, channels int, bias *float32)

// poolAssembly says whether the assembly takes rows of channels values.
func poolAssembly(channels int) bool {
	return channels > 0 && channels%8 == 0 && cpu.X86.HasAVX2
}

// poolRows adds the channels of n rows of act to sum and keeps their
// maximum in most: the rows pix[i], or the first n where pix is nil.
func poolRows(act []float32, pix []int32, n, channels int, sum, most []float32) {
	if n == 0 {
		return
	}
	checkRows(act, pix, n, channels)
	if !poolAssembly(channels) {
		poolRowsGo(act, pix, n, channels, sum, most)
		return
	}
	_, _ = sum[channels-1], most[channels-1]
	poolRowsAVX2(&act[0], rowIndex(pix), n, channels, &sum[0], &most[0])
}

// addRows adds bias to the channels of the rows pix[i] of act.
func addRows(act []float32, pix []int32, channels int, bias []float32) {
	n := len(pix)
	if n == 0 {
		return
	}
	checkRows(act, pix, n, channels)
	if !poolAssembly(channels) {
		addRowsGo(act, pix, channels, bias)
		return
	}
	_ = bias[channels-1]
	addRowsAVX2(&act[0], &pix[0], n, channels, &bias[0])
}

// rowIndex is pix's first element, or nil.
func rowIndex(pix []int32) *int32 {
	if pix == nil {
		return nil
	}
	return &pix[0]
}
