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
	return writeNetworkFile(path, f.game, f.cfg, h, f.arrays())
}

// convs lists the snapshot's convolutions in file order.
func (f *Folded) convs() []*foldedConv {
	out := []*foldedConv{&f.stem}
	for i := range f.blocks {
		out = append(out, &f.blocks[i][0], &f.blocks[i][1])
	}
	out = append(out, &f.policyConv, &f.valueConv)
	if f.policyOut != nil {
		out = append(out, f.policyOut)
	}
	return out
}

// dense lists the snapshot's fully connected layers in file order, as
// Network.inferenceDense does.
func (f *Folded) dense() []*foldedDense {
	var out []*foldedDense
	if f.policyOut == nil {
		out = append(out, &f.policyFC)
	}
	out = append(out, &f.valueFC1, &f.valueFC2)
	for _, d := range f.gpool {
		if d != nil {
			out = append(out, d)
		}
	}
	if f.policyGlobal != nil {
		out = append(out, f.policyGlobal)
	}
	return out
}

// arrays lists the snapshot's arrays in file order.
func (f *Folded) arrays() [][]float32 {
	var out [][]float32
	for _, c := range f.convs() {
		out = append(out, c.w, c.b)
	}
	for _, d := range f.dense() {
		out = append(out, d.w, d.b)
	}
	return out
}

// unfold sets the network's weights to the snapshot's: each convolution
// gets the folded weights and a batch norm that only adds the bias (unit
// scale, zero mean, and the variance that cancels ε), so that Fold gives
// the snapshot back up to float32 rounding. The network plays as the
// snapshot does; training it would start from batch norms that are not
// the ones it learned.
func (n *Network) unfold(f *Folded) {
	unitVariance := float32(1 - bnEpsilon)
	for i, c := range n.convs() {
		fc := f.convs()[i]
		kk := c.kernel * c.kernel
		for o := 0; o < c.out; o++ {
			for in := 0; in < c.in; in++ {
				for k := 0; k < kk; k++ {
					c.w.data[(o*c.in+in)*kk+k] = fc.w[(k*c.in+in)*c.out+o]
				}
			}
		}
		fill(c.gamma.data, 1)
		copy(c.beta.data, fc.b)
		fill(c.mean.data, 0)
		fill(c.variance.data, unitVariance)
	}
	for i, d := range n.inferenceDense() {
		fd := f.dense()[i]
		copy(d.w.data, fd.w)
		copy(d.b.data, fd.b)
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
