package cpu

import (
	"fmt"
	"math"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/nn"
)

// model is a snapshot's weights as the CPU evaluator reads them, made
// once a snapshot (nn.Folded.Prepared) and shared by its evaluators.
type model struct {
	game   env.Game
	cfg    nn.Config
	shape  shape
	stem   foldedConv
	blocks [][2]foldedConv
	// blocksBF16 are the blocks' convolutions in bfloat16, for the
	// bfloat16 kernels (directArch.bf16), where the CPU has them and the
	// tower an even number of filters.
	blocksBF16 [][2]bf16Conv
	// blocksInt8 are the blocks' convolutions in bytes, for the int8
	// kernels (directArch.int8), where the CPU has them and the tower's
	// filters come in fours.
	blocksInt8 [][2]*int8Conv
	// gpool is each block's global pooling layer, nil in blocks without.
	gpool                 []*foldedDense
	policyConv, valueConv foldedConv
	valueFC2              foldedDense
	// The convolutional policy head, where the network has it (then
	// policyIn is empty): policyGather is each action's logit as an
	// index into a position's planes, cell-major (cell·planes + plane),
	// followed by the global logits.
	policyOut    *foldedConv
	policyGlobal *foldedDense
	policyGather []int32
	// policyIn and valueIn are the dense policy layer and the value
	// head's first with their input rows in (cell, channel) order, the
	// order in which the Evaluator's heads leave their 1×1 convolutions'
	// output: no regrouping.
	policyIn, valueIn foldedDense
}

// shape is a game's encoding: planes × height × width, and its actions.
type shape struct {
	planes, height, width, actions int
}

func (s shape) cells() int { return s.height * s.width }

// foldedConv is a convolution with batch norm folded in. w is
// (kernel·kernel·in, out): row (ky·kernel + kx)·in + c holds the weights
// of input channel c at kernel offset (ky, kx), the order in which im2row
// lays out a cell's neighbourhood. b is (out). Both have weightSlack
// values of room beyond their ends.
type foldedConv struct {
	kernel, in, out int
	w, b            []float32
}

// bf16Conv is a foldedConv (of an even number of input channels) for
// the bfloat16 kernels: w has a row for each pair of input channels at
// each kernel offset, (ky·kernel + kx)·in/2 + pair, holding for each
// output channel the pair's two weights rounded to bfloat16, the lower
// channel's in the low half of the word. b is the foldedConv's bias.
type bf16Conv struct {
	kernel, in, out int
	w               []uint32
	b               []float32
}

func newBF16Conv(c foldedConv) bf16Conv {
	bc := bf16Conv{kernel: c.kernel, in: c.in, out: c.out, w: make([]uint32, c.kernel*c.kernel*c.in/2*c.out), b: c.b}
	packBF16(&bc, c)
	return bc
}

// packBF16 rounds c's weights into bc's pairs (bc has c's shape).
func packBF16(bc *bf16Conv, c foldedConv) {
	kk, pairs := c.kernel*c.kernel, c.in/2
	for k := 0; k < kk; k++ {
		for j := 0; j < pairs; j++ {
			lo, hi := c.w[(k*c.in+2*j)*c.out:][:c.out], c.w[(k*c.in+2*j+1)*c.out:][:c.out]
			row := bc.w[(k*pairs+j)*c.out:][:c.out]
			for o := range row {
				row[o] = uint32(toBF16(lo[o])) | uint32(toBF16(hi[o]))<<16
			}
		}
	}
}

// toBF16 rounds v to the nearest bfloat16, ties to even (v is finite).
func toBF16(v float32) uint16 {
	u := math.Float32bits(v)
	return uint16((u + 0x7fff + u>>16&1) >> 16)
}

// foldedDense is a fully connected layer: w is (in, out), b is (out).
type foldedDense struct {
	in, out int
	w, b    []float32
}

// modelKey is the key of the CPU's form of a snapshot.
type modelKey struct{}

// prepare returns f's weights in the evaluator's layout, made on the
// first call for f.
func prepare(f *nn.Folded) (*model, error) {
	m, err := f.Prepared(modelKey{}, func(l nn.Layers) (any, error) { return newModel(f.Game(), f.Config(), l), nil })
	if err != nil {
		return nil, err
	}
	return m.(*model), nil
}

