package cpu

import (
	"os"
	"strings"
)

// Winograd's minimal filtering (Lavin and Gray, "Fast Algorithms for
// Convolutional Neural Networks", 2016), F(4×4, 3×3), is the float32
// training graph's 3×3 convolution, forward and input gradient, where
// the CPU has the transforms' kernels (winograd_amd64.s). A 4×4 block of
// outputs is, per channel pair, A^T [(G g G^T) ⊙ (B^T d B)] A with d the
// 6×6 inputs around it: the 3×3 kernel's 144 products become the 36
// products of an element-wise product, and summed over input channels
// each of those 36 is a matrix product, (tiles × in) by (in × out), that
// the direct kernels run as they run every product here. A board of
// 8×8 takes 4 tiles (144 products an input/output channel pair against
// the direct kernels' 576), one of 11×11 9 (324 against 1,089); the
// transforms are a few additions a value on 8 channels at a time.
//
// Outputs differ from the direct kernels' by float32 rounding: the
// transforms' constants reach 1/24 and 8, which costs about three
// decimal digits of float32's seven (Lavin and Gray measured F(4×4,
// 3×3)'s error at 1e-5 of the outputs' scale); training sums and
// averages far more noise than that.
type winogradConv struct {
	winogradGeom
	u     []float32   // the step's weights transformed: (36, in, out)
	gk    [][]float32 // each core's scratch for them
	zeros []float32
	work  []winogradWork
}

// winogradGeom is how a convolution's images are cut into tiles.
type winogradGeom struct {
	in, out        int
	height, width  int
	tilesH, tilesW int
	// An image's grid is its pixels with a border one pixel wide above
	// and to the left and wide enough below and to the right to fill the
	// last tiles, zero (written once, never again).
	gridW, gridCells int
	pix              []int32 // each cell's pixel in its image's grid
	// An image's output grid is its tiles' outputs, zero past the board
	// (for the weight gradient's output gradients).
	outW, outCells int
	outPix         []int32 // each cell's pixel in the output grid
	offs           []int64 // each tile's 16 outputs' cells × out in an image's compact pixels, −1 past the board
	chunk          int     // images a worker takes through the steps at a time
}

// winogradWork is a worker's buffers for a chunk of images.
type winogradWork struct {
	grid    []float32 // (chunk · gridCells, in)
	v       []float32 // (36, rows, in): the inputs transformed
	m       []float32 // (36, rows, out): their products with u
	out     []float32 // (chunk · cells, out): compact pixels
	scratch []float32 // the transforms' 36 vectors of 8
}

// winogradRows is about how many tiles a worker transforms and
// multiplies at a time: 64 tiles of 64 channels are 590 KiB of
// transformed inputs, about a core's L2 cache.
const winogradRows = 64

func newWinogradGeom(sh shape, in, out int) winogradGeom {
	g := winogradGeom{in: in, out: out, height: sh.height, width: sh.width,
		tilesH: (sh.height + 3) / 4, tilesW: (sh.width + 3) / 4}
	g.gridW = g.tilesW*4 + 2
	g.gridCells = (g.tilesH*4 + 2) * g.gridW
	g.outW = g.tilesW * 4
	g.outCells = g.tilesH * 4 * g.outW
	for y := range sh.height {
		for x := range sh.width {
			g.pix = append(g.pix, int32((y+1)*g.gridW+x+1))
			g.outPix = append(g.outPix, int32(y*g.outW+x))
		}
	}
	tiles := g.tiles()
	for t := range tiles {
		ty, tx := t/g.tilesW, t%g.tilesW
		for i := range 4 {
			for j := range 4 {
				y, x := ty*4+i, tx*4+j
				off := int64(-1)
				if y < sh.height && x < sh.width {
					off = int64((y*sh.width + x) * out)
				}
				g.offs = append(g.offs, off)
			}
		}
	}
	g.chunk = max(1, winogradRows/tiles)
	return g
}

func (g *winogradGeom) tiles() int { return g.tilesH * g.tilesW }
func (g *winogradGeom) cells() int { return g.height * g.width }

