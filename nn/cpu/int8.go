package cpu

import (
	"math"
	"unsafe"
)

// Int8 inference (the AVX-512 VNNI kernels, FLIPZERO_CONV=avx512vnni;
// AVX-VNNI's, avxvnni; AVX2's, avx2int8) holds a tower convolution's
// weights and inputs in bytes and sums their products in int32, four a
// lane an instruction (AVX2: three instructions):
//
//   - each output channel's weights are scaled by their largest
//     magnitude to −127..127 (symmetric, so no zero point);
//   - each position's inputs are scaled by their range to 0..255 (for
//     AVX2, whose pairs of products are summed in int16, 0..127: giving
//     up an input's bit moves a trained network less than a weight's): a
//     3×3 convolution reads only its own position's pixels, so one scale
//     a position serves the whole neighbourhood, and a position's result
//     does not depend on the others in its batch. Most inputs are ReLU
//     outputs, never negative, and 0 is byte 0; a global pooling bias,
//     added after the ReLU, can make its block's second convolution's
//     inputs negative, and their zero becomes a byte zp (a zero point),
//     which the position's padding holds too;
//   - the output is (sum − zp × the channel's weight sum) × weight scale
//     × input scale + bias, in float32.

// int8Conv is a foldedConv (of a multiple of 4 input channels) for the
// VNNI kernels: w has a row for each quad of input channels at each kernel
// offset, (ky·kernel + kx)·in/4 + quad, holding for each output channel
// the quad's four weights as signed bytes, the lowest channel's in the
// low byte, held to ±byteWeights. wscale is each output channel's scale
// (a weight is its byte × the scale) and wsum the sum of its weights as
// bytes × the scale; b is the foldedConv's bias. Each slice has room for
// weightSlack more after it, which the AVX2 kernels read.
type int8Conv struct {
	kernel, in, out int
	w               []uint32
	wscale, wsum, b []float32
}

// byteWeights is the largest magnitude of a weight's byte, in every int8
// set: AVX2's holds its inputs to 127 instead (directArch.byteInputs).
const byteWeights = 127

func newInt8Conv(c foldedConv) *int8Conv {
	kk, quads := c.kernel*c.kernel, c.in/4
	slack := func(n int) []float32 { return make([]float32, n, n+weightSlack) }
	ic := &int8Conv{kernel: c.kernel, in: c.in, out: c.out,
		w: make([]uint32, kk*quads*c.out, kk*quads*c.out+weightSlack), wscale: slack(c.out), wsum: slack(c.out), b: c.b}
	inv := make([]float32, c.out)
	top := float32(byteWeights)
	for o := range c.out {
		var most float32
		for r := 0; r < kk*c.in; r++ {
			most = max(most, float32(math.Abs(float64(c.w[r*c.out+o]))))
		}
		if most > 0 {
			ic.wscale[o], inv[o] = most/top, top/most
		}
	}
	sums := make([]int, c.out)
	for k := 0; k < kk; k++ {
		for j := 0; j < quads; j++ {
			row := ic.w[(k*quads+j)*c.out:][:c.out]
			for o := range row {
				var word uint32
				for b := 0; b < 4; b++ {
					q := int8(min(max(math.RoundToEven(float64(c.w[(k*c.in+4*j+b)*c.out+o]*inv[o])), -float64(top)), float64(top)))
					word |= uint32(uint8(q)) << (8 * b)
					sums[o] += int(q)
				}
				row[o] = word
			}
		}
	}
	for o, s := range sums {
		ic.wsum[o] = float32(s) * ic.wscale[o]
	}
	return ic
}

