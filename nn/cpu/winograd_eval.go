package cpu

// winogradEval is an evaluator's tower of 3×3 convolutions by
// Winograd's F(4×4, 3×3) (winogradConv says how), read from and written
// to the direct convolution's padded activations in place: a tile's 6×6
// inputs start a row and a pixel before its first output, in the zero
// border, and its outputs past the board are not stored. Where a tile
// reaches past the border (an 11×11 board's last tiles reach two rows
// and columns past it, into the next row or position), those inputs
// reach only the outputs past the board: B^T's last column and A^T's
// last column each have a single one, on the last row, so the sixth row
// and column of a tile's inputs meet only the fourth row and column of
// its outputs; the buffers hold slack for the last position's reach.
// The bias is added in the products (winogradProducts), the skip and
// the ReLU as the outputs are stored.
type winogradEval struct {
	arch               directArch
	filters            int
	tiles, chunk       int
	padWidth, padCells int
	// corner is each tile's first input pixel in the first position's
	// padded grid, offs its 16 outputs' pixels × filters there (−1 past
	// the board); position b's are padCells pixels further per position.
	corner []int
	offs   []int64
	// u are the tower's convolutions' weights transformed, block by
	// block: (36, filters, filters) each, and bias their biases.
	u, bias [][2][]float32
	gk      [][]float32 // the weight transform's scratch
	v, m    []float32
	zeros   []float32
	scratch []float32
}

// winogradSlack is the pixels past a batch's padded grids that the last
// position's tiles read.
func winogradSlack(padWidth int) int { return 3*padWidth + 3 }

// newWinogradEval makes the tower's Winograd convolutions for the padded
// layout g of a board of shape sh, on arch's float32 kernels; nil where
// the tower's filters do not come in eights.
func newWinogradEval(arch directArch, g *directGeom, sh shape, blocks [][2]foldedConv) *winogradEval {
	if len(blocks) == 0 || !winogradFits(blocks[0][0].kernel, blocks[0][0].in, blocks[0][0].out) {
		return nil
	}
	f := blocks[0][0].out
	tilesH, tilesW := (sh.height+3)/4, (sh.width+3)/4
	w := &winogradEval{arch: arch, filters: f, tiles: tilesH * tilesW, padWidth: g.padWidth, padCells: g.padCells}
	for t := range w.tiles {
		ty, tx := t/tilesW, t%tilesW
		w.corner = append(w.corner, int(g.pix[ty*4*sh.width+tx*4])-g.padWidth-1)
		for i := range 4 {
			for j := range 4 {
				y, x := ty*4+i, tx*4+j
				off := int64(-1)
				if y < sh.height && x < sh.width {
					off = int64(g.pix[y*sh.width+x]) * int64(f)
				}
				w.offs = append(w.offs, off)
			}
		}
	}
	w.chunk = max(1, winogradRows/w.tiles)
	rows := w.chunk * w.tiles
	w.v = make([]float32, 36*rows*f)
	w.m = make([]float32, 36*rows*f)
	w.zeros = make([]float32, f+weightSlack)
	w.scratch = make([]float32, 36*8)
	w.load(blocks)
	return w
}

// load transforms the tower's weights, blocks (out, in) alike, into u
// and takes their biases: at construction and on every Reload, since
// the evaluator's weights are the network's at hand, not its first.
func (w *winogradEval) load(blocks [][2]foldedConv) {
	f := w.filters
	if len(w.u) != len(blocks) {
		w.u = make([][2][]float32, len(blocks))
		for i := range w.u {
			for k := range w.u[i] {
				w.u[i][k] = make([]float32, 36*f*f+weightSlack)
			}
		}
		w.bias = make([][2][]float32, len(blocks))
		w.gk = [][]float32{make([]float32, 6*3*f)}
	}
	for i, b := range blocks {
		for k, c := range b {
			winogradWeights(w.u[i][k], c.w, f, f, w.gk)
			w.bias[i][k] = c.b
		}
	}
}

// conv applies convolution k of block i to count positions of src into
// dst (both padded), adding skip (padded) where it is not nil, then the
// ReLU.
func (w *winogradEval) conv(i, k int, src, dst, skip []float32, count int) {
	f := w.filters
	for b0 := 0; b0 < count; b0 += w.chunk {
		n := min(w.chunk, count-b0)
		rows := n * w.tiles
		for r := range rows {
			b, t := b0+r/w.tiles, r%w.tiles
			p := w.corner[t] + b*w.padCells
			winogradInput(w.v[r*f:], src[p*f:], w.scratch, w.padWidth*f, rows*f, f)
		}
		winogradProducts(w.arch, w.v, w.u[i][k], w.m, w.bias[i][k], w.zeros, rows, f, f)
		for r := range rows {
			b, t := b0+r/w.tiles, r%w.tiles
			base := b * w.padCells * f
			var sk []float32
			if skip != nil {
				sk = skip[base:]
			}
			winogradOutput(dst[base:], w.offs[t*16:(t+1)*16], w.m[r*f:], w.scratch, rows*f, f, sk, true)
		}
	}
}