func newModel(g env.Game, cfg nn.Config, l nn.Layers) *model {
	m := &model{game: g, cfg: cfg, shape: shape{planes: l.Planes, height: l.Height, width: l.Width, actions: l.Actions}}
	cells := m.shape.cells()
	m.stem = im2rowConv(l.Stem)
	_, bf16 := directBF16()
	int8s := directInt8Archs()
	for i, b := range l.Blocks {
		m.blocks = append(m.blocks, [2]foldedConv{im2rowConv(b[0]), im2rowConv(b[1])})
		last := m.blocks[len(m.blocks)-1]
		if bf16 && cfg.Filters%2 == 0 {
			m.blocksBF16 = append(m.blocksBF16, [2]bf16Conv{newBF16Conv(last[0]), newBF16Conv(last[1])})
		}
		if len(int8s) > 0 && cfg.Filters%4 == 0 {
			m.blocksInt8 = append(m.blocksInt8, [2]*int8Conv{newInt8Conv(last[0]), newInt8Conv(last[1])})
		}
		var pool *foldedDense
		if d := l.GlobalPool[i]; d != nil {
			c := copyDense(*d)
			pool = &c
		}
		m.gpool = append(m.gpool, pool)
	}
	m.policyConv = im2rowConv(l.PolicyConv)
	m.valueConv = im2rowConv(l.ValueConv)
	if l.PolicyOut != nil {
		out := im2rowConv(*l.PolicyOut)
		m.policyOut = &out
		if l.PolicyGlobal != nil {
			g := copyDense(*l.PolicyGlobal)
			m.policyGlobal = &g
		}
		// From the description's (plane·cells + cell) to cell-major.
		planes := l.PolicyOut.Out
		m.policyGather = make([]int32, len(l.PolicyIndex))
		for a, i := range l.PolicyIndex {
			if int(i) < planes*cells {
				m.policyGather[a] = int32(int(i)%cells*planes + int(i)/cells)
			} else {
				m.policyGather[a] = i
			}
		}
	} else {
		m.policyIn = cellMajor(copyDense(l.PolicyFC), l.PolicyConv.Out, cells)
	}
	m.valueIn = cellMajor(copyDense(l.ValueFC1), l.ValueConv.Out, cells)
	m.valueFC2 = copyDense(l.ValueFC2)
	return m
}

// im2rowConv lays a folded convolution's (out, in, kernel, kernel)
// weights out (kernel·kernel·in, out).
func im2rowConv(c nn.ConvLayer) foldedConv {
	kk := c.Kernel * c.Kernel
	fc := foldedConv{kernel: c.Kernel, in: c.In, out: c.Out,
		w: make([]float32, c.Out*c.In*kk, c.Out*c.In*kk+weightSlack), b: make([]float32, c.Out, c.Out+weightSlack)}
	for o := 0; o < c.Out; o++ {
		for in := 0; in < c.In; in++ {
			for k := 0; k < kk; k++ {
				fc.w[(k*c.In+in)*c.Out+o] = c.Weights[(o*c.In+in)*kk+k]
			}
		}
	}
	copy(fc.b, c.Bias)
	return fc
}

func copyDense(d nn.DenseLayer) foldedDense {
	return foldedDense{in: d.In, out: d.Out, w: append([]float32(nil), d.Weights...), b: append([]float32(nil), d.Bias...)}
}

// cellMajor reorders the input rows of a layer that reads a flattened
// (channels, cells) head from channel-major to cell-major.
func cellMajor(d foldedDense, channels, cells int) foldedDense {
	out := foldedDense{in: d.in, out: d.out, w: make([]float32, len(d.w)), b: d.b}
	for c := 0; c < channels; c++ {
		for cell := 0; cell < cells; cell++ {
			copy(out.w[(cell*channels+c)*d.out:(cell*channels+c+1)*d.out], d.w[(c*cells+cell)*d.out:(c*cells+cell+1)*d.out])
		}
	}
	return out
}

