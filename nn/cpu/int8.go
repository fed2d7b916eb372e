package cpu

import (
	"math"
	"unsafe"
)

// Int8 inference (the AVX-512 VNNI kernels, FLIPZERO_CONV=avx512vnni)
// holds a tower convolution's weights and inputs in bytes and sums
// their products in int32, four a lane an instruction:
//
//   - each output channel's weights are scaled by their largest
//     magnitude to −127..127 (symmetric, so no zero point);
//   - each position's inputs are scaled by their largest value to
//     0..255: they are ReLU outputs, never negative. A 3×3 convolution
//     reads only its own position's pixels (the padding is zero), so one
//     scale a position serves the whole neighbourhood, and a position's
//     result does not depend on the others in its batch;
//   - the output is sum × weight scale × input scale + bias, float32.
//
// A block's second convolution after a global pooling bias reads inputs
// that the bias may have made negative: it runs in bfloat16 (or float32)
// instead.

// int8Conv is a foldedConv (of a multiple of 4 input channels) for the
// VNNI kernels: w has a row for each quad of input channels at each kernel
// offset, (ky·kernel + kx)·in/4 + quad, holding for each output channel
// the quad's four weights as signed bytes, the lowest channel's in the
// low byte. wscale is each output channel's scale (a weight is its byte
// × the scale), b the foldedConv's bias.
type int8Conv struct {
	kernel, in, out int
	w               []uint32
	wscale, b       []float32
}

func newInt8Conv(c foldedConv) *int8Conv {
	kk, quads := c.kernel*c.kernel, c.in/4
	ic := &int8Conv{kernel: c.kernel, in: c.in, out: c.out, w: make([]uint32, kk*quads*c.out), wscale: make([]float32, c.out), b: c.b}
	inv := make([]float32, c.out)
	for o := range c.out {
		var most float32
		for r := 0; r < kk*c.in; r++ {
			most = max(most, float32(math.Abs(float64(c.w[r*c.out+o]))))
		}
		if most > 0 {
			ic.wscale[o], inv[o] = most/127, 127/most
		}
	}
	for k := 0; k < kk; k++ {
		for j := 0; j < quads; j++ {
			row := ic.w[(k*quads+j)*c.out:][:c.out]
			for o := range row {
				var word uint32
				for b := 0; b < 4; b++ {
					q := math.RoundToEven(float64(c.w[(k*c.in+4*j+b)*c.out+o] * inv[o]))
					word |= uint32(uint8(int8(min(max(q, -127), 127)))) << (8 * b)
				}
				row[o] = word
			}
		}
	}
	return ic
}

// convInt8 is conv of c on bytes: src holds the padded activations as
// bytes (c.in channels a pixel) and scale each padded pixel's scale; the
// sums are int32, dst float32.
func (d *directGeom) convInt8(c *int8Conv, src []uint8, scale []float32, dst, skip []float32, lo, hi int, relu, compact bool) {
	if !d.arch.int8 {
		panic("nn: int8 convolution with the " + d.arch.name + " kernels")
	}
	dc := directConv{kernel: c.kernel, words: c.in / 4, inStride: int64(c.in), out: c.out, w: unsafe.Pointer(&c.w[0]), bias: c.b,
		prec: precInt8, wscale: unsafe.Pointer(&c.wscale[0]), scale: unsafe.Pointer(&scale[0])}
	d.tiles(dc, unsafe.Pointer(&src[0]), dst, skip, lo, hi, relu, compact)
}

// quantizePixels writes the channels of the pixels in pix (ascending, a
// position's cells after another's) from src into dst as bytes, each
// position scaled by its largest value to 0..255, rounded to nearest
// even, and each of its pixels' scale (the largest value / 255) into
// scale. The inputs are never negative (a negative one would be 0).
func quantizePixels(dst []uint8, scale, src []float32, pix []int32, cells, channels int) {
	for first := 0; first < len(pix); first += cells {
		pos := pix[first : first+cells]
		most := maxPixels(src, pos, channels)
		var s, inv float32 // all zero: every byte 0
		if most != 0 {
			s, inv = most/255, 255/most
		}
		for _, p := range pos {
			scale[p] = s
		}
		quantPixels(dst, src, pos, channels, inv)
	}
}

// maxPixelsGo is the largest of the channels of the pixels in pix, or 0.
func maxPixelsGo(src []float32, pix []int32, channels int) float32 {
	var most float32
	for _, p := range pix {
		for _, v := range src[int(p)*channels:][:channels] {
			most = max(most, v)
		}
	}
	return most
}

// quantPixelsGo writes the channels of the pixels in pix × inv, rounded
// to nearest even and held to 0..255, into dst.
func quantPixelsGo(dst []uint8, src []float32, pix []int32, channels int, inv float32) {
	for _, p := range pix {
		in, out := src[int(p)*channels:][:channels], dst[int(p)*channels:][:channels]
		for j, v := range in {
			out[j] = uint8(min(max(math.RoundToEven(float64(v*inv)), 0), 255))
		}
	}
}
