package nn

// The typed description of a network in training form (KataGo's desc.h):
// every layer as a typed value that says where its arrays are, in the one
// order that a backend walks. A backend that trains elsewhere reads this
// instead of finding arrays by name, so that an architecture option is one
// change here and one in each backend's own files.

// ConvDesc is a convolution without bias followed by batch norm: its
// weights (Out, In, Kernel, Kernel), batch-norm γ and β (Out each) as
// indices into Network.Learnables, and its running mean and variance as
// indices into Network.Statistics. ReLU says whether a ReLU follows the
// batch norm (the policy convolution's output and the ownership head's
// have none).
type ConvDesc struct {
	Name            string
	Kernel, In, Out int
	W, Gamma, Beta  int
	Mean, Variance  int
	ReLU            bool
}

// DenseDesc is a fully connected layer y = x·W + B: W (In, Out) and B
// (Out) as indices into Network.Learnables.
type DenseDesc struct {
	Name    string
	In, Out int
	W, B    int
}

// BlockDesc is one residual block: out = relu(x + bn(B(t))), with
// t = relu(bn(A(x))), plus, where Pool is set, KataGo's global pooling
// bias: t += pool(t)·Pool.W + Pool.B at every cell, pool being each
// channel's mean over the cells, then each channel's maximum.
type BlockDesc struct {
	A, B ConvDesc
	Pool *DenseDesc
}

// Description is a network's architecture as typed layers. The forward
// pass, for N positions encoded (N, Planes, Height, Width):
//
//	x = relu(bn(Stem(input)))
//	x = each block in turn (BlockDesc)
//	p = relu(bn(PolicyConv(x)))
//	policy logits = flatten(p)·PolicyFC                       (dense head)
//	              = concat(flatten(bn(PolicyOut(p))), pool(p)·PolicyGlobal)[PolicyIndex]  (conv head)
//	h = relu(flatten(relu(bn(ValueConv(x))))·ValueFC1)
//	win/draw/loss logits = h·ValueFC2
//	ownership = tanh(bn(Ownership(x)))     (training only)
//	score     = tanh(h·Score)              (training only)
//	soft policy logits = as the policy logits, with SoftPolicyFC,
//	    SoftPolicyOut and SoftPolicyGlobal in place of PolicyFC,
//	    PolicyOut and PolicyGlobal     (training only)
//
// Flatten is in (channel, cell) order per position; PolicyIndex gives,
// for each action, plane·cells + cell in PolicyOut's output, or cells ·
// PolicyOut.Out + i for the i-th global logit.
type Description struct {
	Game                           string
	Planes, Height, Width, Actions int
	// ValueOutputs is 3: win, draw, loss.
	ValueOutputs int

	Stem       ConvDesc
	Blocks     []BlockDesc
	PolicyConv ConvDesc
	// PolicyFC is the dense policy head; PolicyOut, PolicyGlobal (nil
	// where every action has a cell) and PolicyIndex the convolutional
	// one.
	PolicyFC     *DenseDesc
	PolicyOut    *ConvDesc
	PolicyGlobal *DenseDesc
	PolicyIndex  []int32
	ValueConv    ConvDesc
	ValueFC1     DenseDesc
	ValueFC2     DenseDesc
	// The auxiliary heads, nil where the architecture lacks them.
	Ownership *ConvDesc
	Score     *DenseDesc
	// The soft policy head's last layer, the policy head's shape: nil
	// where the architecture lacks it.
	SoftPolicyFC     *DenseDesc
	SoftPolicyOut    *ConvDesc
	SoftPolicyGlobal *DenseDesc
}

// SoftPolicy says whether the network has the soft policy head.
func (d Description) SoftPolicy() bool { return d.SoftPolicyFC != nil || d.SoftPolicyOut != nil }

// Cells is the number of board cells.
func (d Description) Cells() int { return d.Height * d.Width }

// Convs lists the convolutions in the order a forward pass meets them:
// stem, each block's A then B, policy, policy output, value, ownership,
// soft policy output.
func (d Description) Convs() []ConvDesc {
	out := []ConvDesc{d.Stem}
	for _, b := range d.Blocks {
		out = append(out, b.A, b.B)
	}
	out = append(out, d.PolicyConv)
	if d.PolicyOut != nil {
		out = append(out, *d.PolicyOut)
	}
	out = append(out, d.ValueConv)
	for _, c := range []*ConvDesc{d.Ownership, d.SoftPolicyOut} {
		if c != nil {
			out = append(out, *c)
		}
	}
	return out
}

// Dense lists the fully connected layers in the order a forward pass
// meets them: the blocks' pooling layers, the policy head's, the value
// head's, the score head's, the soft policy head's.
func (d Description) Dense() []DenseDesc {
	var out []DenseDesc
	for _, b := range d.Blocks {
		if b.Pool != nil {
			out = append(out, *b.Pool)
		}
	}
	for _, l := range []*DenseDesc{d.PolicyFC, d.PolicyGlobal, &d.ValueFC1, &d.ValueFC2, d.Score, d.SoftPolicyFC, d.SoftPolicyGlobal} {
		if l != nil {
			out = append(out, *l)
		}
	}
	return out
}

// Describe returns the network's typed description, which indexes the
// arrays of Learnables and Statistics.
func (n *Network) Describe() Description {
	learn := make(map[*param]int, len(n.learnables))
	for i, p := range n.learnables {
		learn[p] = i
	}
	stat := make(map[*param]int, len(n.stats))
	for i, p := range n.stats {
		stat[p] = i
	}
	conv := func(c *conv, relu bool) ConvDesc {
		return ConvDesc{
			Name: c.w.name[:len(c.w.name)-len(".w")], Kernel: c.kernel, In: c.in, Out: c.out,
			W: learn[c.w], Gamma: learn[c.gamma], Beta: learn[c.beta],
			Mean: stat[c.mean], Variance: stat[c.variance], ReLU: relu,
		}
	}
	dense := func(l *dense) *DenseDesc {
		if l == nil || l.w == nil {
			return nil
		}
		return &DenseDesc{Name: l.w.name[:len(l.w.name)-len(".w")], In: l.in, Out: l.out, W: learn[l.w], B: learn[l.b]}
	}
	sh := n.shape
	d := Description{
		Game: n.game.Name(), Planes: sh.planes, Height: sh.height, Width: sh.width, Actions: sh.actions,
		ValueOutputs:     valueOutputs,
		Stem:             conv(&n.stem, true),
		PolicyConv:       conv(&n.policyConv, true),
		PolicyFC:         dense(&n.policyFC),
		PolicyGlobal:     dense(n.policyGlobal),
		ValueConv:        conv(&n.valueConv, true),
		ValueFC1:         *dense(&n.valueFC1),
		ValueFC2:         *dense(&n.valueFC2),
		Score:            dense(n.scoreFC),
		SoftPolicyFC:     dense(n.softPolicyFC),
		SoftPolicyGlobal: dense(n.softPolicyGlobal),
	}
	for i := range n.blocks {
		d.Blocks = append(d.Blocks, BlockDesc{A: conv(&n.blocks[i][0], true), B: conv(&n.blocks[i][1], true), Pool: dense(n.gpool[i])})
	}
	if n.policyOut != nil {
		c := conv(n.policyOut, false)
		d.PolicyOut = &c
		d.PolicyIndex = append([]int32(nil), n.policyIndex...)
	}
	if n.ownershipConv != nil {
		c := conv(n.ownershipConv, false)
		d.Ownership = &c
	}
	if n.softPolicyOut != nil {
		c := conv(n.softPolicyOut, false)
		d.SoftPolicyOut = &c
	}
	return d
}