// Evaluator runs batched inference of a snapshot on the CPU: the CPU
// backend's nn.Inference. It holds its own buffers, allocates nothing per
// call and must be used by one goroutine at a time.
type Evaluator struct {
	m        *model
	maxBatch int

	// x, y, z are activations laid out (batch·cells, channels): a
	// convolution is then one matrix multiply of each cell's
	// neighbourhood, gathered as contiguous runs of channels.
	cells   []float32 // the input regrouped (batch·cells, planes)
	x, y, z []float32
	rows    []float32 // im2row of one chunk of cells
	logits  []float32 // (batch, actions)
	hidden  []float32 // (batch, value hidden)
	wdl     []float32 // (batch, 3)
	// pix lists the rows of the im2row path's activations, position by
	// position (0, 1, 2, …), and pooled and poolBias are the global
	// pooling's scratch, a position's pooled values and bias for each of
	// the batch: for the pooling bias, which finds a position's cells
	// through it or through the direct path's pixels.
	pix              []int32
	pooled, poolBias []float32
	// The convolutional policy head's scratch: its planes (batch·cells ×
	// policy planes), the policy convolution's pooled values, the
	// global logits (batch × globals).
	policyPlanes, policyPooled, policyGlobals []float32
	// d is the direct convolution's state, where it runs; then the
	// tower works in d's padded buffers, and heads holds the heads' 1×1
	// convolutions, compact.
	d     *direct
	heads []float32
}

// chunkRows is how many cells' neighbourhoods are gathered before they are
// multiplied. OpenBLAS packs the weights again on every call, so a
// chunk is large — a batch of 32 Othello positions is one call — and
// its output (512 KB for 64 filters) still sits in cache for the bias,
// skip and ReLU; chunks of 256 rows ran ~15% slower at batch 32.
const chunkRows = 2048

// NewEvaluator makes an evaluator of f for batches of up to maxBatch
// positions, convolving directly where the CPU has AVX-512 or AVX2
// (ConvInfo says which).
func NewEvaluator(f *nn.Folded, maxBatch int) (*Evaluator, error) {
	arch, direct := directDefault()
	return newEvaluator(f, maxBatch, arch, direct)
}

// Reload makes the evaluator evaluate g, a snapshot of the same game and
// architecture, whose arrays its buffers fit.
func (e *Evaluator) Reload(g *nn.Folded) error {
	m, err := prepare(g)
	if err != nil {
		return err
	}
	if m.game.Name() != e.m.game.Name() || m.cfg != e.m.cfg || m.shape != e.m.shape {
		return fmt.Errorf("evaluator reload: a %s network of %v, the evaluator's is %s of %v", m.game.Name(), m.cfg, e.m.game.Name(), e.m.cfg)
	}
	e.m = m
	if e.d != nil && e.d.wino != nil {
		e.d.wino.load(m.blocks)
	}
	return nil
}

// newEvaluator makes an evaluator that convolves directly with arch's
// kernels, or by im2row.
func newEvaluator(f *nn.Folded, maxBatch int, arch directArch, direct bool) (*Evaluator, error) {
	if maxBatch < 1 || maxBatch > 1<<16 {
		return nil, fmt.Errorf("evaluator batch size %d, want 1..%d", maxBatch, 1<<16)
	}
	m, err := prepare(f)
	if err != nil {
		return nil, err
	}
	sh, cfg := m.shape, m.cfg
	cells := maxBatch * sh.cells()
	e := &Evaluator{
		m:        m,
		maxBatch: maxBatch,
		logits:   make([]float32, maxBatch*sh.actions),
		hidden:   make([]float32, maxBatch*cfg.ValueHidden),
		wdl:      make([]float32, maxBatch*valueOutputs),
		pooled:   make([]float32, maxBatch*2*cfg.Filters),
		poolBias: make([]float32, maxBatch*cfg.Filters),
	}
	if m.policyOut != nil {
		e.policyPlanes = make([]float32, cells*m.policyOut.out)
		e.policyPooled = make([]float32, 2*cfg.PolicyFilters)
		if m.policyGlobal != nil {
			e.policyGlobals = make([]float32, maxBatch*m.policyGlobal.out)
		}
	}
	if direct {
		e.d = newDirect(arch, sh, cfg, maxBatch)
		if arch.winograd {
			e.d.wino = newWinogradEval(arch, &e.d.directGeom, sh, m.blocks)
		}
		e.heads = make([]float32, (cfg.PolicyFilters+cfg.ValueFilters)*cells)
		return e, nil
	}
	widest := max(cfg.Filters, sh.planes, cfg.PolicyFilters, cfg.ValueFilters)
	e.cells = make([]float32, sh.planes*cells)
	e.x = make([]float32, widest*cells)
	e.y = make([]float32, widest*cells)
	e.z = make([]float32, widest*cells)
	e.rows = make([]float32, widest*9*min(cells, chunkRows))
	e.pix = make([]int32, cells)
	for i := range e.pix {
		e.pix[i] = int32(i)
	}
	return e, nil
}

