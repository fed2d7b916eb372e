package cuda

import (
	"errors"
	"fmt"

	"github.com/flipzero/flipzero/nn"
)

// forward runs the network in training mode: convolutions, batch norm
// with the batch's statistics (updating the running ones), ReLUs, skips,
// global pooling, the heads (nn.Description's forward pass).
func (t *Trainer) forward(p *trainPlan) error {
	d := t.d
	if err := t.convBN(p, t.stem, p.in, 0); err != nil {
		return err
	}
	x := p.a[t.stem.slot]
	for _, b := range t.blocks {
		if err := t.convBN(p, b.a, x, 0); err != nil {
			return err
		}
		in := p.a[b.a.slot]
		if b.pool != nil {
			if err := t.poolBias(p, b, in); err != nil {
				return err
			}
			in = p.biased[b.slot]
		}
		if err := t.convBN(p, b.b, in, x); err != nil {
			return err
		}
		x = p.a[b.b.slot]
	}
	if err := t.convBN(p, t.policyConv, x, 0); err != nil {
		return err
	}
	if err := t.policyForward(p); err != nil {
		return err
	}
	if err := t.convBN(p, t.valueConv, x, 0); err != nil {
		return err
	}
	if err := t.denseFwd(p, t.valueFC1, p.a[t.valueConv.slot], p.hidden); err != nil {
		return err
	}
	hd := p.flat[t.valueFC1.Out]
	if err := d.dnnErr("cudnnActivationForward", d.dnn.cudnnActivationForward(t.dnn, t.relu, &one, hd, p.hidden, &zero, hd, p.hidden)); err != nil {
		return err
	}
	if err := t.denseFwd(p, t.valueFC2, p.hidden, p.vlogits); err != nil {
		return err
	}
	if t.owns != nil {
		if err := t.convBN(p, t.owns, x, 0); err != nil {
			return err
		}
	}
	if t.score != nil {
		return t.denseFwd(p, t.score, p.hidden, p.zScore)
	}
	return nil
}

// poolBias computes block b's pooled means and maxima of x, the output
// of its first convolution, and x plus the pooling bias into
// p.biased[b.slot].
func (t *Trainer) poolBias(p *trainPlan, b trainBlock, x uintptr) error {
	d, n, c := t.d, p.n, b.a.Out
	if err := t.poolDense(p, b.pool, x, c, p.pooled[b.slot], p.argmax[b.slot], p.gbias); err != nil {
		return err
	}
	total := uint32(n * c * t.cells)
	if err := d.launch(t.stream, d.chanBias, total, x, p.gbias, p.biased[b.slot], total, uint32(c), uint32(t.cells), uint32(t.cells), uint32(c)); err != nil {
		return fmt.Errorf("%s pooling bias: %w", b.a.Name, err)
	}
	return nil
}

// poolDense is y = pool(x)·W + b for the plan's positions: each of x's c
// channels' mean and maximum over the cells (NCHW) through dense layer
// l, the pooled values and each maximum's cell kept for poolDenseBwd.
// Global pooling and the convolutional policy head's global logits are
// both this.
func (t *Trainer) poolDense(p *trainPlan, l *trainDense, x uintptr, c int, pooled, argmax, y uintptr) error {
	d, n := t.d, p.n
	lay := nchwLayout(c, t.cells)
	if err := d.launch(t.stream, d.pool, uint32(n*c), x, pooled, argmax, uint32(n*c), uint32(c), uint32(t.cells), lay.sN, lay.sC, lay.sP); err != nil {
		return fmt.Errorf("%s pooling: %w", l.Name, err)
	}
	return t.denseFwd(p, l, pooled, y)
}

