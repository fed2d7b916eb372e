package cuda

import (
	"fmt"
	"math"
)

// trainPlan holds the descriptors, algorithms and buffers of one batch
// size.
type trainPlan struct {
	n       int
	desc    map[int]uintptr // (n, channels, height, width) by channels
	flat    map[int]uintptr // (n, width, 1, 1) by width
	conv    map[int]uintptr // by kernel size
	ws      uintptr
	wsBytes uintptr
	algos   map[[3]int][3]int32
	in      uintptr
	// Per convolution (trainConv.slot): before batch norm, and after it
	// (with the ReLU and the skip where the layer has them), and the
	// batch's saved statistics.
	z, a              []uintptr
	saveMean, saveInv []uintptr
	// Per pooling block (trainBlock.slot): the pooled means and maxima,
	// the cell of each maximum, and the block's first convolution output
	// with the pooling bias added.
	pooled, argmax, biased []uintptr
	gbias                  uintptr // one block's pooling biases
	tmp                    uintptr
	dA, dB                 uintptr // gradient of the tower's activations
	dS, dZ                 uintptr
	dPooled, dGbias        uintptr
	hidden                 uintptr
	// policy and soft are the policy heads' logits and losses; heads
	// lists those the network has.
	policy, soft policyBufs
	heads        []*policyBufs
	vlogits      uintptr
	vlogp        uintptr
	vp           uintptr
	legal        uintptr
	vtarget      uintptr
	share        uintptr // each sample's weight over the batch's sum
	vrowSum      uintptr
	dV           uintptr
	dHidden      uintptr
	dPolicy      uintptr // gradient of the policy convolution's output
	dFlatV       uintptr
	ones         uintptr
	// The convolutional policy heads: global pooling of the policy
	// convolution (both heads' global logits read it), and the gradients
	// of one head's planes and global logits.
	pPooled, pArgmax uintptr
	dPlanes, dGlob   uintptr
	// The auxiliary heads: targets, weights, loss terms and the gradients
	// of their inputs to tanh (ownership per cell, score per sample).
	ownTarget, ownWeight, ownTerm, dOwn         uintptr
	zScore, scoreTarget, scoreWeight, scoreTerm uintptr
	dScore                                      uintptr
	// Host copies of what each step uploads.
	hostShare, hostSoft                                            []float32
	hostOwnTarget, hostOwnWeight, hostScoreTarget, hostScoreWeight []float32
	allocs                                                         []uintptr
}

// policyBufs are one policy head's logits (its global logits in glob,
// for a convolutional head with them), the losses' inputs and the
// logits' gradient.
type policyBufs struct {
	name                          string
	logits, glob, masked, logp, p uintptr
	// target is the head's targets weighted by each sample's share of the
	// batch's weight (the soft policy head's also by its config weight).
	target, rowSum, dLogits uintptr
}

func (t *Trainer) plan(n int) (*trainPlan, error) {
	if p := t.plans[n]; p != nil {
		return p, nil
	}
	p := &trainPlan{n: n, desc: map[int]uintptr{}, flat: map[int]uintptr{}, conv: map[int]uintptr{}, algos: map[[3]int][3]int32{}}
	p.policy.name, p.soft.name = "policy", "soft policy"
	p.heads = []*policyBufs{&p.policy}
	if t.soft.present() {
		p.heads = append(p.heads, &p.soft)
	}
	if err := t.buildPlan(p); err != nil {
		t.freePlan(p)
		return nil, err
	}
	t.plans[n] = p
	return p, nil
}

func (t *Trainer) buildPlan(p *trainPlan) (err error) {
	if err := t.planDescriptors(p); err != nil {
		return err
	}
	if err := t.planBuffers(p); err != nil {
		return err
	}
	return t.planAlgorithms(p)
}

// planDescriptors makes the tensor descriptors of every convolution's
// input and output and of every dense layer's output, and a convolution
// descriptor per kernel size.
func (t *Trainer) planDescriptors(p *trainPlan) error {
	d, n := t.d, p.n
	descFor := func(m map[int]uintptr, c, h, w int) error {
		if m[c] != 0 {
			return nil
		}
		desc, err := t.tensorDesc(n, c, h, w)
		m[c] = desc
		return err
	}
	for _, c := range t.convs {
		if err := descFor(p.desc, c.In, t.height, t.width); err != nil {
			return err
		}
		if err := descFor(p.desc, c.Out, t.height, t.width); err != nil {
			return err
		}
		if p.conv[c.Kernel] != 0 {
			continue
		}
		var cd uintptr
		if err := d.dnnErr("cudnnCreateConvolutionDescriptor", d.dnn.cudnnCreateConvolutionDescriptor(&cd)); err != nil {
			return err
		}
		p.conv[c.Kernel] = cd
		pad := int32(c.Kernel / 2)
		if err := d.dnnErr("cudnnSetConvolution2dDescriptor", d.dnn.cudnnSetConvolution2dDescriptor(cd, pad, pad, 1, 1, 1, 1, cudnnCrossCorrelation, cudnnDataFloat)); err != nil {
			return err
		}
		math := int32(cudnnFMAMath)
		if t.tf32 {
			math = cudnnDefaultMath
		}
		if err := d.dnnErr("cudnnSetConvolutionMathType", d.dnn.cudnnSetConvolutionMathType(cd, math)); err != nil {
			return err
		}
	}
	if err := descFor(p.flat, t.actions, 1, 1); err != nil {
		return err
	}
	for _, l := range t.dense {
		if err := descFor(p.flat, l.Out, 1, 1); err != nil {
			return err
		}
	}
	return nil
}