// transformInputs lays n images x (NCHW) out in grid and writes their
// tiles' transformed inputs to v, (36, n·tiles, in).
func (g *winogradGeom) transformInputs(n int, x, grid, v, scratch []float32) {
	cells, tiles := g.cells(), g.tiles()
	rows := n * tiles
	for j := range n {
		toPixels(grid[j*g.gridCells*g.in:(j+1)*g.gridCells*g.in], x[j*g.in*cells:(j+1)*g.in*cells], g.pix, g.in)
	}
	for r := range rows {
		j, t := r/tiles, r%tiles
		corner := j*g.gridCells + t/g.tilesW*4*g.gridW + t%g.tilesW*4
		winogradInput(v[r*g.in:], grid[corner*g.in:], scratch, g.gridW*g.in, rows*g.in, g.in)
	}
}

func newWinogradConv(sh shape, in, out int) *winogradConv {
	return &winogradConv{winogradGeom: newWinogradGeom(sh, in, out),
		u: make([]float32, 36*in*out+weightSlack), zeros: make([]float32, out+weightSlack)}
}

// winogradFits says whether the Winograd convolution takes a 3×3
// convolution of in to out channels: its transforms take 8 channels at a
// time.
func winogradFits(kernel, in, out int) bool {
	return kernel == 3 && in%8 == 0 && out%8 == 0
}

// winogradTraining says whether trainers on the float32 set arch
// convolve by Winograd: on every float32 set where the CPU runs the
// transforms (AVX2's, AVX-512's and the Winograd sets), never on
// bfloat16. On two Zen 3 cores Winograd trains 1.39–1.46× AVX2's direct
// kernels' samples a second, on a Zen 4 core 1.66–1.75× AVX-512's
// (docs/experiments.md, 2026-12-06 and 12-07); an Intel AVX-512 CPU
// without AMX is not measured. FLIPZERO_WINOGRAD=off keeps the direct
// kernels.
func winogradTraining(arch directArch) bool {
	if arch.bf16 || !winogradKernels() {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(os.Getenv("FLIPZERO_WINOGRAD"))) {
	case "off", "0", "false", "no":
		return false
	}
	return true
}

// run computes y = x ⊛ w for a batch of NCHW tensors, w packed as the
// direct kernels read it ((3·3·in, out) rows), on arch's float32 kernels
// with the batch split over at most workers cores.
func (w *winogradConv) run(arch directArch, packed []float32, batch, workers int, x, y []float32) {
	w.transformWeights(packed, workers)
	cells := w.cells()
	rows := w.chunk * w.tiles()
	for len(w.work) < workers {
		w.work = append(w.work, winogradWork{
			grid:    make([]float32, w.chunk*w.gridCells*w.in),
			v:       make([]float32, 36*rows*w.in),
			m:       make([]float32, 36*rows*w.out),
			out:     make([]float32, w.chunk*cells*w.out),
			scratch: make([]float32, 36*8),
		})
	}
	parallelFor(batch, workers, func(worker, lo, hi int) {
		s := &w.work[worker]
		for b0 := lo; b0 < hi; b0 += w.chunk {
			n := min(w.chunk, hi-b0)
			w.chunkRun(arch, s, n, x[b0*w.in*cells:(b0+n)*w.in*cells], y[b0*w.out*cells:(b0+n)*w.out*cells])
		}
	})
}

// chunkRun convolves n images x into y (both NCHW) with buffers s.
func (w *winogradConv) chunkRun(arch directArch, s *winogradWork, n int, x, y []float32) {
	cells, tiles := w.cells(), w.tiles()
	rows := n * tiles
	w.transformInputs(n, x, s.grid, s.v, s.scratch)
	winogradProducts(arch, s.v, w.u, s.m, nil, w.zeros, rows, w.in, w.out)
	for r := range rows {
		j, t := r/tiles, r%tiles
		winogradOutput(s.out[j*cells*w.out:(j+1)*cells*w.out], w.offs[t*16:(t+1)*16], s.m[r*w.out:], s.scratch, rows*w.out, w.out, nil, false)
	}
	for j := range n {
		fromPixels(y[j*w.out*cells:(j+1)*w.out*cells], s.out[j*cells*w.out:(j+1)*cells*w.out], w.out, cells)
	}
}

