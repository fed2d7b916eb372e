package cpu

import (
	"runtime"
	"testing"
)

// kernelSet is a kernel set of this architecture and what the CPU needs
// to run it.
type kernelSet struct {
	arch  directArch
	needs string
}

// forEachFloat32Set runs f in a subtest for each float32 kernel set of
// this architecture (see forEachSet).
func forEachFloat32Set(t *testing.T, f func(t *testing.T, arch directArch)) {
	forEachSet(t, float32Sets, "no direct kernels for "+runtime.GOARCH+": the network convolves by im2row there", f)
}

// forEachInt8Set runs f in a subtest for each int8 kernel set of this
// architecture (see forEachSet).
func forEachInt8Set(t *testing.T, f func(t *testing.T, arch directArch)) {
	forEachSet(t, int8Sets, "no int8 kernels for "+runtime.GOARCH+": the network evaluates in float32 there", f)
}

// forEachSet runs f in a subtest for each of sets, or skips t saying
// none where there are none. A set this CPU cannot run is skipped,
// saying which instructions it lacks, so that a run on a smaller CPU
// shows what it left untested rather than passing silently.
func forEachSet(t *testing.T, sets []kernelSet, none string, f func(t *testing.T, arch directArch)) {
	if len(sets) == 0 {
		t.Skip(none)
	}
	for _, set := range sets {
		t.Run(set.arch.name, func(t *testing.T) {
			set.skipUnlessRun(t)
			f(t, set.arch)
		})
	}
}

// skipUnlessRun skips t, saying which instructions the CPU lacks, where
// it does not run the set.
func (set kernelSet) skipUnlessRun(t *testing.T) {
	t.Helper()
	for _, a := range append(append(directArchs(), directInt8Archs()...), directWinogradArchs()...) {
		if a.name == set.arch.name {
			return
		}
	}
	t.Skipf("this CPU has no %s: the %s kernels are not run here", set.needs, set.arch.name)
}