// planBuffers allocates the plan's activations, gradients and targets.
func (t *Trainer) planBuffers(p *trainPlan) (err error) {
	d, n, cells := t.d, p.n, t.cells
	alloc := func(size int) (uintptr, error) {
		m, err := d.alloc(size)
		if err == nil {
			p.allocs = append(p.allocs, m)
		}
		return m, err
	}
	type sized struct {
		p    *uintptr
		size int
	}
	widest := t.planes
	for _, c := range t.convs {
		widest = max(widest, c.Out)
	}
	act := n * widest * cells
	if p.in, err = alloc(n * t.planes * cells); err != nil {
		return err
	}
	for _, c := range t.convs {
		var z, a, m, inv uintptr
		for _, b := range []sized{{&z, n * c.Out * cells}, {&a, n * c.Out * cells}, {&m, c.Out}, {&inv, c.Out}} {
			if *b.p, err = alloc(b.size); err != nil {
				return err
			}
		}
		p.z, p.a = append(p.z, z), append(p.a, a)
		p.saveMean, p.saveInv = append(p.saveMean, m), append(p.saveInv, inv)
	}
	pooledWidth := 0
	for _, b := range t.blocks {
		if b.pool == nil {
			continue
		}
		c := b.a.Out
		pooledWidth = max(pooledWidth, 2*c)
		var pooled, argmax, biased uintptr
		for _, x := range []sized{{&pooled, n * 2 * c}, {&argmax, n * c}, {&biased, n * c * cells}} {
			if *x.p, err = alloc(x.size); err != nil {
				return err
			}
		}
		p.pooled, p.argmax, p.biased = append(p.pooled, pooled), append(p.argmax, argmax), append(p.biased, biased)
	}
	if t.policy.global != nil {
		pooledWidth = max(pooledWidth, 2*t.policyConv.Out)
	}
	pf, vf, hidden := t.policyConv.Out, t.valueConv.Out, t.valueFC1.Out
	bufs := []sized{
		{&p.tmp, act}, {&p.dA, act}, {&p.dB, act}, {&p.dS, act}, {&p.dZ, act},
		{&p.hidden, n * hidden}, {&p.vlogits, n * 3},
		{&p.vlogp, n * 3}, {&p.vp, n * 3}, {&p.legal, n * t.actions},
		{&p.vtarget, n * 3}, {&p.share, n}, {&p.vrowSum, n},
		{&p.dV, n * 3}, {&p.dHidden, n * hidden},
		{&p.dPolicy, n * pf * cells}, {&p.dFlatV, n * vf * cells}, {&p.ones, max(n, t.actions, cells)},
	}
	for _, h := range p.heads {
		bufs = append(bufs, sized{&h.logits, n * t.actions}, sized{&h.masked, n * t.actions}, sized{&h.logp, n * t.actions},
			sized{&h.p, n * t.actions}, sized{&h.target, n * t.actions}, sized{&h.rowSum, n}, sized{&h.dLogits, n * t.actions})
		if t.policy.global != nil {
			bufs = append(bufs, sized{&h.glob, n * t.globals})
		}
	}
	if pooledWidth > 0 {
		bufs = append(bufs, sized{&p.dPooled, n * pooledWidth})
	}
	if len(p.pooled) > 0 {
		bufs = append(bufs, sized{&p.gbias, n * t.stem.Out}, sized{&p.dGbias, n * t.stem.Out})
	}
	if t.policy.out != nil {
		bufs = append(bufs, sized{&p.dPlanes, n * t.spatial})
	}
	if t.policy.global != nil {
		bufs = append(bufs, sized{&p.pPooled, n * 2 * pf}, sized{&p.pArgmax, n * pf}, sized{&p.dGlob, n * t.globals})
	}
	if t.owns != nil {
		for _, b := range []*uintptr{&p.ownTarget, &p.ownWeight, &p.ownTerm, &p.dOwn} {
			bufs = append(bufs, sized{b, n * cells})
		}
	}
	if t.score != nil {
		for _, b := range []*uintptr{&p.zScore, &p.scoreTarget, &p.scoreWeight, &p.scoreTerm, &p.dScore} {
			bufs = append(bufs, sized{b, n})
		}
	}
	for _, b := range bufs {
		if *b.p, err = alloc(b.size); err != nil {
			return err
		}
	}
	p.hostShare = make([]float32, n)
	if t.soft.present() {
		p.hostSoft = make([]float32, n*t.actions)
	}
	if t.owns != nil || t.score != nil {
		p.hostOwnTarget, p.hostOwnWeight = make([]float32, n*cells), make([]float32, n*cells)
		p.hostScoreTarget, p.hostScoreWeight = make([]float32, n), make([]float32, n)
	}
	return d.cu("cuMemsetD32Async", d.drv.cuMemsetD32Async(p.ones, math.Float32bits(1), uintptr(max(n, t.actions, cells)), t.stream))
}

