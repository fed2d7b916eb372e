// Package onnx writes a flipzero network as an ONNX model, so that any
// ONNX runtime (onnxruntime in Python, C++, JavaScript, …) can evaluate
// positions without flipzero.
//
// The model computes exactly the network of nn.Layers, batch norm folded
// into the convolutions:
//
//	input  float32 [N, planes, height, width]   N is dynamic ("N")
//	policy float32 [N, actions]  policy logits over the whole action space
//	wdl    float32 [N, 3]        P(win), P(draw), P(loss) of the player to move
//	value  float32 [N, 1]        P(win) − P(loss), in [−1, 1]
//
// The graph, opset 17 (IR version 8): Conv (with the folded bias) and Relu
// for the stem; per residual block Conv, Relu, Conv, Add of the block's
// input, Relu (with global pooling, after the first Relu: ReduceMean and
// ReduceMax over the board, Concat, Gemm, Reshape to [N, filters, 1, 1]
// and Add); each head a 1×1 Conv and Relu, Flatten (axis 1, so the batch
// dimension stays dynamic and each position flattens in (channel, row,
// column) order), then Gemm for the fully connected layers, whose weights
// are stored (in, out) as nn.Layers has them; Softmax gives wdl and a
// MatMul by (1, 0, −1) gives value. Weights are initializers stored as raw
// little-endian float32.
//
// The model's metadata_props name the game, the shape of the input and
// the action space, the architecture, the encoding of a position and the
// meaning of each action index, plus whatever the caller adds (generation,
// training steps, …).
package onnx

import (
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"

	"google.golang.org/protobuf/proto"

	"github.com/flipzero/flipzero/internal/atomicfile"
	"github.com/flipzero/flipzero/nn"
	pb "github.com/flipzero/flipzero/nn/onnx/onnxpb"
)

// Opset and IRVersion are what the model declares. The graph's operators
// have not changed since opset 14; 17 is read by every maintained runtime
// (onnxruntime since 1.12), and IR version 8 is the one released with it.
const (
	Opset     = 17
	IRVersion = 8
)

// The names of the graph's input and outputs, and of its dynamic batch
// dimension.
const (
	InputName  = "input"
	PolicyName = "policy"
	WDLName    = "wdl"
	ValueName  = "value"
	BatchDim   = "N"
)

// Write writes the network l as an ONNX model to w. meta is stored in the
// model's metadata_props beside the keys the exporter sets itself (see
// Model).
func Write(w io.Writer, l nn.Layers, meta map[string]string) error {
	b, err := encode(l, meta)
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("onnx: %w", err)
	}
	return nil
}

// WriteFile writes the network l as an ONNX model to path, atomically: a
// reader sees the old file or the whole new one.
func WriteFile(path string, l nn.Layers, meta map[string]string) error {
	b, err := encode(l, meta)
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(path, b)
}

func encode(l nn.Layers, meta map[string]string) ([]byte, error) {
	m, err := Model(l, meta)
	if err != nil {
		return nil, err
	}
	// Deterministic: the same network and metadata give the same bytes.
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("onnx: encode model: %w", err)
	}
	return b, nil
}

// Model builds the ONNX model of the network l. Its metadata_props are
// meta plus the exporter's own keys, which meta must not use: game,
// planes, height, width, actions, blocks, filters, outputs, encoding and
// action_index (the last two are set for the games Describe knows and
// reserved for all).
func Model(l nn.Layers, meta map[string]string) (*pb.ModelProto, error) {
	if err := check(l); err != nil {
		return nil, fmt.Errorf("onnx: %s network: %w", l.Game, err)
	}
	props, err := metadata(l, meta)
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	b := &builder{}
	b.build(l)
	return &pb.ModelProto{
		IrVersion:    proto.Int64(IRVersion),
		OpsetImport:  []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(Opset)}},
		ProducerName: proto.String("flipzero"),
		DocString:    proto.String(fmt.Sprintf("flipzero %s policy/value network", l.Game)),
		Graph: &pb.GraphProto{
			Name:        proto.String("flipzero_" + l.Game),
			Node:        b.nodes,
			Initializer: b.weights,
			Input:       []*pb.ValueInfoProto{tensorInfo(InputName, l.Planes, l.Height, l.Width)},
			Output: []*pb.ValueInfoProto{
				tensorInfo(PolicyName, l.Actions),
				tensorInfo(WDLName, l.ValueOutputs),
				tensorInfo(ValueName, 1),
			},
		},
		MetadataProps: props,
	}, nil
}

