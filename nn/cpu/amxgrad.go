package cpu

import "unsafe"

// amxWeightGrad is a training graph's 3×3 convolution weight gradient on
// AMX, in mixed precision: for each kernel offset, the sum over the
// batch's pixels of the output's gradient times the input at that offset,
// both rounded to bfloat16, the sums float32. As in the forward pass
// (convAMX), the batch's padded grids are taken as one long row of
// pixels: the gradient is zero on the padding, so the pixels there add
// nothing, and a kernel offset is a shift along the row, so nothing is
// gathered. The inputs lie channel by channel (a tile's rows are 16
// channels, its columns 32 consecutive pixels), the gradient in pixel
// pairs (AMX's layout for the second operand), so that each product of
// tiles sums 32 pixels for 16 inputs × 16 outputs.
//
// Its buffers are kept from step to step; the padding of both is never
// written, so it stays zero.
type amxWeightGrad struct {
	sh             shape
	in, out, batch int
	geom           directGeom
	// pixels is the batch's padded pixels rounded up to amxBlock; front
	// the pixels before each channel's grids, as many as a kernel offset
	// reaches back, and row a channel's pixels with as many after.
	pixels, front, row int
	x                  []uint16    // (in, row): channel c's grids from x[c·row+front]
	dy                 []uint16    // (pixels/2, out, 2): the gradient, pixel pairs interleaved
	partial            [][]float32 // each worker's sums, (9·in, out)
	jobs               []amxGradJob
}

// amxGradJob is 32 inputs × 32 outputs at one kernel offset: the bytes
// from the inputs' start to the first input's row at the offset, from
// the gradient's start to the first output, and from the sums' start to
// the block's first sum. Its layout is read by the assembly.
type amxGradJob struct{ x, dy, sum int64 }

// amxGradTile is the argument block of amxWeightGradBF16. Its layout is
// read by the assembly through go_asm.h.
type amxGradTile struct {
	cfg         [64]byte // as amxTile's
	x, dy, sum  unsafe.Pointer
	xStride     int64 // bytes of an input channel's row
	dyStride    int64 // bytes of a pixel pair's gradients, out·4
	sumStride   int64 // bytes of a row of sums, out·4
	first, end  int64 // the pixels summed, multiples of 32
	block       int64 // pixels a job sums at a time, a multiple of 32
	jobs        unsafe.Pointer
	njobs, left int64
}

// amxGradBlock is the pixels each job sums before the next job runs: the
// inputs and gradients of that many pixels stay in the first-level
// cache for the 36 jobs of a 64×64 convolution.
const amxGradBlock = 256

// amxConfig sets the tile configuration of the package's AMX kernels:
// palette 1, tiles 0–7 of 16 rows of 64 bytes.
func amxConfig(cfg *[64]byte) {
	cfg[0] = 1
	for i := range 8 {
		cfg[16+2*i] = 64
		cfg[48+i] = 16
	}
}

// amxGradFits says whether a convolution's weight gradient runs on AMX.
func amxGradFits(kernel, in, out int) bool {
	return kernel == 3 && in%32 == 0 && out%32 == 0
}

// run computes dw, the gradient of the weights (out, in, 3, 3) of a
// same-padded 3×3 convolution of x (batch, in, h, w) whose output's
// gradient is dy (batch, out, h, w), on at most workers cores
// (amxGradFits, amxReady).
func (a *amxWeightGrad) run(sh shape, in, out, batch, workers int, x, dy, dw []float32) {
	if a.sh != sh || a.in != in || a.out != out || a.batch != batch {
		a.layout(sh, in, out, batch)
	}
	cells := sh.cells()
	parallelFor(batch, workers, func(_, lo, hi int) {
		for b := lo; b < hi; b++ {
			pix := a.geom.pix[b*cells : (b+1)*cells]
			a.lay(x[b*in*cells:(b+1)*in*cells], dy[b*out*cells:(b+1)*out*cells], pix)
		}
	})
	for len(a.partial) < workers {
		a.partial = append(a.partial, make([]float32, 9*in*out))
	}
	used := parallelFor(a.pixels/amxBlock, workers, func(worker, lo, hi int) {
		sum := a.partial[worker]
		clear(sum)
		a.sum(sum, lo*amxBlock, hi*amxBlock)
	})
	for o := 0; o < out; o++ {
		for c := 0; c < in; c++ {
			for pos := 0; pos < 9; pos++ {
				s := float32(0)
				for w := 0; w < used; w++ {
					s += a.partial[w][(pos*in+c)*out+o]
				}
				dw[(o*in+c)*9+pos] = s
			}
		}
	}
}

