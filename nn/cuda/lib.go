package cuda

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/flipzero/flipzero/internal/dlopen"
)

// The libraries are loaded at run time so that one static binary
// (CGO_ENABLED=0) runs everywhere and uses the GPU where it finds one.
var (
	driverLibs = []string{"libcuda.so.1"}
	cublasLibs = []string{"libcublas.so.13", "libcublas.so.12"}
	// cuDNN 9's libcudnn.so.9 dispatches to its sub-libraries; they are
	// also tried for a symbol the front library does not export.
	cudnnLibs    = []string{"libcudnn.so.9"}
	cudnnSubLibs = []string{"libcudnn_cnn.so.9", "libcudnn_ops.so.9", "libcudnn_graph.so.9"}
)

// Minimum versions: CUDA graphs instantiated with flags need a 12.x
// driver; the legacy cuDNN calls used here are those of cuDNN 9.
const (
	minDriverVersion = 12000
	minCublasMajor   = 12
	cudnnMajor       = 9
)

// symbol binds one C function to a Go function variable.
type symbol struct {
	name string
	fptr any
}

// openFirst opens the first library of names that loads; the error names
// every candidate.
func openFirst(names []string) (handle uintptr, name string, err error) {
	var reasons []string
	for _, n := range names {
		h, err := dlopen.Open(n, dlopen.Global)
		if err == nil {
			return h, n, nil
		}
		reasons = append(reasons, oneLine(err.Error()))
	}
	return 0, "", fmt.Errorf("cannot load %s: %s", strings.Join(names, " or "), strings.Join(reasons, "; "))
}

// bind looks every symbol up with lookup and makes its Go function.
// purego panics on a signature it cannot call; that is a programming
// error caught by the tests, but it is still turned into an error here so
// that Open never panics.
func bind(lib string, lookup func(name string) (uintptr, error), syms []symbol) (err error) {
	for _, s := range syms {
		addr, lerr := lookup(s.name)
		if lerr != nil {
			return fmt.Errorf("%s: missing %s (library too old?): %s", lib, s.name, oneLine(lerr.Error()))
		}
		if addr == 0 {
			return fmt.Errorf("%s: missing %s", lib, s.name)
		}
		if err := register(s, addr); err != nil {
			return fmt.Errorf("%s: %w", lib, err)
		}
	}
	return nil
}

func register(s symbol, addr uintptr) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cannot call %s: %v", s.name, r)
		}
	}()
	purego.RegisterFunc(s.fptr, addr)
	return nil
}

