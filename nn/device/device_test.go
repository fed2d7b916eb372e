package device

import (
	"strings"
	"testing"

	"github.com/flipzero/flipzero/nn/cuda"
)

func TestOpen(t *testing.T) {
	if b, note, err := Open("cpu"); err != nil || note != "" || !strings.HasPrefix(b.Name(), "cpu") {
		t.Errorf("cpu: %v, %q, %v", b, note, err)
	}
	if _, _, err := Open("tpu"); err == nil || !strings.Contains(err.Error(), "tpu") {
		t.Errorf("tpu: error %v, want one naming it", err)
	}
	d, gpuErr := cuda.Open()
	if gpuErr == nil {
		d.Close()
		b, _, err := Open("auto")
		if err != nil || !strings.HasPrefix(b.Name(), "cuda") {
			t.Errorf("auto with a GPU: %v, %v", b, err)
		}
		return
	}
	// No GPU here: auto falls back to the CPU and says why; cuda refuses
	// in one line naming what is missing.
	b, note, err := Open("auto")
	if err != nil || !strings.HasPrefix(b.Name(), "cpu") || !strings.Contains(note, gpuErr.Error()) {
		t.Errorf("auto without a GPU: %v, %q, %v; want the CPU and why (%v)", b, note, err, gpuErr)
	}
	_, _, err = Open("cuda")
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "lib") {
		t.Errorf("cuda without a GPU: error %v, want one line naming the library", err)
	}
}

// TestChoices: the help names every registered backend and auto.
func TestChoices(t *testing.T) {
	got := Choices()
	for _, e := range Registered() {
		if !strings.Contains(got, e.Name) {
			t.Errorf("choices %q leave out %s", got, e.Name)
		}
	}
	if !strings.HasPrefix(got, "auto, ") {
		t.Errorf("choices %q, want auto first", got)
	}
}