// MaxBatch is the largest batch the evaluator takes.
func (e *Evaluator) MaxBatch() int { return e.maxBatch }

// Forward runs the network on count encoded positions (count × planes ×
// height × width values) and returns the policy logits (count × actions)
// and win/draw/loss probabilities (count × 3). The results live in the
// evaluator's buffers until its next call.
func (e *Evaluator) Forward(inputs []float32, count int) (logits, wdl []float32, err error) {
	sh := e.m.shape
	size := sh.planes * sh.cells()
	if count < 1 || count > e.maxBatch {
		return nil, nil, fmt.Errorf("forward %d positions, want 1..%d", count, e.maxBatch)
	}
	if len(inputs) != count*size {
		return nil, nil, fmt.Errorf("forward: %d input values, want %d", len(inputs), count*size)
	}
	logits, wdl = e.forward(inputs, count)
	return logits, wdl, nil
}

// forward runs the network on count encoded positions.
func (e *Evaluator) forward(input []float32, count int) (logits, wdl []float32) {
	var policy, value []float32
	if e.d != nil {
		policy, value = e.towerDirect(input, count)
	} else {
		policy, value = e.tower(input, count)
	}
	f := e.m
	logits = e.logits[:count*f.shape.actions]
	if f.policyOut != nil {
		e.convPolicy(policy, logits, count)
	} else {
		e.dense(&f.policyIn, policy, logits, count)
	}
	hidden := e.hidden[:count*f.cfg.ValueHidden]
	e.dense(&f.valueIn, value, hidden, count)
	relu(hidden)
	wdl = e.wdl[:count*valueOutputs]
	e.dense(&f.valueFC2, hidden, wdl, count)
	for i := 0; i < count; i++ {
		softmaxInPlace(wdl[i*valueOutputs : (i+1)*valueOutputs])
	}
	return logits, wdl
}

// tower runs the residual tower and the heads' convolutions on count
// encoded positions by im2row and matrix multiplies, and returns
// the heads' outputs, cell-major: (count·cells, policy filters) and
// (count·cells, value filters). The value head's is valid until the
// next call, the policy head's until the value head's is read.
func (e *Evaluator) tower(input []float32, count int) (policy, value []float32) {
	f, sh := e.m, e.m.shape
	cells := sh.cells()
	// (batch, planes, cells) → (batch·cells, planes)
	for b := 0; b < count; b++ {
		in := input[b*sh.planes*cells : (b+1)*sh.planes*cells]
		out := e.cells[b*cells*sh.planes : (b+1)*cells*sh.planes]
		for p := 0; p < sh.planes; p++ {
			for c := 0; c < cells; c++ {
				out[c*sh.planes+p] = in[p*cells+c]
			}
		}
	}
	e.conv(&f.stem, e.cells, e.x, nil, count, true)
	x, y, z := e.x, e.y, e.z
	for i := range f.blocks {
		e.conv(&f.blocks[i][0], x, y, nil, count, true)
		if d := f.gpool[i]; d != nil {
			gpoolBias(d, y, e.pix, count, cells, f.cfg.Filters, e.pooled, e.poolBias)
		}
		e.conv(&f.blocks[i][1], y, z, x, count, true)
		x, z = z, x
	}
	e.conv(&f.policyConv, x, y, nil, count, true)
	e.conv(&f.valueConv, x, z, nil, count, true)
	return y[:count*cells*f.cfg.PolicyFilters], z[:count*cells*f.cfg.ValueFilters]
}

