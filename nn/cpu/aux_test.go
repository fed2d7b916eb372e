package cpu

import (
	"errors"
	"github.com/flipzero/flipzero/nn"
	"path/filepath"
	"testing"

	"github.com/flipzero/flipzero/env/tictactoe"
)

// TestAuxiliaryHeadsLearn: trained on fixed targets, the heads' errors
// fall far below where they start, and the samples without targets
// teach them nothing (their errors are left out of the loss).
func TestAuxiliaryHeadsLearn(t *testing.T) {
	g := tictactoe.Game{}
	net, err := nn.New(g, auxConfig, 5)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTrainer(net, nn.DefaultTrainConfig())
	if err != nil {
		t.Fatal(err)
	}
	b := withAux(randomBatch(g, 32, 6), 32, 9, 7)
	first, err := tr.Step(b)
	if err != nil {
		t.Fatal(err)
	}
	var last nn.Losses
	for i := 0; i < 400; i++ {
		if last, err = tr.Step(b); err != nil {
			t.Fatal(err)
		}
	}
	if !(last.Ownership < 0.25*first.Ownership && last.Score < 0.25*first.Score) {
		t.Errorf("ownership error %.3f → %.3f, score %.3f → %.3f: the heads did not learn", first.Ownership, last.Ownership, first.Score, last.Score)
	}
	// The sample without targets: changing its (unused) targets changes
	// nothing.
	l1, g1, err := tr.gradients(b)
	if err != nil {
		t.Fatal(err)
	}
	g1 = cloneAll(g1)
	for c := 9; c < 18; c++ {
		b.Ownership[c] = -b.Ownership[c] + 1
	}
	b.Margin[1] = 0.75
	l2, g2, err := tr.gradients(b)
	if err != nil {
		t.Fatal(err)
	}
	if l1 != l2 {
		t.Errorf("losses %+v became %+v when a sample without targets changed them", l1, l2)
	}
	for i := range g1 {
		if d := maxAbsDiff(g1[i], g2[i]); d > 1e-6 {
			t.Fatalf("gradient of %s moved by %g", net.Learnables()[i].Name, d)
		}
	}
}

func cloneAll(a [][]float32) [][]float32 {
	out := make([][]float32, len(a))
	for i := range a {
		out[i] = append([]float32(nil), a[i]...)
	}
	return out
}

// TestNoHeadsIgnoresTargets: a network without the heads trains on a
// batch with targets as on one without, and reports no auxiliary loss.
func TestNoHeadsIgnoresTargets(t *testing.T) {
	g := tictactoe.Game{}
	_, tr := tinyTrainer(t, g, 3)
	b := randomBatch(g, 8, 2)
	l1, g1, err := tr.gradients(b)
	if err != nil {
		t.Fatal(err)
	}
	g1 = cloneAll(g1)
	l2, g2, err := tr.gradients(withAux(b, 8, 9, 1))
	if err != nil {
		t.Fatal(err)
	}
	if l2.Ownership != 0 || l2.Score != 0 || l1.Policy != l2.Policy || l1.Value != l2.Value {
		t.Errorf("losses %+v with targets, %+v without", l2, l1)
	}
	for i := range g1 {
		if maxAbsDiff(g1[i], g2[i]) != 0 {
			t.Fatal("the targets changed a gradient")
		}
	}
}

// TestAuxiliaryCheckpoints: a network with the heads saves and resumes
// with them; its folded snapshot and exported model leave them out and
// load as the plain architecture; and the two architectures' files do not
// load as each other.
func TestAuxiliaryCheckpoints(t *testing.T) {
	g := tictactoe.Game{}
	net, err := nn.New(g, auxConfig, 9)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTrainer(net, nn.DefaultTrainConfig())
	if err != nil {
		t.Fatal(err)
	}
	b := withAux(randomBatch(g, 16, 2), 16, 9, 3)
	for i := 0; i < 3; i++ {
		if _, err := tr.Step(b); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "heads.ckpt")
	if err := nn.SaveCheckpoint(ckpt, tr, nil); err != nil {
		t.Fatal(err)
	}
	c, err := nn.LoadCheckpointAs(ckpt, g, auxConfig)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range net.Learnables() {
		if maxAbsDiff(p.Data, c.Network.Learnables()[i].Data) != 0 {
			t.Fatalf("%s differs after loading", p.Name)
		}
	}
	if _, err := nn.LoadCheckpointAs(ckpt, g, tinyConfig); !errors.Is(err, nn.ErrWrongArch) {
		t.Errorf("the checkpoint loaded as the architecture without heads: %v", err)
	}
	f := net.Fold()
	if f.Config() != tinyConfig {
		t.Errorf("folded architecture %+v, want %+v", f.Config(), tinyConfig)
	}
	model := filepath.Join(dir, "heads.fznet")
	if err := nn.SaveFolded(model, f, tr.Steps(), nil); err != nil {
		t.Fatal(err)
	}
	m, err := nn.LoadCheckpoint(model, g)
	if err != nil {
		t.Fatal(err)
	}
	if m.Network.Config() != tinyConfig {
		t.Errorf("exported model's architecture %+v, want %+v", m.Network.Config(), tinyConfig)
	}
	want, _ := NewEvaluator(f, 16)
	got, _ := NewEvaluator(m.Network.Fold(), 16)
	wl, ww, _ := want.Forward(b.Inputs, 16)
	gl, gw, _ := got.Forward(b.Inputs, 16)
	if maxAbsDiff(wl, gl) > 1e-5 || maxAbsDiff(ww, gw) > 1e-5 {
		t.Error("the exported model plays differently from the network")
	}
}
