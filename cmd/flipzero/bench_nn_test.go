package main

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestBenchNN(t *testing.T) {
	code, out, errOut := runCLI(t, "", "bench", "nn", "--game", "tictactoe", "--seconds", "0.05", "--batches", "1,4", "--train-batch", "8")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(l, "note: ") {
			lines = append(lines, l)
		}
	}
	want := []*regexp.Regexp{
		regexp.MustCompile(`^tictactoe network: .* parameters, .* MFLOP per position; convolutions .*; BLAS `),
		regexp.MustCompile(`^matrix multiply peak: [0-9.]+ GFLOP/s`),
		regexp.MustCompile(`^batch +1: +[0-9]+ positions/s +[0-9.]+ GFLOP/s +[0-9.]+% of peak$`),
		regexp.MustCompile(`^batch +4: +[0-9]+ positions/s +[0-9.]+ GFLOP/s +[0-9.]+% of peak$`),
		regexp.MustCompile(`^training batch 8: [0-9.]+ samples/s`),
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