// towerDirect is tower on the direct convolution.
func (e *Evaluator) towerDirect(input []float32, count int) (policy, value []float32) {
	f, d := e.m, e.d
	n := count * f.shape.cells()
	d.load(input, f.shape, count)
	d.conv(&f.stem, d.in, d.x, nil, 0, n, true, false)
	x, y, z := d.x, d.y, d.z
	rounded := false
	for i := range f.blocks {
		// rounded says d.half holds the convolution's input in bfloat16,
		// rounded by the last convolution as it wrote it: the pooling
		// bias changes it, and the heads read float32.
		pooling := f.gpool[i] != nil
		rounded = d.towerConv(f, i, 0, x, y, nil, n, rounded, !pooling)
		if pooling {
			gpoolBias(f.gpool[i], y, d.pix, count, f.shape.cells(), f.cfg.Filters, e.pooled, e.poolBias)
		}
		rounded = d.towerConv(f, i, 1, y, z, x, n, rounded, i+1 < len(f.blocks))
		x, z = z, x
	}
	// The heads' outputs are compact, in buffers of their own: the
	// tower's keep their zero borders.
	policy, value = e.heads[:n*f.cfg.PolicyFilters], e.heads[n*f.cfg.PolicyFilters:][:n*f.cfg.ValueFilters]
	d.conv(&f.policyConv, x, policy, nil, 0, n, true, true)
	d.conv(&f.valueConv, x, value, nil, 0, n, true, true)
	return policy, value
}

// towerConv applies convolution k of block i to the n pixels of src
// into dst (padded), adding skip where it is not nil: on bytes with the
// int8 kernels, src quantized into d.quant first (with a zero point after
// a global pooling bias, which can make inputs negative); in bfloat16
// with the bf16 kernels, src rounded into d.half first unless rounded
// says the last convolution left it there; else in float32. With round,
// a convolution on AMX also leaves dst rounded in d.half for the next,
// and says so.
func (d *direct) towerConv(f *model, i, k int, src, dst, skip []float32, n int, rounded, round bool) bool {
	if d.wino != nil {
		d.wino.conv(i, k, src, dst, skip, n/f.shape.cells())
		return false
	}
	if blocks := f.blocksInt8; d.arch.int8 && len(blocks) > 0 {
		c, cells := blocks[i][k], f.shape.cells()
		signed := k == 1 && f.gpool[i] != nil
		q := quantized{bytes: d.quant, scale: d.qscale, zero: d.qzero}
		var border []int32 // the padding is written only where it must change
		if signed {
			border, d.dirty = d.border[:n/cells*d.borderCells], max(d.dirty, n/cells)
		} else if d.dirty > 0 {
			fillPixels(d.quant, d.border[:d.dirty*d.borderCells], c.in, 0)
			d.dirty = 0
		}
		quantizePixels(q, src, d.pix[:n], cells, c.in, border, d.borderCells, signed, d.arch.byteInputs)
		d.convInt8(c, q, signed, dst, skip, 0, n, true, false)
		return false
	}
	if !d.arch.bf16 || len(f.blocksBF16) == 0 {
		d.conv(&f.blocks[i][k], src, dst, skip, 0, n, true, false)
		return false
	}
	c := &f.blocksBF16[i][k]
	if !rounded {
		roundPixelsBF16(d.half, src, d.pix[:n], c.in)
	}
	if !round || !d.roundsOutputs(c) {
		d.convBF16(c, d.half, dst, skip, 0, n, true, false)
		return false
	}
	d.convBF16Rounding(c, d.half, dst, skip, d.next, 0, n, true)
	d.half, d.next = d.next, d.half
	return true
}

// roundPixelsBF16Go rounds the channels of each pixel in pix from src
// into dst, one by one.
func roundPixelsBF16Go(dst []uint16, src []float32, pix []int32, channels int) {
	for _, p := range pix {
		in, out := src[int(p)*channels:][:channels], dst[int(p)*channels:][:channels]
		for j, v := range in {
			out[j] = toBF16(v)
		}
	}
}

