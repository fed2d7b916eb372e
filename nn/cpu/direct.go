package cpu

import (
	"os"
	"strings"
	"unsafe"

	"github.com/flipzero/flipzero/nn"
)

// The direct convolution is the CPU evaluator's convolution where the CPU
// has AVX-512 or AVX2, and on every arm64 CPU (NEON): its kernels
// (direct_amd64.s, direct_arm64.s) multiply each input where it lies, so
// nothing is gathered (im2row) or packed (BLAS) first, and the bias, skip
// and ReLU are applied while the output is in registers.
//
// Activations are kept padded for it: each position is a grid of pixels
// with a border, each pixel its channels side by side, the border pixels
// zero (written once, never again). A 3×3 kernel's inputs for a pixel
// are then three runs of 3·channels contiguous values, one per kernel
// row, at the same offsets from every pixel. Neighbouring rows and
// positions share their borders — each row one border pixel on its
// right, each position one border row below it, the batch one row above
// — so that an 8×8 board takes 9×9 pixels rather than 10×10, and the
// AMX kernels, which convolve every pixel of a run, a fifth less work;
// the int8 kernels keep a whole border a position, which holds that
// position's zero point.

// directTile is the argument block of a kernel: one tile of pixels by up
// to one block of output channels. Its layout is read by the assembly
// through go_asm.h.
type directTile struct {
	in, out, skip, w, bias unsafe.Pointer
	// ldw is the bytes between consecutive rows of w.
	ldw int64
	// relu is nonzero to clear negative outputs.
	relu int64
	// mask (AVX-512) has a bit, and lanes (AVX2) a −1, for each real
	// channel of the tile's last channel group.
	mask  uint64
	lanes [8]int32
	// segOff and segLen are the runs of a pixel's inputs: bytes from the
	// pixel's address in "in" and values; a run of length 0 ends them.
	segOff, segLen [4]int64
	// inOff and outOff are each pixel's address in "in" and in "out"
	// (and "skip"), in bytes from their start; the AVX2 kernels read the
	// first 4.
	inOff, outOff [6]int64
	// The VNNI kernels' scales: wscale is the weight scale of each of
	// the tile's output channels and wsum their weight sums, scale each
	// padded pixel's input scale and zero (nil if the inputs have no
	// zero point) its zero point × scale, scaleOff each tile pixel's
	// offset into scale and zero in bytes.
	wscale, wsum, scale, zero unsafe.Pointer
	scaleOff                  [6]int64
}

// block sets t's masks for a block of width output channels on arch's
// kernels and returns its channel groups: the last group's real lanes
// are masked (AVX-512) or flagged (AVX2).
func (t *directTile) block(arch directArch, width int) (groups int) {
	groups = (width + arch.lanes - 1) / arch.lanes
	real := width - arch.lanes*(groups-1)
	t.mask = 1<<real - 1
	for i := range t.lanes {
		t.lanes[i] = 0
		if i < real {
			t.lanes[i] = -1
		}
	}
	return groups
}

// directArch is a set of kernels: a tile is pixels × up to groups groups
// of lanes channels. A bf16 set convolves the tower's 3×3 layers on
// bfloat16 inputs and weights (float32 sums and outputs), its other
// layers as the float32 set of its width does; an amx set convolves
// those whose channels come in 32s on AMX's tiles (amx_amd64.go), the
// rest on AVX-512 BF16. An int8 set convolves the tower's 3×3 layers on
// bytes (int8.go), its weights held to ±127 (byteWeights) and its inputs to
// 0..byteInputs, its other layers as the float32 set of its width; a
// pairSums set (AVX2's) sums each pair of products in int16 first.
type directArch struct {
	name                  string
	pixels, lanes, groups int
	bf16, amx, int8       bool
	pairSums              bool
	byteInputs            int
	// winograd, on a float32 set, convolves the tower's 3×3 layers by
	// Winograd's F(4×4, 3×3) on the set's kernels, in evaluators
	// (winogradEval) and trainers (winogradConv).
	winograd bool
}