// lookupIn finds a symbol in the first library that has it.
func lookupIn(handles ...uintptr) func(string) (uintptr, error) {
	return func(name string) (uintptr, error) {
		var errs []error
		for _, h := range handles {
			if h == 0 {
				continue
			}
			addr, err := dlopen.Sym(h, name)
			if err == nil && addr != 0 {
				return addr, nil
			}
			errs = append(errs, err)
		}
		if len(errs) == 0 {
			return 0, errors.New("no library to search")
		}
		return 0, errs[0]
	}
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// goString copies a NUL-terminated C string.
func goString(p *byte) string {
	if p == nil {
		return ""
	}
	var b []byte
	for i := 0; i < 4096; i++ {
		c := *(*byte)(unsafe.Add(unsafe.Pointer(p), i))
		if c == 0 {
			break
		}
		b = append(b, c)
	}
	return string(b)
}

// Status codes and enumerations of the C APIs, as the headers define them.
const (
	cudaSuccess = 0

	cuStreamNonBlocking         = 1
	cuStreamCaptureModeThreadLo = 1
	cuMemHostAllocPortable      = 1
	cuDeviceAttrCCMajor         = 75
	cuDeviceAttrCCMinor         = 76

	cublasOpN               = 0
	cublasDefaultMath       = 0
	cublasTF32TensorOpMath  = 3
	cublasPointerModeHost   = 0
	cublasPointerModeDevice = 1
	libPropMajor            = 0
	libPropMinor            = 1
	libPropPatch            = 2

	cudnnTensorNCHW        = 0
	cudnnTensorNHWC        = 1
	cudnnDataFloat         = 0
	cudnnDataHalf          = 2
	cudnnTensorOpMath      = 1
	cudnnCrossCorrelation  = 1
	cudnnDefaultMath       = 0
	cudnnFMAMath           = 3
	cudnnActivationReLU    = 1
	cudnnNotPropagateNaN   = 0
	cudnnSoftmaxAccurate   = 1
	cudnnSoftmaxLog        = 2
	cudnnBatchNormSpatial  = 1
	cublasOpT              = 1
	cudnnSoftmaxModeInst   = 0
	cudnnFwdAlgoCount      = 8
	cudnnFwdImplicitPrecmp = 1
)

// driverAPI is the part of the CUDA driver API used here.
type driverAPI struct {
	cuInit                      func(flags uint32) int32
	cuDriverGetVersion          func(v *int32) int32
	cuDeviceGetCount            func(n *int32) int32
	cuDeviceGet                 func(dev *int32, ordinal int32) int32
	cuDeviceGetName             func(name *byte, size int32, dev int32) int32
	cuDeviceGetAttribute        func(v *int32, attr int32, dev int32) int32
	cuDevicePrimaryCtxRetain    func(ctx *uintptr, dev int32) int32
	cuDevicePrimaryCtxRelease   func(dev int32) int32
	cuCtxSetCurrent             func(ctx uintptr) int32
	cuMemAlloc                  func(p *uintptr, bytes uintptr) int32
	cuMemFree                   func(p uintptr) int32
	cuMemHostAlloc              func(p *unsafe.Pointer, bytes uintptr, flags uint32) int32
	cuMemFreeHost               func(p unsafe.Pointer) int32
	cuMemcpyHtoDAsync           func(dst uintptr, src unsafe.Pointer, bytes uintptr, stream uintptr) int32
	cuMemcpyDtoHAsync           func(dst unsafe.Pointer, src uintptr, bytes uintptr, stream uintptr) int32
	cuMemcpyHtoD                func(dst uintptr, src unsafe.Pointer, bytes uintptr) int32
	cuMemsetD32Async            func(dst uintptr, v uint32, n uintptr, stream uintptr) int32
	cuStreamCreate              func(s *uintptr, flags uint32) int32
	cuStreamSynchronize         func(s uintptr) int32
	cuStreamDestroy             func(s uintptr) int32
	cuStreamBeginCapture        func(s uintptr, mode int32) int32
	cuStreamEndCapture          func(s uintptr, graph *uintptr) int32
	cuGraphInstantiateWithFlags func(exec *uintptr, graph uintptr, flags uint64) int32
	cuGraphLaunch               func(exec uintptr, stream uintptr) int32
	cuGraphExecDestroy          func(exec uintptr) int32
	cuGraphDestroy              func(graph uintptr) int32
	cuGetErrorName              func(code int32, s **byte) int32
	cuModuleLoadData            func(m *uintptr, image *byte) int32
	cuModuleGetFunction         func(f *uintptr, m uintptr, name *byte) int32
	cuModuleUnload              func(m uintptr) int32
	cuMemcpyDtoH                func(dst unsafe.Pointer, src uintptr, bytes uintptr) int32
	cuMemcpyDtoDAsync           func(dst, src uintptr, bytes uintptr, stream uintptr) int32
	cuLaunchKernel              func(f uintptr, gx, gy, gz, bx, by, bz, shared uint32, stream uintptr, params *unsafe.Pointer, extra *unsafe.Pointer) int32
}

func (f *driverAPI) symbols() []symbol {
	return []symbol{
		{"cuInit", &f.cuInit},
		{"cuDriverGetVersion", &f.cuDriverGetVersion},
		{"cuDeviceGetCount", &f.cuDeviceGetCount},
		{"cuDeviceGet", &f.cuDeviceGet},
		{"cuDeviceGetName", &f.cuDeviceGetName},
		{"cuDeviceGetAttribute", &f.cuDeviceGetAttribute},
		{"cuDevicePrimaryCtxRetain", &f.cuDevicePrimaryCtxRetain},
		{"cuDevicePrimaryCtxRelease_v2", &f.cuDevicePrimaryCtxRelease},
		{"cuCtxSetCurrent", &f.cuCtxSetCurrent},
		{"cuMemAlloc_v2", &f.cuMemAlloc},
		{"cuMemFree_v2", &f.cuMemFree},
		{"cuMemHostAlloc", &f.cuMemHostAlloc},
		{"cuMemFreeHost", &f.cuMemFreeHost},
		{"cuMemcpyHtoDAsync_v2", &f.cuMemcpyHtoDAsync},
		{"cuMemcpyDtoHAsync_v2", &f.cuMemcpyDtoHAsync},
		{"cuMemcpyHtoD_v2", &f.cuMemcpyHtoD},
		{"cuMemsetD32Async", &f.cuMemsetD32Async},
		{"cuStreamCreate", &f.cuStreamCreate},
		{"cuStreamSynchronize", &f.cuStreamSynchronize},
		{"cuStreamDestroy_v2", &f.cuStreamDestroy},
		{"cuStreamBeginCapture_v2", &f.cuStreamBeginCapture},
		{"cuStreamEndCapture", &f.cuStreamEndCapture},
		{"cuGraphInstantiateWithFlags", &f.cuGraphInstantiateWithFlags},
		{"cuGraphLaunch", &f.cuGraphLaunch},
		{"cuGraphExecDestroy", &f.cuGraphExecDestroy},
		{"cuGraphDestroy", &f.cuGraphDestroy},
		{"cuGetErrorName", &f.cuGetErrorName},
		{"cuModuleLoadData", &f.cuModuleLoadData},
		{"cuModuleGetFunction", &f.cuModuleGetFunction},
		{"cuModuleUnload", &f.cuModuleUnload},
		{"cuLaunchKernel", &f.cuLaunchKernel},
		{"cuMemcpyDtoH_v2", &f.cuMemcpyDtoH},
		{"cuMemcpyDtoDAsync_v2", &f.cuMemcpyDtoDAsync},
	}
}

// cublasAPI is the part of cuBLAS used here.
type cublasAPI struct {
	cublasCreate       func(h *uintptr) int32
	cublasDestroy      func(h uintptr) int32
	cublasSetStream    func(h uintptr, stream uintptr) int32
	cublasSetWorkspace func(h uintptr, ws uintptr, bytes uintptr) int32
	cublasSetMathMode  func(h uintptr, mode int32) int32
	cublasGetProperty  func(prop int32, v *int32) int32
	// cublasSdot and cublasSasum write their result to GPU memory: the
	// trainer sets cublasPointerModeDevice around them, so nothing waits.
	cublasSdot  func(h uintptr, n int32, x uintptr, incx int32, y uintptr, incy int32, result uintptr) int32
	cublasSgemm func(h uintptr, transa, transb int32, m, n, k int32, alpha *float32, a uintptr, lda int32, b uintptr, ldb int32, beta *float32, c uintptr, ldc int32) int32
	cublasSasum func(h uintptr, n int32, x uintptr, incx int32, result uintptr) int32
	// cublasSetPointerMode says where scalars are: the host's memory (the
	// default, as the GEMMs' alpha and beta are) or the GPU's.
	cublasSetPointerMode func(h uintptr, mode int32) int32
	// cublasSgemmStridedBatched is batch SGEMMs, the i-th on A, B and C
	// advanced by i times their strides (in floats).
	cublasSgemmStridedBatched func(h uintptr, transa, transb int32, m, n, k int32, alpha *float32, a uintptr, lda int32, strideA int64,
		b uintptr, ldb int32, strideB int64, beta *float32, c uintptr, ldc int32, strideC int64, batch int32) int32
}

func (f *cublasAPI) symbols() []symbol {
	return []symbol{
		{"cublasCreate_v2", &f.cublasCreate},
		{"cublasDestroy_v2", &f.cublasDestroy},
		{"cublasSetStream_v2", &f.cublasSetStream},
		{"cublasSetWorkspace_v2", &f.cublasSetWorkspace},
		{"cublasSetMathMode", &f.cublasSetMathMode},
		{"cublasGetProperty", &f.cublasGetProperty},
		{"cublasSgemm_v2", &f.cublasSgemm},
		{"cublasSdot_v2", &f.cublasSdot},
		{"cublasSasum_v2", &f.cublasSasum},
		{"cublasSetPointerMode_v2", &f.cublasSetPointerMode},
		{"cublasSgemmStridedBatched", &f.cublasSgemmStridedBatched},
	}
}

// convFwdPerf is cudnnConvolutionFwdAlgoPerf_t.
type convFwdPerf struct {
	Algo        int32
	Status      int32
	Time        float32
	_           int32
	Memory      uint64
	Determinism int32
	MathType    int32
	Reserved    [3]int32
	_           int32
}

// cudnnAPI is the part of cuDNN's legacy API used here.
type cudnnAPI struct {
	cudnnGetVersion                                func() uintptr
	cudnnGetErrorString                            func(status int32) *byte
	cudnnCreate                                    func(h *uintptr) int32
	cudnnDestroy                                   func(h uintptr) int32
	cudnnSetStream                                 func(h uintptr, stream uintptr) int32
	cudnnCreateTensorDescriptor                    func(d *uintptr) int32
	cudnnSetTensor4dDescriptor                     func(d uintptr, format, dtype int32, n, c, h, w int32) int32
	cudnnDestroyTensorDescriptor                   func(d uintptr) int32
	cudnnCreateFilterDescriptor                    func(d *uintptr) int32
	cudnnSetFilter4dDescriptor                     func(d uintptr, dtype, format int32, k, c, h, w int32) int32
	cudnnDestroyFilterDescriptor                   func(d uintptr) int32
	cudnnCreateConvolutionDescriptor               func(d *uintptr) int32
	cudnnSetConvolution2dDescriptor                func(d uintptr, padH, padW, u, v, dilH, dilW, mode, compute int32) int32
	cudnnSetConvolutionMathType                    func(d uintptr, math int32) int32
	cudnnDestroyConvolutionDescriptor              func(d uintptr) int32
	cudnnCreateActivationDescriptor                func(d *uintptr) int32
	cudnnSetActivationDescriptor                   func(d uintptr, mode, nanOpt int32, coef float64) int32
	cudnnDestroyActivationDescriptor               func(d uintptr) int32
	cudnnFindConvolutionForwardAlgorithm           func(h, x, w, conv, y uintptr, requested int32, returned *int32, perf *convFwdPerf) int32
	cudnnGetConvolutionForwardWorkspaceSize        func(h, x, w, conv, y uintptr, algo int32, bytes *uintptr) int32
	cudnnConvolutionBiasActivationForward          func(h uintptr, alpha1 *float32, xd, x, wd, w, conv uintptr, algo int32, ws, wsBytes uintptr, alpha2 *float32, zd, z, bd, b, act, yd, y uintptr) int32
	cudnnAddTensor                                 func(h uintptr, alpha *float32, ad, a uintptr, beta *float32, cd, c uintptr) int32
	cudnnActivationForward                         func(h, act uintptr, alpha *float32, xd, x uintptr, beta *float32, yd, y uintptr) int32
	cudnnConvolutionForward                        func(h uintptr, alpha *float32, xd, x, wd, w, conv uintptr, algo int32, ws, wsBytes uintptr, beta *float32, yd, y uintptr) int32
	cudnnFindConvolutionBackwardDataAlgorithm      func(h, w, dy, conv, dx uintptr, requested int32, returned *int32, perf *convFwdPerf) int32
	cudnnGetConvolutionBackwardDataWorkspaceSize   func(h, w, dy, conv, dx uintptr, algo int32, bytes *uintptr) int32
	cudnnConvolutionBackwardData                   func(h uintptr, alpha *float32, wd, w, dyd, dy, conv uintptr, algo int32, ws, wsBytes uintptr, beta *float32, dxd, dx uintptr) int32
	cudnnFindConvolutionBackwardFilterAlgorithm    func(h, x, dy, conv, dw uintptr, requested int32, returned *int32, perf *convFwdPerf) int32
	cudnnGetConvolutionBackwardFilterWorkspaceSize func(h, x, dy, conv, dw uintptr, algo int32, bytes *uintptr) int32
	cudnnConvolutionBackwardFilter                 func(h uintptr, alpha *float32, xd, x, dyd, dy, conv uintptr, algo int32, ws, wsBytes uintptr, beta *float32, dwd, dw uintptr) int32
	cudnnBatchNormalizationForwardTraining         func(h uintptr, mode int32, alpha, beta *float32, xd, x, yd, y, bnd, scale, bias uintptr, factor float64, runMean, runVar uintptr, eps float64, saveMean, saveInvVar uintptr) int32
	cudnnBatchNormalizationBackward                func(h uintptr, mode int32, alphaData, betaData, alphaParam, betaParam *float32, xd, x, dyd, dy, dxd, dx, bnd, scale, dScale, dBias uintptr, eps float64, saveMean, saveInvVar uintptr) int32
	cudnnActivationBackward                        func(h, act uintptr, alpha *float32, yd, y, dyd, dy, xd, x uintptr, beta *float32, dxd, dx uintptr) int32
	cudnnSoftmaxForward                            func(h uintptr, algo, mode int32, alpha *float32, xd, x uintptr, beta *float32, yd, y uintptr) int32
	cudnnTransformTensor                           func(h uintptr, alpha *float32, xd, x uintptr, beta *float32, yd, y uintptr) int32
}

func (f *cudnnAPI) symbols() []symbol {
	return []symbol{
		{"cudnnGetVersion", &f.cudnnGetVersion},
		{"cudnnGetErrorString", &f.cudnnGetErrorString},
		{"cudnnCreate", &f.cudnnCreate},
		{"cudnnDestroy", &f.cudnnDestroy},
		{"cudnnSetStream", &f.cudnnSetStream},
		{"cudnnCreateTensorDescriptor", &f.cudnnCreateTensorDescriptor},
		{"cudnnSetTensor4dDescriptor", &f.cudnnSetTensor4dDescriptor},
		{"cudnnDestroyTensorDescriptor", &f.cudnnDestroyTensorDescriptor},
		{"cudnnCreateFilterDescriptor", &f.cudnnCreateFilterDescriptor},
		{"cudnnSetFilter4dDescriptor", &f.cudnnSetFilter4dDescriptor},
		{"cudnnDestroyFilterDescriptor", &f.cudnnDestroyFilterDescriptor},
		{"cudnnCreateConvolutionDescriptor", &f.cudnnCreateConvolutionDescriptor},
		{"cudnnSetConvolution2dDescriptor", &f.cudnnSetConvolution2dDescriptor},
		{"cudnnSetConvolutionMathType", &f.cudnnSetConvolutionMathType},
		{"cudnnDestroyConvolutionDescriptor", &f.cudnnDestroyConvolutionDescriptor},
		{"cudnnCreateActivationDescriptor", &f.cudnnCreateActivationDescriptor},
		{"cudnnSetActivationDescriptor", &f.cudnnSetActivationDescriptor},
		{"cudnnDestroyActivationDescriptor", &f.cudnnDestroyActivationDescriptor},
		{"cudnnFindConvolutionForwardAlgorithm", &f.cudnnFindConvolutionForwardAlgorithm},
		{"cudnnGetConvolutionForwardWorkspaceSize", &f.cudnnGetConvolutionForwardWorkspaceSize},
		{"cudnnConvolutionBiasActivationForward", &f.cudnnConvolutionBiasActivationForward},
		{"cudnnAddTensor", &f.cudnnAddTensor},
		{"cudnnActivationForward", &f.cudnnActivationForward},
		{"cudnnSoftmaxForward", &f.cudnnSoftmaxForward},
		{"cudnnTransformTensor", &f.cudnnTransformTensor},
		{"cudnnConvolutionForward", &f.cudnnConvolutionForward},
		{"cudnnFindConvolutionBackwardDataAlgorithm", &f.cudnnFindConvolutionBackwardDataAlgorithm},
		{"cudnnGetConvolutionBackwardDataWorkspaceSize", &f.cudnnGetConvolutionBackwardDataWorkspaceSize},
		{"cudnnConvolutionBackwardData", &f.cudnnConvolutionBackwardData},
		{"cudnnFindConvolutionBackwardFilterAlgorithm", &f.cudnnFindConvolutionBackwardFilterAlgorithm},
		{"cudnnGetConvolutionBackwardFilterWorkspaceSize", &f.cudnnGetConvolutionBackwardFilterWorkspaceSize},
		{"cudnnConvolutionBackwardFilter", &f.cudnnConvolutionBackwardFilter},
		{"cudnnBatchNormalizationForwardTraining", &f.cudnnBatchNormalizationForwardTraining},
		{"cudnnBatchNormalizationBackward", &f.cudnnBatchNormalizationBackward},
		{"cudnnActivationBackward", &f.cudnnActivationBackward},
	}
}

// driverVersionString turns cuDriverGetVersion's 1000·major + 10·minor
// into "major.minor".
func driverVersionString(v int) string {
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
}

// cudnnVersion splits cudnnGetVersion's number: 10000·major + 100·minor +
// patch from cuDNN 9 on, 1000·major + 100·minor + patch before.
func cudnnVersion(v int) (major, minor, patch int) {
	if v >= 90000 {
		return v / 10000, v % 10000 / 100, v % 100
	}
	return v / 1000, v % 1000 / 100, v % 100
}
