package nn

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

// SaveFolded writes the inference snapshot f atomically to path as an
// exported model: the game, the architecture, the weights with batch norm
// folded in, the training step count and free-form metadata, without
// optimizer state. LoadCheckpoint reads it back.
//
// The arrays are, for each convolution in the order stem, blocks (a then
// b), policy, value, and the convolutional policy head's output if the
// network has one: its weights laid out (kernel·kernel·in, out) and its
// out biases; then the policy (unless convolutional), first value and
// second value fully connected layers, each global pooling layer's block
// by block, and the convolutional policy head's global layer, each
// weights (in, out) and out biases.
func SaveFolded(path string, f *Folded, step int64, metadata map[string]string) error {
	h := fileHeader{Step: step, Folded: true, Metadata: metadata}
	var arrays [][]float32
	l := &f.layers
	for _, c := range l.convs() {
		arrays = append(arrays, fileConv(c.Weights, c.Kernel*c.Kernel, c.In, c.Out), c.Bias)
	}
	for _, d := range l.dense() {
		arrays = append(arrays, d.Weights, d.Bias)
	}
	return writeNetworkFile(path, f.game, f.cfg, h, arrays)
}

// convs lists the snapshot's convolutions in file order.
func (l *Layers) convs() []*ConvLayer {
	out := []*ConvLayer{&l.Stem}
	for i := range l.Blocks {
		out = append(out, &l.Blocks[i][0], &l.Blocks[i][1])
	}
	out = append(out, &l.PolicyConv, &l.ValueConv)
	if l.PolicyOut != nil {
		out = append(out, l.PolicyOut)
	}
	return out
}

// Parameters counts the snapshot's weights and biases: the size of the
// network a model file or an ONNX export holds.
func (l *Layers) Parameters() int {
	n := 0
	for _, c := range l.convs() {
		n += len(c.Weights) + len(c.Bias)
	}
	for _, d := range l.dense() {
		n += len(d.Weights) + len(d.Bias)
	}
	return n
}

// dense lists the snapshot's fully connected layers in file order, as
// Network.inferenceDense does.
func (l *Layers) dense() []*DenseLayer {
	var out []*DenseLayer
	if l.PolicyOut == nil {
		out = append(out, &l.PolicyFC)
	}
	out = append(out, &l.ValueFC1, &l.ValueFC2)
	for _, d := range l.GlobalPool {
		if d != nil {
			out = append(out, d)
		}
	}
	if l.PolicyGlobal != nil {
		out = append(out, l.PolicyGlobal)
	}
	return out
}

// fileConv turns convolution weights (out, in, kk) into the file's
// (kk·in, out).
func fileConv(w []float32, kk, in, out int) []float32 {
	f := make([]float32, len(w))
	for o := 0; o < out; o++ {
		for i := 0; i < in; i++ {
			for k := 0; k < kk; k++ {
				f[(k*in+i)*out+o] = w[(o*in+i)*kk+k]
			}
		}
	}
	return f
}

// foldedArrays are arrays sized for a folded file's, in file order.
func (n *Network) foldedArrays() [][]float32 {
	var out [][]float32
	for _, c := range n.convs() {
		out = append(out, make([]float32, len(c.w.data)), make([]float32, c.out))
	}
	for _, d := range n.inferenceDense() {
		out = append(out, make([]float32, len(d.w.data)), make([]float32, d.out))
	}
	return out
}

// unfold sets the network's weights to a folded file's arrays: each
// convolution gets the folded weights and a batch norm that only adds the
// bias (unit scale, zero mean, and the variance that cancels ε), so that
// Fold gives the snapshot back up to float32 rounding. The network plays
// as the snapshot does; training it would start from batch norms that
// are not the ones it learned.
func (n *Network) unfold(arrays [][]float32) {
	unitVariance := float32(1 - bnEpsilon)
	convs := n.convs()
	for i, c := range convs {
		w, b := arrays[2*i], arrays[2*i+1]
		kk := c.kernel * c.kernel
		for o := 0; o < c.out; o++ {
			for in := 0; in < c.in; in++ {
				for k := 0; k < kk; k++ {
					c.w.data[(o*c.in+in)*kk+k] = w[(k*c.in+in)*c.out+o]
				}
			}
		}
		fill(c.gamma.data, 1)
		copy(c.beta.data, b)
		fill(c.mean.data, 0)
		fill(c.variance.data, unitVariance)
	}
	for i, d := range n.inferenceDense() {
		copy(d.w.data, arrays[2*(len(convs)+i)])
		copy(d.b.data, arrays[2*(len(convs)+i)+1])
	}
}

// Info is what a network file's header says, read without the weights.
type Info struct {
	Version int
	Game    string
	Arch    Config
	Step    int64
	Created time.Time
	// Optimizer: a checkpoint that resumes training; Folded: an exported
	// model with batch norm folded in. Neither: a plain model file.
	// Averaged: a checkpoint whose network is an average of the trained
	// weights, which it holds too.
	Optimizer bool
	Folded    bool
	Averaged  bool
	Metadata  map[string]string
	Size      int64
}

// ReadInfo reads the header of a checkpoint or model file: enough to learn
// which game it plays before loading it. It checks the magic, version and
// header, not the checksum: LoadCheckpoint checks everything.
func ReadInfo(path string) (Info, error) {
	info, err := readInfo(path)
	if err != nil {
		return Info{}, fmt.Errorf("read %s: %w", path, err)
	}
	return info, nil
}

func readInfo(path string) (Info, error) {
	f, err := os.Open(path)
	if err != nil {
		return Info{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Info{}, err
	}
	var fixed [16]byte
	if _, err := io.ReadFull(f, fixed[:]); err != nil || string(fixed[:8]) != fileMagic {
		return Info{}, ErrNotNetwork
	}
	version := binary.LittleEndian.Uint32(fixed[8:])
	if version < oldestVersion || version > formatVersion {
		return Info{}, fmt.Errorf("%w %d (this program reads versions %d to %d)", ErrVersion, version, oldestVersion, formatVersion)
	}
	headerLen := int64(binary.LittleEndian.Uint32(fixed[12:]))
	if headerLen > maxHeaderLen {
		return Info{}, fmt.Errorf("%w: header length %d", ErrCorrupt, headerLen)
	}
	if 16+headerLen+checksumLen > st.Size() {
		return Info{}, fmt.Errorf("%w: %d bytes, the header alone needs %d", ErrTruncated, st.Size(), 16+headerLen+checksumLen)
	}
	raw := make([]byte, headerLen)
	if _, err := io.ReadFull(f, raw); err != nil {
		return Info{}, fmt.Errorf("%w: header: %v", ErrTruncated, err)
	}
	var h fileHeader
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return Info{}, fmt.Errorf("%w: header: %v", ErrCorrupt, err)
	}
	if h.Step < 0 {
		return Info{}, fmt.Errorf("%w: step %d", ErrCorrupt, h.Step)
	}
	return Info{
		Version: int(version), Game: h.Game, Arch: h.Arch, Step: h.Step, Created: h.Created,
		Optimizer: h.Optimizer, Folded: h.Folded, Averaged: h.Trained, Metadata: h.Metadata, Size: st.Size(),
	}, nil
}
