// Package device is the registry of compute backends: each by the name
// the command line's --device takes, what it computes on, and how it
// starts — the one place a backend is chosen, so that the loop, the
// arena, the engine and the workers never know which they have.
package device

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/cpu"
	"github.com/flipzero/flipzero/nn/cuda"
)

// Entry is a registered backend.
type Entry struct {
	// Name is what --device takes.
	Name string
	// About says what it computes on, for a flag's help, and Device names
	// that in a word, for a note saying it did not start ("no GPU").
	About, Device string
	// Open starts it, or says in one line what is missing.
	Open func() (nn.Backend, error)
	// ByNameOnly keeps auto from trying it: a mode that trades agreement
	// with float32 for speed is the user's choice, never a fallback.
	ByNameOnly bool
}

// Registered lists the backends in the order "auto" tries them: the
// fastest first, the CPU, which always starts, last; those auto never
// tries (other precisions) after the one they vary. A backend runs every
// architecture option (nn/nntest checks each on every backend present).
func Registered() []Entry {
	return []Entry{
		{Name: "cuda", About: "an NVIDIA GPU, when CUDA's driver, cuBLAS and cuDNN load and find one", Device: "GPU", Open: openCUDA(fp32)},
		{Name: "cuda-tf32", About: "the GPU multiplying float32 in TF32 on its tensor cores: faster, outputs within " + strconv.FormatFloat(cuda.TF32Tolerance, 'g', -1, 64) + " of the largest from float32's", Device: "GPU", Open: openCUDA(tf32), ByNameOnly: true},
		{Name: "cuda-fp16", About: "the GPU computing the tower in float16 on its tensor cores (float32 sums) and the rest in TF32: fastest, outputs within " + strconv.FormatFloat(cuda.FP16Tolerance, 'g', -1, 64) + " of the largest from float32's", Device: "GPU", Open: openCUDA(fp16), ByNameOnly: true},
		{Name: "cpu", About: "the CPU's cores, evaluating in reduced precision where the CPU has it: bfloat16 on AMX's tiles, else bytes (int8) with AVX-512 VNNI, else bfloat16 with AVX-512 BF16, else (without AVX-512) bytes with AVX-VNNI, else with AVX2 (FLIPZERO_CONV=avx2 asks for float32); training in float32, in mixed precision on AMX", Device: "CPU", Open: func() (nn.Backend, error) { return cpu.FastBackend(), nil }},
		{Name: "cpu-fp32", About: "the CPU's cores in float32 throughout", Device: "CPU", Open: func() (nn.Backend, error) { return cpu.Backend(), nil }, ByNameOnly: true},
	}
}

// precision is what a GPU entry multiplies in.
type precision int

const (
	fp32 precision = iota
	tf32
	fp16
)

// openCUDA starts the first GPU in the given precision.
func openCUDA(p precision) func() (nn.Backend, error) {
	return func() (nn.Backend, error) {
		d, err := cuda.Open()
		if err != nil {
			return nil, err
		}
		d.SetTF32(p == tf32)
		if p == fp16 {
			d.SetFP16(true)
		}
		return cuda.GPU{D: d}, nil
	}
}

// Choices are the names Open takes, as a flag's help lists them: "auto,
// cuda, cuda-tf32, cpu or cpu-fp32".
func Choices() string {
	names := []string{"auto"}
	for _, e := range Registered() {
		names = append(names, e.Name)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Open returns the backend named, or an error naming what is missing when
// it cannot start; "auto" is the first registered backend that starts
// (of those auto may try), with in note why each before it did not ("no
// GPU: …").
func Open(name string) (backend nn.Backend, note string, err error) {
	return open(Registered(), name)
}

func open(entries []Entry, name string) (backend nn.Backend, note string, err error) {
	var notes []string
	for _, e := range entries {
		if name != e.Name && (name != "auto" || e.ByNameOnly) {
			continue
		}
		b, err := e.Open()
		if err == nil {
			return b, strings.Join(notes, "; "), nil
		}
		if name == e.Name {
			return nil, "", fmt.Errorf("--device %s: %w", name, err)
		}
		notes = append(notes, "no "+e.Device+": "+err.Error())
	}
	return nil, "", fmt.Errorf("--device %q: want %s", name, Choices())
}

// Close releases what a backend's object holds on its device (GPU memory),
// if it holds anything.
func Close(x any) error {
	if c, ok := x.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
