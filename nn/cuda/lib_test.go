package cuda

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/internal/dlopen"
)

func TestOpenFirstNamesEveryCandidate(t *testing.T) {
	_, _, err := openFirst([]string{"libflipzero-absent.so.13", "libflipzero-absent.so.12"})
	if err == nil {
		t.Fatal("opened a library that does not exist")
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "libflipzero-absent.so.13 or libflipzero-absent.so.12") {
		t.Fatalf("error %q is not one line naming both candidates", msg)
	}
}

// TestOpenWithoutGPU checks the error where the driver is missing (off
// Linux, that CUDA is not loaded there); on a machine with a GPU it
// checks the name instead.
func TestOpenWithoutGPU(t *testing.T) {
	d, err := Open()
	if err == nil {
		defer d.Close()
		if !strings.Contains(d.Name(), "CUDA driver") || !strings.Contains(d.Name(), "cuDNN 9.") {
			t.Fatalf("device name %q lacks the driver or cuDNN version", d.Name())
		}
		return
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "cuda: ") {
		t.Fatalf("error %q is not one line starting with cuda:", msg)
	}
	if runtime.GOOS != "linux" {
		if !strings.Contains(msg, "Linux only") {
			t.Fatalf("error %q does not say CUDA runs on Linux only", msg)
		}
		return
	}
	if !strings.Contains(msg, "lib") && !strings.Contains(msg, "GPU") && !strings.Contains(msg, "cuInit") {
		t.Fatalf("error %q names neither a library nor the GPU", msg)
	}
}

// TestSymbolTablesAreCallable registers every function signature against
// a real C function: purego rejects a signature it cannot call at
// registration, and this must not first happen on a GPU machine.
func TestSymbolTablesAreCallable(t *testing.T) {
	libc, err := dlopen.Open("libc.so.6", dlopen.Local)
	if err != nil {
		t.Skipf("no libc.so.6 to bind against: %v", err)
	}
	abs, err := dlopen.Sym(libc, "abs")
	if err != nil {
		t.Fatal(err)
	}
	var drv driverAPI
	var blas cublasAPI
	var dnn cudnnAPI
	for _, tc := range []struct {
		lib  string
		syms []symbol
	}{
		{"driver", drv.symbols()},
		{"cublas", blas.symbols()},
		{"cudnn", dnn.symbols()},
	} {
		if err := bind(tc.lib, func(string) (uintptr, error) { return abs, nil }, tc.syms); err != nil {
			t.Fatalf("%s: %v", tc.lib, err)
		}
	}
	if drv.cuInit == nil || blas.cublasSgemm == nil || dnn.cudnnConvolutionBiasActivationForward == nil {
		t.Fatal("functions left unbound")
	}
}

func TestBindNamesMissingSymbol(t *testing.T) {
	var drv driverAPI
	err := bind("libcuda.so.1", func(name string) (uintptr, error) {
		if name == "cuGraphLaunch" {
			return 0, errors.New("undefined symbol")
		}
		return 1, nil
	}, drv.symbols())
	if err == nil || !strings.Contains(err.Error(), "libcuda.so.1: missing cuGraphLaunch") {
		t.Fatalf("error %v does not name the library and the symbol", err)
	}
}

func TestBindReportsUncallableSignature(t *testing.T) {
	var f func(chan int) int32
	err := bind("libx.so", func(string) (uintptr, error) { return 1, nil }, []symbol{{"weird", &f}})
	if err == nil || !strings.Contains(err.Error(), "weird") {
		t.Fatalf("bad signature gave %v, want an error naming it", err)
	}
}

func TestVersionStrings(t *testing.T) {
	for _, tc := range []struct {
		driver int
		want   string
	}{{13000, "13.0"}, {12040, "12.4"}, {11080, "11.8"}} {
		if got := driverVersionString(tc.driver); got != tc.want {
			t.Errorf("driver %d: %q, want %q", tc.driver, got, tc.want)
		}
	}
	for _, tc := range []struct {
		v, major, minor, patch int
	}{{91400, 9, 14, 0}, {90102, 9, 1, 2}, {8907, 8, 9, 7}} {
		major, minor, patch := cudnnVersion(tc.v)
		if major != tc.major || minor != tc.minor || patch != tc.patch {
			t.Errorf("cuDNN %d: %d.%d.%d, want %d.%d.%d", tc.v, major, minor, patch, tc.major, tc.minor, tc.patch)
		}
	}
}