// check verifies that the layers fit together, so that a bad network is
// refused here, with the layer named, rather than by a runtime later.
func check(l nn.Layers) error {
	if l.Planes < 1 || l.Height < 1 || l.Width < 1 || l.Actions < 1 {
		return fmt.Errorf("input %d×%d×%d and %d actions, want all positive", l.Planes, l.Height, l.Width, l.Actions)
	}
	if l.ValueOutputs != 3 {
		return fmt.Errorf("%d value outputs, want 3 (win, draw, loss)", l.ValueOutputs)
	}
	cells := l.Height * l.Width
	if err := checkConv("stem", l.Stem, l.Planes); err != nil {
		return err
	}
	filters := l.Stem.Out
	for i, blk := range l.Blocks {
		for j, c := range blk {
			name := fmt.Sprintf("block %d conv %c", i, 'a'+j)
			if err := checkConv(name, c, filters); err != nil {
				return err
			}
			if c.Out != filters {
				return fmt.Errorf("%s has %d outputs, want the tower's %d filters", name, c.Out, filters)
			}
		}
	}
	if len(l.GlobalPool) > len(l.Blocks) {
		return fmt.Errorf("%d global pooling layers for %d blocks", len(l.GlobalPool), len(l.Blocks))
	}
	for i, d := range l.GlobalPool {
		if d != nil && (d.In != 2*filters || d.Out != filters || len(d.Weights) != d.In*d.Out || len(d.Bias) != d.Out) {
			return fmt.Errorf("block %d's global pooling is %d→%d with %d weights, want %d→%d", i, d.In, d.Out, len(d.Weights), 2*filters, filters)
		}
	}
	if err := checkConv("policy conv", l.PolicyConv, filters); err != nil {
		return err
	}
	if err := checkConv("value conv", l.ValueConv, filters); err != nil {
		return err
	}
	dense := []struct {
		name    string
		d       nn.DenseLayer
		in, out int
	}{
		{"value fc1", l.ValueFC1, l.ValueConv.Out * cells, l.ValueFC1.Out},
		{"value fc2", l.ValueFC2, l.ValueFC1.Out, l.ValueOutputs},
	}
	if l.PolicyOut == nil {
		dense = append(dense, struct {
			name    string
			d       nn.DenseLayer
			in, out int
		}{"policy fc", l.PolicyFC, l.PolicyConv.Out * cells, l.Actions})
	} else if err := checkConvPolicy(l); err != nil {
		return err
	}
	for _, d := range dense {
		if d.d.In != d.in || d.d.Out != d.out || d.out < 1 {
			return fmt.Errorf("%s is %d→%d, want %d→%d", d.name, d.d.In, d.d.Out, d.in, d.out)
		}
		if len(d.d.Weights) != d.in*d.out || len(d.d.Bias) != d.out {
			return fmt.Errorf("%s has %d weights and %d biases, want %d and %d", d.name, len(d.d.Weights), len(d.d.Bias), d.in*d.out, d.out)
		}
	}
	return nil
}

// checkConvPolicy checks the convolutional policy head: its convolution
// reads the policy conv, its global layer the pooled policy conv, and
// every action's index falls in the planes or the global logits.
func checkConvPolicy(l nn.Layers) error {
	if err := checkConv("policy out", *l.PolicyOut, l.PolicyConv.Out); err != nil {
		return err
	}
	values := l.PolicyOut.Out * l.Height * l.Width
	if g := l.PolicyGlobal; g != nil {
		if g.In != 2*l.PolicyConv.Out || g.Out < 1 || len(g.Weights) != g.In*g.Out || len(g.Bias) != g.Out {
			return fmt.Errorf("policy global is %d→%d with %d weights, want %d inputs", g.In, g.Out, len(g.Weights), 2*l.PolicyConv.Out)
		}
		values += g.Out
	}
	if len(l.PolicyIndex) != l.Actions {
		return fmt.Errorf("%d policy indices for %d actions", len(l.PolicyIndex), l.Actions)
	}
	for a, i := range l.PolicyIndex {
		if i < 0 || int(i) >= values {
			return fmt.Errorf("action %d's logit at %d, want 0..%d", a, i, values-1)
		}
	}
	return nil
}

func checkConv(name string, c nn.ConvLayer, in int) error {
	switch {
	case c.In != in:
		return fmt.Errorf("%s takes %d channels, want %d", name, c.In, in)
	case c.Out < 1:
		return fmt.Errorf("%s has %d outputs, want at least 1", name, c.Out)
	// 'Same' padding by kernel/2 on each side keeps the board's size only
	// for odd kernels.
	case c.Kernel < 1 || c.Kernel%2 == 0:
		return fmt.Errorf("%s has kernel %d, want an odd size", name, c.Kernel)
	case len(c.Weights) != c.Out*c.In*c.Kernel*c.Kernel || len(c.Bias) != c.Out:
		return fmt.Errorf("%s has %d weights and %d biases, want %d and %d", name, len(c.Weights), len(c.Bias), c.Out*c.In*c.Kernel*c.Kernel, c.Out)
	}
	return nil
}