var (
	archAVX512     = directArch{name: "AVX-512", pixels: 6, lanes: 16, groups: 4}
	archAVX2       = directArch{name: "AVX2", pixels: 4, lanes: 8, groups: 3}
	archAVX512BF16 = directArch{name: "AVX-512 BF16", pixels: 6, lanes: 16, groups: 4, bf16: true}
	archAMXBF16    = directArch{name: "AMX BF16", pixels: 6, lanes: 16, groups: 4, bf16: true, amx: true}
	archAVX512VNNI = directArch{name: "AVX-512 VNNI", pixels: 6, lanes: 16, groups: 4, int8: true, byteInputs: 255}
	archAVXVNNI    = directArch{name: "AVX-VNNI", pixels: 4, lanes: 8, groups: 3, int8: true, byteInputs: 255}
	// AVX2's VPMADDUBSW sums two products of a byte input and a byte
	// weight in int16, which saturates past 32,767: inputs held to 0..127
	// keep a pair's sum within it (2 × 128 × 127, a rounding's extra
	// input level included) with the weights at ±127 as VNNI's: trained
	// networks' values move less from float32's than with the weights
	// held to ±64 and the inputs to 255 (docs/experiments.md, 2026-12-04).
	// The Winograd sets: the float32 sets of their width, the tower's
	// 3×3 convolutions by Winograd (winograd.go).
	archAVX2Winograd   = directArch{name: "AVX2 Winograd", pixels: 4, lanes: 8, groups: 3, winograd: true}
	archAVX512Winograd = directArch{name: "AVX-512 Winograd", pixels: 6, lanes: 16, groups: 4, winograd: true}
	archAVX2Int8       = directArch{name: "AVX2 int8", pixels: 4, lanes: 8, groups: 3, int8: true, pairSums: true, byteInputs: 127}
)

// forTraining is the kernel set a trainer convolves with when arch is
// chosen: training never rounds to bytes, so an int8 set trains in
// float32, on the float32 set of its width.
func (arch directArch) forTraining() directArch {
	switch {
	case arch.int8 && arch.lanes == archAVX512.lanes:
		return archAVX512
	case arch.int8:
		return archAVX2
	}
	return arch
}

// weightSlack is the room the AVX2 kernels need after a folded
// convolution's weights and biases: they read a channel group whole.
const weightSlack = 8

// directDefault is the kernel set float32 evaluators and trainers use:
// the fastest float32 set this CPU runs, unless FLIPZERO_CONV asks for
// another (directChoice).
func directDefault() (directArch, bool) { return directChoice(false) }

// directChoice is the kernel set an evaluator convolves with: the one
// FLIPZERO_CONV names, to compare them — avx512, avx2, avx2winograd,
// avx512winograd, avx512bf16 (where
// the CPU has AVX-512 BF16), amxbf16 (where it has AMX), avx512vnni
// (where it has AVX-512 VNNI), avxvnni (where it has AVX-VNNI), avx2int8
// (where it has AVX2), neon (on arm64) or im2row (none: im2row + matrix
// multiply) — else, where preferFast and the CPU has them, the fastest
// kernels of reduced precision: AMX's bfloat16 tiles, else bytes on
// kernels as wide as its fastest float32 set's (AVX-512 VNNI: 1.8×
// AVX-512 BF16's positions a second on Zen 4, and stronger at equal time;
// on a CPU without AVX-512, AVX-VNNI, else AVX2's float32 by Winograd),
// else AVX-512 BF16; else the fastest float32 set, by Winograd where
// winogradOver says so (fullBytes says when bytes are taken).
func directChoice(preferFast bool) (directArch, bool) {
	floats, bf16s, int8s := directArchs(), directBF16Archs(), directInt8Archs()
	archs := append(append(append(append([]directArch(nil), floats...), bf16s...), int8s...), directWinogradArchs()...)
	key := func(s string) string { return strings.NewReplacer("-", "", " ", "").Replace(strings.ToLower(s)) }
	want := key(os.Getenv("FLIPZERO_CONV"))
	if len(archs) == 0 || want == "im2row" {
		return directArch{}, false
	}
	for _, arch := range archs {
		if key(arch.name) == want {
			return arch, true
		}
	}
	winograd, byWinograd := winogradOver(floats, int8s)
	if preferFast {
		switch {
		case len(bf16s) > 0 && bf16s[0].amx:
			return bf16s[0], true
		case byWinograd:
			return winograd, true
		case len(int8s) > 0 && fullBytes(int8s[0], floats[0]):
			return int8s[0], true
		case len(bf16s) > 0:
			return bf16s[0], true
		}
	}
	if byWinograd {
		return winograd, true
	}
	return archs[0], true
}

