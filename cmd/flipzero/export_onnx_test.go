package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/flipzero/flipzero/loop"
	"github.com/flipzero/flipzero/nn/cpu"
	pb "github.com/flipzero/flipzero/nn/onnx/onnxpb"
)

// TestExportONNX exports a trained generation with --format onnx and
// reads the file back as an ONNX model: the network of the run's game
// with the generation's metadata. (nn/onnx's tests check that runtimes
// compute the same as flipzero.)
func TestExportONNX(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	err := loop.Loop(context.Background(), loop.LoopOptions{Backend: cpu.Backend(),
		ConfigPath: tinyRunConfig(t, 24), RunDir: run, MaxGenerations: 1, Seed: 5,
	})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "ttt.onnx")
	code, stdout, stderr := runCLI(t, "", "export", "--run", run, "--out", out, "--format", "onnx")
	if code != 0 || !strings.Contains(stdout, "generation=1") || !strings.Contains(stdout, "step=") {
		t.Fatalf("export --format onnx: exit %d: %s%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var m pb.ModelProto
	if err := proto.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s is not an ONNX model: %v", out, err)
	}
	props := map[string]string{}
	for _, p := range m.GetMetadataProps() {
		props[p.GetKey()] = p.GetValue()
	}
	if props["game"] != "tictactoe" || props["generation"] != "1" || props["step"] == "" || props["step"] == "0" ||
		props["actions"] != "9" || len(m.GetGraph().GetNode()) == 0 {
		t.Errorf("the model's metadata %v, %d nodes: want generation 1 of a trained tictactoe network", props, len(m.GetGraph().GetNode()))
	}

	// The name chooses the format where --format is left out; a flipzero
	// model file is not written under an .onnx name.
	byName := filepath.Join(t.TempDir(), "byname.ONNX")
	if code, stdout, stderr := runCLI(t, "", "export", "--run", run, "--out", byName); code != 0 {
		t.Fatalf("export --out byname.ONNX: exit %d: %s%s", code, stdout, stderr)
	}
	if b, err := os.ReadFile(byName); err != nil || proto.Unmarshal(b, &pb.ModelProto{}) != nil || strings.HasPrefix(string(b), "FZNET") {
		t.Errorf("export --out byname.ONNX did not write an ONNX model (%v)", err)
	}
	code, _, stderr = runCLI(t, "", "export", "--run", run, "--out", out, "--format", "flipzero")
	if code != 2 || !strings.Contains(stderr, "--format onnx") {
		t.Errorf("--format flipzero with an .onnx name: exit %d, %q", code, stderr)
	}
	// info reads an ONNX model's metadata.
	code, stdout, stderr = runCLI(t, "", "info", out)
	if code != 0 || !strings.Contains(stdout, "ONNX model by flipzero") || !strings.Contains(stdout, "generation:") || !strings.Contains(stdout, "tictactoe") {
		t.Errorf("info of an ONNX model: exit %d: %s%s", code, stdout, stderr)
	}

	code, _, stderr = runCLI(t, "", "export", "--run", run, "--out", out, "--format", "tflite")
	if code != 2 || !strings.Contains(stderr, "--format") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("an unknown format: exit %d, %q; want 2 and one line naming --format", code, stderr)
	}

	// Into a folder that does not exist, each format names the folder,
	// not the temporary file it would have written first.
	missing := filepath.Join(t.TempDir(), "missing")
	for _, name := range []string{"ttt.fznet", "ttt.onnx"} {
		code, _, stderr = runCLI(t, "", "export", "--run", run, "--out", filepath.Join(missing, name))
		want := "folder " + missing + " does not exist"
		if code != 2 || !strings.Contains(stderr, want) || strings.Contains(stderr, ".tmp-") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("export --out %s: exit %d, %q; want 2 and one line saying %q", filepath.Join(missing, name), code, stderr, want)
		}
	}
}
