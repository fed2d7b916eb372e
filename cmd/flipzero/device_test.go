package main

import (
	"strings"
	"testing"

	"github.com/flipzero/flipzero/nn/cpu"
)

// TestDeviceLine: a few words by default, the libraries and the reason
// the GPU did not start with --verbose.
func TestDeviceLine(t *testing.T) {
	why := "no GPU: cuda: cannot load libcuda.so.1: libcuda.so.1: cannot open shared object file: No such file or directory"
	short := deviceLine(cpu.Backend(), why, false)
	if !strings.HasPrefix(short, "flipzero: device cpu") || strings.Contains(short, "libcuda") || !strings.HasSuffix(short, "no GPU (--verbose says why)") || len(short) > 80 {
		t.Errorf("short line %q", short)
	}
	long := deviceLine(cpu.Backend(), why, true)
	if !strings.Contains(long, cpu.Backend().Name()) || !strings.HasSuffix(long, why) {
		t.Errorf("verbose line %q", long)
	}
	if got := deviceLine(cpu.Backend(), "", false); strings.Contains(got, ";") {
		t.Errorf("a line with nothing to explain: %q", got)
	}
}

// TestDeviceHelp: the help says what auto tries, in order, and what each
// backend only started by name is.
func TestDeviceHelp(t *testing.T) {
	help := deviceHelp()
	auto, _, _ := strings.Cut(help, "; cuda-tf32: ")
	if !strings.Contains(auto, "(auto: an NVIDIA GPU") || !strings.Contains(auto, "else the CPU's cores") || strings.Contains(auto, "TF32") {
		t.Errorf("help %q: auto's part %q should list the GPU then the CPU and not TF32", help, auto)
	}
	if !strings.Contains(help, "; cuda-tf32: the GPU multiplying float32 in TF32") {
		t.Errorf("help %q does not say what cuda-tf32 is", help)
	}
}