// layout sizes the buffers and lists the jobs for a batch.
func (a *amxWeightGrad) layout(sh shape, in, out, batch int) {
	a.sh, a.in, a.out, a.batch = sh, in, out, batch
	a.geom = newDirectGeom(directArch{}, sh, batch)
	pw := a.geom.padWidth
	a.pixels = (a.geom.pixels(batch) + amxBlock - 1) / amxBlock * amxBlock
	a.front = (pw + 1 + 15) / 16 * 16
	a.row = a.front + a.pixels + a.front
	a.x = make([]uint16, in*a.row)
	a.dy = make([]uint16, a.pixels*out)
	a.partial = nil
	a.jobs = a.jobs[:0]
	for pos := 0; pos < 9; pos++ {
		off := (pos/3-1)*pw + pos%3 - 1
		for c := 0; c < in; c += 32 {
			for o := 0; o < out; o += 32 {
				a.jobs = append(a.jobs, amxGradJob{
					x:   int64(c*a.row+a.front+off) * 2,
					dy:  int64(o) * 4,
					sum: int64((pos*in+c)*out+o) * 4,
				})
			}
		}
	}
}

// lay rounds one position's inputs x (in, h, w) and gradient dy (out,
// h, w) into the buffers, its pixels at pix: the inputs a board row at a
// time into each channel's row, the gradient into pixel pairs.
func (a *amxWeightGrad) lay(x, dy []float32, pix []int32) {
	roundGridBF16(a.x[a.front+int(pix[0]):], x, a.in, a.sh.height, a.sh.width, a.row, a.geom.padWidth)
	roundPairsBF16(a.dy, dy, pix, a.out)
}

// roundGridBF16Go is roundGridBF16 one value at a time.
func roundGridBF16Go(dst []uint16, src []float32, planes, h, w, dstPlane, dstRow int) {
	for q := 0; q < planes; q++ {
		for r := 0; r < h; r++ {
			out := dst[q*dstPlane+r*dstRow:][:w]
			for i, v := range src[(q*h+r)*w:][:w] {
				out[i] = toBF16(v)
			}
		}
	}
}

// roundPairsBF16Go is roundPairsBF16 one value at a time.
func roundPairsBF16Go(dst []uint16, src []float32, pix []int32, channels int) {
	n := len(pix)
	for o := 0; o < channels; o++ {
		g := src[o*n : (o+1)*n]
		for i, p := range pix {
			dst[int(p>>1)*channels*2+o*2+int(p&1)] = toBF16(g[i])
		}
	}
}

// sum adds the products of the pixels [first, end) into sum (9·in, out).
func (a *amxWeightGrad) sum(sum []float32, first, end int) {
	if first >= end {
		return
	}
	if first%amxBlock != 0 || end%amxBlock != 0 || end > a.pixels || len(sum) < 9*a.in*a.out {
		panic("nn: AMX weight gradient past its buffers")
	}
	var t amxGradTile
	amxConfig(&t.cfg)
	t.x, t.dy, t.sum = unsafe.Pointer(&a.x[0]), unsafe.Pointer(&a.dy[0]), unsafe.Pointer(&sum[0])
	t.xStride, t.dyStride, t.sumStride = int64(a.row)*2, int64(a.out)*4, int64(a.out)*4
	t.first, t.end, t.block = int64(first), int64(end), amxGradBlock
	t.jobs, t.njobs = unsafe.Pointer(&a.jobs[0]), int64(len(a.jobs))
	amxWeightGradBF16(&t)
}
