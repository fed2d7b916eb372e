//go:build ((linux || freebsd || netbsd) && !android) || windows

package cpu

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/flipzero/flipzero/internal/dlopen"
	"golang.org/x/sys/cpu"
)

// openBLAS is OpenBLAS loaded at run time, through its Fortran interface:
// every argument of sgemm_ is a pointer, which purego passes without cgo
// and without the per-call allocations of its reflective calls.
type openBLAS struct {
	sgemmFn uintptr
	// slots hold the scalars sgemm_ reads through pointers, one slot per
	// call in flight (a sync.Pool would do, but drops blocks at random
	// under the race detector, where the no-allocation tests also run).
	slots [maxConcurrentGemms]gemmSlot

	version, core string
	// choice says who chose the kernels and why.
	choice string
}

// maxConcurrentGemms is how many calls have a preallocated argument
// block: one per core on the largest machines in use; more calls at once
// allocate theirs.
const maxConcurrentGemms = 256

type gemmSlot struct {
	busy atomic.Bool
	gemmArgs
}

type gemmArgs struct {
	transA, transB         byte
	m, n, k, lda, ldb, ldc int32
	alpha, beta            float32
	keep                   [3][]float32
	ptrs                   [13]uintptr
}

// loadOpenBLAS picks OpenBLAS's kernels for this CPU, loads the library
// and limits it to one thread per call: self-play runs one evaluator per
// core and training splits its own work, so OpenBLAS's threads would only
// fight them for the cores.
func loadOpenBLAS(name string) (*openBLAS, error) {
	o := &openBLAS{}
	// The variables set here are for OpenBLAS's constructor only: they are
	// removed again once it has run, so that child processes do not
	// inherit them.
	var set []string
	defer func() {
		for _, v := range set {
			_ = os.Unsetenv(v)
		}
	}()
	want, reason := "", ""
	if user := os.Getenv("OPENBLAS_CORETYPE"); user != "" {
		o.choice = "OPENBLAS_CORETYPE set by the user"
		if ours, why := kernelsFor(); ours != "" && !strings.EqualFold(ours, user) {
			// Said, since a wrong setting is silent and can halve the speed.
			o.choice += fmt.Sprintf("; flipzero would choose %s for this CPU (%s)", ours, why)
		}
	} else {
		// OpenBLAS identifies CPUs by model; on virtual machines whose
		// model name is generic it falls back to SSE3 kernels (a quarter
		// of the speed), so the instruction sets decide here instead.
		want, reason = kernelsFor()
		if want != "" {
			// OpenBLAS's constructor reads the variable when the library
			// loads. Go's os.Setenv reaches the C environment here: purego
			// installs the runtime's C setenv hook even without cgo (the
			// core name read back below checks it took effect).
			if err := os.Setenv("OPENBLAS_CORETYPE", want); err != nil {
				return nil, fmt.Errorf("choose OpenBLAS kernels: %w", err)
			}
			set = append(set, "OPENBLAS_CORETYPE")
			o.choice = "chosen by flipzero: " + reason
		} else {
			o.choice = "chosen by OpenBLAS"
		}
	}
	if os.Getenv("OPENBLAS_NUM_THREADS") == "" {
		// Spares OpenBLAS from starting a thread per core at load that
		// would never get work.
		if os.Setenv("OPENBLAS_NUM_THREADS", "1") == nil {
			set = append(set, "OPENBLAS_NUM_THREADS")
		}
	}
	lib, err := dlopen.Open(name, dlopen.Local)
	if err != nil {
		if dlopen.NotFound(err) {
			return nil, errors.New(name + " not found")
		}
		return nil, fmt.Errorf("load %s: %w", name, err)
	}
	sym := func(sym string) (uintptr, error) {
		p, err := dlopen.Sym(lib, sym)
		if err != nil {
			return 0, fmt.Errorf("look up %s: %w", sym, err)
		}
		return p, nil
	}
	if o.sgemmFn, err = sym("sgemm_"); err != nil {
		return nil, err
	}
	var setThreads func(int32)
	var corename, config func() string
	for _, f := range []struct {
		ptr  any
		name string
	}{{&setThreads, "openblas_set_num_threads"}, {&corename, "openblas_get_corename"}, {&config, "openblas_get_config"}} {
		p, err := sym(f.name)
		if err != nil {
			return nil, err
		}
		purego.RegisterFunc(f.ptr, p)
	}
	setThreads(1)
	o.core = corename()
	o.version = "OpenBLAS"
	if fields := strings.Fields(config()); len(fields) >= 2 && fields[0] == "OpenBLAS" {
		o.version = "OpenBLAS " + fields[1]
	}
	if want != "" && !strings.EqualFold(o.core, want) {
		o.choice = fmt.Sprintf("flipzero asked for %s (%s), OpenBLAS took %s", want, reason, o.core)
	}
	return o, nil
}

// kernelsFor names the OpenBLAS kernels for this CPU's instruction sets
// (only sgemm's speed matters here), or "" to leave the choice to
// OpenBLAS.
func kernelsFor() (core, reason string) {
	x := cpu.X86
	switch {
	case x.HasAVX512F && x.HasAVX512CD && x.HasAVX512BW && x.HasAVX512DQ && x.HasAVX512VL:
		return "SkylakeX", "AVX-512"
	case x.HasAVX2 && x.HasFMA:
		// Also right for AMD Zen: OpenBLAS's Zen target uses these sgemm
		// kernels.
		return "Haswell", "AVX2+FMA"
	}
	return "", ""
}

func (o *openBLAS) describe() string {
	return fmt.Sprintf("%s (%s kernels, %s)", o.version, o.core, o.choice)
}

// sgemm is gemm on OpenBLAS. A row-major C = op(A)×op(B) is the
// column-major Cᵀ = op(B)ᵀ×op(A)ᵀ, so the operands swap places.
func (o *openBLAS) sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if k == 0 || len(a) == 0 || len(b) == 0 {
		gonumGemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	p := o.slot()
	p.transA, p.transB = 'N', 'N'
	if transA {
		p.transA = 'T'
	}
	if transB {
		p.transB = 'T'
	}
	p.m, p.n, p.k = int32(m), int32(n), int32(k)
	p.lda, p.ldb, p.ldc = int32(lda), int32(ldb), int32(ldc)
	p.alpha, p.beta = alpha, beta
	// Holding the matrices in the (heap) block keeps them on the heap,
	// where they do not move, and alive until the call returns; the
	// addresses go to SyscallN as a prepared slice because its variadic
	// form allocates one per call.
	p.keep = [3][]float32{a, b, c}
	p.ptrs = [13]uintptr{
		uintptr(unsafe.Pointer(&p.transB)), uintptr(unsafe.Pointer(&p.transA)),
		uintptr(unsafe.Pointer(&p.n)), uintptr(unsafe.Pointer(&p.m)), uintptr(unsafe.Pointer(&p.k)),
		uintptr(unsafe.Pointer(&p.alpha)),
		uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&p.ldb)),
		uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&p.lda)),
		uintptr(unsafe.Pointer(&p.beta)),
		uintptr(unsafe.Pointer(&c[0])), uintptr(unsafe.Pointer(&p.ldc)),
	}
	purego.SyscallN(o.sgemmFn, p.ptrs[:]...)
	runtime.KeepAlive(p)
	p.keep = [3][]float32{}
	p.busy.Store(false)
}

func (o *openBLAS) slot() *gemmSlot {
	for i := range o.slots {
		if o.slots[i].busy.CompareAndSwap(false, true) {
			return &o.slots[i]
		}
	}
	return new(gemmSlot)
}
