package onnx

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/games"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/cpu"
	pb "github.com/flipzero/flipzero/nn/onnx/onnxpb"
)

// tolerance is how far onnxruntime's outputs may be from flipzero's: both
// compute in float32, in different orders.
const tolerance = 1e-4

// network builds a network for game whose batch norms and biases are not
// the identity, so that an export that mishandled the folding would
// compute something else.
func network(t *testing.T, game string, cfg func(env.Game) nn.Config, seed uint64) (env.Game, *nn.Network) {
	t.Helper()
	g, err := games.ByName(game)
	if err != nil {
		t.Fatal(err)
	}
	net, err := nn.New(g, cfg(g), seed)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 5))
	for _, p := range append(net.Learnables(), net.Statistics()...) {
		for i := range p.Data {
			switch {
			case strings.HasSuffix(p.Name, ".bn.gamma"):
				p.Data[i] = float32(0.5 + rng.Float64())
			case strings.HasSuffix(p.Name, ".bn.beta"), strings.HasSuffix(p.Name, ".b"):
				p.Data[i] = float32(rng.NormFloat64() * 0.2)
			case strings.HasSuffix(p.Name, ".bn.mean"):
				p.Data[i] = float32(rng.NormFloat64() * 0.3)
			case strings.HasSuffix(p.Name, ".bn.var"):
				p.Data[i] = float32(0.5 + 2*rng.Float64())
			}
		}
	}
	return g, net
}

func small(env.Game) nn.Config {
	return nn.Config{Blocks: 2, Filters: 8, PolicyFilters: 2, ValueFilters: 1, ValueHidden: 8}
}

func TestModelStructure(t *testing.T) {
	_, net := network(t, "othello", small, 1)
	l := net.Fold().Layers()
	var buf bytes.Buffer
	if err := Write(&buf, l, map[string]string{"generation": "7", "step": "1200"}); err != nil {
		t.Fatal(err)
	}
	var m pb.ModelProto
	if err := proto.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatalf("the written model does not parse: %v", err)
	}
	if m.GetIrVersion() != IRVersion || len(m.GetOpsetImport()) != 1 || m.GetOpsetImport()[0].GetVersion() != Opset || m.GetOpsetImport()[0].GetDomain() != "" {
		t.Fatalf("IR version %d, opsets %v; want %d and the default domain at %d", m.GetIrVersion(), m.GetOpsetImport(), IRVersion, Opset)
	}
	g := m.GetGraph()
	// Stem: Conv, Relu; per block: Conv, Relu, Conv, Add, Relu; policy:
	// Conv, Relu, Flatten, Gemm; value: Conv, Relu, Flatten, Gemm, Relu,
	// Gemm, Softmax, MatMul.
	if want := 2 + 5*len(l.Blocks) + 4 + 8; len(g.GetNode()) != want {
		t.Fatalf("%d nodes, want %d", len(g.GetNode()), want)
	}

	checkInfo := func(v *pb.ValueInfoProto, name string, dims ...int64) {
		t.Helper()
		tt := v.GetType().GetTensorType()
		if v.GetName() != name || tt.GetElemType() != int32(pb.TensorProto_FLOAT) {
			t.Fatalf("value %q of element type %d, want %q float", v.GetName(), tt.GetElemType(), name)
		}
		d := tt.GetShape().GetDim()
		if len(d) != 1+len(dims) || d[0].GetDimParam() != BatchDim || d[0].GetDimValue() != 0 {
			t.Fatalf("%s: dims %v, want the dynamic %s then %v", name, d, BatchDim, dims)
		}
		for i, want := range dims {
			if d[i+1].GetDimValue() != want {
				t.Fatalf("%s: dim %d is %v, want %d", name, i+1, d[i+1], want)
			}
		}
	}
	if len(g.GetInput()) != 1 || len(g.GetOutput()) != 3 {
		t.Fatalf("%d inputs and %d outputs, want 1 and 3", len(g.GetInput()), len(g.GetOutput()))
	}
	checkInfo(g.GetInput()[0], InputName, 4, 8, 8)
	checkInfo(g.GetOutput()[0], PolicyName, 65)
	checkInfo(g.GetOutput()[1], WDLName, 3)
	checkInfo(g.GetOutput()[2], ValueName, 1)

	// Every node reads only what exists before it, every value is made
	// once, and each initializer holds exactly its shape's float32s.
	defined := map[string]bool{InputName: true}
	for _, w := range g.GetInitializer() {
		n := int64(4)
		for _, d := range w.GetDims() {
			n *= d
		}
		if w.GetDataType() != int32(pb.TensorProto_FLOAT) || int64(len(w.GetRawData())) != n || defined[w.GetName()] {
			t.Fatalf("initializer %s: type %d, %d bytes for dims %v (or defined twice)", w.GetName(), w.GetDataType(), len(w.GetRawData()), w.GetDims())
		}
		defined[w.GetName()] = true
	}
	for _, n := range g.GetNode() {
		for _, in := range n.GetInput() {
			if !defined[in] {
				t.Fatalf("node %s (%s) reads %q before anything writes it", n.GetName(), n.GetOpType(), in)
			}
		}
		for _, out := range n.GetOutput() {
			if defined[out] {
				t.Fatalf("node %s writes %q, which already exists", n.GetName(), out)
			}
			defined[out] = true
		}
	}
	for _, out := range []string{PolicyName, WDLName, ValueName} {
		if !defined[out] {
			t.Fatalf("no node writes the output %s", out)
		}
	}

	// The stem's weights are the network's, bit for bit, in OIHW order.
	stem := g.GetInitializer()[0]
	if stem.GetName() != "stem.w" || fmt.Sprint(stem.GetDims()) != "[8 4 3 3]" {
		t.Fatalf("first initializer %s %v, want stem.w [8 4 3 3]", stem.GetName(), stem.GetDims())
	}
	for i, v := range l.Stem.Weights {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(stem.GetRawData()[4*i:])); got != v {
			t.Fatalf("stem.w[%d] is %g in the model, %g in the network", i, got, v)
		}
	}

	props := map[string]string{}
	for _, p := range m.GetMetadataProps() {
		props[p.GetKey()] = p.GetValue()
	}
	for k, want := range map[string]string{"game": "othello", "planes": "4", "height": "8", "width": "8", "actions": "65", "blocks": "2", "filters": "8", "generation": "7", "step": "1200"} {
		if props[k] != want {
			t.Errorf("metadata %s = %q, want %q", k, props[k], want)
		}
	}
	if !strings.HasPrefix(props["encoding"], "4 planes of 8×8") || !strings.HasPrefix(props["action_index"], "65 actions") {
		t.Errorf("metadata encoding %q and action_index %q do not describe othello", props["encoding"], props["action_index"])
	}

	// WriteFile writes the same bytes, and writing is deterministic.
	path := filepath.Join(t.TempDir(), "m.onnx")
	if err := WriteFile(path, l, map[string]string{"step": "1200", "generation": "7"}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, buf.Bytes()) {
		t.Fatalf("WriteFile wrote %d bytes (%v), unlike Write's %d", len(b), err, buf.Len())
	}
}