// winogradProducts computes m[ξ] = v[ξ] · u[ξ] for each of the 36 ξ,
// (rows, in) by (in, out), plus bias (out values and slack, or nil) in
// m[7]: A^T's column 1 is all ones, so a bias there reaches every output
// of the tile once. zeros holds out values and slack.
func winogradProducts(arch directArch, v, u, m, bias, zeros []float32, rows, in, out int) {
	for xi := range 36 {
		b := zeros
		if xi == 7 && bias != nil {
			b = bias
		}
		matmulDirect(arch, v[xi*rows*in:(xi+1)*rows*in], u[xi*in*out:], m[xi*rows*out:(xi+1)*rows*out], b, rows, in, out, false)
	}
}

// winogradKernelTransform is G, F(4×4, 3×3)'s kernel transform.
func winogradKernelTransform() [6][3]float32 {
	return [6][3]float32{
		{1.0 / 4, 0, 0},
		{-1.0 / 6, -1.0 / 6, -1.0 / 6},
		{-1.0 / 6, 1.0 / 6, -1.0 / 6},
		{1.0 / 24, 1.0 / 12, 1.0 / 6},
		{1.0 / 24, -1.0 / 12, 1.0 / 6},
		{0, 0, 1},
	}
}

// transformWeights writes w.u from the step's packed weights.
func (w *winogradConv) transformWeights(packed []float32, workers int) {
	w.gk = scratch(w.gk, 6*3*w.out, workers)
	winogradWeights(w.u, packed, w.in, w.out, w.gk)
}

// winogradWeights writes u[ξ] (in, out) = G g G^T at ξ for each channel
// pair's 3×3 kernel g, read from packed ((ky·3+kx)·in + c)·out + o, the
// input channels split over the cores of gks, each a core's scratch of
// 6·3·out values. It runs along the output channels, which packed and u
// both hold side by side.
func winogradWeights(u, packed []float32, in, out int, gks [][]float32) {
	G := winogradKernelTransform()
	parallelFor(in, len(gks), func(worker, lo, hi int) {
		gk := gks[worker] // (a, kx, o): (G g)[a][kx]
		for c := lo; c < hi; c++ {
			clear(gk)
			for ky := range 3 {
				for kx := range 3 {
					row := packed[((ky*3+kx)*in+c)*out:][:out]
					for a := range 6 {
						if g := G[a][ky]; g != 0 {
							dst := gk[(a*3+kx)*out:][:out]
							for o, v := range row {
								dst[o] += g * v
							}
						}
					}
				}
			}
			for a := range 6 {
				g0, g1, g2 := gk[(a*3)*out:][:out], gk[(a*3+1)*out:][:out], gk[(a*3+2)*out:][:out]
				for b := range 6 {
					gb := &G[b]
					dst := u[((a*6+b)*in+c)*out:][:out]
					for o := range dst {
						dst[o] = g0[o]*gb[0] + g1[o]*gb[1] + g2[o]*gb[2]
					}
				}
			}
		}
	})
}

// winogradInputGo is winogradInput in Go: for each 8 channels, the 6×6
// pixels from src (rows srcRow values apart, pixels channels apart)
// become B^T d B, value ξ = 6i+j at dst[ξ·dstXi].
func winogradInputGo(dst, src []float32, srcRow, dstXi, channels int) {
	var d, t [6][6]float32
	for c := range channels {
		for i := range 6 {
			for j := range 6 {
				d[i][j] = src[i*srcRow+j*channels+c]
			}
		}
		for j := range 6 {
			col := winogradBT([6]float32{d[0][j], d[1][j], d[2][j], d[3][j], d[4][j], d[5][j]})
			for i := range 6 {
				t[i][j] = col[i]
			}
		}
		for i := range 6 {
			row := winogradBT(t[i])
			for j := range 6 {
				dst[(i*6+j)*dstXi+c] = row[j]
			}
		}
	}
}

// winogradBT is B^T x, F(4×4, 3×3)'s input transform in one dimension.
func winogradBT(x [6]float32) [6]float32 {
	return [6]float32{
		4*x[0] - 5*x[2] + x[4],
		(x[3] + x[4]) - 4*(x[1]+x[2]),
		(x[4] - x[3]) + 4*(x[1]-x[2]),
		(x[4] - x[2]) + 2*(x[3]-x[1]),
		(x[4] - x[2]) - 2*(x[3]-x[1]),
		4*x[1] - 5*x[3] + x[5],
	}
}