// winogradOver says whether evaluators take a Winograd set by default,
// and which: on AVX2 without VNNI or AVX-512, whose float32 by Winograd
// evaluated 1.13–1.18× its bytes' positions a second and its self-play
// 1.16× the evaluations (YINSH blitz and Othello on a Zen 3,
// docs/experiments.md, 2026-12-06) at float32's precision. Where the CPU
// has VNNI or AVX-512 the bytes or float32 sets stay: Winograd's sets
// are not measured there.
func winogradOver(floats, int8s []directArch) (directArch, bool) {
	if len(floats) == 0 || floats[0].name != archAVX2.name || (len(int8s) > 0 && !int8s[0].pairSums) {
		return directArch{}, false
	}
	for _, w := range directWinogradArchs() {
		if w.lanes == floats[0].lanes {
			return w, true
		}
	}
	return directArch{}, false
}

// fullBytes says whether an int8 set is self-play's default beside the
// fastest float32 set: as wide as it. AVX2's bytes (pairs summed in int16)
// evaluate 1.6–1.8× AVX2's float32 on a Zen 3, and at equal time the
// network they trained won in Othello (59–9–32) and drew in YINSH blitz
// (51–49; docs/experiments.md, 2026-12-04 and 12-05). A CPU with AVX-512
// but no VNNI keeps its float32 set: AVX2's bytes, half as wide, multiply
// no more a cycle.
func fullBytes(int8s, floats directArch) bool {
	return int8s.lanes == floats.lanes
}

// ConvInfo says how a float32 CPU evaluator convolves, for people.
func ConvInfo() string { return convInfo(directDefault()) }

// convInfo says how an evaluator with the kernel set arch (if direct)
// convolves.
func convInfo(arch directArch, direct bool) string {
	if direct {
		return "direct (" + arch.name + " kernels)"
	}
	if len(directArchs()) > 0 {
		return "im2row + matrix multiply (FLIPZERO_CONV=im2row)"
	}
	return "im2row + matrix multiply (no direct kernels for this CPU: they need AVX2, AVX-512 or arm64)"
}

// directGeom is the padded layout of a batch for a kernel set.
type directGeom struct {
	arch directArch
	// padWidth is the padded grid's width, padCells a position's pixels;
	// with shared borders the batch has lead more, before the first
	// position's.
	padWidth, padCells, lead int
	// pix lists the interior pixels of the batch, position by position,
	// row by row, as indices into the padded activations.
	pix []int32
	// index is, for an amx set, pix's inverse: each pixel's index in
	// pix, or −1 for the padding, over halfPixels() pixels.
	index []int32
	// border lists, for an int8 set, the padding pixels of the batch,
	// position by position, borderCells of them a position: int8 inputs
	// with a zero point hold it there.
	border      []int32
	borderCells int
}

func newDirectGeom(arch directArch, sh shape, batch int) directGeom {
	pw, ph := sh.width+1, sh.height+1
	g := directGeom{arch: arch, padWidth: pw, padCells: pw * ph, lead: pw + 1}
	if arch.int8 {
		pw, ph = sh.width+2, sh.height+2
		g = directGeom{arch: arch, padWidth: pw, padCells: pw * ph}
	}
	// Either way a position's first pixel is a row and a pixel into its
	// own grid, or past the batch's lead.
	g.pix = make([]int32, 0, batch*sh.cells())
	for b := 0; b < batch; b++ {
		for y := 0; y < sh.height; y++ {
			for x := 0; x < sh.width; x++ {
				g.pix = append(g.pix, int32(pw+1+b*g.padCells+y*pw+x))
			}
		}
	}
	if arch.int8 {
		g.borderCells = g.padCells - sh.cells()
		for b := 0; b < batch; b++ {
			for y := 0; y < sh.height+2; y++ {
				for x := 0; x < pw; x++ {
					if y == 0 || y == sh.height+1 || x == 0 || x == pw-1 {
						g.border = append(g.border, int32(b*g.padCells+y*pw+x))
					}
				}
			}
		}
	}
	if arch.amx {
		g.index = make([]int32, g.halfPixels(batch))
		for i := range g.index {
			g.index[i] = -1
		}
		for i, p := range g.pix {
			g.index[p] = int32(i)
		}
	}
	return g
}

