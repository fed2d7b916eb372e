package cuda

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"unsafe"

	"github.com/flipzero/flipzero/nn"
)

// Trainer trains an nn.Network on the GPU with the optimizer of nn's
// Gorgonia trainer: the same losses, gradients, batch norm in training
// mode with the same running statistics, and SGD with momentum and L2
// decay. The network's arrays are stale until Sync. Not safe for
// concurrent use.
type Trainer struct {
	d     *Device
	net   *nn.Network
	cfg   nn.TrainConfig
	steps int64
	tf32  bool

	stream, dnn, blas uintptr
	blasWS            uintptr
	relu              uintptr

	learn, stats []nn.Tensor
	velocity     [][]float32 // the caller's, or the trainer's own; Sync fills it
	// Every learnable lives in one array (and its gradient and velocity in
	// two more), weights with decay first, so that one kernel updates all
	// and one dot product gives the L2 term.
	offset   []int // of each learnable, in floats
	decayEnd int
	total    int
	w, g, v  uintptr
	s        uintptr // running means and variances, in Statistics order
	statOff  []int
	nstat    int
	// sBackup holds the running statistics from before a step's forward
	// pass, which runs while the batch is still being checked: a batch
	// found bad must leave them as they were.
	sBackup uintptr

	planes, height, width, cells, actions int
	convs                                 []trainConv // stem, blocks' a and b, policy conv, value conv
	fc                                    [3]trainDense

	plans  map[int]*trainPlan
	allocs []uintptr
	closed bool
	// stage, when set, is called after each phase of a step: the hook that
	// times them.
	stage func(phase string)
}

func (t *Trainer) staged(phase string) {
	if t.stage != nil {
		t.stage(phase)
	}
}

type trainConv struct {
	kernel, in, out      int
	w, gamma, beta       int // learnable indices
	mean, variance       int // statistics indices
	wDesc, bnDesc        uintptr
	fwd, bwdData, bwdFil int32 // algorithms of the current plan
}

type trainDense struct {
	in, out int
	w, b    int // learnable indices
	bDesc   uintptr
}

// trainPlan holds the descriptors and activations of one batch size.
type trainPlan struct {
	n        int
	desc     map[int]uintptr // (n, channels, height, width) by channels
	flat     map[int]uintptr // (n, width, 1, 1) by width
	conv     map[int]uintptr // by kernel size
	ws       uintptr
	wsBytes  uintptr
	algos    map[[3]int][3]int32
	in       uintptr
	z, a     []uintptr // per conv: before batch norm, after ReLU (and skip)
	saveMean []uintptr
	saveInv  []uintptr
	tmp      uintptr
	dA, dB   uintptr // gradient of the tower's activations
	dS, dZ   uintptr
	hidden   uintptr
	logits   uintptr
	vlogits  uintptr
	masked   uintptr
	logp, p  uintptr
	vlogp    uintptr
	vp       uintptr
	target   uintptr // policy targets, then weighted by the sample's share
	legal    uintptr
	vtarget  uintptr
	share    uintptr // each sample's weight over the batch's sum
	rowSum   uintptr
	vrowSum  uintptr
	dLogits  uintptr
	dV       uintptr
	dHidden  uintptr
	dFlatP   uintptr
	dFlatV   uintptr
	ones     uintptr
	allocs   []uintptr
}

// ErrArchitecture refuses a network with parts the CUDA backend does not
// compute: global pooling (network.global_pooling) and the convolutional
// policy head (network.policy_head: conv) run on the CPU only.
var ErrArchitecture = errors.New("the GPU does not run global pooling or a convolutional policy head (network.global_pooling, network.policy_head); run this network with --device cpu")

// ErrAuxiliaryHeads is NewTrainer's refusal of a network with heads that
// only training uses (nn.Config's Ownership and Score): the GPU trainer
// computes the network that inference runs.
var ErrAuxiliaryHeads = errors.New("the GPU trainer has no auxiliary heads (network.ownership, network.score); such a network trains on the CPU")

// NewTrainer copies the network's weights, running statistics and the
// optimizer's velocity (nil: zero; else parallel to net.Learnables()) to
// the GPU.
func (d *Device) NewTrainer(net *nn.Network, cfg nn.TrainConfig, velocity [][]float32) (t *Trainer, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("cuda trainer: %w", err)
	}
	if arch := net.Config(); arch != arch.Inference() {
		return nil, fmt.Errorf("cuda trainer: %w", ErrAuxiliaryHeads)
	}
	if !net.Fold().Layers().Plain() {
		return nil, fmt.Errorf("cuda trainer: %w", ErrArchitecture)
	}
	learn, stats := net.Learnables(), net.Statistics()
	if velocity != nil && len(velocity) != len(learn) {
		return nil, fmt.Errorf("cuda trainer: %d velocity arrays for %d learnables", len(velocity), len(learn))
	}
	for i, v := range velocity {
		if len(v) != len(learn[i].Data) {
			return nil, fmt.Errorf("cuda trainer: velocity of %s has %d values, want %d", learn[i].Name, len(v), len(learn[i].Data))
		}
	}
	t = &Trainer{d: d, net: net, cfg: cfg, learn: learn, stats: stats, velocity: velocity, plans: map[int]*trainPlan{}}
	d.mu.Lock()
	t.tf32 = d.tf32
	d.mu.Unlock()
	if err := t.layout(); err != nil {
		return nil, fmt.Errorf("cuda trainer: %w", err)
	}
	if err := d.acquire(); err != nil {
		return nil, err
	}
	unbind, err := d.bindThread()
	if err != nil {
		d.release()
		return nil, err
	}
	defer unbind()
	defer func() {
		if err != nil {
			t.free()
			d.release()
			t = nil
		}
	}()
	if err := t.setup(velocity); err != nil {
		return nil, err
	}
	if t.velocity == nil {
		for _, l := range learn {
			t.velocity = append(t.velocity, make([]float32, len(l.Data)))
		}
	}
	return t, nil
}

