package onnx

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReadInfo: a model read back says what was written — producer,
// operator set, the graph's shapes, its weights and metadata — and a file
// that is not a model is refused naming the path.
func TestReadInfo(t *testing.T) {
	_, net := network(t, "othello", small, 3)
	dir := t.TempDir()
	path := filepath.Join(dir, "m.onnx")
	if err := WriteFile(path, net.Fold().Layers(), map[string]string{"generation": "7"}); err != nil {
		t.Fatal(err)
	}
	info, err := ReadInfo(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Producer != "flipzero" || info.Opset != Opset || info.IRVersion != IRVersion {
		t.Errorf("producer %q, opset %d, IR %d", info.Producer, info.Opset, info.IRVersion)
	}
	if !slices.Equal(info.Inputs, []string{"input [N 4 8 8]"}) || len(info.Outputs) != 3 || info.Outputs[0] != "policy [N 65]" {
		t.Errorf("inputs %v, outputs %v", info.Inputs, info.Outputs)
	}
	if info.Metadata["generation"] != "7" || info.Metadata["game"] != "othello" || !slices.IsSorted(info.MetadataKeys()) {
		t.Errorf("metadata %v", info.Metadata)
	}
	// The folded network's weights, as exported: each convolution's and
	// dense layer's weights and biases.
	l := net.Fold().Layers()
	want := int64(len(l.Stem.Weights) + len(l.Stem.Bias))
	for _, b := range l.Blocks {
		want += int64(len(b[0].Weights) + len(b[0].Bias) + len(b[1].Weights) + len(b[1].Bias))
	}
	if info.Parameters < want {
		t.Errorf("%d parameters, fewer than the tower's %d", info.Parameters, want)
	}
	text := filepath.Join(dir, "notes.onnx")
	os.WriteFile(text, []byte("not a model\n"), 0o644)
	if _, err := ReadInfo(text); !errors.Is(err, ErrNotONNX) || !strings.Contains(err.Error(), "notes.onnx") {
		t.Errorf("a text file: %v", err)
	}
}
