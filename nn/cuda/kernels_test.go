package cuda

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestKernelsPTXUpToDate compiles kernels.cu with the go:generate line's
// command and wants kernels.ptx, when the clang at hand is the version
// that wrote it; with another clang the source must still compile. CI
// installs clang, so there the check always runs.
func TestKernelsPTXUpToDate(t *testing.T) {
	clang, err := exec.LookPath("clang")
	if err != nil {
		if os.Getenv("FLIPZERO_REQUIRE_CLANG") != "" {
			t.Fatal("no clang on PATH, and FLIPZERO_REQUIRE_CLANG is set")
		}
		t.Skip("no clang on PATH to compile kernels.cu with")
	}
	src, err := os.ReadFile("kernels.go")
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`(?m)^//go:generate clang (.*) -o kernels\.ptx kernels\.cu$`).FindSubmatch(src)
	if line == nil {
		t.Fatal("kernels.go has no go:generate line compiling kernels.cu with clang")
	}
	out := filepath.Join(t.TempDir(), "kernels.ptx")
	args := append(strings.Fields(string(line[1])), "-o", out, "kernels.cu")
	if msg, err := exec.Command(clang, args...).CombinedOutput(); err != nil {
		t.Fatalf("clang %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	version, _ := exec.Command(clang, "--version").Output()
	m := regexp.MustCompile(`clang version (\d+)`).FindSubmatch(version)
	if m == nil {
		t.Fatalf("clang --version says %q", version)
	}
	if major, _ := strconv.Atoi(string(m[1])); major != ptxClang {
		t.Skipf("kernels.cu compiles; clang %d writes other PTX than clang %d, which wrote kernels.ptx", major, ptxClang)
	}
	if !bytes.Equal(got, []byte(kernelsPTX)) {
		t.Error("kernels.ptx differs from what kernels.cu compiles to: run go generate ./nn/cuda")
	}
	for _, k := range (&Device{}).kernelNames() {
		if !strings.Contains(kernelsPTX, ".entry "+k.name+"(") {
			t.Errorf("kernels.ptx has no kernel %s", k.name)
		}
	}
}