// convInt8 is conv of c on bytes: q holds the padded activations as bytes
// (c.in channels a pixel) and each padded pixel's scale and, if signed,
// zero point × scale; the sums are int32, dst float32.
func (d *directGeom) convInt8(c *int8Conv, q quantized, signed bool, dst, skip []float32, lo, hi int, relu, compact bool) {
	if !d.arch.int8 {
		panic("nn: int8 convolution with the " + d.arch.name + " kernels")
	}
	if cap(c.w) < len(c.w)+weightSlack || cap(c.wscale) < len(c.wscale)+weightSlack ||
		cap(c.wsum) < len(c.wsum)+weightSlack || cap(c.b) < len(c.b)+weightSlack {
		panic("nn: int8 convolution of weights without room after them")
	}
	dc := directConv{kernel: c.kernel, words: c.in / 4, inStride: int64(c.in), out: c.out, w: unsafe.Pointer(&c.w[0]), bias: c.b,
		prec: precInt8, wscale: unsafe.Pointer(&c.wscale[0]), wsum: unsafe.Pointer(&c.wsum[0]), scale: unsafe.Pointer(&q.scale[0])}
	if signed {
		dc.zero = unsafe.Pointer(&q.zero[0])
	}
	d.tiles(dc, unsafe.Pointer(&q.bytes[0]), dst, skip, lo, hi, relu, compact)
}

// quantized is a batch of int8 inputs: bytes (padded pixels × channels),
// and each padded pixel's scale and zero point × scale.
type quantized struct {
	bytes       []uint8
	scale, zero []float32
}

// quantizePixels writes the channels of the pixels in pix (ascending, a
// position's cells after another's) from src into q as bytes, each
// position's range from min(0, its least) to its largest scaled to
// 0..levels (255, or AVX2's 127) and rounded to nearest even, and each
// of its pixels' scale (the range / levels) and zero point × scale. The
// input and the zero point are rounded apart, so a byte can reach
// levels + 1 (255 at most). Unless signed the inputs are
// never negative (a negative one would be 0) and the zero point is 0.
// Where border is not nil the zero point is also written into the
// position's padding pixels, borderCells a position in border, so that
// they read as zero.
func quantizePixels(q quantized, src []float32, pix []int32, cells, channels int, border []int32, borderCells int, signed bool, levels int) {
	for i, first := 0, 0; first < len(pix); i, first = i+1, first+cells {
		pos := pix[first : first+cells]
		lo, hi := rangePixels(src, pos, channels)
		if !signed {
			lo = 0
		}
		var s, inv float32 // all zero: every byte the zero point, 0
		zp := 0
		if hi > lo {
			top := float32(levels)
			s, inv = (hi-lo)/top, top/(hi-lo)
			zp = int(min(math.RoundToEven(float64(-lo*inv)), float64(levels)))
		}
		for _, p := range pos {
			q.scale[p], q.zero[p] = s, float32(zp)*s
		}
		quantPixels(q.bytes, src, pos, channels, inv, int32(zp))
		if border != nil {
			fillPixels(q.bytes, border[i*borderCells:(i+1)*borderCells], channels, uint8(zp))
		}
	}
}

// fillPixels sets every channel of the pixels in pix to v: the first
// pixel byte by byte, the others copied from it.
func fillPixels(dst []uint8, pix []int32, channels int, v uint8) {
	if len(pix) == 0 {
		return
	}
	first := dst[int(pix[0])*channels:][:channels]
	for j := range first {
		first[j] = v
	}
	for _, p := range pix[1:] {
		copy(dst[int(p)*channels:][:channels], first)
	}
}

// rangePixelsGo is the least and the largest of the channels of the
// pixels in pix, and 0.
func rangePixelsGo(src []float32, pix []int32, channels int) (lo, hi float32) {
	for _, p := range pix {
		for _, v := range src[int(p)*channels:][:channels] {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	return lo, hi
}

// quantPixelsGo writes the channels of the pixels in pix × inv, rounded
// to nearest even, + zp, held to 0..255, into dst.
func quantPixelsGo(dst []uint8, src []float32, pix []int32, channels int, inv float32, zp int32) {
	for _, p := range pix {
		in, out := src[int(p)*channels:][:channels], dst[int(p)*channels:][:channels]
		for j, v := range in {
			out[j] = uint8(min(max(math.RoundToEven(float64(v*inv))+float64(zp), 0), 255))
		}
	}
}