func TestBadNetworksAreRefused(t *testing.T) {
	_, net := network(t, "tictactoe", small, 2)
	cases := []struct {
		name    string
		breakIt func(l *nn.Layers)
		meta    map[string]string
		want    string
	}{
		{"stem input", func(l *nn.Layers) { l.Planes = 4 }, nil, "stem takes 3 channels, want 4"},
		{"block width", func(l *nn.Layers) { l.Blocks[1][0].In = 9 }, nil, "block 1 conv a takes 9 channels, want 8"},
		{"missing bias", func(l *nn.Layers) { l.Blocks[0][1].Bias = l.Blocks[0][1].Bias[1:] }, nil, "block 0 conv b has 576 weights and 7 biases, want 576 and 8"},
		{"even kernel", func(l *nn.Layers) { l.ValueConv.Kernel = 2 }, nil, "value conv has kernel 2"},
		{"policy size", func(l *nn.Layers) { l.Actions = 10 }, nil, "policy fc is 18→9, want 18→10"},
		{"value hidden", func(l *nn.Layers) { l.ValueFC2.In = 7 }, nil, "value fc2 is 7→3, want 8→3"},
		{"short weights", func(l *nn.Layers) { l.PolicyFC.Weights = l.PolicyFC.Weights[:5] }, nil, "policy fc has 5 weights"},
		{"value outputs", func(l *nn.Layers) { l.ValueOutputs = 2 }, nil, "2 value outputs"},
		{"metadata key", func(*nn.Layers) {}, map[string]string{"game": "chess"}, `metadata key "game"`},
		{"reserved key", func(*nn.Layers) {}, map[string]string{"encoding": "mine"}, `metadata key "encoding"`},
	}
	for _, c := range cases {
		l := net.Fold().Layers()
		c.breakIt(&l)
		err := Write(&bytes.Buffer{}, l, c.meta)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.name, err, c.want)
		}
	}
	// The good network passes, so the failures above are the breakages'.
	if err := Write(&bytes.Buffer{}, net.Fold().Layers(), nil); err != nil {
		t.Fatal(err)
	}
}

func TestEveryGameIsDescribed(t *testing.T) {
	for _, name := range games.Names() {
		g, err := games.ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		d, ok := Describe(name)
		p, h, w := g.EncodedShape()
		if !ok || !strings.HasPrefix(d.Encoding, fmt.Sprintf("%d planes of %d×%d;", p, h, w)) ||
			!strings.HasPrefix(d.Actions, fmt.Sprintf("%d actions", g.ActionSpace())) {
			t.Errorf("%s (%d planes of %d×%d, %d actions) is described as %q / %q", name, p, h, w, g.ActionSpace(), d.Encoding, d.Actions)
		}
	}
}