// Velocity is the optimizer's momentum, parallel to the network's
// Learnables: the arrays given to NewTrainer, or the trainer's own. Sync
// brings it up to date.
func (t *Trainer) Velocity() [][]float32 { return t.velocity }

// layout finds the network's arrays by name: per convolution (stem,
// blockK.a, blockK.b, policy.conv, value.conv) weights (out, in, k, k),
// batch-norm γ, β and running statistics; per dense layer (policy.fc,
// value.fc1, value.fc2) weights (in, out) and biases.
func (t *Trainer) layout() error {
	game := t.net.Game()
	t.planes, t.height, t.width = game.EncodedShape()
	t.cells, t.actions = t.height*t.width, game.ActionSpace()
	learn, stat := map[string]int{}, map[string]int{}
	for i, l := range t.learn {
		learn[l.Name] = i
	}
	for i, s := range t.stats {
		stat[s.Name] = i
	}
	find := func(m map[string]int, name string) (int, error) {
		i, ok := m[name]
		if !ok {
			return 0, fmt.Errorf("network has no array %s", name)
		}
		return i, nil
	}
	names := []string{"stem"}
	for k := 0; ; k++ {
		if _, ok := learn[fmt.Sprintf("block%d.a.w", k)]; !ok {
			break
		}
		names = append(names, fmt.Sprintf("block%d.a", k), fmt.Sprintf("block%d.b", k))
	}
	names = append(names, "policy.conv", "value.conv")
	for _, name := range names {
		var c trainConv
		var err error
		for _, f := range []struct {
			m    map[string]int
			name string
			dst  *int
		}{
			{learn, name + ".w", &c.w}, {learn, name + ".bn.gamma", &c.gamma}, {learn, name + ".bn.beta", &c.beta},
			{stat, name + ".bn.mean", &c.mean}, {stat, name + ".bn.var", &c.variance},
		} {
			if *f.dst, err = find(f.m, f.name); err != nil {
				return err
			}
		}
		sh := t.learn[c.w].Shape
		if len(sh) != 4 || sh[2] != sh[3] || sh[2]%2 != 1 {
			return fmt.Errorf("%s has shape %v, want (out, in, k, k) with k odd", t.learn[c.w].Name, sh)
		}
		c.out, c.in, c.kernel = sh[0], sh[1], sh[2]
		if len(t.learn[c.gamma].Data) != c.out || len(t.learn[c.beta].Data) != c.out || len(t.stats[c.mean].Data) != c.out || len(t.stats[c.variance].Data) != c.out {
			return fmt.Errorf("%s: batch-norm arrays do not have %d values", name, c.out)
		}
		t.convs = append(t.convs, c)
	}
	for i, name := range []string{"policy.fc", "value.fc1", "value.fc2"} {
		var err error
		f := &t.fc[i]
		if f.w, err = find(learn, name+".w"); err != nil {
			return err
		}
		if f.b, err = find(learn, name+".b"); err != nil {
			return err
		}
		sh := t.learn[f.w].Shape
		if len(sh) != 2 || len(t.learn[f.b].Data) != sh[1] {
			return fmt.Errorf("%s has shape %v and %d biases", name, sh, len(t.learn[f.b].Data))
		}
		f.in, f.out = sh[0], sh[1]
	}
	nconv := len(t.convs)
	pc, vc := t.convs[nconv-2], t.convs[nconv-1]
	if t.convs[0].in != t.planes || t.fc[0].in != pc.out*t.cells || t.fc[0].out != t.actions ||
		t.fc[1].in != vc.out*t.cells || t.fc[2].in != t.fc[1].out || t.fc[2].out != 3 {
		return errors.New("network's layers do not fit together")
	}
	// Weights with decay first, then the rest, each in checkpoint order.
	t.offset = make([]int, len(t.learn))
	off := 0
	for pass := 0; pass < 2; pass++ {
		for i, l := range t.learn {
			if l.Decay == (pass == 0) {
				t.offset[i] = off
				off += len(l.Data)
			}
		}
		if pass == 0 {
			t.decayEnd = off
		}
	}
	t.total = off
	t.statOff = make([]int, len(t.stats))
	off = 0
	for i, s := range t.stats {
		t.statOff[i] = off
		off += len(s.Data)
	}
	return nil
}

func (t *Trainer) alloc(n int) (uintptr, error) {
	p, err := t.d.alloc(n)
	if err != nil {
		return 0, err
	}
	t.allocs = append(t.allocs, p)
	return p, nil
}