// winogradAT is A^T x, its output transform in one dimension.
func winogradAT(x [6]float32) [4]float32 {
	a, b := x[1]+x[2], x[1]-x[2]
	c, d := x[3]+x[4], x[3]-x[4]
	return [4]float32{x[0] + a + c, b + 2*d, a + 4*c, x[5] + b + 8*d}
}

// winogradOutputGo is winogradOutput in Go: for each 8 channels, the 36
// products src[ξ·srcXi] become the 4×4 outputs A^T m A, output 4r+k
// stored at dst[offs[4r+k]] unless that is −1, after adding skip's value
// at the same place where skip is not nil and then, with relu, the ReLU.
func winogradOutputGo(dst []float32, offs []int64, src []float32, srcXi, channels int, skip []float32, relu bool) {
	var m [6][6]float32
	var t [4][6]float32
	for c := range channels {
		for i := range 6 {
			for j := range 6 {
				m[i][j] = src[(i*6+j)*srcXi+c]
			}
		}
		for j := range 6 {
			col := winogradAT([6]float32{m[0][j], m[1][j], m[2][j], m[3][j], m[4][j], m[5][j]})
			for r := range 4 {
				t[r][j] = col[r]
			}
		}
		for r := range 4 {
			row := winogradAT(t[r])
			for k, v := range row {
				o := offs[r*4+k]
				if o < 0 {
					continue
				}
				if skip != nil {
					v += skip[int(o)+c]
				}
				if relu {
					v = max(v, 0)
				}
				dst[int(o)+c] = v
			}
		}
	}
}

// winogradA is A x, the transpose of the output transform in one
// dimension: how an output's gradient reaches the 36 products.
func winogradA(x [4]float32) [6]float32 {
	p, q := x[0]+x[2], x[1]+x[3]
	r, s := x[0]+4*x[2], x[1]+4*x[3]
	return [6]float32{x[0], p + q, p - q, r + 2*s, r - 2*s, x[3]}
}

// winogradGradGo is winogradGrad in Go: for each 8 channels, the 4×4
// output gradients from src (rows srcRow values apart, pixels channels
// apart) become A dy A^T, value ξ = 6i+j at dst[ξ·dstXi].
func winogradGradGo(dst, src []float32, srcRow, dstXi, channels int) {
	var d [4][4]float32
	var t [6][4]float32
	for c := range channels {
		for i := range 4 {
			for j := range 4 {
				d[i][j] = src[i*srcRow+j*channels+c]
			}
		}
		for j := range 4 {
			col := winogradA([4]float32{d[0][j], d[1][j], d[2][j], d[3][j]})
			for i := range 6 {
				t[i][j] = col[i]
			}
		}
		for i := range 6 {
			row := winogradA(t[i])
			for j := range 6 {
				dst[(i*6+j)*dstXi+c] = row[j]
			}
		}
	}
}

// winogradWeightGrad is a training graph's 3×3 weight gradient by
// Winograd, where its forward pass runs by it: the gradient of the 36
// products u[ξ] (in, out), summed over every tile of the batch, is
// v[ξ]ᵀ · (A dy Aᵀ)[ξ] — a matrix product (in × tiles) by (tiles × out)
// for each ξ, run on the direct kernels — and the weights' is Gᵀ du G.
type winogradWeightGrad struct {
	winogradGeom
	zeros []float32
	t     []float32 // untransform's scratch
	work  []winogradGradWork
}

// winogradGradWork is a worker's buffers for a chunk of images.
type winogradGradWork struct {
	grid    []float32 // (chunk · gridCells, in)
	v, vt   []float32 // the inputs transformed, (36, rows, in), and as (36, in, rows)
	dyGrid  []float32 // (chunk · outCells, out)
	m       []float32 // (36, rows, out): the output gradients transformed
	sums    []float32 // (36, in, out): du over the worker's images
	scratch []float32
}

