package onnx

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"google.golang.org/protobuf/proto"

	pb "github.com/flipzero/flipzero/nn/onnx/onnxpb"
)

// Info is what an ONNX model file says of itself: who wrote it, the
// operator set, the graph's inputs and outputs, its weights and its
// metadata.
type Info struct {
	Producer  string
	IRVersion int64
	Opset     int64
	Inputs    []string // "name [dims]"
	Outputs   []string
	// Parameters counts the values of the graph's initializers.
	Parameters int64
	Metadata   map[string]string
}

// ErrNotONNX says a file is not an ONNX model.
var ErrNotONNX = errors.New("not an ONNX model")

// maxModelBytes bounds the file ReadInfo reads whole: far above any
// network flipzero exports, far below what would strain a machine.
const maxModelBytes = 1 << 30

// ReadInfo reads the ONNX model at path and says what it holds. Any
// file is untrusted: a file that is not a model, or one too large, is
// an error naming the path.
func ReadInfo(path string) (Info, error) {
	st, err := os.Stat(path)
	if err != nil {
		return Info{}, err
	}
	if st.Size() > maxModelBytes {
		return Info{}, fmt.Errorf("read %s: %d bytes, more than an ONNX model flipzero reads (%d)", path, st.Size(), maxModelBytes)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return Info{}, err
	}
	var m pb.ModelProto
	if err := proto.Unmarshal(raw, &m); err != nil || m.Graph == nil || m.IrVersion == nil {
		return Info{}, fmt.Errorf("read %s: %w", path, ErrNotONNX)
	}
	info := Info{Producer: m.GetProducerName(), IRVersion: m.GetIrVersion(), Metadata: map[string]string{}}
	for _, o := range m.OpsetImport {
		if o.GetDomain() == "" {
			info.Opset = o.GetVersion()
		}
	}
	describe := func(vs []*pb.ValueInfoProto) []string {
		var out []string
		for _, v := range vs {
			dims := []string{}
			for _, d := range v.GetType().GetTensorType().GetShape().GetDim() {
				if p := d.GetDimParam(); p != "" {
					dims = append(dims, p)
				} else {
					dims = append(dims, fmt.Sprint(d.GetDimValue()))
				}
			}
			out = append(out, fmt.Sprintf("%s %v", v.GetName(), dims))
		}
		return out
	}
	info.Inputs, info.Outputs = describe(m.Graph.Input), describe(m.Graph.Output)
	for _, w := range m.Graph.Initializer {
		n := int64(1)
		for _, d := range w.Dims {
			n *= d
		}
		info.Parameters += n
	}
	for _, p := range m.MetadataProps {
		info.Metadata[p.GetKey()] = p.GetValue()
	}
	return info, nil
}

// MetadataKeys lists the metadata's keys in order.
func (i Info) MetadataKeys() []string {
	keys := make([]string, 0, len(i.Metadata))
	for k := range i.Metadata {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