// conv applies a folded convolution to src (batch·cells × in channels)
// into dst (batch·cells × out channels), adds the bias and, where skip is
// not nil, the residual skip, then the ReLU. It works through the cells a
// chunk at a time, so that each chunk's output is still in cache for the
// bias, skip and ReLU.
func (e *Evaluator) conv(c *foldedConv, src, dst, skip []float32, count int, withReLU bool) {
	sh := e.m.shape
	total := count * sh.cells()
	k := c.in * c.kernel * c.kernel
	for first := 0; first < total; first += chunkRows {
		rows := min(chunkRows, total-first)
		out := dst[first*c.out : (first+rows)*c.out]
		if c.kernel == 1 {
			sgemm(rows, c.out, k, src[first*k:], k, c.w, c.out, out, c.out)
		} else {
			patches := e.rows[:rows*k]
			im2row(src, patches, c.in, first, rows, sh.height, sh.width, c.kernel)
			sgemm(rows, c.out, k, patches, k, c.w, c.out, out, c.out)
		}
		var res []float32
		if skip != nil {
			res = skip[first*c.out : (first+rows)*c.out]
		}
		biasReLU(out, c.b, res, withReLU)
	}
}

// biasReLU adds the bias b to each row of x, then skip where it is not
// nil, then applies the ReLU if asked. The ReLU clears negative values
// by their sign bit: half the activations are negative, at random, so a
// comparison would mispredict, and max's care for NaN costs as much.
func biasReLU(x, b, skip []float32, withReLU bool) {
	n := len(b)
	for r := 0; r+n <= len(x); r += n {
		row := x[r : r+n : r+n]
		switch {
		case skip != nil:
			sk := skip[r : r+n : r+n]
			for i, v := range b {
				row[i] = reluBits(row[i] + v + sk[i])
			}
		case withReLU:
			for i, v := range b {
				row[i] = reluBits(row[i] + v)
			}
		default:
			for i, v := range b {
				row[i] += v
			}
		}
	}
}

// reluBits is max(v, 0) without a branch: a negative number's sign bit,
// spread over the word, masks all its bits to +0.
func reluBits(v float32) float32 {
	u := math.Float32bits(v)
	return math.Float32frombits(u &^ uint32(int32(u)>>31))
}

// im2row writes, for the cells first..first+count-1 of the batch (cell
// index b·height·width + y·width + x), each cell's kernel×kernel
// neighbourhood in src (cells × channels) as one row of dst: kernel·kernel
// runs of channels, zeros beyond the board's edge. A kernel row's cells
// on the board are neighbours in src, so each is one copy.
func im2row(src, dst []float32, channels, first, count, height, width, kernel int) {
	cells := height * width
	pad := kernel / 2
	k := channels * kernel * kernel
	for r := 0; r < count; r++ {
		cell := first + r
		base := cell - cell%cells
		y, x := (cell%cells)/width, cell%width
		// Columns x0..x1-1 of the kernel fall on the board.
		x0, x1 := max(0, pad-x), min(kernel, width+pad-x)
		out := dst[r*k : (r+1)*k]
		for ky := 0; ky < kernel; ky++ {
			run := out[ky*kernel*channels : (ky+1)*kernel*channels]
			sy := y + ky - pad
			if sy < 0 || sy >= height {
				clear(run)
				continue
			}
			clear(run[:x0*channels])
			from := (base + sy*width + x + x0 - pad) * channels
			copy(run[x0*channels:x1*channels], src[from:from+(x1-x0)*channels])
			clear(run[x1*channels:])
		}
	}
}

func relu(x []float32) {
	for i, v := range x {
		x[i] = max(v, 0)
	}
}

// dense computes dst = src×w + b for count rows.
func (e *Evaluator) dense(d *foldedDense, src, dst []float32, count int) {
	sgemm(count, d.out, d.in, src, d.in, d.w, d.out, dst, d.out)
	for r := 0; r < count; r++ {
		row := dst[r*d.out : (r+1)*d.out]
		for i := range row {
			row[i] += d.b[i]
		}
	}
}