// poolDenseBwd back-propagates dY, the gradient of poolDense's output:
// the dense layer's gradients into t.g, and x's gradient added to dx.
func (t *Trainer) poolDenseBwd(p *trainPlan, l *trainDense, c int, pooled, argmax, dY, dx uintptr) error {
	d := t.d
	if err := t.denseBwd(p, l, pooled, dY, p.dPooled, 0); err != nil {
		return err
	}
	total := uint32(p.n * c * t.cells)
	if err := d.launch(t.stream, d.poolGrad, total, p.dPooled, argmax, dx, total, uint32(c), uint32(t.cells), uint32(1)); err != nil {
		return fmt.Errorf("%s pooling gradient: %w", l.Name, err)
	}
	return nil
}

// policyForward computes the policy heads' logits from the policy
// convolution's output.
func (t *Trainer) policyForward(p *trainPlan) error {
	pc := p.a[t.policyConv.slot]
	if g := t.policy.global; g != nil {
		if err := t.poolDense(p, g, pc, t.policyConv.Out, p.pPooled, p.pArgmax, p.policy.glob); err != nil {
			return err
		}
	}
	if err := t.headForward(p, t.policy, &p.policy); err != nil {
		return err
	}
	if !t.soft.present() {
		return nil
	}
	if g := t.soft.global; g != nil {
		// The same pooled values as the policy head's.
		if err := t.denseFwd(p, g, p.pPooled, p.soft.glob); err != nil {
			return err
		}
	}
	return t.headForward(p, t.soft, &p.soft)
}

// headForward computes one policy head's logits into h.logits: through
// its dense layer, or its output convolution gathered with the global
// logits already in h.glob.
func (t *Trainer) headForward(p *trainPlan, l policyLayer, h *policyBufs) error {
	d, n := t.d, p.n
	pc := p.a[t.policyConv.slot]
	if l.fc != nil {
		return t.denseFwd(p, l.fc, pc, h.logits)
	}
	if err := t.convBN(p, l.out, pc, 0); err != nil {
		return err
	}
	planes := nchwLayout(l.out.Out, t.cells)
	total := uint32(n * t.actions)
	if err := d.launch(t.stream, d.gather, total, p.a[l.out.slot], h.glob, t.policyIndex, h.logits, total, uint32(t.actions),
		uint32(t.cells), uint32(t.spatial), uint32(t.globals), planes.sN, planes.sC, planes.sP); err != nil {
		return fmt.Errorf("%s gather: %w", h.name, err)
	}
	return nil
}

// lossInputs queues the losses' inputs: masked logits, their
// (log-)softmax, the targets weighted by each sample's share, the
// auxiliary heads' loss terms and gradients.
func (t *Trainer) lossInputs(p *trainPlan) error {
	d, n := t.d, p.n
	softmax := func(algo int32, desc, src, dst uintptr, what string) error {
		return d.dnnErr("cudnnSoftmaxForward "+what, d.dnn.cudnnSoftmaxForward(t.dnn, algo, cudnnSoftmaxModeInst, &one, desc, src, &zero, desc, dst))
	}
	ad, vd := p.flat[t.actions], p.flat[3]
	for _, h := range p.heads {
		if err := d.launch(t.stream, d.maskLogits, uint32(n*t.actions), h.logits, p.legal, h.masked, uint32(n*t.actions)); err != nil {
			return fmt.Errorf("%s masklogits: %w", h.name, err)
		}
		if err := softmax(cudnnSoftmaxLog, ad, h.masked, h.logp, h.name+" log-softmax"); err != nil {
			return err
		}
		if err := softmax(cudnnSoftmaxAccurate, ad, h.masked, h.p, h.name+" softmax"); err != nil {
			return err
		}
	}
	if err := softmax(cudnnSoftmaxLog, vd, p.vlogits, p.vlogp, "value log-softmax"); err != nil {
		return err
	}
	if err := softmax(cudnnSoftmaxAccurate, vd, p.vlogits, p.vp, "value softmax"); err != nil {
		return err
	}
	// The soft policy head's targets came weighted from the host.
	if err := d.launch(t.stream, d.rowScale, uint32(n*t.actions), p.policy.target, p.share, p.policy.target, uint32(n*t.actions), uint32(t.actions)); err != nil {
		return fmt.Errorf("rowscale: %w", err)
	}
	if err := d.launch(t.stream, d.rowScale, uint32(n*3), p.vtarget, p.share, p.vtarget, uint32(n*3), uint32(3)); err != nil {
		return fmt.Errorf("rowscale: %w", err)
	}
	if t.owns != nil {
		total := uint32(n * t.cells)
		if err := d.launch(t.stream, d.tanhSq, total, p.a[t.owns.slot], p.ownTarget, p.ownWeight, p.ownTerm, p.dOwn, total); err != nil {
			return fmt.Errorf("ownership loss: %w", err)
		}
	}
	if t.score != nil {
		if err := d.launch(t.stream, d.tanhSq, uint32(n), p.zScore, p.scoreTarget, p.scoreWeight, p.scoreTerm, p.dScore, uint32(n)); err != nil {
			return fmt.Errorf("score loss: %w", err)
		}
	}
	return nil
}

