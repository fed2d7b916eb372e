package cuda

import (
	"fmt"
	"unsafe"

	"github.com/flipzero/flipzero/nn"
)

// layout says where element (position n, channel c, cell p) of an
// activation tensor lies: at n·sN + c·sC + p·sP, its channel being
// (i / cdiv) mod channels for element i. cuDNN's tensors are NCHW, the
// SGEMM path's are rows of channels, one a cell.
type layout struct {
	sN, sC, sP, cdiv uint32
}

func nchwLayout(channels, cells int) layout {
	return layout{sN: uint32(channels * cells), sC: uint32(cells), sP: 1, cdiv: uint32(cells)}
}

func rowsLayout(channels, cells int) layout {
	return layout{sN: uint32(cells * channels), sC: 1, sP: uint32(channels), cdiv: 1}
}

// gpool adds a block's global pooling bias to count positions' first
// convolution output x, in place: each channel's mean and maximum over
// the board, through the dense layer, added to every cell.
func (inf *Inference) gpool(l *devDense, x uintptr, count int, lay layout) error {
	d, c := inf.d, l.out
	if err := inf.poolDense(l, x, count, c, lay, inf.gbias); err != nil {
		return err
	}
	total := uint32(count * c * inf.cells)
	if err := inf.launch(d.chanBias, total, x, inf.gbias, x, total, uint32(c), uint32(inf.cells), lay.cdiv, uint32(c)); err != nil {
		return fmt.Errorf("global pooling bias: %w", err)
	}
	return nil
}

// poolDense is y = pool(x)·W + b for count positions: the mean and the
// maximum over the cells of the first c channels of x, laid out as lay
// says, through dense layer l. Global pooling and the convolutional
// policy head's global logits are both this.
func (inf *Inference) poolDense(l *devDense, x uintptr, count, c int, lay layout, y uintptr) error {
	if err := inf.launch(inf.d.pool, uint32(count*c), x, inf.pooled, uintptr(0), uint32(count*c), uint32(c), uint32(inf.cells), lay.sN, lay.sC, lay.sP); err != nil {
		return fmt.Errorf("pooling %d channels: %w", c, err)
	}
	if err := inf.sgemm(l.w, denseGemm(2*c, l.out, count, 2*c, 0), inf.pooled, y); err != nil {
		return err
	}
	return inf.biasAct(y, l.b, 0, count*l.out, l.out, false)
}

// convPolicy computes the convolutional policy head's logits of count
// positions from the merged heads' output (headOut, the policy's
// channels first, laid out as heads says): the output convolution to the
// policy planes, the pooled global logits, and each action's logit
// gathered from them.
func (inf *Inference) convPolicy(count int, heads layout, nchw bool) error {
	d := inf.d
	pf, planes, cells := inf.policyCh, inf.policyOut.out, inf.cells
	var planesAt layout
	if nchw {
		// Per position, planes (planes × cells) = W (planes × pf) · the
		// policy channels (pf × cells): column-major, planesᵀ = inᵀ · Wᵀ.
		if err := d.blasErr(fmt.Sprintf("cublasSgemmStridedBatched %d×%d×%d × %d", cells, planes, pf, count),
			d.blas.cublasSgemmStridedBatched(inf.blas, cublasOpN, cublasOpN, int32(cells), int32(planes), int32(pf), &one,
				inf.headOut, int32(cells), int64(inf.heads*cells), inf.policyOut.w, int32(pf), 0,
				&zero, inf.pOut, int32(cells), int64(planes*cells), int32(count))); err != nil {
			return err
		}
		planesAt = nchwLayout(planes, cells)
		total := uint32(count * planes * cells)
		if err := inf.launch(d.chanBias, total, inf.pOut, inf.policyOut.b, inf.pOut, total, uint32(planes), uint32(cells), planesAt.cdiv, uint32(0)); err != nil {
			return fmt.Errorf("policy output bias: %w", err)
		}
	} else {
		if err := inf.sgemm(inf.policyOutW, denseGemm(pf, planes, count*cells, inf.heads, 0), inf.headOut, inf.pOut); err != nil {
			return err
		}
		if err := inf.biasAct(inf.pOut, inf.policyOut.b, 0, count*cells*planes, planes, false); err != nil {
			return err
		}
		planesAt = rowsLayout(planes, cells)
	}
	global, globals := uintptr(0), 0
	if g := inf.policyGlobal; g != nil {
		global, globals = inf.pGlob, g.out
		if err := inf.poolDense(g, inf.headOut, count, pf, heads, inf.pGlob); err != nil {
			return err
		}
	}
	total := uint32(count * inf.actions)
	if err := inf.launch(d.gather, total, inf.pOut, global, inf.policyIndex, inf.logits, total, uint32(inf.actions),
		uint32(cells), uint32(planes*cells), uint32(globals), planesAt.sN, planesAt.sC, planesAt.sP); err != nil {
		return fmt.Errorf("policy gather: %w", err)
	}
	return nil
}

// uploadInt32 copies int32s to the device memory at dst.
func (d *Device) uploadInt32(dst uintptr, src []int32) error {
	if len(src) == 0 {
		return nil
	}
	return d.upload(dst, unsafe.Slice((*float32)(unsafe.Pointer(&src[0])), len(src)))
}

// setupExtras allocates the global pooling layers and the convolutional
// policy head, where the network has them.
func (inf *Inference) setupExtras(l nn.Layers) error {
	inf.pools = make([]*devDense, len(l.Blocks))
	for i, pl := range l.GlobalPool {
		if pl == nil {
			continue
		}
		dd, err := inf.newDense(*pl)
		if err != nil {
			return err
		}
		inf.pools[i] = &dd
	}
	if l.PolicyOut == nil {
		return nil
	}
	c, err := inf.newConv(*l.PolicyOut)
	if err != nil {
		return err
	}
	inf.policyOut = &c
	if l.PolicyGlobal != nil {
		g, err := inf.newDense(*l.PolicyGlobal)
		if err != nil {
			return err
		}
		inf.policyGlobal = &g
	}
	inf.policyIndex, err = inf.alloc(len(l.PolicyIndex))
	return err
}

// allocExtras allocates the scratch of global pooling and the
// convolutional policy head for maxBatch positions.
func (inf *Inference) allocExtras() (err error) {
	n, pooled := inf.maxBatch, 0
	for _, p := range inf.pools {
		if p != nil {
			pooled = max(pooled, p.in)
			if inf.gbias == 0 {
				if inf.gbias, err = inf.alloc(n * inf.filters); err != nil {
					return err
				}
			}
		}
	}
	if c := inf.policyOut; c != nil {
		if inf.pOut, err = inf.alloc(n * c.out * inf.cells); err != nil {
			return err
		}
		if g := inf.policyGlobal; g != nil {
			pooled = max(pooled, g.in)
			if inf.pGlob, err = inf.alloc(n * g.out); err != nil {
				return err
			}
		}
	}
	if pooled > 0 {
		inf.pooled, err = inf.alloc(n * pooled)
	}
	return err
}
