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
// Gorgonia trainer: the same losses (the auxiliary heads' too),
// gradients, batch norm in training mode with the same running
// statistics, and SGD with momentum and L2 decay. It walks the network's
// typed description (nn.Description): every architecture option that
// the CPU trains, it trains. The network's arrays are stale until Sync.
// Not safe for concurrent use.
type Trainer struct {
	d     *Device
	net   *nn.Network
	cfg   nn.TrainConfig
	steps int64
	tf32  bool

	stream, dnn, blas uintptr
	blasWS            uintptr
	relu              uintptr

	desc         nn.Description
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
	// sums holds a step's loss sums (nsums floats), written on the GPU.
	sums uintptr

	planes, height, width, cells, actions int
	// convs and dense are the description's layers (Convs, Dense order);
	// the fields below point into them.
	convs                       []trainConv
	dense                       []trainDense
	stem                        *trainConv
	blocks                      []trainBlock
	policyConv, valueConv, owns *trainConv
	// policy and soft are the last layers of the policy head and of the
	// soft policy head (absent where the network lacks it).
	policy, soft              policyLayer
	valueFC1, valueFC2, score *trainDense
	policyIndex               uintptr // int32 per action (convolutional heads)
	spatial, globals          int     // a convolutional head's plane and global logits

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

// trainConv is a convolution with batch norm: its description, and its
// slot in a plan's per-convolution activations.
type trainConv struct {
	nn.ConvDesc
	slot          int
	wDesc, bnDesc uintptr
}

type trainDense struct {
	nn.DenseDesc
	bDesc uintptr
}

// policyLayer is a policy head's last layer: its dense layer, or the
// convolutional head's output convolution and global logits (nil where
// every action has a cell). The soft policy head has the policy head's
// shape and reads the same policy convolution.
type policyLayer struct {
	fc     *trainDense
	out    *trainConv
	global *trainDense
}

func (l policyLayer) present() bool { return l.fc != nil || l.out != nil }

// trainBlock is a residual block; pool, where set, is its global pooling
// layer and slot its index among the pooling blocks.
type trainBlock struct {
	a, b *trainConv
	pool *trainDense
	slot int
}

// ErrArchitecture is the refusal of a network whose description the GPU
// does not compute: layers that do not fit each other, or a part of a
// newer description. Every option of nn.Config trains on the GPU.
var ErrArchitecture = errors.New("the GPU does not compute this network's architecture; run it with --device cpu")

// NewTrainer copies the network's weights, running statistics and the
// optimizer's velocity (nil: zero; else parallel to net.Learnables()) to
// the GPU.
func (d *Device) NewTrainer(net *nn.Network, cfg nn.TrainConfig, velocity [][]float32) (t *Trainer, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("cuda trainer: %w", err)
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
	t = &Trainer{d: d, net: net, cfg: cfg, desc: net.Describe(), learn: learn, stats: stats, velocity: velocity, plans: map[int]*trainPlan{}}
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

// layout takes the layers from the description, checks that they fit
// the arrays and each other, and places the arrays in the flat buffers.
func (t *Trainer) layout() error {
	ds := t.desc
	t.planes, t.height, t.width = ds.Planes, ds.Height, ds.Width
	t.cells, t.actions = ds.Cells(), ds.Actions
	if ds.ValueOutputs != 3 {
		return fmt.Errorf("%d value outputs, want 3 (win, draw, loss)", ds.ValueOutputs)
	}
	if err := checkDescription(ds, t.learn, t.stats); err != nil {
		return err
	}
	for i, c := range ds.Convs() {
		t.convs = append(t.convs, trainConv{ConvDesc: c, slot: i})
	}
	for _, l := range ds.Dense() {
		t.dense = append(t.dense, trainDense{DenseDesc: l})
	}
	// Walk the layers in the order Convs and Dense list them.
	nc, nd := 0, 0
	conv := func() *trainConv { nc++; return &t.convs[nc-1] }
	dense := func() *trainDense { nd++; return &t.dense[nd-1] }
	t.stem = conv()
	pools := 0
	for _, b := range ds.Blocks {
		tb := trainBlock{a: conv(), b: conv(), slot: -1}
		if b.Pool != nil {
			tb.slot = pools
			pools++
		}
		t.blocks = append(t.blocks, tb)
	}
	t.policyConv = conv()
	if ds.PolicyOut != nil {
		t.policy.out = conv()
		t.spatial = ds.PolicyOut.Out * t.cells
	}
	t.valueConv = conv()
	if ds.Ownership != nil {
		t.owns = conv()
	}
	if ds.SoftPolicyOut != nil {
		t.soft.out = conv()
	}
	for i, b := range ds.Blocks {
		if b.Pool != nil {
			t.blocks[i].pool = dense()
		}
	}
	if ds.PolicyFC != nil {
		t.policy.fc = dense()
	}
	if ds.PolicyGlobal != nil {
		t.policy.global = dense()
		t.globals = ds.PolicyGlobal.Out
	}
	t.valueFC1, t.valueFC2 = dense(), dense()
	if ds.Score != nil {
		t.score = dense()
	}
	if ds.SoftPolicyFC != nil {
		t.soft.fc = dense()
	}
	if ds.SoftPolicyGlobal != nil {
		t.soft.global = dense()
	}
	if nc != len(t.convs) || nd != len(t.dense) {
		return fmt.Errorf("description lists %d convolutions and %d dense layers, its fields %d and %d", len(t.convs), len(t.dense), nc, nd)
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

// checkDescription checks that the description's indices name arrays of
// the sizes its layers promise and that each layer reads what the one
// before it writes, so that no copy or kernel runs out of bounds.
func checkDescription(ds nn.Description, learn, stats []nn.Tensor) error {
	size := func(list []nn.Tensor, i, want int, what string) error {
		if i < 0 || i >= len(list) || len(list[i].Data) != want {
			return fmt.Errorf("%s: array %d does not hold %d values", what, i, want)
		}
		return nil
	}
	for _, c := range ds.Convs() {
		if c.Kernel%2 != 1 || c.In < 1 || c.Out < 1 {
			return fmt.Errorf("%s: %d→%d with kernel %d", c.Name, c.In, c.Out, c.Kernel)
		}
		for _, e := range []error{
			size(learn, c.W, c.Out*c.In*c.Kernel*c.Kernel, c.Name+" weights"),
			size(learn, c.Gamma, c.Out, c.Name+" gamma"), size(learn, c.Beta, c.Out, c.Name+" beta"),
			size(stats, c.Mean, c.Out, c.Name+" mean"), size(stats, c.Variance, c.Out, c.Name+" variance"),
		} {
			if e != nil {
				return e
			}
		}
	}
	for _, l := range ds.Dense() {
		if err := size(learn, l.W, l.In*l.Out, l.Name+" weights"); err != nil {
			return err
		}
		if err := size(learn, l.B, l.Out, l.Name+" bias"); err != nil {
			return err
		}
	}
	cells, f := ds.Cells(), ds.Stem.Out
	fits := ds.Stem.In == ds.Planes && ds.Stem.ReLU && ds.PolicyConv.In == f && ds.ValueConv.In == f &&
		ds.PolicyConv.ReLU && ds.ValueConv.ReLU &&
		ds.ValueFC1.In == ds.ValueConv.Out*cells && ds.ValueFC2.In == ds.ValueFC1.Out && ds.ValueFC2.Out == 3
	for _, b := range ds.Blocks {
		fits = fits && b.A.In == f && b.B.In == b.A.Out && b.B.Out == f && b.A.ReLU && b.B.ReLU &&
			(b.Pool == nil || (b.Pool.In == 2*b.A.Out && b.Pool.Out == b.A.Out))
	}
	switch {
	case ds.PolicyFC != nil:
		fits = fits && ds.PolicyOut == nil && ds.PolicyFC.In == ds.PolicyConv.Out*cells && ds.PolicyFC.Out == ds.Actions
	case ds.PolicyOut != nil:
		logits := ds.PolicyOut.Out * cells
		if g := ds.PolicyGlobal; g != nil {
			fits = fits && g.In == 2*ds.PolicyConv.Out
			logits += g.Out
		}
		fits = fits && ds.PolicyOut.In == ds.PolicyConv.Out && !ds.PolicyOut.ReLU && len(ds.PolicyIndex) == ds.Actions
		for _, i := range ds.PolicyIndex {
			fits = fits && i >= 0 && int(i) < logits
		}
	default:
		fits = false
	}
	// The soft policy head shares the policy head's buffers and gather.
	switch so, g := ds.SoftPolicyOut, ds.SoftPolicyGlobal; {
	case ds.SoftPolicyFC != nil:
		fits = fits && so == nil && g == nil && ds.PolicyFC != nil &&
			ds.SoftPolicyFC.In == ds.PolicyFC.In && ds.SoftPolicyFC.Out == ds.PolicyFC.Out
	case so != nil:
		pg := ds.PolicyGlobal
		fits = fits && ds.PolicyOut != nil && so.In == ds.PolicyOut.In && so.Out == ds.PolicyOut.Out && !so.ReLU &&
			(g == nil) == (pg == nil) && (g == nil || (g.In == pg.In && g.Out == pg.Out))
	default:
		fits = fits && g == nil
	}
	if o := ds.Ownership; o != nil {
		fits = fits && o.In == f && o.Out == 1 && !o.ReLU
	}
	if s := ds.Score; s != nil {
		fits = fits && s.In == ds.ValueFC1.Out && s.Out == 1
	}
	if !fits {
		return fmt.Errorf("%s network: %w", ds.Game, ErrArchitecture)
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
	if t.sums, err = t.alloc(nsums); err != nil {
		return err
	}
	if err := d.cu("cuMemsetD32Async", d.drv.cuMemsetD32Async(t.sums, 0, nsums, t.stream)); err != nil {
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
		if err := d.dnnErr("cudnnSetFilter4dDescriptor", d.dnn.cudnnSetFilter4dDescriptor(c.wDesc, cudnnDataFloat, cudnnTensorNCHW, int32(c.Out), int32(c.In), int32(c.Kernel), int32(c.Kernel))); err != nil {
			return err
		}
		if c.bnDesc, err = t.tensorDesc(1, c.Out, 1, 1); err != nil {
			return err
		}
	}
	for i := range t.dense {
		if t.dense[i].bDesc, err = t.tensorDesc(1, t.dense[i].Out, 1, 1); err != nil {
			return err
		}
	}
	if t.policy.out != nil {
		if t.policyIndex, err = t.alloc(len(t.desc.PolicyIndex)); err != nil {
			return err
		}
		if err := d.uploadInt32(t.policyIndex, t.desc.PolicyIndex); err != nil {
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
	if len(b.Policy) != n*t.actions || len(b.Legal) != n*t.actions || len(b.Value) != n*3 || (b.Weights != nil && len(b.Weights) != n) ||
		(b.Aux != nil && (len(b.Aux) != n || len(b.Margin) != n || len(b.Ownership) != n*t.cells)) ||
		(b.Aux == nil && (b.Margin != nil || b.Ownership != nil)) {
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
	}{{p.policy.target, b.Policy}, {p.legal, b.Legal}, {p.vtarget, b.Value}} {
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
	auxShare, err := t.uploadTargets(p, b)
	if err != nil {
		return nn.Losses{}, restore(err)
	}
	if err := t.lossInputs(p); err != nil {
		return nn.Losses{}, err
	}
	// The losses are summed on the GPU and read when the step is done: the
	// update is skipped there if one is not finite, so no wait comes
	// between the forward and backward passes.
	if err := t.queueSums(p); err != nil {
		return nn.Losses{}, err
	}
	t.staged("losses")
	if err := t.backward(p); err != nil {
		return nn.Losses{}, err
	}
	t.staged("backward")
	counted := t.counted(auxShare)
	if err := d.launch(t.stream, d.sgd, uint32(t.total), t.w, t.v, t.g, uint32(t.total), uint32(t.decayEnd),
		float32(t.cfg.LearningRate), float32(t.cfg.Momentum), float32(2*t.cfg.WeightDecay), t.sums, counted); err != nil {
		return nn.Losses{}, fmt.Errorf("sgd: %w", err)
	}
	if err := d.cu("cuStreamSynchronize", d.drv.cuStreamSynchronize(t.stream)); err != nil {
		return nn.Losses{}, err
	}
	var sums [nsums]float32
	if err := t.download(sums[:], t.sums); err != nil {
		return nn.Losses{}, err
	}
	losses := t.lossesOf(sums, counted, auxShare)
	if math.IsNaN(losses.Total) || math.IsInf(losses.Total, 0) {
		return losses, fmt.Errorf("training step %d: policy loss %g, value loss %g, ownership %g, score %g, soft policy %g, L2 %g; weights left unchanged",
			t.steps+1, losses.Policy, losses.Value, losses.Ownership, losses.Score, losses.SoftPolicy, losses.L2)
	}
	t.steps++
	return losses, nil
}

// uploadTargets copies each sample's share of the batch's weight, the
// soft policy head's targets (weighted by that share and the config's
// weight) and the auxiliary heads' targets and weights, and returns the share of the
// batch's weight that has auxiliary targets. The auxiliary weights make
// each head's loss the mean squared error over the samples with targets
// (per cell for ownership), times the config's weight, times that share,
// as nn's trainer does.
func (t *Trainer) uploadTargets(p *trainPlan, b nn.Batch) (auxShare float64, err error) {
	d, n := t.d, p.n
	weight := func(i int) float64 {
		if b.Weights == nil {
			return 1
		}
		return float64(b.Weights[i])
	}
	sum, with := 0.0, 0.0
	for i := 0; i < n; i++ {
		sum += weight(i)
		if b.Aux != nil && b.Aux[i] == 1 {
			with += weight(i)
		}
	}
	if sum <= 0 {
		return 0, errors.New("training batch: the sample weights sum to zero")
	}
	for i := range p.hostShare {
		p.hostShare[i] = float32(weight(i) / sum)
	}
	if err := d.upload(p.share, p.hostShare); err != nil {
		return 0, err
	}
	if t.soft.present() {
		softTargets(p.hostSoft, b.Policy, p.hostShare, t.cfg.SoftPolicyWeight, t.actions)
		if err := d.upload(p.soft.target, p.hostSoft); err != nil {
			return 0, err
		}
	}
	if t.owns == nil && t.score == nil {
		return 0, nil
	}
	clear(p.hostOwnTarget)
	clear(p.hostOwnWeight)
	clear(p.hostScoreTarget)
	clear(p.hostScoreWeight)
	for i := 0; i < n && with > 0; i++ {
		if b.Aux[i] != 1 {
			continue
		}
		w := weight(i) / sum
		if t.owns != nil {
			copy(p.hostOwnTarget[i*t.cells:(i+1)*t.cells], b.Ownership[i*t.cells:(i+1)*t.cells])
			ow := float32(w * t.cfg.OwnershipWeight / float64(t.cells))
			for c := i * t.cells; c < (i+1)*t.cells; c++ {
				p.hostOwnWeight[c] = ow
			}
		}
		if t.score != nil {
			p.hostScoreTarget[i] = b.Margin[i]
			p.hostScoreWeight[i] = float32(w * t.cfg.ScoreWeight)
		}
	}
	for _, u := range []struct {
		dst uintptr
		src []float32
	}{{p.ownTarget, p.hostOwnTarget}, {p.ownWeight, p.hostOwnWeight}, {p.scoreTarget, p.hostScoreTarget}, {p.scoreWeight, p.hostScoreWeight}} {
		if u.dst != 0 {
			if err := d.upload(u.dst, u.src); err != nil {
				return 0, err
			}
		}
	}
	return with / sum, nil
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
			if b.Aux != nil {
				part.Aux, part.Margin, part.Ownership = b.Aux[lo:hi], b.Margin[lo:hi], b.Ownership[lo*cells:hi*cells]
			}
			if err := part.Check(hi-lo, actions, cells); err != nil {
				errs[c] = fmt.Errorf("samples %d and on: %w", lo, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// softTargets writes into dst the soft policy head's targets for the
// policy targets (nn.SoftPolicyTarget), each sample's row times its share
// of the batch's weight times weight. It runs in parallel chunks while the
// GPU runs the forward pass: for YINSH's 2,142 actions it is the step's
// largest work on the host.
func softTargets(dst, policy, share []float32, weight float64, actions int) {
	n := len(share)
	chunks := min(runtime.GOMAXPROCS(0), (n+63)/64)
	var wg sync.WaitGroup
	for c := range chunks {
		lo, hi := c*n/chunks*actions, (c+1)*n/chunks*actions
		wg.Add(1)
		go func() {
			defer wg.Done()
			nn.SoftPolicyTarget(dst[lo:hi], policy[lo:hi], actions, func(row int) float64 {
				return float64(share[lo/actions+row]) * weight
			})
		}()
	}
	wg.Wait()
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
	for _, f := range t.dense {
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
