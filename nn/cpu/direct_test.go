package cpu

import (
	"bytes"
	"fmt"
	"github.com/flipzero/flipzero/nn"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestKernelsGenerated: each kernels' file is what its generator writes.
func TestKernelsGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the generators")
	}
	for _, c := range []struct{ generator, file string }{
		{"gendirect", "direct_amd64.s"},
		{"genneon", "direct_arm64.s"},
	} {
		out := filepath.Join(t.TempDir(), c.file)
		cmd := exec.Command("go", "run", "./internal/"+c.generator, "-o", out)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go run ./internal/%s: %v\n%s", c.generator, err, msg)
		}
		want, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what nn/cpu/internal/%s writes: run go generate ./nn/cpu", c.file, c.generator)
		}
	}
}

// TestDirectMatchesIm2row runs the tower both ways on the same
// positions, with each kernel set the CPU has: widths that fill each
// number of channel groups, part of one, and more than one tile's
// channels, with batches that end in a partial tile. Each evaluator runs
// a full batch, then a smaller one: a border left dirty by the first
// would show in the second. -short leaves out the widest towers and the
// largest batch, for emulated CPUs (qemu), keeping a width of each
// number of groups of every set.
func TestDirectMatchesIm2row(t *testing.T) {
	filterCounts, batches := []int{8, 12, 16, 24, 32, 40, 64, 80, 128}, []int{1, 5, 32}
	if testing.Short() {
		filterCounts, batches = []int{8, 12, 24, 40, 64}, []int{1, 5}
	}
	forEachFloat32Set(t, func(t *testing.T, arch directArch) {
		for _, filters := range filterCounts {
			for _, batch := range batches {
				t.Run(fmt.Sprintf("filters%d/batch%d", filters, batch), func(t *testing.T) {
					testDirectMatchesIm2row(t, arch, filters, batch)
				})
			}
		}
	})
}

func testDirectMatchesIm2row(t *testing.T, arch directArch, filters, batch int) {
	cfg := nn.DefaultConfig(fakeYinsh)
	cfg.Filters, cfg.Blocks, cfg.PolicyFilters, cfg.ValueFilters = filters, 2, 3, 2
	net, err := nn.New(fakeYinsh, cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	perturbBatchNorm(net, 2)
	f := net.Fold()
	ref, err := newEvaluator(f, batch, arch, false)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := newEvaluator(f, batch, arch, true)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(batch), 9))
	size := ref.m.shape.planes * ref.m.shape.cells()
	input := make([]float32, batch*size)
	for _, count := range []int{batch, (batch + 1) / 2} {
		for i := range input[:count*size] {
			input[i] = float32(rng.IntN(2))
		}
		p0, v0 := ref.tower(input, count)
		p1, v1 := dir.towerDirect(input, count)
		compareOutputs(t, fmt.Sprintf("batch of %d: policy head", count), p0, p1)
		compareOutputs(t, fmt.Sprintf("batch of %d: value head", count), v0, v1)
	}
}

func compareOutputs(t *testing.T, what string, want, got []float32) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	nonzero := 0
	for i := range want {
		if d := math.Abs(float64(want[i] - got[i])); d > 1e-4*max(1, math.Abs(float64(want[i]))) {
			t.Fatalf("%s: value %d is %v, im2row gives %v", what, i, got[i], want[i])
		}
		if want[i] != 0 {
			nonzero++
		}
	}
	if nonzero < len(want)/4 {
		t.Fatalf("%s: only %d of %d values nonzero: the comparison proves little", what, nonzero, len(want))
	}
}