// The sums the losses are made of, in the trainer's sums array on the
// GPU, in this order.
const (
	sumPolicy     = iota // Σ target·log p over actions
	sumValue             // Σ target·log p over outcomes
	sumL2                // Σ w² over the weights that decay
	sumOwnership         // Σ of the ownership head's weighted squares
	sumScore             // Σ of the score head's weighted squares
	sumSoftPolicy        // Σ weighted soft target·log p over actions
	nsums
)

// queueSums queues the sums the losses are made of into t.sums. cuBLAS
// writes them to GPU memory (its pointer mode set to the device's for
// these calls only), so the step queues its backward pass without
// waiting for them; lossesOf reads them once the step is done.
func (t *Trainer) queueSums(p *trainPlan) error {
	d := t.d
	if err := d.blasErr("cublasSetPointerMode device", d.blas.cublasSetPointerMode(t.blas, cublasPointerModeDevice)); err != nil {
		return err
	}
	err := t.queueDots(p)
	return errors.Join(err, d.blasErr("cublasSetPointerMode host", d.blas.cublasSetPointerMode(t.blas, cublasPointerModeHost)))
}

func (t *Trainer) queueDots(p *trainPlan) error {
	d := t.d
	sum := func(i int) uintptr { return t.sums + uintptr(i*4) }
	if err := d.blasErr("cublasSdot policy loss", d.blas.cublasSdot(t.blas, int32(p.n*t.actions), p.policy.target, 1, p.policy.logp, 1, sum(sumPolicy))); err != nil {
		return err
	}
	if t.soft.present() {
		if err := d.blasErr("cublasSdot soft policy loss", d.blas.cublasSdot(t.blas, int32(p.n*t.actions), p.soft.target, 1, p.soft.logp, 1, sum(sumSoftPolicy))); err != nil {
			return err
		}
	}
	if err := d.blasErr("cublasSdot value loss", d.blas.cublasSdot(t.blas, int32(p.n*3), p.vtarget, 1, p.vlogp, 1, sum(sumValue))); err != nil {
		return err
	}
	if err := d.blasErr("cublasSdot L2", d.blas.cublasSdot(t.blas, int32(t.decayEnd), t.w, 1, t.w, 1, sum(sumL2))); err != nil {
		return err
	}
	// The terms are weights times squares, none negative: their sum is
	// their absolute sum.
	if t.owns != nil {
		if err := d.blasErr("cublasSasum ownership loss", d.blas.cublasSasum(t.blas, int32(p.n*t.cells), p.ownTerm, 1, sum(sumOwnership))); err != nil {
			return err
		}
	}
	if t.score != nil {
		if err := d.blasErr("cublasSasum score loss", d.blas.cublasSasum(t.blas, int32(p.n), p.scoreTerm, 1, sum(sumScore))); err != nil {
			return err
		}
	}
	return nil
}

