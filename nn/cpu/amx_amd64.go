//go:build amd64

package cpu

import (
	"sync"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// AMX (Advanced Matrix Extensions, Intel's Sapphire Rapids and later)
// multiplies whole tiles: one TDPBF16PS adds a 16×32 bfloat16 matrix times
// a 32×16 one into a 16×16 float32 tile, up to eight times the
// multiplies a cycle of AVX-512 BF16's instructions. The tower's 3×3 convolutions run on it as
// a matrix multiply over the padded grid taken as one long row of pixels:
// 16 consecutive pixels are 16 rows of a tile at one stride, whatever the
// kernel offset, so nothing is gathered. The pixels of the padding and
// between positions are computed too and thrown away (a quarter more work
// on an 8×8 board, its grid 9×9 with the borders shared), which AMX's
// speed pays many times over.
//
// amx_amd64.s holds the kernel: a block of 32 pixels by 32 output
// channels in four accumulator tiles, two tiles of inputs and two of
// weights loaded for each 32 input channels at each kernel offset; then
// the bias, skip and ReLU on the sums while they are in cache.

// amxBlock is the pixels of the kernel's block: two tiles of 16 rows.
const amxBlock = 32

// amxMaxSteps bounds the kernel offsets × 32-channel chunks of a
// convolution on AMX: 3×3 over up to 512 inputs.
const amxMaxSteps = 9 * 16

// amxTile is the argument block of amxConvBF16. Its layout is read by
// the assembly through go_asm.h.
type amxTile struct {
	// cfg is the tile configuration: palette 1, tiles 0–7 16 rows of 64
	// bytes.
	cfg [64]byte
	// in is the padded bfloat16 input; w the bf16Conv's pairs; bias,
	// out and skip (nil: none) as for the direct kernels; half (nil:
	// none) receives the outputs rounded to bfloat16 as well, the next
	// convolution's input, laid out as in (the padded pixels only).
	in, w, bias, out, skip, half unsafe.Pointer
	// index holds, for each pixel of the padded grid, its index among
	// the interior pixels, or −1 for the padding.
	index unsafe.Pointer
	// inStride is the bytes of a pixel's inputs, ldw of a row of w (and
	// of a pixel's outputs: out·4).
	inStride, ldw int64
	// first, end: the pixels of the grid computed, in blocks of 32 from
	// first up to the block holding end−1; lo, hi: the interior indices
	// written.
	first, end, lo, hi int64
	compact, relu      int64
	// steps are the kernel offsets by 32-channel chunks: for each, the
	// bytes from a pixel's inputs to the chunk's at that offset, and from
	// w to the chunk's rows at that offset.
	nsteps int64
	steps  [amxMaxSteps][2]int64
	// scratch receives the four accumulator tiles of a block.
	scratch [4 * 16 * 16]float32
}

//go:noescape
func amxConvBF16(t *amxTile)

//go:noescape
func amxWeightGradBF16(t *amxGradTile)

// amxReady says whether this process may use AMX: the CPU has it
// (with AVX-512 BF16, whose set it extends) and the system lets it save
// the tiles' 8 KiB of state (Linux asks the process to request it once).
var amxReady = sync.OnceValue(func() bool {
	return cpu.X86.HasAMXTile && cpu.X86.HasAMXBF16 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BF16 && amxPermit()
})

// amxFits says whether a bfloat16 convolution runs on AMX: its inputs
// and outputs in 32s, its steps within amxMaxSteps.
func amxFits(c *bf16Conv) bool {
	return c.in%32 == 0 && c.out%32 == 0 && c.kernel*c.kernel*c.in/32 <= amxMaxSteps
}

// convAMX is convBF16 on AMX (amxFits(c)): the interior pixels lo..hi-1,
// src with at least g.halfPixels() pixels. Where half is not nil (and the
// outputs are padded) it also receives them rounded to bfloat16, as
// roundPixelsBF16 would round them, for the next convolution.
func (g *directGeom) convAMX(c *bf16Conv, src []uint16, dst, skip []float32, half []uint16, lo, hi int, relu, compact bool) {
	if lo >= hi {
		return
	}
	var t amxTile
	amxConfig(&t.cfg)
	t.inStride, t.ldw = int64(c.in)*2, int64(c.out)*4
	pairs, reach := c.in/2, 0
	if c.kernel == 3 {
		reach = g.padWidth + 1
	}
	for pos := range c.kernel * c.kernel {
		off := 0
		if c.kernel == 3 {
			off = (pos/3-1)*g.padWidth + pos%3 - 1
		}
		for chunk := range c.in / 32 {
			t.steps[t.nsteps] = [2]int64{int64(off)*t.inStride + int64(chunk)*64, int64((pos*pairs+chunk*16)*c.out) * 4}
			t.nsteps++
		}
	}
	first, end := int(g.pix[lo]), int(g.pix[hi-1])+1
	last := first + (end-first+amxBlock-1)/amxBlock*amxBlock
	if first < reach || last+reach > len(src)/c.in || last > len(g.index) {
		panic("nn: AMX convolution past its buffers")
	}
	t.first, t.end, t.lo, t.hi = int64(first), int64(end), int64(lo), int64(hi)
	t.in, t.w, t.bias, t.out = unsafe.Pointer(&src[0]), unsafe.Pointer(&c.w[0]), unsafe.Pointer(&c.b[0]), unsafe.Pointer(&dst[0])
	if skip != nil {
		t.skip = unsafe.Pointer(&skip[0])
	}
	if half != nil {
		if compact || len(half) < len(src)/c.in*c.out {
			panic("nn: AMX convolution's bfloat16 outputs past their buffer")
		}
		t.half = unsafe.Pointer(&half[0])
	}
	t.index = unsafe.Pointer(&g.index[0])
	if compact {
		t.compact = 1
	}
	if relu {
		t.relu = 1
	}
	amxConvBF16(&t)
}
