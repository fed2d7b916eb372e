package nntest

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/cpu"
)

// recorder is a testing.TB that keeps failures instead of failing the
// test, so that the suite itself can be checked to fail.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	failed []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	r.failed = append(r.failed, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); runtime.Goexit() }
func (r *recorder) Fatal(args ...any)                 { r.Errorf("%s", fmt.Sprint(args...)); runtime.Goexit() }
func (r *recorder) Error(args ...any)                 { r.Errorf("%s", fmt.Sprint(args...)) }

// check runs one part of the suite on a recorder and returns its
// failures.
func check(t *testing.T, part func(testing.TB)) []string {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		part(r)
	}()
	<-done
	return r.failed
}

// skewed is the CPU backend with one thing wrong: its logits off by one
// part in ten thousand, or its learning rate one percent high.
type skewed struct {
	nn.Backend
	logits, rate bool
}

type skewedInference struct{ nn.Inference }

func (s skewedInference) Forward(in []float32, n int) ([]float32, []float32, error) {
	logits, wdl, err := s.Inference.Forward(in, n)
	out := append([]float32(nil), logits...)
	for i := range out {
		out[i] *= 1.0005
	}
	return out, wdl, err
}

func (s skewed) NewInference(f *nn.Folded, maxBatch int) (nn.Inference, error) {
	inf, err := s.Backend.NewInference(f, maxBatch)
	if err != nil || !s.logits {
		return inf, err
	}
	return skewedInference{inf}, nil
}

func (s skewed) NewTraining(st nn.TrainingState) (nn.Training, error) {
	if s.rate {
		st.Config.LearningRate *= 1.5
	}
	return s.Backend.NewTraining(st)
}

// TestSuiteCatchesWrongBackends: the CPU backend passes, and each
// skewed one fails the part of the suite that checks what it skews.
func TestSuiteCatchesWrongBackends(t *testing.T) {
	c := Cases(true)[0]
	o := Options{}.withDefaults()
	for _, tc := range []struct {
		name       string
		b          nn.Backend
		part       func(testing.TB, nn.Backend)
		wantFailed bool
	}{
		{"cpu inference", cpu.Backend(), func(t testing.TB, b nn.Backend) { Inference(t, b, c, o) }, false},
		{"cpu training", cpu.Backend(), func(t testing.TB, b nn.Backend) { Training(t, b, c, o) }, false},
		{"cpu resume", cpu.Backend(), func(t testing.TB, b nn.Backend) { Resume(t, b, c, o) }, false},
		{"skewed logits", skewed{Backend: cpu.Backend(), logits: true}, func(t testing.TB, b nn.Backend) { Inference(t, b, c, o) }, true},
		{"skewed rate, training", skewed{Backend: cpu.Backend(), rate: true}, func(t testing.TB, b nn.Backend) { Training(t, b, c, o) }, true},
		{"skewed rate, resume", skewed{Backend: cpu.Backend(), rate: true}, func(t testing.TB, b nn.Backend) { Resume(t, b, c, o) }, true},
	} {
		failed := check(t, func(r testing.TB) { tc.part(r, tc.b) })
		if (len(failed) > 0) != tc.wantFailed {
			t.Errorf("%s: failures %q, want failures: %v", tc.name, failed, tc.wantFailed)
		}
	}
}