func (t *Trainer) setup(velocity [][]float32) (err error) {
	d := t.d
	if err := d.cu("cuStreamCreate", d.drv.cuStreamCreate(&t.stream, cuStreamNonBlocking)); err != nil {
		return err
	}
	if err := d.dnnErr("cudnnCreate", d.dnn.cudnnCreate(&t.dnn)); err != nil {
		return err
	}
	if err := d.dnnErr("cudnnSetStream", d.dnn.cudnnSetStream(t.dnn, t.stream)); err != nil {
		return err
	}
	if err := d.blasErr("cublasCreate", d.blas.cublasCreate(&t.blas)); err != nil {
		return err
	}
	if err := d.blasErr("cublasSetStream", d.blas.cublasSetStream(t.blas, t.stream)); err != nil {
		return err
	}
	if t.blasWS, err = t.alloc(cublasWorkspace / 4); err != nil {
		return err
	}
	if err := d.blasErr("cublasSetWorkspace", d.blas.cublasSetWorkspace(t.blas, t.blasWS, cublasWorkspace)); err != nil {
		return err
	}
	if t.tf32 {
		if err := d.blasErr("cublasSetMathMode", d.blas.cublasSetMathMode(t.blas, cublasTF32TensorOpMath)); err != nil {
			return err
		}
	}
	if err := d.dnnErr("cudnnCreateActivationDescriptor", d.dnn.cudnnCreateActivationDescriptor(&t.relu)); err != nil {
		return err
	}
	if err := d.dnnErr("cudnnSetActivationDescriptor", d.dnn.cudnnSetActivationDescriptor(t.relu, cudnnActivationReLU, cudnnNotPropagateNaN, 0)); err != nil {
		return err
	}
	for _, p := range []*uintptr{&t.w, &t.g, &t.v} {
		if *p, err = t.alloc(t.total); err != nil {
			return err
		}
	}
	for _, s := range t.stats {
		t.nstat += len(s.Data)
	}
	if t.s, err = t.alloc(t.nstat); err != nil {
		return err
	}
	if t.sBackup, err = t.alloc(t.nstat); err != nil {
		return err
	}
	if err := d.cu("cuMemsetD32Async", d.drv.cuMemsetD32Async(t.v, 0, uintptr(t.total), t.stream)); err != nil {
		return err
	}
	if err := d.cu("cuStreamSynchronize", d.drv.cuStreamSynchronize(t.stream)); err != nil {
		return err
	}
	for i, l := range t.learn {
		if err := d.upload(t.w+uintptr(t.offset[i]*4), l.Data); err != nil {
			return err
		}
		if velocity != nil {
			if err := d.upload(t.v+uintptr(t.offset[i]*4), velocity[i]); err != nil {
				return err
			}
		}
	}
	for i, s := range t.stats {
		if err := d.upload(t.s+uintptr(t.statOff[i]*4), s.Data); err != nil {
			return err
		}
	}
	for i := range t.convs {
		c := &t.convs[i]
		if err := d.dnnErr("cudnnCreateFilterDescriptor", d.dnn.cudnnCreateFilterDescriptor(&c.wDesc)); err != nil {
			return err
		}
		if err := d.dnnErr("cudnnSetFilter4dDescriptor", d.dnn.cudnnSetFilter4dDescriptor(c.wDesc, cudnnDataFloat, cudnnTensorNCHW, int32(c.out), int32(c.in), int32(c.kernel), int32(c.kernel))); err != nil {
			return err
		}
		if c.bnDesc, err = t.tensorDesc(1, c.out, 1, 1); err != nil {
			return err
		}
	}
	for i := range t.fc {
		if t.fc[i].bDesc, err = t.tensorDesc(1, t.fc[i].out, 1, 1); err != nil {
			return err
		}
	}
	return nil
}

// tensorDesc makes a packed NCHW float32 descriptor.
func (t *Trainer) tensorDesc(n, c, h, w int) (uintptr, error) {
	d := t.d
	var desc uintptr
	if err := d.dnnErr("cudnnCreateTensorDescriptor", d.dnn.cudnnCreateTensorDescriptor(&desc)); err != nil {
		return 0, err
	}
	if err := d.dnnErr(fmt.Sprintf("cudnnSetTensor4dDescriptor %d×%d×%d×%d", n, c, h, w),
		d.dnn.cudnnSetTensor4dDescriptor(desc, cudnnTensorNCHW, cudnnDataFloat, int32(n), int32(c), int32(h), int32(w))); err != nil {
		d.dnn.cudnnDestroyTensorDescriptor(desc)
		return 0, err
	}
	return desc, nil
}

// param is the device address of learnable i (its weights, gradients or
// velocity, as base says).
func (t *Trainer) param(base uintptr, i int) uintptr { return base + uintptr(t.offset[i]*4) }

func (t *Trainer) stat(i int) uintptr { return t.s + uintptr(t.statOff[i]*4) }

// SetLearningRate changes the learning rate for the following steps.
func (t *Trainer) SetLearningRate(lr float64) error {
	c := t.cfg
	c.LearningRate = lr
	if err := c.Validate(); err != nil {
		return err
	}
	t.cfg = c
	return nil
}

// Steps is the number of optimizer steps taken.
func (t *Trainer) Steps() int64 { return t.steps }

func (t *Trainer) plan(n int) (*trainPlan, error) {
	if p := t.plans[n]; p != nil {
		return p, nil
	}
	p := &trainPlan{n: n, desc: map[int]uintptr{}, flat: map[int]uintptr{}, conv: map[int]uintptr{}, algos: map[[3]int][3]int32{}}
	if err := t.buildPlan(p); err != nil {
		t.freePlan(p)
		return nil, err
	}
	t.plans[n] = p
	return p, nil
}