// counted is the mask (bit i: sum i) of the sums the step's total loss
// is made of: the auxiliary heads' only where the batch has their
// targets and the config weighs them.
func (t *Trainer) counted(auxShare float64) uint32 {
	m := uint32(1<<sumPolicy | 1<<sumValue | 1<<sumL2)
	if t.owns != nil && auxShare > 0 && t.cfg.OwnershipWeight > 0 {
		m |= 1 << sumOwnership
	}
	if t.score != nil && auxShare > 0 && t.cfg.ScoreWeight > 0 {
		m |= 1 << sumScore
	}
	if t.soft.present() && t.cfg.SoftPolicyWeight > 0 {
		m |= 1 << sumSoftPolicy
	}
	return m
}

// lossesOf makes the losses from the sums counted (bit i: sums[i]): the
// policy and value cross-entropies (targets weighted by each sample's
// share), the auxiliary heads' mean squared errors, the soft policy
// head's cross-entropy and the L2 term.
func (t *Trainer) lossesOf(sums [nsums]float32, counted uint32, auxShare float64) nn.Losses {
	l := nn.Losses{Policy: -float64(sums[sumPolicy]), Value: -float64(sums[sumValue]), L2: t.cfg.WeightDecay * float64(sums[sumL2])}
	if counted&(1<<sumOwnership) != 0 {
		l.Ownership = float64(sums[sumOwnership]) / (t.cfg.OwnershipWeight * auxShare)
	}
	if counted&(1<<sumScore) != 0 {
		l.Score = float64(sums[sumScore]) / (t.cfg.ScoreWeight * auxShare)
	}
	if counted&(1<<sumSoftPolicy) != 0 {
		l.SoftPolicy = -float64(sums[sumSoftPolicy]) / t.cfg.SoftPolicyWeight
	}
	l.Total = l.Policy + l.Value + t.cfg.OwnershipWeight*l.Ownership + t.cfg.ScoreWeight*l.Score + t.cfg.SoftPolicyWeight*l.SoftPolicy + l.L2
	return l
}

// convBN is a[c] = bn(conv(x)), then + skip, then ReLU where c has one,
// keeping z[c] = conv(x) and the batch's statistics for the backward
// pass.
func (t *Trainer) convBN(p *trainPlan, c *trainConv, x, skip uintptr) error {
	d, i := t.d, c.slot
	xd, yd := p.desc[c.In], p.desc[c.Out]
	algos := p.algos[[3]int{c.In, c.Out, c.Kernel}]
	if err := d.dnnErr(fmt.Sprintf("cudnnConvolutionForward %s", c.Name),
		d.dnn.cudnnConvolutionForward(t.dnn, &one, xd, x, c.wDesc, t.param(t.w, c.W), p.conv[c.Kernel], algos[0], p.ws, p.wsBytes, &zero, yd, p.z[i])); err != nil {
		return err
	}
	bnOut := p.tmp
	if !c.ReLU {
		bnOut = p.a[i]
	}
	if err := d.dnnErr("cudnnBatchNormalizationForwardTraining "+c.Name, d.dnn.cudnnBatchNormalizationForwardTraining(t.dnn, cudnnBatchNormSpatial, &one, &zero,
		yd, p.z[i], yd, bnOut, c.bnDesc, t.param(t.w, c.Gamma), t.param(t.w, c.Beta), t.cfg.BatchNormMomentum,
		t.stat(c.Mean), t.stat(c.Variance), nn.BNEpsilon, p.saveMean[i], p.saveInv[i])); err != nil {
		return err
	}
	if skip != 0 {
		if err := d.dnnErr("cudnnAddTensor skip", d.dnn.cudnnAddTensor(t.dnn, &one, yd, skip, &one, yd, bnOut)); err != nil {
			return err
		}
	}
	if !c.ReLU {
		return nil
	}
	return d.dnnErr("cudnnActivationForward", d.dnn.cudnnActivationForward(t.dnn, t.relu, &one, yd, p.tmp, &zero, yd, p.a[i]))
}