// metadata lists the exporter's keys and the caller's, sorted by key.
func metadata(l nn.Layers, meta map[string]string) ([]*pb.StringStringEntryProto, error) {
	own := map[string]string{
		"game":    l.Game,
		"planes":  strconv.Itoa(l.Planes),
		"height":  strconv.Itoa(l.Height),
		"width":   strconv.Itoa(l.Width),
		"actions": strconv.Itoa(l.Actions),
		"blocks":  strconv.Itoa(len(l.Blocks)),
		"filters": strconv.Itoa(l.Stem.Out),
		"outputs": "policy: logits [N, actions] over the whole action space (mask illegal actions, then softmax); " +
			"wdl: [N, 3] probabilities of win, draw, loss for the player to move; value: [N, 1] = P(win) - P(loss)",
	}
	// Reserved whether or not this game has them, so that the meaning of
	// a key never depends on the game.
	reserved := []string{"encoding", "action_index"}
	if d, ok := Describe(l.Game); ok {
		own["encoding"] = d.Encoding
		own["action_index"] = d.Actions
	}
	for k, v := range meta {
		if _, taken := own[k]; taken || slices.Contains(reserved, k) {
			return nil, fmt.Errorf("metadata key %q is one the exporter sets", k)
		}
		own[k] = v
	}
	var props []*pb.StringStringEntryProto
	for _, k := range slices.Sorted(maps.Keys(own)) {
		props = append(props, &pb.StringStringEntryProto{Key: proto.String(k), Value: proto.String(own[k])})
	}
	return props, nil
}

// tensorInfo describes a float32 graph input or output of shape
// [N, dims...], N being the dynamic batch dimension.
func tensorInfo(name string, dims ...int) *pb.ValueInfoProto {
	shape := []*pb.TensorShapeProto_Dimension{{Value: &pb.TensorShapeProto_Dimension_DimParam{DimParam: BatchDim}}}
	for _, d := range dims {
		shape = append(shape, &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimValue{DimValue: int64(d)}})
	}
	return &pb.ValueInfoProto{
		Name: proto.String(name),
		Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{TensorType: &pb.TypeProto_Tensor{
			ElemType: proto.Int32(int32(pb.TensorProto_FLOAT)),
			Shape:    &pb.TensorShapeProto{Dim: shape},
		}}},
	}
}

// builder collects the graph's nodes and initializers in order.
type builder struct {
	nodes   []*pb.NodeProto
	weights []*pb.TensorProto
}

func (b *builder) build(l nn.Layers) {
	x := b.relu("stem", b.conv("stem", l.Stem, InputName))
	for i, blk := range l.Blocks {
		name := fmt.Sprintf("block%d", i)
		y := b.relu(name+".a", b.conv(name+".a", blk[0], x))
		if i < len(l.GlobalPool) && l.GlobalPool[i] != nil {
			y = b.gpool(name+".gpool", *l.GlobalPool[i], y)
		}
		y = b.conv(name+".b", blk[1], y)
		sum := name + ".add"
		b.node("Add", sum, []string{y, x}, sum)
		x = b.relu(name, sum)
	}

	h := b.relu("policy.conv", b.conv("policy.conv", l.PolicyConv, x))
	if l.PolicyOut != nil {
		b.convPolicy(l, h)
	} else {
		b.gemm("policy.fc", l.PolicyFC, b.flatten("policy", h), PolicyName)
	}

	v := b.flatten("value", b.relu("value.conv", b.conv("value.conv", l.ValueConv, x)))
	v = b.relu("value.fc1", b.gemm("value.fc1", l.ValueFC1, v, "value.fc1"))
	logits := b.gemm("value.fc2", l.ValueFC2, v, "value.fc2")
	b.node("Softmax", "value.softmax", []string{logits}, WDLName, intAttr("axis", 1))
	// P(win)·1 + P(draw)·0 + P(loss)·(−1): one operator, no slicing.
	sign := b.initializer("value.sign", []float32{1, 0, -1}, 3, 1)
	b.node("MatMul", "value", []string{WDLName, sign}, ValueName)
}

// conv adds a 'same' padded, stride 1 convolution with bias and returns
// its output's name.
func (b *builder) conv(name string, c nn.ConvLayer, input string) string {
	w := b.initializer(name+".w", c.Weights, c.Out, c.In, c.Kernel, c.Kernel)
	bias := b.initializer(name+".b", c.Bias, c.Out)
	pad := int64(c.Kernel / 2)
	out := name + ".conv"
	b.node("Conv", out, []string{input, w, bias}, out,
		intsAttr("kernel_shape", int64(c.Kernel), int64(c.Kernel)),
		intsAttr("pads", pad, pad, pad, pad),
		intsAttr("strides", 1, 1),
		intsAttr("dilations", 1, 1),
		intAttr("group", 1))
	return out
}

