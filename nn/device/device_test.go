package device

import (
	"errors"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/nn"
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
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), gpuErr.Error()) {
		t.Errorf("cuda without a GPU: error %v, want one line saying why (%v)", err, gpuErr)
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

// fakeBackend is a backend that computes nothing, known by its name.
type fakeBackend struct {
	nn.Backend
	name string
}

func (f fakeBackend) Name() string { return f.name }

// TestAutoSkipsByNameOnly: auto tries, in order, only the backends it may
// fall back to, and says why each before the one chosen did not start;
// a by-name-only backend starts when named.
func TestAutoSkipsByNameOnly(t *testing.T) {
	var tried []string
	entry := func(name string, fails, byName bool) Entry {
		return Entry{Name: name, Device: strings.ToUpper(name), ByNameOnly: byName, Open: func() (nn.Backend, error) {
			tried = append(tried, name)
			if fails {
				return nil, errors.New(name + " missing")
			}
			return fakeBackend{name: name}, nil
		}}
	}
	entries := []Entry{entry("gpu", true, false), entry("gpu-fast", false, true), entry("cpu", false, false)}
	for _, tc := range []struct {
		name, want, note, tried, err string
	}{
		{"auto", "cpu", "no GPU: gpu missing", "gpu cpu", ""},
		{"gpu-fast", "gpu-fast", "", "gpu-fast", ""},
		{"gpu", "", "", "gpu", "--device gpu: gpu missing"},
		{"tpu", "", "", "", `--device "tpu"`},
	} {
		tried = nil
		b, note, err := open(entries, tc.name)
		got := ""
		if b != nil {
			got = b.Name()
		}
		if got != tc.want || note != tc.note || strings.Join(tried, " ") != tc.tried ||
			(err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("open %s: %q, note %q, tried %v, error %v; want %q, note %q, tried %s, error %q",
				tc.name, got, note, tried, err, tc.want, tc.note, tc.tried, tc.err)
		}
	}
}