// gemm runs a row-major product on the trainer's stream.
func (t *Trainer) gemm(transA, transB bool, m, n, k int, a, b, c uintptr, beta float32) error {
	g := rowGemm(transA, transB, m, n, k)
	return t.d.blasErr(fmt.Sprintf("cublasSgemm %d×%d×%d", m, n, k),
		t.d.blas.cublasSgemm(t.blas, g.opFirst, g.opSecond, int32(g.m), int32(g.n), int32(g.k), &one, b, int32(g.ldFirst), a, int32(g.ldSecond), &beta, c, int32(g.ldc)))
}

func (t *Trainer) denseFwd(p *trainPlan, l *trainDense, x, y uintptr) error {
	if err := t.gemm(false, false, p.n, l.Out, l.In, x, t.param(t.w, l.W), y, 0); err != nil {
		return err
	}
	return t.d.dnnErr("cudnnAddTensor bias", t.d.dnn.cudnnAddTensor(t.dnn, &one, l.bDesc, t.param(t.w, l.B), &one, p.flat[l.Out], y))
}

// backward computes every learnable's gradient of the total loss into
// t.g.
func (t *Trainer) backward(p *trainPlan) error {
	d, n := t.d, p.n
	// Cross-entropy gradients: softmax · (the row's target sum) − target,
	// on legal actions.
	for _, h := range p.heads {
		if err := t.gemm(false, false, n, 1, t.actions, h.target, p.ones, h.rowSum, 0); err != nil {
			return err
		}
		if err := d.launch(t.stream, d.softGrad, uint32(n*t.actions), h.p, h.target, h.rowSum, p.legal, h.dLogits, uint32(n*t.actions), uint32(t.actions)); err != nil {
			return fmt.Errorf("%s softgrad: %w", h.name, err)
		}
	}
	if err := t.gemm(false, false, n, 1, 3, p.vtarget, p.ones, p.vrowSum, 0); err != nil {
		return err
	}
	if err := d.launch(t.stream, d.softGrad, uint32(n*3), p.vp, p.vtarget, p.vrowSum, uintptr(0), p.dV, uint32(n*3), uint32(3)); err != nil {
		return fmt.Errorf("softgrad: %w", err)
	}
	// The value head, with the score head that reads its hidden layer.
	if err := t.denseBwd(p, t.valueFC2, p.hidden, p.dV, p.dHidden, 0); err != nil {
		return err
	}
	if t.score != nil {
		if err := t.denseBwd(p, t.score, p.hidden, p.dScore, p.dHidden, 1); err != nil {
			return err
		}
	}
	hd := p.flat[t.valueFC1.Out]
	if err := d.dnnErr("cudnnActivationBackward", d.dnn.cudnnActivationBackward(t.dnn, t.relu, &one, hd, p.hidden, hd, p.dHidden, hd, p.hidden, &zero, hd, p.dHidden)); err != nil {
		return err
	}
	if err := t.denseBwd(p, t.valueFC1, p.a[t.valueConv.slot], p.dHidden, p.dFlatV, 0); err != nil {
		return err
	}
	top := p.a[t.blockOut()]
	// The heads' convolutions all add into dA, the gradient of the
	// tower's output.
	if err := t.convBNBwd(p, t.valueConv, p.dFlatV, top, p.dA, 0); err != nil {
		return err
	}
	if err := t.policyBackward(p); err != nil {
		return err
	}
	if err := t.convBNBwd(p, t.policyConv, p.dPolicy, top, p.dA, 1); err != nil {
		return err
	}
	if t.owns != nil {
		if err := t.bnConvBwd(p, t.owns, p.dOwn, top, p.dA, 1); err != nil {
			return err
		}
	}
	// Blocks, last first: out = relu(bn(conv_b(t')) + in), t' = t plus
	// the pooling bias where the block pools, t = relu(bn(conv_a(in))).
	dOut, dIn := p.dA, p.dB
	for i := len(t.blocks) - 1; i >= 0; i-- {
		b := t.blocks[i]
		in := t.blockIn(p, i)
		tIn := p.a[b.a.slot]
		if b.pool != nil {
			tIn = p.biased[b.slot]
		}
		yd := p.desc[b.b.Out]
		// dS = relu'(out) ⊙ dOut: the gradient of the sum, which goes to
		// both the skip and branch b.
		if err := d.dnnErr("cudnnActivationBackward", d.dnn.cudnnActivationBackward(t.dnn, t.relu, &one, yd, p.a[b.b.slot], yd, dOut, yd, p.a[b.b.slot], &zero, yd, p.dS)); err != nil {
			return err
		}
		if err := t.bnConvBwd(p, b.b, p.dS, tIn, p.tmp, 0); err != nil {
			return err
		}
		if b.pool != nil {
			if err := t.poolBiasBwd(p, b, p.tmp); err != nil {
				return err
			}
		}
		// p.tmp is the gradient of t; through t's ReLU, then branch a.
		if err := d.cu("cuMemcpyDtoDAsync", d.drv.cuMemcpyDtoDAsync(dIn, p.dS, uintptr(n*b.b.Out*t.cells*4), t.stream)); err != nil {
			return err
		}
		if err := t.convBNBwd(p, b.a, p.tmp, in, dIn, 1); err != nil {
			return err
		}
		dOut, dIn = dIn, dOut
	}
	// The stem: no gradient of the input.
	return t.convBNBwd(p, t.stem, dOut, p.in, 0, 0)
}