// planAlgorithms picks, by timing, each distinct convolution shape's
// forward, backward-data and backward-filter algorithms, and allocates
// the largest workspace they need.
func (t *Trainer) planAlgorithms(p *trainPlan) (err error) {
	d := t.d
	var ws uintptr
	for _, c := range t.convs {
		key := [3]int{c.In, c.Out, c.Kernel}
		if _, ok := p.algos[key]; ok {
			continue
		}
		x, y, cd := p.desc[c.In], p.desc[c.Out], p.conv[c.Kernel]
		var perf [8]convFwdPerf
		var got int32
		var algos [3]int32
		var bytes uintptr
		if err := d.dnnErr("cudnnFindConvolutionForwardAlgorithm", d.dnn.cudnnFindConvolutionForwardAlgorithm(t.dnn, x, c.wDesc, cd, y, 8, &got, &perf[0])); err != nil {
			return err
		}
		if algos[0], bytes, err = t.pick(perf[:got], "forward", func(a int32, b *uintptr) int32 {
			return d.dnn.cudnnGetConvolutionForwardWorkspaceSize(t.dnn, x, c.wDesc, cd, y, a, b)
		}); err != nil {
			return err
		}
		ws = max(ws, bytes)
		// The stem needs no gradient of its input, but another
		// convolution may share its shape.
		if err := d.dnnErr("cudnnFindConvolutionBackwardDataAlgorithm", d.dnn.cudnnFindConvolutionBackwardDataAlgorithm(t.dnn, c.wDesc, y, cd, x, 8, &got, &perf[0])); err != nil {
			return err
		}
		if algos[1], bytes, err = t.pick(perf[:got], "backward data", func(a int32, b *uintptr) int32 {
			return d.dnn.cudnnGetConvolutionBackwardDataWorkspaceSize(t.dnn, c.wDesc, y, cd, x, a, b)
		}); err != nil {
			return err
		}
		ws = max(ws, bytes)
		if err := d.dnnErr("cudnnFindConvolutionBackwardFilterAlgorithm", d.dnn.cudnnFindConvolutionBackwardFilterAlgorithm(t.dnn, x, y, cd, c.wDesc, 8, &got, &perf[0])); err != nil {
			return err
		}
		if algos[2], bytes, err = t.pick(perf[:got], "backward filter", func(a int32, b *uintptr) int32 {
			return d.dnn.cudnnGetConvolutionBackwardFilterWorkspaceSize(t.dnn, x, y, cd, c.wDesc, a, b)
		}); err != nil {
			return err
		}
		ws = max(ws, bytes)
		p.algos[key] = algos
	}
	if ws > 0 {
		if p.ws, err = t.d.alloc(int(ws+3) / 4); err != nil {
			return err
		}
		p.allocs = append(p.allocs, p.ws)
		p.wsBytes = ws
	}
	return nil
}

// pick chooses the fastest algorithm of a cuDNN Find that keeps to the
// trainer's precision, and its workspace.
func (t *Trainer) pick(perf []convFwdPerf, what string, workspace func(int32, *uintptr) int32) (int32, uintptr, error) {
	i := pickAlgo(perf, t.tf32)
	if i < 0 {
		return 0, 0, fmt.Errorf("cudnn: no %s convolution algorithm", what)
	}
	var bytes uintptr
	if err := t.d.dnnErr("cudnn workspace size, "+what, workspace(perf[i].Algo, &bytes)); err != nil {
		return 0, 0, err
	}
	return perf[i].Algo, bytes, nil
}

func (t *Trainer) freePlan(p *trainPlan) {
	d := t.d
	for _, m := range []map[int]uintptr{p.desc, p.flat} {
		for _, desc := range m {
			if desc != 0 {
				d.dnn.cudnnDestroyTensorDescriptor(desc)
			}
		}
	}
	for _, cd := range p.conv {
		if cd != 0 {
			d.dnn.cudnnDestroyConvolutionDescriptor(cd)
		}
	}
	for _, m := range p.allocs {
		d.drv.cuMemFree(m)
	}
	p.allocs = nil
}