// pixels is the pixels of a batch's padded activations.
func (g *directGeom) pixels(batch int) int { return g.lead + batch*g.padCells }

// halfPixels is the pixels of a batch's bfloat16 activations: the padded
// grids, and for AMX the reach of its last block of pixels past them.
func (g *directGeom) halfPixels(batch int) int {
	n := g.pixels(batch)
	if g.arch.amx {
		n += 2*amxBlock + g.padWidth + 1
	}
	return n
}

// direct is an evaluator's state for the direct convolution.
type direct struct {
	directGeom
	// in, x, y, z are padded activations: the encoded input and the tower's.
	in, x, y, z []float32
	// half is the input of a tower convolution rounded to bfloat16,
	// padded like x, for the bf16 kernels; on AMX a convolution writes
	// its outputs rounded into next, which becomes the next one's half.
	half, next []uint16
	// wino, on a Winograd set, runs the tower's 3×3 convolutions.
	wino *winogradEval
	// quant is the input of a tower convolution in bytes, padded like x,
	// and qscale and qzero each padded pixel's scale and zero point ×
	// scale, for the int8 kernels.
	quant         []uint8
	qscale, qzero []float32
	// dirty is how many positions, from the first, may hold a nonzero
	// zero point in quant's padding: inputs without one need it zero.
	dirty int
}

func newDirect(arch directArch, sh shape, cfg nn.Config, maxBatch int) *direct {
	d := &direct{directGeom: newDirectGeom(arch, sh, maxBatch)}
	n := d.pixels(maxBatch)
	if arch.winograd {
		n += winogradSlack(d.padWidth)
	}
	d.in = make([]float32, n*sh.planes)
	d.x = make([]float32, n*cfg.Filters)
	d.y = make([]float32, n*cfg.Filters)
	d.z = make([]float32, n*cfg.Filters)
	if arch.bf16 {
		d.half = make([]uint16, d.halfPixels(maxBatch)*cfg.Filters)
	}
	if arch.amx {
		d.next = make([]uint16, len(d.half))
	}
	if arch.int8 {
		d.quant = make([]uint8, n*cfg.Filters)
		d.qscale = make([]float32, n)
		d.qzero = make([]float32, n)
	}
	return d
}

// load writes count encoded positions ((batch, planes, cells)) into the
// padded input, channels side by side.
func (d *direct) load(input []float32, sh shape, count int) {
	cells := sh.cells()
	for i, p := range d.pix[:count*cells] {
		b, c := i/cells, i%cells
		src := input[b*sh.planes*cells+c:]
		dst := d.in[int(p)*sh.planes : (int(p)+1)*sh.planes]
		for k := range dst {
			dst[k] = src[k*cells]
		}
	}
}

// conv applies c to the interior pixels lo..hi-1 of src (padded, c.in
// channels a pixel) into dst: padded, or compact (pixel after pixel,
// c.out channels each) for the heads. Where skip is not nil (padded, like
// dst) it is added before the ReLU. dst must not be skip. It runs the
// float32 kernels of the arch's width, whether or not the arch is bf16.
func (d *directGeom) conv(c *foldedConv, src, dst, skip []float32, lo, hi int, relu, compact bool) {
	if cap(c.w) < len(c.w)+weightSlack || cap(c.b) < len(c.b)+weightSlack {
		panic("nn: direct convolution of weights without room after them")
	}
	dc := directConv{kernel: c.kernel, words: c.in, inStride: int64(c.in) * 4, out: c.out, w: unsafe.Pointer(&c.w[0]), bias: c.b}
	d.tiles(dc, unsafe.Pointer(&src[0]), dst, skip, lo, hi, relu, compact)
}

// convBF16 is conv of c in bfloat16: src holds the padded activations as
// bfloat16 (c.in channels a pixel), the sums and dst are float32.
func (d *directGeom) convBF16(c *bf16Conv, src []uint16, dst, skip []float32, lo, hi int, relu, compact bool) {
	if !d.arch.bf16 {
		panic("nn: bfloat16 convolution with the " + d.arch.name + " kernels")
	}
	if d.roundsOutputs(c) {
		d.convAMX(c, src, dst, skip, nil, lo, hi, relu, compact)
		return
	}
	dc := directConv{kernel: c.kernel, words: c.in / 2, inStride: int64(c.in) * 2, out: c.out, w: unsafe.Pointer(&c.w[0]), bias: c.b, prec: precBF16}
	d.tiles(dc, unsafe.Pointer(&src[0]), dst, skip, lo, hi, relu, compact)
}

