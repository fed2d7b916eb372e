package nn

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/flipzero/flipzero/env/tictactoe"
)

// TestFoldedModelRoundTrip exports a trained network with perturbed batch
// norms as a folded model: the file is smaller than the plain model, its
// header says what it is, and the network loaded from it folds to the
// same layers as the original within float32 rounding.
func TestFoldedModelRoundTrip(t *testing.T) {
	tr := trainedTicTacToe(t)
	net := tr.Network()
	dir := t.TempDir()
	folded := filepath.Join(dir, "exported.fznet")
	plain := filepath.Join(dir, "plain.fznet")
	meta := map[string]string{"generation": "4", "samples_total": "999"}
	if err := SaveFolded(folded, net.Fold(), tr.Steps(), meta); err != nil {
		t.Fatal(err)
	}
	if err := SaveModel(plain, net, tr.Steps(), meta); err != nil {
		t.Fatal(err)
	}
	ck, err := LoadCheckpoint(folded, tictactoe.Game{})
	if err != nil {
		t.Fatal(err)
	}
	if !ck.Folded || ck.Training != nil || ck.Step != 3 || ck.Metadata["samples_total"] != "999" {
		t.Fatalf("loaded folded %v, trainer %v, step %d, metadata %v", ck.Folded, ck.Training != nil, ck.Step, ck.Metadata)
	}
	want, got := net.Fold().Layers(), ck.Network.Fold().Layers()
	wantConvs, gotConvs := want.convs(), got.convs()
	for i, c := range wantConvs {
		if d := max(maxAbsDiff(c.Weights, gotConvs[i].Weights), maxAbsDiff(c.Bias, gotConvs[i].Bias)); d > 1e-6 {
			t.Errorf("convolution %d of the exported model differs from the network's by %g", i, d)
		}
	}
	wantDense, gotDense := want.dense(), got.dense()
	for i, l := range wantDense {
		if d := max(maxAbsDiff(l.Weights, gotDense[i].Weights), maxAbsDiff(l.Bias, gotDense[i].Bias)); d != 0 {
			t.Errorf("dense layer %d of the exported model differs from the network's by %g", i, d)
		}
	}

	fi, _ := os.Stat(folded)
	pi, _ := os.Stat(plain)
	// Three fewer float32s per convolution channel (the tower's and the
	// heads'), and a header longer by `,"folded":true`.
	c := tinyConfig
	channels := c.Filters*(1+2*c.Blocks) + c.PolicyFilters + c.ValueFilters
	wantSmaller := int64(4*3*channels - len(`,"folded":true`))
	if pi.Size()-fi.Size() != wantSmaller {
		t.Errorf("folded model %d bytes, plain %d: want %d fewer", fi.Size(), pi.Size(), wantSmaller)
	}

	tests := []struct {
		path              string
		folded, optimizer bool
	}{{folded, true, false}, {plain, false, false}}
	for _, tt := range tests {
		info, err := ReadInfo(tt.path)
		if err != nil {
			t.Fatal(err)
		}
		if info.Game != "tictactoe" || info.Folded != tt.folded || info.Optimizer != tt.optimizer ||
			info.Version != 2 || info.Arch != tinyConfig || info.Step != 3 || info.Metadata["generation"] != "4" {
			t.Errorf("%s: info %+v", filepath.Base(tt.path), info)
		}
	}
}

// TestFoldedModelDamage checks that damage to an exported model is caught
// like damage to a checkpoint, and that ReadInfo rejects what is not a
// network file.
func TestFoldedModelDamage(t *testing.T) {
	tr := trainedTicTacToe(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "exported.fznet")
	if err := SaveFolded(path, tr.Network().Fold(), tr.Steps(), nil); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.fznet")
	tests := []struct {
		name string
		data []byte
		want error
	}{
		{"flipped weight", func() []byte { d := append([]byte(nil), good...); d[len(d)-40] ^= 4; return d }(), ErrCorrupt},
		{"cut", good[:len(good)-7], ErrTruncated},
	}
	for _, tt := range tests {
		if err := os.WriteFile(bad, tt.data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadCheckpoint(bad, tictactoe.Game{}); !errors.Is(err, tt.want) {
			t.Errorf("%s: error %v, want %v", tt.name, err, tt.want)
		}
	}
	for _, data := range [][]byte{nil, []byte("hello, this is text and not a network\n")} {
		os.WriteFile(bad, data, 0o644)
		if _, err := ReadInfo(bad); !errors.Is(err, ErrNotNetwork) {
			t.Errorf("ReadInfo of %q: error %v, want %v", data, err, ErrNotNetwork)
		}
	}
}

// TestLayersParameters counts a small snapshot's weights by hand: each
// convolution's kernel·in·out + out, each dense layer's in·out + out.
func TestLayersParameters(t *testing.T) {
	net, err := New(tictactoe.Game{}, Config{Blocks: 1, Filters: 8, PolicyFilters: 2, ValueFilters: 1, ValueHidden: 8}, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := (9*3*8 + 8) + // stem
		2*(9*8*8+8) + // the block's two convolutions
		(8*2 + 2) + (8*1 + 1) + // the policy and value heads' 1×1 convolutions
		(2*9*9 + 9) + // the policy's dense layer onto 9 actions
		(9*8 + 8) + (8*3 + 3) // the value's hidden and output layers
	l := net.Fold().Layers()
	if got := l.Parameters(); got != want {
		t.Errorf("Parameters() = %d, want %d", got, want)
	}
}