// blockOut is the slot of the tower's output: the last block's second
// convolution, or the stem's.
func (t *Trainer) blockOut() int {
	if len(t.blocks) == 0 {
		return t.stem.slot
	}
	return t.blocks[len(t.blocks)-1].b.slot
}

// blockIn is the activations that block i reads.
func (t *Trainer) blockIn(p *trainPlan, i int) uintptr {
	if i == 0 {
		return p.a[t.stem.slot]
	}
	return p.a[t.blocks[i-1].b.slot]
}

// poolBiasBwd adds to dX, the gradient of block b's pooled-and-biased
// first convolution output, what flows back through the pooling bias:
// the bias's gradient (dX summed over the cells) through the dense
// layer, then through the pooling to each cell.
func (t *Trainer) poolBiasBwd(p *trainPlan, b trainBlock, dX uintptr) error {
	c := b.a.Out
	if err := t.gemm(false, false, p.n*c, 1, t.cells, dX, p.ones, p.dGbias, 0); err != nil {
		return err
	}
	return t.poolDenseBwd(p, b.pool, c, p.pooled[b.slot], p.argmax[b.slot], p.dGbias, dX)
}

// policyBackward writes into p.dPolicy the gradient of the policy
// convolution's output: the policy head's, plus the soft policy head's.
func (t *Trainer) policyBackward(p *trainPlan) error {
	if err := t.headBackward(p, t.policy, &p.policy, 0); err != nil {
		return err
	}
	if !t.soft.present() {
		return nil
	}
	return t.headBackward(p, t.soft, &p.soft, 1)
}

// headBackward back-propagates one policy head's logits' gradient to the
// policy convolution's output, into p.dPolicy (added to it when beta is
// 1): through the dense layer, or through the convolutional head's
// gather, output convolution and global pooling.
func (t *Trainer) headBackward(p *trainPlan, l policyLayer, h *policyBufs, beta float32) error {
	d, n := t.d, p.n
	pc := p.a[t.policyConv.slot]
	if l.fc != nil {
		return t.denseBwd(p, l.fc, pc, h.dLogits, p.dPolicy, beta)
	}
	if err := d.cu("cuMemsetD32Async", d.drv.cuMemsetD32Async(p.dPlanes, 0, uintptr(n*t.spatial), t.stream)); err != nil {
		return err
	}
	if l.global != nil {
		if err := d.cu("cuMemsetD32Async", d.drv.cuMemsetD32Async(p.dGlob, 0, uintptr(n*t.globals), t.stream)); err != nil {
			return err
		}
	}
	total := uint32(n * t.actions)
	if err := d.launch(t.stream, d.scatter, total, h.dLogits, t.policyIndex, p.dPlanes, p.dGlob, total, uint32(t.actions), uint32(t.spatial), uint32(t.globals)); err != nil {
		return fmt.Errorf("%s scatter: %w", h.name, err)
	}
	if err := t.bnConvBwd(p, l.out, p.dPlanes, pc, p.dPolicy, beta); err != nil {
		return err
	}
	if l.global == nil {
		return nil
	}
	return t.poolDenseBwd(p, l.global, t.policyConv.Out, p.pPooled, p.pArgmax, p.dGlob, p.dPolicy)
}