// convPolicy adds the convolutional policy head on h, relu(policy conv):
// its planes flattened, the global logits after them, and a Gather of
// each action's logit.
func (b *builder) convPolicy(l nn.Layers, h string) {
	all := b.flatten("policy.out", b.conv("policy.out", *l.PolicyOut, h))
	if l.PolicyGlobal != nil {
		pooled := b.pool("policy.global", h)
		global := b.gemm("policy.global", *l.PolicyGlobal, pooled, "policy.global")
		b.node("Concat", "policy.all", []string{all, global}, "policy.all", intAttr("axis", 1))
		all = "policy.all"
	}
	index := make([]int64, len(l.PolicyIndex))
	for a, i := range l.PolicyIndex {
		index[a] = int64(i)
	}
	b.node("Gather", "policy", []string{all, b.int64s("policy.index", index...)}, PolicyName, intAttr("axis", 1))
}

// pool adds each channel's mean, then maximum, over the board of y:
// [N, 2·channels].
func (b *builder) pool(name, y string) string {
	mean, most, pooled := name+".mean", name+".max", name+".pooled"
	b.node("ReduceMean", mean, []string{y}, mean, intsAttr("axes", 2, 3), intAttr("keepdims", 0))
	b.node("ReduceMax", most, []string{y}, most, intsAttr("axes", 2, 3), intAttr("keepdims", 0))
	b.node("Concat", pooled, []string{mean, most}, pooled, intAttr("axis", 1))
	return pooled
}

// gpool adds a block's global pooling bias to y: each channel's mean and
// maximum over the board, through the layer, added at every cell.
func (b *builder) gpool(name string, d nn.DenseLayer, y string) string {
	bias := b.gemm(name, d, b.pool(name, y), name+".bias")
	shape := b.int64s(name+".shape", 0, -1, 1, 1) // [N, filters, 1, 1]
	cells, out := name+".cells", name+".add"
	b.node("Reshape", cells, []string{bias, shape}, cells)
	b.node("Add", out, []string{y, cells}, out)
	return out
}

// int64s stores values as an int64 vector constant and returns its name.
func (b *builder) int64s(name string, values ...int64) string {
	raw := make([]byte, 8*len(values))
	for i, v := range values {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
	}
	b.weights = append(b.weights, &pb.TensorProto{
		Name:     proto.String(name),
		DataType: proto.Int32(int32(pb.TensorProto_INT64)),
		Dims:     []int64{int64(len(values))},
		RawData:  raw,
	})
	return name
}

// gemm adds input · Weights + Bias, the weights stored (in, out).
func (b *builder) gemm(name string, d nn.DenseLayer, input, out string) string {
	w := b.initializer(name+".w", d.Weights, d.In, d.Out)
	bias := b.initializer(name+".b", d.Bias, d.Out)
	b.node("Gemm", name, []string{input, w, bias}, out,
		floatAttr("alpha", 1), floatAttr("beta", 1), intAttr("transA", 0), intAttr("transB", 0))
	return out
}

func (b *builder) relu(name, input string) string {
	out := name + ".relu"
	b.node("Relu", out, []string{input}, out)
	return out
}

func (b *builder) flatten(name, input string) string {
	out := name + ".flatten"
	b.node("Flatten", out, []string{input}, out, intAttr("axis", 1))
	return out
}

func (b *builder) node(op, name string, inputs []string, output string, attrs ...*pb.AttributeProto) {
	b.nodes = append(b.nodes, &pb.NodeProto{
		OpType:    proto.String(op),
		Name:      proto.String(name),
		Input:     inputs,
		Output:    []string{output},
		Attribute: attrs,
	})
}

// initializer stores data as a float32 constant of the given shape and
// returns its name.
func (b *builder) initializer(name string, data []float32, dims ...int) string {
	raw := make([]byte, 4*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	shape := make([]int64, len(dims))
	for i, d := range dims {
		shape[i] = int64(d)
	}
	b.weights = append(b.weights, &pb.TensorProto{
		Name:     proto.String(name),
		DataType: proto.Int32(int32(pb.TensorProto_FLOAT)),
		Dims:     shape,
		RawData:  raw,
	})
	return name
}

func intAttr(name string, v int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

func intsAttr(name string, v ...int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_INTS.Enum(), Ints: v}
}

func floatAttr(name string, v float32) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_FLOAT.Enum(), F: proto.Float32(v)}
}
