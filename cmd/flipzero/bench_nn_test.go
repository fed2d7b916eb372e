package main

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/nn/cpu"
)

func TestBenchNN(t *testing.T) {
	code, out, errOut := runCLI(t, "", "bench", "nn", "--game", "tictactoe", "--seconds", "0.05", "--batches", "1,4", "--train-batch", "8")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var lines []string
	agreed := false
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		switch {
		case strings.HasPrefix(l, "against float32 "):
			agreed = true
		case !strings.HasPrefix(l, "note: "):
			lines = append(lines, l)
		}
	}
	// The comparison with float32 is printed where the CPU evaluates in
	// reduced precision, and only there.
	if reduced := cpu.FastBackend().Name() != cpu.Backend().Name(); agreed != reduced {
		t.Errorf("a line against float32: %v, want %v (%s):\n%s", agreed, reduced, cpu.FastBackend().Name(), out)
	}
	want := []*regexp.Regexp{
		regexp.MustCompile(`^tictactoe network: .* parameters, .* MFLOP per position; convolutions .*; BLAS `),
		regexp.MustCompile(`^matrix multiply peak: [0-9.]+ GFLOP/s`),
		regexp.MustCompile(`^batch +1: +[0-9]+ positions/s +[0-9.]+ GFLOP/s +[0-9.]+% of peak$`),
		regexp.MustCompile(`^batch +4: +[0-9]+ positions/s +[0-9.]+ GFLOP/s +[0-9.]+% of peak$`),
		regexp.MustCompile(`^training batch 8 \((float32|mixed precision) on .+\): [0-9.]+ samples/s`),
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i, re := range want {
		if !re.MatchString(lines[i]) {
			t.Errorf("line %d %q does not match %v", i+1, lines[i], re)
		}
	}
}

// TestBenchNNProfile: --cpuprofile leaves a profile, and a folder that
// is not there is a one-line error before anything is measured.
func TestBenchNNProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nn.pprof")
	args := []string{"bench", "nn", "--game", "tictactoe", "--seconds", "0.05", "--batches", "4", "--train-batch", "8", "--cpuprofile"}
	code, _, errOut := runCLI(t, "", append(args, path)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// A profile is a gzipped protocol buffer naming its sample types.
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	data, err := io.ReadAll(z)
	if err != nil || !strings.Contains(string(data), "nanoseconds") {
		t.Errorf("%s: %d bytes (%v), want a CPU profile", path, len(data), err)
	}
	code, _, errOut = runCLI(t, "", append(args, filepath.Join(t.TempDir(), "missing", "nn.pprof"))...)
	if code == 0 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "nn.pprof") {
		t.Errorf("profile into a missing folder: exit %d, stderr %q; want an error naming the file", code, errOut)
	}
}

// TestBenchNNModel: --model measures a model file's network, trained
// weights and all, whose game --game may repeat but not contradict; with
// the CPU's reduced precision it says how far that moves the model's
// outputs from float32's, and in float32 (cpu-fp32) it says nothing of
// it.
func TestBenchNNModel(t *testing.T) {
	model := untrainedModel(t, "othello")
	for _, tc := range []struct {
		device string
		agree  bool
	}{
		{"cpu", cpu.FastBackend().Name() != cpu.Backend().Name()},
		{"cpu-fp32", false},
	} {
		code, out, errOut := runCLI(t, "", "bench", "nn", "--model", model, "--game", "othello", "--device", tc.device, "--seconds", "0.05", "--batches", "4", "--train-batch", "0")
		if code != 0 {
			t.Fatalf("--device %s: exit %d: %s", tc.device, code, errOut)
		}
		if !strings.HasPrefix(out, "othello network: 1 blocks × 8 filters,") {
			t.Errorf("--device %s: %q, want the model's network", tc.device, strings.SplitN(out, "\n", 2)[0])
		}
		re := regexp.MustCompile(`(?m)^against float32 on 256 positions of random play: a move's probability moved by up to [0-9.]+, a policy by [0-9.]+ \(L1\) on average, the value by up to [0-9.]+$`)
		if got := re.MatchString(out); got != tc.agree {
			t.Errorf("--device %s: a line against float32 %v, want %v:\n%s", tc.device, got, tc.agree, out)
		}
	}
	for _, args := range [][]string{
		{"--model", model, "--game", "yinsh"},
		{"--model", model, "--config", "../../configs/othello.yaml"},
		{"--model", filepath.Join(t.TempDir(), "missing.fznet")},
	} {
		code, _, errOut := runCLI(t, "", append([]string{"bench", "nn", "--seconds", "0.05", "--batches", "4", "--train-batch", "0"}, args...)...)
		if code != 2 || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line", args, code, errOut)
		}
	}
}

// TestCompareOutputs: the largest move of a probability, the mean L1
// move of a position's policy and the largest move of a value.
func TestCompareOutputs(t *testing.T) {
	a := compareOutputs([]float32{0.5, 0.5, 0.9, 0.1}, []float32{0.2, -0.4}, []float32{0.4, 0.6, 0.9, 0.1}, []float32{0.25, -0.1})
	near := func(x, y float64) bool { return x-y < 1e-6 && y-x < 1e-6 }
	if !near(a.priorMax, 0.1) || !near(a.policyL1, 0.1) || !near(a.valueMax, 0.3) {
		t.Errorf("got %+v, want the largest probability 0.1, L1 0.1 a position, the largest value 0.3", a)
	}
}

func TestBenchNNUsage(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "nn"},
		{"bench", "nn", "--game", "tictactoe", "--batches", "8,4"},
		{"bench", "nn", "--game", "tictactoe", "--batches", "x"},
		{"bench", "nn", "--game", "tictactoe", "--seconds", "0"},
	} {
		code, _, errOut := runCLI(t, "", args...)
		if code != 2 || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line", args, code, errOut)
		}
	}
}