// checkCase is one model for check.js: the files of the model, its
// inputs and flipzero's outputs, named relative to the manifest.
type checkCase struct {
	Game    string `json:"game"`
	Model   string `json:"model"`
	Count   int    `json:"count"`
	Planes  int    `json:"planes"`
	Height  int    `json:"height"`
	Width   int    `json:"width"`
	Actions int    `json:"actions"`
	Input   string `json:"input"`
	Policy  string `json:"policy"`
	WDL     string `json:"wdl"`
	Value   string `json:"value"`
}

// TestOnnxruntimeAgrees exports a network of each board shape and
// action space, runs the models in onnxruntime (testdata/check.js, on
// Node.js) on real positions, and compares with flipzero's own inference.
// It skips when Node.js or onnxruntime-node is missing, unless
// FLIPZERO_REQUIRE_ONNXRUNTIME is set, as CI sets it.
func TestOnnxruntimeAgrees(t *testing.T) {
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join("testdata", "node_modules", "onnxruntime-node", "package.json"))
	}
	if err != nil {
		msg := fmt.Sprintf("needs Node.js and onnxruntime-node (ONNXRUNTIME_NODE_INSTALL=skip npm ci --prefix nn/onnx/testdata): %v", err)
		if os.Getenv("FLIPZERO_REQUIRE_ONNXRUNTIME") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}

	dir := t.TempDir()
	var cases []checkCase
	const positions = 12
	// Each game's default network, and the architecture options that
	// change inference: global pooling and the convolutional policy head
	// (with a pass from the whole board in othello and yinsh, without in
	// tic-tac-toe).
	variants := []struct {
		name, game string
		cfg        func(env.Game) nn.Config
	}{
		{"tictactoe", "tictactoe", nn.DefaultConfig},
		{"othello", "othello", nn.DefaultConfig},
		{"reversi-single", "reversi-single", nn.DefaultConfig},
		{"yinsh", "yinsh", nn.DefaultConfig},
		{"othello-pooling", "othello", func(g env.Game) nn.Config {
			c := nn.DefaultConfig(g)
			c.GlobalPooling = true
			return c
		}},
		{"yinsh-conv-policy", "yinsh", func(g env.Game) nn.Config {
			c := nn.DefaultConfig(g)
			c.Blocks, c.PolicyHead, c.PolicyFilters, c.GlobalPooling = 2, "conv", 16, true
			return c
		}},
		{"tictactoe-conv-policy", "tictactoe", func(g env.Game) nn.Config {
			c := nn.DefaultConfig(g)
			c.PolicyHead, c.PolicyFilters = "conv", 4
			return c
		}},
	}
	for i, v := range variants {
		game := v.name
		g, net := network(t, v.game, v.cfg, uint64(10+i))
		f := net.Fold()
		l := f.Layers()
		if err := WriteFile(filepath.Join(dir, game+".onnx"), l, map[string]string{"step": "0"}); err != nil {
			t.Fatal(err)
		}
		states := env.RandomPositions(g, positions-1, uint64(20+i), true)
		states = append([]env.State{g.NewState()}, states...)
		size := l.Planes * l.Height * l.Width
		input := make([]float32, len(states)*size)
		for j, s := range states {
			s.Encode(input[j*size : (j+1)*size])
		}
		ev, err := cpu.NewEvaluator(f, len(states))
		if err != nil {
			t.Fatal(err)
		}
		logits, wdl, err := ev.Forward(input, len(states))
		if err != nil {
			t.Fatal(err)
		}
		value := make([]float32, len(states))
		for j := range value {
			value[j] = wdl[3*j] - wdl[3*j+2]
		}
		c := checkCase{Game: game, Model: game + ".onnx", Count: len(states),
			Planes: l.Planes, Height: l.Height, Width: l.Width, Actions: l.Actions,
			Input: game + ".input.f32", Policy: game + ".policy.f32", WDL: game + ".wdl.f32", Value: game + ".value.f32"}
		for name, data := range map[string][]float32{c.Input: input, c.Policy: logits, c.WDL: wdl, c.Value: value} {
			writeFloats(t, filepath.Join(dir, name), data)
		}
		cases = append(cases, c)
	}
	manifest, err := json.Marshal(map[string]any{"tolerance": tolerance, "cases": cases})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(node, filepath.Join("testdata", "check.js"), dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("check.js: %v\n%s%s", err, out, stderr.Bytes())
	}
	// check.js fails by itself beyond the tolerance; reading its report
	// here too makes sure it checked every game.
	seen := 0
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		var r struct {
			Game               string
			Positions          int
			Policy, WDL, Value float64
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("check.js printed %q: %v", line, err)
		}
		t.Logf("%-14s %d positions, largest difference: policy %.2g, wdl %.2g, value %.2g", r.Game, r.Positions, r.Policy, r.WDL, r.Value)
		if r.Positions != positions || max(r.Policy, r.WDL, r.Value) > tolerance {
			t.Errorf("%s: %d positions checked, largest difference %g", r.Game, r.Positions, max(r.Policy, r.WDL, r.Value))
		}
		seen++
	}
	if seen != len(cases) {
		t.Fatalf("check.js reported %d models of %d", seen, len(cases))
	}
}

func writeFloats(t *testing.T, path string, data []float32) {
	t.Helper()
	b := make([]byte, 4*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