// run computes dw (out, in, 3, 3), the weight gradient of a 3×3
// convolution of x (batch, in, h, w) whose output's gradient is dy
// (batch, out, h, w), on arch's float32 kernels, the batch split over
// at most workers cores.
func (d *winogradWeightGrad) run(arch directArch, sh shape, in, out, batch, workers int, x, dy, dw []float32) {
	if d.pix == nil || d.in != in || d.out != out || d.height != sh.height || d.width != sh.width {
		d.winogradGeom = newWinogradGeom(sh, in, out)
		d.zeros = make([]float32, out+weightSlack)
		d.work = nil
	}
	rows := d.chunk * d.tiles()
	for len(d.work) < workers {
		d.work = append(d.work, winogradGradWork{
			grid:    make([]float32, d.chunk*d.gridCells*in),
			v:       make([]float32, 36*rows*in),
			vt:      make([]float32, 36*in*rows),
			dyGrid:  make([]float32, d.chunk*d.outCells*out),
			m:       make([]float32, 36*rows*out+weightSlack),
			sums:    make([]float32, 36*in*out),
			scratch: make([]float32, 36*8),
		})
	}
	cells := d.cells()
	used := parallelFor(batch, workers, func(worker, lo, hi int) {
		s := &d.work[worker]
		clear(s.sums)
		for b0 := lo; b0 < hi; b0 += d.chunk {
			n := min(d.chunk, hi-b0)
			d.chunkRun(arch, s, n, x[b0*in*cells:(b0+n)*in*cells], dy[b0*out*cells:(b0+n)*out*cells])
		}
	})
	sums := d.work[0].sums
	for _, w := range d.work[1:used] {
		for i, v := range w.sums {
			sums[i] += v
		}
	}
	d.untransform(sums, dw)
}

// chunkRun adds n images' du to s.sums.
func (d *winogradWeightGrad) chunkRun(arch directArch, s *winogradGradWork, n int, x, dy []float32) {
	in, out, cells, tiles := d.in, d.out, d.cells(), d.tiles()
	rows := n * tiles
	d.transformInputs(n, x, s.grid, s.v, s.scratch)
	for xi := range 36 {
		transpose(s.vt[xi*in*rows:(xi+1)*in*rows], s.v[xi*rows*in:(xi+1)*rows*in], rows, in)
	}
	for j := range n {
		toPixels(s.dyGrid[j*d.outCells*out:(j+1)*d.outCells*out], dy[j*out*cells:(j+1)*out*cells], d.outPix, out)
	}
	for r := range rows {
		j, t := r/tiles, r%tiles
		corner := j*d.outCells + t/d.tilesW*4*d.outW + t%d.tilesW*4
		winogradGrad(s.m[r*out:], s.dyGrid[corner*out:], s.scratch, d.outW*out, rows*out, out)
	}
	for xi := range 36 {
		matmulDirect(arch, s.vt[xi*in*rows:(xi+1)*in*rows], s.m[xi*rows*out:], s.sums[xi*in*out:(xi+1)*in*out], d.zeros, in, rows, out, true)
	}
}

// untransform writes dw[o][c] = Gᵀ du[·][c][o] G for each channel pair.
func (d *winogradWeightGrad) untransform(du, dw []float32) {
	G := winogradKernelTransform()
	in, out := d.in, d.out
	d.t = grow(d.t, 6*3*out)
	t := d.t // (a, kx, o): Σ_b du[a][b] G[b][kx]
	for c := range in {
		clear(t)
		for a := range 6 {
			for b := range 6 {
				row := du[((a*6+b)*in+c)*out : ((a*6+b)*in+c+1)*out]
				for kx := range 3 {
					g := G[b][kx]
					if g == 0 {
						continue
					}
					dst := t[(a*3+kx)*out : (a*3+kx+1)*out]
					for o, v := range row {
						dst[o] += g * v
					}
				}
			}
		}
		for ky := range 3 {
			for kx := range 3 {
				for o := range out {
					var s float32
					for a := range 6 {
						s += G[a][ky] * t[(a*3+kx)*out+o]
					}
					dw[((o*in+c)*3+ky)*3+kx] = s
				}
			}
		}
	}
}

// transpose writes src (rows, cols) to dst as (cols, rows): the whole
// 8×8 blocks in assembly where the CPU has it, the rest here.
func transpose(dst, src []float32, rows, cols int) {
	r8, c8 := transposeBlocks(dst, src, rows, cols)
	for r := range rows {
		from := c8
		if r >= r8 {
			from = 0
		}
		for c := from; c < cols; c++ {
			dst[c*rows+r] = src[r*cols+c]
		}
	}
}