// roundsOutputs says whether c runs on AMX, whose kernel can also round
// its outputs to bfloat16 for the next convolution (convBF16Rounding).
func (d *directGeom) roundsOutputs(c *bf16Conv) bool { return d.arch.amx && amxFits(c) }

// convBF16Rounding is convBF16 into padded outputs that also writes them,
// rounded to bfloat16, into half: the next convolution's input, with no
// pass of its own to round them. c must run on AMX (roundsOutputs).
func (d *directGeom) convBF16Rounding(c *bf16Conv, src []uint16, dst, skip []float32, half []uint16, lo, hi int, relu bool) {
	if !d.roundsOutputs(c) {
		panic("nn: bfloat16 outputs from a convolution that is not on AMX")
	}
	d.convAMX(c, src, dst, skip, half, lo, hi, relu, false)
}

// directConv is a convolution as the kernels read it: a pixel's inputs
// are words 4-byte words (its channels, its pairs of bfloat16 channels or
// its quads of byte channels) at inStride bytes from the last pixel's; w
// has a row of out words for each word of a pixel's kernel×kernel
// neighbourhood. An int8 convolution has its weight scales and sums (out
// each) and its input's pixel scales and, if its inputs have a zero
// point, zero points × scales (one a padded pixel).
type directConv struct {
	kernel, words, out        int
	inStride                  int64
	w                         unsafe.Pointer
	bias                      []float32
	prec                      precision
	wscale, wsum, scale, zero unsafe.Pointer
}

// precision is what a convolution's inputs and weights are held in; its
// sums and outputs are float32 whatever it is.
type precision uint8

const (
	precFloat32 precision = iota
	precBF16
	precInt8
)

// tiles runs c's kernels over the pixels lo..hi-1 of src, a tile of
// pixels by a block of output channels at a time.
func (d *directGeom) tiles(c directConv, src unsafe.Pointer, dst, skip []float32, lo, hi int, relu, compact bool) {
	var t directTile
	outStride := int64(c.out) * 4
	if c.kernel == 3 {
		for ky := range 3 {
			t.segOff[ky] = (int64(ky-1)*int64(d.padWidth) - 1) * c.inStride
			t.segLen[ky] = int64(3 * c.words)
		}
	} else {
		t.segLen[0] = int64(c.words)
	}
	t.in = src
	t.ldw = outStride
	t.scale, t.zero = c.scale, c.zero
	if relu {
		t.relu = 1
	}
	block := d.arch.lanes * d.arch.groups
	for col := 0; col < c.out; col += block {
		width := min(block, c.out-col)
		groups := t.block(d.arch, width)
		t.w, t.bias, t.out = unsafe.Add(c.w, col*4), unsafe.Pointer(&c.bias[col]), unsafe.Pointer(&dst[col])
		if skip != nil {
			t.skip = unsafe.Pointer(&skip[col])
		}
		if c.prec == precInt8 {
			t.wscale, t.wsum = unsafe.Add(c.wscale, col*4), unsafe.Add(c.wsum, col*4)
		}
		for first := lo; first < hi; first += d.arch.pixels {
			// A last, partial tile repeats its last pixel: the same
			// values are stored twice.
			for r := range d.arch.pixels {
				i := min(first+r, hi-1)
				p := int64(d.pix[i])
				t.inOff[r] = p * c.inStride
				t.scaleOff[r] = p * 4
				if compact {
					t.outOff[r] = int64(i) * outStride
				} else {
					t.outOff[r] = p * outStride
				}
			}
			directKernel(d.arch, groups, c.prec, &t)
		}
	}
}