func (t *Trainer) buildPlan(p *trainPlan) (err error) {
	d, n := t.d, p.n
	alloc := func(size int) (uintptr, error) {
		m, err := d.alloc(size)
		if err == nil {
			p.allocs = append(p.allocs, m)
		}
		return m, err
	}
	descFor := func(c int) error {
		if p.desc[c] != 0 {
			return nil
		}
		desc, err := t.tensorDesc(n, c, t.height, t.width)
		p.desc[c] = desc
		return err
	}
	flatFor := func(c int) error {
		if p.flat[c] != 0 {
			return nil
		}
		desc, err := t.tensorDesc(n, c, 1, 1)
		p.flat[c] = desc
		return err
	}
	widest := t.planes
	for _, c := range t.convs {
		if err := descFor(c.in); err != nil {
			return err
		}
		if err := descFor(c.out); err != nil {
			return err
		}
		widest = max(widest, c.out)
		if p.conv[c.kernel] == 0 {
			var cd uintptr
			if err := d.dnnErr("cudnnCreateConvolutionDescriptor", d.dnn.cudnnCreateConvolutionDescriptor(&cd)); err != nil {
				return err
			}
			p.conv[c.kernel] = cd
			pad := int32(c.kernel / 2)
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
	}
	for _, w := range []int{t.actions, 3, t.fc[1].out} {
		if err := flatFor(w); err != nil {
			return err
		}
	}
	act := n * widest * t.cells
	if p.in, err = alloc(n * t.planes * t.cells); err != nil {
		return err
	}
	for range t.convs {
		z, err := alloc(act)
		if err != nil {
			return err
		}
		a, err := alloc(act)
		if err != nil {
			return err
		}
		p.z, p.a = append(p.z, z), append(p.a, a)
		m, err := alloc(widest)
		if err != nil {
			return err
		}
		inv, err := alloc(widest)
		if err != nil {
			return err
		}
		p.saveMean, p.saveInv = append(p.saveMean, m), append(p.saveInv, inv)
	}
	for _, b := range []struct {
		p    *uintptr
		size int
	}{
		{&p.tmp, act}, {&p.dA, act}, {&p.dB, act}, {&p.dS, act}, {&p.dZ, act},
		{&p.hidden, n * t.fc[1].out}, {&p.logits, n * t.actions}, {&p.vlogits, n * 3},
		{&p.masked, n * t.actions}, {&p.logp, n * t.actions}, {&p.p, n * t.actions},
		{&p.vlogp, n * 3}, {&p.vp, n * 3}, {&p.target, n * t.actions}, {&p.legal, n * t.actions},
		{&p.vtarget, n * 3}, {&p.share, n}, {&p.rowSum, n}, {&p.vrowSum, n},
		{&p.dLogits, n * t.actions}, {&p.dV, n * 3}, {&p.dHidden, n * t.fc[1].out},
		{&p.dFlatP, n * t.fc[0].in}, {&p.dFlatV, n * t.fc[1].in}, {&p.ones, max(n, t.actions)},
	} {
		if *b.p, err = alloc(b.size); err != nil {
			return err
		}
	}
	if err := d.cu("cuMemsetD32Async", d.drv.cuMemsetD32Async(p.ones, math.Float32bits(1), uintptr(max(n, t.actions)), t.stream)); err != nil {
		return err
	}
	// Algorithms, by timing, for each distinct convolution shape.
	var ws uintptr
	for i, c := range t.convs {
		key := [3]int{c.in, c.out, c.kernel}
		if _, ok := p.algos[key]; ok {
			continue
		}
		x, y, cd := p.desc[c.in], p.desc[c.out], p.conv[c.kernel]
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
		if i > 0 { // the stem needs no gradient of its input
			if err := d.dnnErr("cudnnFindConvolutionBackwardDataAlgorithm", d.dnn.cudnnFindConvolutionBackwardDataAlgorithm(t.dnn, c.wDesc, y, cd, x, 8, &got, &perf[0])); err != nil {
				return err
			}
			if algos[1], bytes, err = t.pick(perf[:got], "backward data", func(a int32, b *uintptr) int32 {
				return d.dnn.cudnnGetConvolutionBackwardDataWorkspaceSize(t.dnn, c.wDesc, y, cd, x, a, b)
			}); err != nil {
				return err
			}
			ws = max(ws, bytes)
		}
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
		if p.ws, err = alloc(int(ws+3) / 4); err != nil {
			return err
		}
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

// Step takes one optimizer step on the batch and returns its losses,
// computed before the update, as nn's Trainer does.
func (t *Trainer) Step(b nn.Batch) (nn.Losses, error) {
	if t.closed {
		return nn.Losses{}, errors.New("cuda trainer: closed")
	}
	size := t.planes * t.cells
	if len(b.Inputs) == 0 || len(b.Inputs)%size != 0 {
		return nn.Losses{}, fmt.Errorf("training batch: %d input values, want a positive multiple of %d", len(b.Inputs), size)
	}
	n := len(b.Inputs) / size
	if n > maxBatchLimit {
		return nn.Losses{}, fmt.Errorf("training batch of %d, want at most %d", n, maxBatchLimit)
	}
	if len(b.Policy) != n*t.actions || len(b.Legal) != n*t.actions || len(b.Value) != n*3 || (b.Weights != nil && len(b.Weights) != n) {
		return nn.Losses{}, fmt.Errorf("training batch of %d: %w", n, b.Check(n, t.actions, t.cells))
	}
	// The contents are checked on all cores while the GPU copies them: for
	// YINSH's 2,142 actions checking alone takes as long as the step.
	checked := make(chan error, 1)
	go func() { checked <- checkBatch(b, n, t.actions, t.cells) }()
	unbind, err := t.d.bindThread()
	if err != nil {
		<-checked
		return nn.Losses{}, err
	}
	defer unbind()
	p, err := t.plan(n)
	if err != nil {
		<-checked
		return nn.Losses{}, err
	}
	d := t.d
	// The positions go first and the forward pass is queued; the targets
	// are copied while it runs (copies from Go memory go through the
	// driver's own stream, which the trainer's does not wait for).
	if err := d.upload(p.in, b.Inputs); err != nil {
		<-checked
		return nn.Losses{}, err
	}
	statBytes := uintptr(t.nstat * 4)
	if err := d.cu("cuMemcpyDtoDAsync", d.drv.cuMemcpyDtoDAsync(t.sBackup, t.s, statBytes, t.stream)); err != nil {
		<-checked
		return nn.Losses{}, err
	}
	// A bad batch leaves the running statistics as they were.
	restore := func(err error) error {
		if rerr := d.cu("cuMemcpyDtoDAsync", d.drv.cuMemcpyDtoDAsync(t.s, t.sBackup, statBytes, t.stream)); rerr != nil {
			return errors.Join(err, rerr)
		}
		return errors.Join(err, d.cu("cuStreamSynchronize", d.drv.cuStreamSynchronize(t.stream)))
	}
	if err := t.forward(p); err != nil {
		<-checked
		return nn.Losses{}, restore(err)
	}
	for _, u := range []struct {
		dst uintptr
		src []float32
	}{{p.target, b.Policy}, {p.legal, b.Legal}, {p.vtarget, b.Value}} {
		if err := d.upload(u.dst, u.src); err != nil {
			<-checked
			return nn.Losses{}, restore(err)
		}
	}
	t.staged("copy and forward")
	if err := <-checked; err != nil {
		return nn.Losses{}, restore(fmt.Errorf("training batch of %d: %w", n, err))
	}
	t.staged("check")
	share := make([]float32, n)
	sum := 0.0
	for i := range share {
		w := float32(1)
		if b.Weights != nil {
			w = b.Weights[i]
		}
		sum += float64(w)
	}
	if sum <= 0 {
		return nn.Losses{}, restore(errors.New("training batch: the sample weights sum to zero"))
	}
	for i := range share {
		w := 1.0
		if b.Weights != nil {
			w = float64(b.Weights[i])
		}
		share[i] = float32(w / sum)
	}
	if err := d.upload(p.share, share); err != nil {
		return nn.Losses{}, err
	}
	if err := t.lossInputs(p); err != nil {
		return nn.Losses{}, err
	}
	losses, err := t.losses(p)
	if err != nil {
		return losses, err
	}
	t.staged("losses")
	if math.IsNaN(losses.Total) || math.IsInf(losses.Total, 0) {
		return losses, fmt.Errorf("training step %d: policy loss %g, value loss %g, L2 %g; weights left unchanged",
			t.steps+1, losses.Policy, losses.Value, losses.L2)
	}
	if err := t.backward(p); err != nil {
		return losses, err
	}
	t.staged("backward")
	if err := d.launch(t.stream, d.sgd, uint32(t.total), t.w, t.v, t.g, uint32(t.total), uint32(t.decayEnd),
		float32(t.cfg.LearningRate), float32(t.cfg.Momentum), float32(2*t.cfg.WeightDecay)); err != nil {
		return losses, fmt.Errorf("sgd: %w", err)
	}
	if err := d.cu("cuStreamSynchronize", d.drv.cuStreamSynchronize(t.stream)); err != nil {
		return losses, err
	}
	t.steps++
	return losses, nil
}

var (
	one  = float32(1)
	zero = float32(0)
)

// checkBatch is nn.Batch.Check over n samples, in parallel chunks; the
// sizes have been checked.
func checkBatch(b nn.Batch, n, actions, cells int) error {
	chunks := min(runtime.GOMAXPROCS(0), (n+63)/64)
	errs := make([]error, chunks)
	var wg sync.WaitGroup
	for c := range chunks {
		lo, hi := c*n/chunks, (c+1)*n/chunks
		wg.Add(1)
		go func() {
			defer wg.Done()
			part := nn.Batch{Policy: b.Policy[lo*actions : hi*actions], Legal: b.Legal[lo*actions : hi*actions], Value: b.Value[lo*3 : hi*3]}
			if b.Weights != nil {
				part.Weights = b.Weights[lo:hi]
			}
			if err := part.Check(hi-lo, actions, cells); err != nil {
				errs[c] = fmt.Errorf("samples %d and on: %w", lo, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// forward runs the network in training mode: convolutions, batch norm
// with the batch's statistics (updating the running ones), ReLUs, skips,
// heads.
func (t *Trainer) forward(p *trainPlan) error {
	d := t.d
	nconv := len(t.convs)
	x := p.in
	for i := 0; i < nconv-2; i++ {
		var skip uintptr
		if i > 0 && i%2 == 0 { // block b: the skip is the block's input
			skip = p.a[i-2]
		}
		if err := t.convBN(p, i, x, skip); err != nil {
			return err
		}
		x = p.a[i]
	}
	for i := nconv - 2; i < nconv; i++ {
		if err := t.convBN(p, i, x, 0); err != nil {
			return err
		}
	}
	if err := t.denseFwd(p, &t.fc[0], p.a[nconv-2], p.logits, p.flat[t.actions]); err != nil {
		return err
	}
	if err := t.denseFwd(p, &t.fc[1], p.a[nconv-1], p.hidden, p.flat[t.fc[1].out]); err != nil {
		return err
	}
	hd := p.flat[t.fc[1].out]
	if err := d.dnnErr("cudnnActivationForward", d.dnn.cudnnActivationForward(t.dnn, t.relu, &one, hd, p.hidden, &zero, hd, p.hidden)); err != nil {
		return err
	}
	return t.denseFwd(p, &t.fc[2], p.hidden, p.vlogits, p.flat[3])
}

// lossInputs queues the losses' inputs: masked logits, their
// (log-)softmax, the targets weighted by each sample's share.
func (t *Trainer) lossInputs(p *trainPlan) error {
	d, n := t.d, p.n
	if err := d.launch(t.stream, d.maskLogits, uint32(n*t.actions), p.logits, p.legal, p.masked, uint32(n*t.actions)); err != nil {
		return fmt.Errorf("masklogits: %w", err)
	}
	ad, vd := p.flat[t.actions], p.flat[3]
	for _, s := range []struct {
		algo     int32
		desc     uintptr
		src, dst uintptr
		what     string
	}{
		{cudnnSoftmaxLog, ad, p.masked, p.logp, "policy log-softmax"},
		{cudnnSoftmaxAccurate, ad, p.masked, p.p, "policy softmax"},
		{cudnnSoftmaxLog, vd, p.vlogits, p.vlogp, "value log-softmax"},
		{cudnnSoftmaxAccurate, vd, p.vlogits, p.vp, "value softmax"},
	} {
		if err := d.dnnErr("cudnnSoftmaxForward "+s.what, d.dnn.cudnnSoftmaxForward(t.dnn, s.algo, cudnnSoftmaxModeInst, &one, s.desc, s.src, &zero, s.desc, s.dst)); err != nil {
			return err
		}
	}
	if err := d.launch(t.stream, d.rowScale, uint32(n*t.actions), p.target, p.share, p.target, uint32(n*t.actions), uint32(t.actions)); err != nil {
		return fmt.Errorf("rowscale: %w", err)
	}
	if err := d.launch(t.stream, d.rowScale, uint32(n*3), p.vtarget, p.share, p.vtarget, uint32(n*3), uint32(3)); err != nil {
		return fmt.Errorf("rowscale: %w", err)
	}
	return nil
}

// convBN is a[i] = relu(bn(conv(x)) [+ skip]), keeping z[i] = conv(x)
// and the batch's statistics for the backward pass.
func (t *Trainer) convBN(p *trainPlan, i int, x, skip uintptr) error {
	d := t.d
	c := &t.convs[i]
	xd, yd := p.desc[c.in], p.desc[c.out]
	algos := p.algos[[3]int{c.in, c.out, c.kernel}]
	if err := d.dnnErr(fmt.Sprintf("cudnnConvolutionForward %d→%d k%d", c.in, c.out, c.kernel),
		d.dnn.cudnnConvolutionForward(t.dnn, &one, xd, x, c.wDesc, t.param(t.w, c.w), p.conv[c.kernel], algos[0], p.ws, p.wsBytes, &zero, yd, p.z[i])); err != nil {
		return err
	}
	if err := d.dnnErr("cudnnBatchNormalizationForwardTraining", d.dnn.cudnnBatchNormalizationForwardTraining(t.dnn, cudnnBatchNormSpatial, &one, &zero,
		yd, p.z[i], yd, p.tmp, c.bnDesc, t.param(t.w, c.gamma), t.param(t.w, c.beta), t.cfg.BatchNormMomentum,
		t.stat(c.mean), t.stat(c.variance), nn.BNEpsilon, p.saveMean[i], p.saveInv[i])); err != nil {
		return err
	}
	if skip != 0 {
		if err := d.dnnErr("cudnnAddTensor skip", d.dnn.cudnnAddTensor(t.dnn, &one, yd, skip, &one, yd, p.tmp)); err != nil {
			return err
		}
	}
	return d.dnnErr("cudnnActivationForward", d.dnn.cudnnActivationForward(t.dnn, t.relu, &one, yd, p.tmp, &zero, yd, p.a[i]))
}

// gemm runs a row-major product on the trainer's stream.
func (t *Trainer) gemm(transA, transB bool, m, n, k int, a, b, c uintptr, beta float32) error {
	g := rowGemm(transA, transB, m, n, k)
	return t.d.blasErr(fmt.Sprintf("cublasSgemm %d×%d×%d", m, n, k),
		t.d.blas.cublasSgemm(t.blas, g.opFirst, g.opSecond, int32(g.m), int32(g.n), int32(g.k), &one, b, int32(g.ldFirst), a, int32(g.ldSecond), &beta, c, int32(g.ldc)))
}

func (t *Trainer) denseFwd(p *trainPlan, l *trainDense, x, y, yDesc uintptr) error {
	if err := t.gemm(false, false, p.n, l.out, l.in, x, t.param(t.w, l.w), y, 0); err != nil {
		return err
	}
	return t.d.dnnErr("cudnnAddTensor bias", t.d.dnn.cudnnAddTensor(t.dnn, &one, l.bDesc, t.param(t.w, l.b), &one, yDesc, y))
}

// losses computes the policy and value cross-entropies (targets weighted
// by each sample's share) and the L2 term, waiting for the GPU.
func (t *Trainer) losses(p *trainPlan) (nn.Losses, error) {
	d := t.d
	var pl, vl, l2 float32
	if err := d.blasErr("cublasSdot policy loss", d.blas.cublasSdot(t.blas, int32(p.n*t.actions), p.target, 1, p.logp, 1, &pl)); err != nil {
		return nn.Losses{}, err
	}
	if err := d.blasErr("cublasSdot value loss", d.blas.cublasSdot(t.blas, int32(p.n*3), p.vtarget, 1, p.vlogp, 1, &vl)); err != nil {
		return nn.Losses{}, err
	}
	if err := d.blasErr("cublasSdot L2", d.blas.cublasSdot(t.blas, int32(t.decayEnd), t.w, 1, t.w, 1, &l2)); err != nil {
		return nn.Losses{}, err
	}
	l := nn.Losses{Policy: -float64(pl), Value: -float64(vl), L2: t.cfg.WeightDecay * float64(l2)}
	l.Total = l.Policy + l.Value + l.L2
	return l, nil
}

// backward computes every learnable's gradient of policy + value loss
// into t.g.
func (t *Trainer) backward(p *trainPlan) error {
	d, n := t.d, p.n
	nconv := len(t.convs)
	// Cross-entropy gradients: softmax · (the row's target sum) − target,
	// on legal actions.
	if err := t.gemm(false, false, n, 1, t.actions, p.target, p.ones, p.rowSum, 0); err != nil {
		return err
	}
	if err := t.gemm(false, false, n, 1, 3, p.vtarget, p.ones, p.vrowSum, 0); err != nil {
		return err
	}
	if err := d.launch(t.stream, d.softGrad, uint32(n*t.actions), p.p, p.target, p.rowSum, p.legal, p.dLogits, uint32(n*t.actions), uint32(t.actions)); err != nil {
		return fmt.Errorf("softgrad: %w", err)
	}
	if err := d.launch(t.stream, d.softGrad, uint32(n*3), p.vp, p.vtarget, p.vrowSum, uintptr(0), p.dV, uint32(n*3), uint32(3)); err != nil {
		return fmt.Errorf("softgrad: %w", err)
	}
	// Value head's dense layers.
	if err := t.denseBwd(p, &t.fc[2], p.hidden, p.dV, p.dHidden); err != nil {
		return err
	}
	hd := p.flat[t.fc[1].out]
	if err := d.dnnErr("cudnnActivationBackward", d.dnn.cudnnActivationBackward(t.dnn, t.relu, &one, hd, p.hidden, hd, p.dHidden, hd, p.hidden, &zero, hd, p.dHidden)); err != nil {
		return err
	}
	if err := t.denseBwd(p, &t.fc[1], p.a[nconv-1], p.dHidden, p.dFlatV); err != nil {
		return err
	}
	if err := t.denseBwd(p, &t.fc[0], p.a[nconv-2], p.dLogits, p.dFlatP); err != nil {
		return err
	}
	top := p.a[nconv-3]
	// Heads' convolutions: both add into dA, the gradient of the tower's
	// output.
	if err := t.convBNBwd(p, nconv-2, p.dFlatP, top, p.dA, 0); err != nil {
		return err
	}
	if err := t.convBNBwd(p, nconv-1, p.dFlatV, top, p.dA, 1); err != nil {
		return err
	}
	// Blocks, last first: out = relu(bn(conv_b(t)) + in), t = relu(bn(conv_a(in))).
	dOut, dIn := p.dA, p.dB
	for bIdx := nconv - 3; bIdx >= 2; bIdx -= 2 {
		a := bIdx - 1
		in := p.a[a-1]
		c := &t.convs[bIdx]
		yd := p.desc[c.out]
		// dS = relu'(out) ⊙ dOut: the gradient of the sum, which goes to
		// both the skip and branch b.
		if err := d.dnnErr("cudnnActivationBackward", d.dnn.cudnnActivationBackward(t.dnn, t.relu, &one, yd, p.a[bIdx], yd, dOut, yd, p.a[bIdx], &zero, yd, p.dS)); err != nil {
			return err
		}
		if err := t.bnConvBwd(p, bIdx, p.dS, p.a[a], p.tmp, 0); err != nil {
			return err
		}
		// p.tmp is the gradient of t; through t's ReLU, then branch a.
		if err := d.cu("cuMemcpyDtoDAsync", d.drv.cuMemcpyDtoDAsync(dIn, p.dS, uintptr(n*c.out*t.cells*4), t.stream)); err != nil {
			return err
		}
		if err := t.convBNBwd(p, a, p.tmp, in, dIn, 1); err != nil {
			return err
		}
		dOut, dIn = dIn, dOut
	}
	// The stem: no gradient of the input.
	return t.convBNBwd(p, 0, dOut, p.in, 0, 0)
}

// convBNBwd back-propagates dA, the gradient of a[i] = relu(bn(conv(x))),
// through the ReLU, batch norm and convolution: weights', γ's and β's
// gradients into t.g and, unless dx is 0, x's gradient into dx (added to
// it when beta is 1).
func (t *Trainer) convBNBwd(p *trainPlan, i int, dA, x, dx uintptr, beta float32) error {
	d := t.d
	c := &t.convs[i]
	yd := p.desc[c.out]
	if err := d.dnnErr("cudnnActivationBackward", d.dnn.cudnnActivationBackward(t.dnn, t.relu, &one, yd, p.a[i], yd, dA, yd, p.a[i], &zero, yd, p.dS)); err != nil {
		return err
	}
	return t.bnConvBwd(p, i, p.dS, x, dx, beta)
}

// bnConvBwd back-propagates dY, the gradient of bn(conv(x)) of conv i.
func (t *Trainer) bnConvBwd(p *trainPlan, i int, dY, x, dx uintptr, beta float32) error {
	d := t.d
	c := &t.convs[i]
	xd, yd, cd := p.desc[c.in], p.desc[c.out], p.conv[c.kernel]
	algos := p.algos[[3]int{c.in, c.out, c.kernel}]
	if err := d.dnnErr("cudnnBatchNormalizationBackward", d.dnn.cudnnBatchNormalizationBackward(t.dnn, cudnnBatchNormSpatial, &one, &zero, &one, &zero,
		yd, p.z[i], yd, dY, yd, p.dZ, c.bnDesc, t.param(t.w, c.gamma), t.param(t.g, c.gamma), t.param(t.g, c.beta),
		nn.BNEpsilon, p.saveMean[i], p.saveInv[i])); err != nil {
		return err
	}
	if err := d.dnnErr("cudnnConvolutionBackwardFilter", d.dnn.cudnnConvolutionBackwardFilter(t.dnn, &one, xd, x, yd, p.dZ, cd, algos[2], p.ws, p.wsBytes, &zero, c.wDesc, t.param(t.g, c.w))); err != nil {
		return err
	}
	if dx == 0 {
		return nil
	}
	return d.dnnErr("cudnnConvolutionBackwardData", d.dnn.cudnnConvolutionBackwardData(t.dnn, &one, c.wDesc, t.param(t.w, c.w), yd, p.dZ, cd, algos[1], p.ws, p.wsBytes, &beta, xd, dx))
}

// denseBwd back-propagates dY, the gradient of y = x·W + b: W's and b's
// gradients into t.g, x's into dx.
func (t *Trainer) denseBwd(p *trainPlan, l *trainDense, x, dY, dx uintptr) error {
	n := p.n
	if err := t.gemm(true, false, l.in, l.out, n, x, dY, t.param(t.g, l.w), 0); err != nil {
		return err
	}
	if err := t.gemm(false, false, 1, l.out, n, p.ones, dY, t.param(t.g, l.b), 0); err != nil {
		return err
	}
	return t.gemm(false, true, n, l.in, l.out, dY, t.param(t.w, l.w), dx, 0)
}

// Sync copies the weights and batch-norm running statistics back into
// the network's arrays, so that nn's checkpoint code saves them, and the
// optimizer's momentum into Velocity's arrays.
func (t *Trainer) Sync() error {
	if t.closed {
		return errors.New("cuda trainer: closed")
	}
	unbind, err := t.d.bindThread()
	if err != nil {
		return err
	}
	defer unbind()
	d := t.d
	if err := d.cu("cuStreamSynchronize", d.drv.cuStreamSynchronize(t.stream)); err != nil {
		return err
	}
	for i, l := range t.learn {
		if err := t.download(l.Data, t.param(t.w, i)); err != nil {
			return err
		}
		if err := t.download(t.velocity[i], t.param(t.v, i)); err != nil {
			return err
		}
	}
	for i, s := range t.stats {
		if err := t.download(s.Data, t.stat(i)); err != nil {
			return err
		}
	}
	return nil
}

func (t *Trainer) download(dst []float32, src uintptr) error {
	if len(dst) == 0 {
		return nil
	}
	return t.d.cu("cuMemcpyDtoH", t.d.drv.cuMemcpyDtoH(unsafe.Pointer(&dst[0]), src, uintptr(len(dst)*4)))
}

// Close frees the trainer's GPU memory; call Sync first to keep its work.
func (t *Trainer) Close() error {
	if t.closed {
		return nil
	}
	unbind, err := t.d.bindThread()
	if err != nil {
		return err
	}
	defer unbind()
	t.free()
	t.d.release()
	return nil
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

func (t *Trainer) free() {
	d := t.d
	t.closed = true
	if t.stream != 0 {
		d.drv.cuStreamSynchronize(t.stream)
	}
	for _, p := range t.plans {
		t.freePlan(p)
	}
	t.plans = nil
	for _, c := range t.convs {
		if c.wDesc != 0 {
			d.dnn.cudnnDestroyFilterDescriptor(c.wDesc)
		}
		if c.bnDesc != 0 {
			d.dnn.cudnnDestroyTensorDescriptor(c.bnDesc)
		}
	}
	for _, f := range t.fc {
		if f.bDesc != 0 {
			d.dnn.cudnnDestroyTensorDescriptor(f.bDesc)
		}
	}
	if t.relu != 0 {
		d.dnn.cudnnDestroyActivationDescriptor(t.relu)
	}
	for _, m := range t.allocs {
		d.drv.cuMemFree(m)
	}
	t.allocs = nil
	if t.blas != 0 {
		d.blas.cublasDestroy(t.blas)
	}
	if t.dnn != 0 {
		d.dnn.cudnnDestroy(t.dnn)
	}
	if t.stream != 0 {
		d.drv.cuStreamDestroy(t.stream)
	}
	t.blas, t.dnn, t.stream = 0, 0, 0
}

// Network is the network being trained; its arrays hold the trained
// weights after Sync.
func (t *Trainer) Network() *nn.Network { return t.net }

// Config is the optimizer's current configuration.
func (t *Trainer) Config() nn.TrainConfig { return t.cfg }

// Resume sets the step count, for a trainer that goes on from a
// checkpoint.
func (t *Trainer) Resume(steps int64) { t.steps = steps }