// convBNBwd back-propagates dA, the gradient of a[c] = relu(bn(conv(x))),
// through the ReLU, batch norm and convolution: weights', γ's and β's
// gradients into t.g and, unless dx is 0, x's gradient into dx (added to
// it when beta is 1).
func (t *Trainer) convBNBwd(p *trainPlan, c *trainConv, dA, x, dx uintptr, beta float32) error {
	d := t.d
	yd := p.desc[c.Out]
	a := p.a[c.slot]
	if err := d.dnnErr("cudnnActivationBackward", d.dnn.cudnnActivationBackward(t.dnn, t.relu, &one, yd, a, yd, dA, yd, a, &zero, yd, p.dS)); err != nil {
		return err
	}
	return t.bnConvBwd(p, c, p.dS, x, dx, beta)
}

// bnConvBwd back-propagates dY, the gradient of bn(conv(x)) of c.
func (t *Trainer) bnConvBwd(p *trainPlan, c *trainConv, dY, x, dx uintptr, beta float32) error {
	d, i := t.d, c.slot
	xd, yd, cd := p.desc[c.In], p.desc[c.Out], p.conv[c.Kernel]
	algos := p.algos[[3]int{c.In, c.Out, c.Kernel}]
	if err := d.dnnErr("cudnnBatchNormalizationBackward "+c.Name, d.dnn.cudnnBatchNormalizationBackward(t.dnn, cudnnBatchNormSpatial, &one, &zero, &one, &zero,
		yd, p.z[i], yd, dY, yd, p.dZ, c.bnDesc, t.param(t.w, c.Gamma), t.param(t.g, c.Gamma), t.param(t.g, c.Beta),
		nn.BNEpsilon, p.saveMean[i], p.saveInv[i])); err != nil {
		return err
	}
	if err := d.dnnErr("cudnnConvolutionBackwardFilter "+c.Name, d.dnn.cudnnConvolutionBackwardFilter(t.dnn, &one, xd, x, yd, p.dZ, cd, algos[2], p.ws, p.wsBytes, &zero, c.wDesc, t.param(t.g, c.W))); err != nil {
		return err
	}
	if dx == 0 {
		return nil
	}
	return d.dnnErr("cudnnConvolutionBackwardData "+c.Name, d.dnn.cudnnConvolutionBackwardData(t.dnn, &one, c.wDesc, t.param(t.w, c.W), yd, p.dZ, cd, algos[1], p.ws, p.wsBytes, &beta, xd, dx))
}

// denseBwd back-propagates dY, the gradient of y = x·W + b: W's and b's
// gradients into t.g, x's into dx (added to it when beta is 1).
func (t *Trainer) denseBwd(p *trainPlan, l *trainDense, x, dY, dx uintptr, beta float32) error {
	n := p.n
	if err := t.gemm(true, false, l.In, l.Out, n, x, dY, t.param(t.g, l.W), 0); err != nil {
		return err
	}
	if err := t.gemm(false, false, 1, l.Out, n, p.ones, dY, t.param(t.g, l.B), 0); err != nil {
		return err
	}
	return t.gemm(false, true, n, l.In, l.Out, dY, t.param(t.w, l.W), dx, beta)
}