// directTrain is a training graph's 3×3 convolution (no bias, no ReLU:
// batch norm follows) on the direct kernels: the NCHW batch is laid out
// in padded pixels, convolved into compact pixels, and laid back out as
// NCHW. Its buffers are kept from step to step; the borders of the
// padded input are never written, so they stay zero.
//
// With a bfloat16 kernel set (on AMX by default, else where
// FLIPZERO_CONV=avx512bf16 names it) and an even
// number of inputs it trains in mixed precision: the inputs (activations
// forward, gradients backward) and the step's weights are rounded to
// bfloat16 once laid out, the sums and outputs stay float32, and
// so do the weights the optimizer keeps and their gradients.
type directTrain struct {
	geom   directGeom
	padded []float32  // (geom.pixels(batch), in)
	half   []uint16   // padded in bfloat16, for the bfloat16 kernels
	out    []float32  // (batch·cells, out)
	fc     foldedConv // the step's weights, packed for the kernels, zero bias
	bc     bf16Conv   // fc in bfloat16 pairs, for the bfloat16 kernels
	// wino, on a float32 set with winograd, convolves instead, from
	// packed: the step's weights as fc.w holds them.
	wino   *winogradConv
	packed []float32
}

// run computes y = x ⊛ w for a batch of NCHW tensors, w packed by pack
// into fc.w ((kernel·kernel·in, out) rows), with the batch split over at
// most workers cores.
func (t *directTrain) run(arch directArch, sh shape, kernel, in, out, batch, workers int, x, y []float32, pack func(dst []float32)) {
	if arch.winograd && !arch.bf16 && winogradFits(kernel, in, out) {
		if t.wino == nil {
			t.wino = newWinogradConv(sh, in, out)
			t.packed = make([]float32, kernel*kernel*in*out)
		}
		pack(t.packed)
		t.wino.run(arch, t.packed, batch, workers, x, y)
		return
	}
	cells := sh.cells()
	bf16 := arch.bf16 && in%2 == 0
	if len(t.geom.pix) != batch*cells || bf16 != (t.half != nil) {
		t.geom = newDirectGeom(arch, sh, batch)
		t.padded = make([]float32, t.geom.pixels(batch)*in)
		t.out = make([]float32, batch*cells*out)
		t.fc = foldedConv{kernel: kernel, in: in, out: out,
			w: make([]float32, kernel*kernel*in*out, kernel*kernel*in*out+weightSlack),
			b: make([]float32, out, out+weightSlack)}
		t.half, t.bc = nil, bf16Conv{}
		if bf16 {
			t.half = make([]uint16, t.geom.halfPixels(batch)*in)
			t.bc = bf16Conv{kernel: kernel, in: in, out: out, w: make([]uint32, kernel*kernel*in/2*out), b: t.fc.b}
		}
	}
	pack(t.fc.w)
	if bf16 {
		packBF16(&t.bc, t.fc)
	}
	// Each core takes a few images at a time through all three steps,
	// so that the convolution's output is still in its cache when it is
	// laid back out (a whole batch's is megabytes). The cores need no
	// barrier between the steps: an image's outputs read only its own
	// pixels and the zero borders, and where AMX's blocks of pixels run on
	// into another core's images, the outputs there are dropped.
	step := max(1, trainChunkPixels/cells)
	parallelFor(batch, workers, func(_, lo, hi int) {
		for b0 := lo; b0 < hi; b0 += step {
			b1 := min(b0+step, hi)
			for b := b0; b < b1; b++ {
				pix, xb := t.geom.pix[b*cells:(b+1)*cells], x[b*in*cells:(b+1)*in*cells]
				if bf16 && planesToPixelsBF16(t.half, xb, pix, in) {
					continue
				}
				toPixels(t.padded, xb, pix, in)
				if bf16 {
					roundPixelsBF16(t.half, t.padded, pix, in)
				}
			}
			if bf16 {
				t.geom.convBF16(&t.bc, t.half, t.out, nil, b0*cells, b1*cells, false, true)
			} else {
				t.geom.conv(&t.fc, t.padded, t.out, nil, b0*cells, b1*cells, false, true)
			}
			for b := b0; b < b1; b++ {
				fromPixels(y[b*out*cells:(b+1)*out*cells], t.out[b*cells*out:(b+1)*cells*out], out, cells)
			}
		}
	})
}

// trainChunkPixels is about how many pixels a core takes through a
// training convolution's three steps at a time: 512 pixels of 64
// float32 outputs are 128 KiB, within any recent core's L2 cache.
const trainChunkPixels = 512
