package cuda

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// Device is the first GPU, with the libraries' functions bound. Its
// methods are safe for concurrent use; each Inference is not.
type Device struct {
	drv  driverAPI
	blas cublasAPI
	dnn  cudnnAPI
	dev  int32
	ctx  uintptr
	name string
	tf32 bool
	fp16 bool
	// The kernels of kernelsPTX (kernelNames).
	module                    uintptr
	im2row, biasact, chanBias uintptr
	pool, poolGrad            uintptr
	gather, scatter           uintptr
	tanhSq                    uintptr
	maskLogits, rowScale      uintptr
	softGrad, sgd             uintptr
	toHalf, toFloat           uintptr
	poolHalf, chanBiasHalf    uintptr
	mu                        sync.Mutex
	users                     int
	shut                      bool
}

// Open loads the CUDA driver, cuBLAS and cuDNN and initialises the first
// GPU.
func Open() (*Device, error) {
	if runtime.GOOS != "linux" {
		// The libraries' names, and purego's calls of them, are tested on
		// Linux only: elsewhere the CPU backend runs.
		return nil, fmt.Errorf("cuda: the CUDA backend runs on Linux only, not %s", runtime.GOOS)
	}
	d := &Device{}
	drv, _, err := openFirst(driverLibs)
	if err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	if err := bind("libcuda.so.1", lookupIn(drv), d.drv.symbols()); err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	if r := d.drv.cuInit(0); r != cudaSuccess {
		return nil, d.cuErr("cuInit", r)
	}
	var v int32
	if r := d.drv.cuDriverGetVersion(&v); r != cudaSuccess {
		return nil, d.cuErr("cuDriverGetVersion", r)
	}
	if v < minDriverVersion {
		return nil, fmt.Errorf("cuda: libcuda.so.1 is CUDA driver %s, need %s or newer", driverVersionString(int(v)), driverVersionString(minDriverVersion))
	}
	var n int32
	if r := d.drv.cuDeviceGetCount(&n); r != cudaSuccess {
		return nil, d.cuErr("cuDeviceGetCount", r)
	}
	if n < 1 {
		return nil, fmt.Errorf("cuda: no CUDA GPU (driver %s)", driverVersionString(int(v)))
	}
	if r := d.drv.cuDeviceGet(&d.dev, 0); r != cudaSuccess {
		return nil, d.cuErr("cuDeviceGet", r)
	}
	var buf [256]byte
	if r := d.drv.cuDeviceGetName(&buf[0], int32(len(buf)), d.dev); r != cudaSuccess {
		return nil, d.cuErr("cuDeviceGetName", r)
	}
	gpu := goString(&buf[0])

	blas, blasName, err := openFirst(cublasLibs)
	if err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	if err := bind(blasName, lookupIn(blas), d.blas.symbols()); err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	var bmaj, bmin, bpatch int32
	d.blas.cublasGetProperty(libPropMajor, &bmaj)
	d.blas.cublasGetProperty(libPropMinor, &bmin)
	d.blas.cublasGetProperty(libPropPatch, &bpatch)
	if bmaj < minCublasMajor {
		return nil, fmt.Errorf("cuda: %s is cuBLAS %d.%d, need %d or newer", blasName, bmaj, bmin, minCublasMajor)
	}

	dnn, dnnName, err := openFirst(cudnnLibs)
	if err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	handles := []uintptr{dnn}
	for _, sub := range cudnnSubLibs {
		if h, _, err := openFirst([]string{sub}); err == nil {
			handles = append(handles, h)
		}
	}
	if err := bind(dnnName, lookupIn(handles...), d.dnn.symbols()); err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	dmaj, dmin, dpatch := cudnnVersion(int(d.dnn.cudnnGetVersion()))
	if dmaj != cudnnMajor {
		return nil, fmt.Errorf("cuda: %s is cuDNN %d.%d.%d, need %d.x", dnnName, dmaj, dmin, dpatch, cudnnMajor)
	}

	if r := d.drv.cuDevicePrimaryCtxRetain(&d.ctx, d.dev); r != cudaSuccess {
		return nil, d.cuErr("cuDevicePrimaryCtxRetain", r)
	}
	if err := d.loadKernels(); err != nil {
		d.drv.cuDevicePrimaryCtxRelease(d.dev)
		return nil, err
	}
	d.name = fmt.Sprintf("%s, CUDA driver %s, cuBLAS %d.%d.%d, cuDNN %d.%d.%d",
		gpu, driverVersionString(int(v)), bmaj, bmin, bpatch, dmaj, dmin, dpatch)
	// TF32 stays off unless asked for (--device cuda-tf32): on an H100 it
	// moved the outputs by up to 0.07 of the largest from the CPU's,
	// against the 1e-4 that float32 agrees within.
	return d, nil
}

// Name describes the GPU and the libraries' versions.
func (d *Device) Name() string { return d.name }

// SetTF32 chooses whether inferences and trainers made afterwards let cuDNN and cuBLAS
// round float32 operands to TF32 on tensor cores: several times faster on
// recent GPUs, with about 1e-3 relative error per product.
func (d *Device) SetTF32(on bool) {
	d.mu.Lock()
	d.tf32 = on
	d.mu.Unlock()
}

// TF32Tolerance is how far TF32's outputs may be from float32's, over the
// largest output (TestGPUForwardMatchesCPU): up to 0.069 measured, in
// YINSH blitz's policy logits, on an H100 and an H200.
const TF32Tolerance = 0.1

// TF32 says whether inferences and trainers made now multiply in TF32.
func (d *Device) TF32() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.tf32
}

// SetFP16 chooses whether inferences made afterwards may compute the stem
// and the tower in float16 (NHWC tensors, cuDNN's tensor cores, float32
// sums), the rest in TF32; trainers then multiply in TF32. Off turns
// TF32 off too.
func (d *Device) SetFP16(on bool) {
	d.mu.Lock()
	d.fp16, d.tf32 = on, on
	d.mu.Unlock()
}

// FP16 says whether inferences made now may compute in float16.
func (d *Device) FP16() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.fp16
}

// FP16Tolerance is how far float16's outputs may be from float32's, over
// the largest output (TestGPUForwardMatchesCPU): float16 keeps TF32's 10
// bits of mantissa, and rounds each activation besides each product's
// operands.
const FP16Tolerance = 0.1

// Close releases the GPU's context. Inferences and trainers must be
// closed first.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.shut {
		return nil
	}
	if d.users > 0 {
		return fmt.Errorf("cuda: close device with %d inferences or trainers open", d.users)
	}
	d.shut = true
	if d.module != 0 {
		if unbind, err := d.bindThread(); err == nil {
			d.drv.cuModuleUnload(d.module)
			unbind()
		}
	}
	if r := d.drv.cuDevicePrimaryCtxRelease(d.dev); r != cudaSuccess {
		return d.cuErr("cuDevicePrimaryCtxRelease", r)
	}
	return nil
}

// acquire counts a user of the device's context.
func (d *Device) acquire() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.shut {
		return fmt.Errorf("cuda: device closed")
	}
	d.users++
	return nil
}

func (d *Device) release() {
	d.mu.Lock()
	d.users--
	d.mu.Unlock()
}

// bindThread pins the goroutine to its OS thread and makes the device's
// context current there: the driver keeps the current context per thread.
// The caller runs the returned function when done.
func (d *Device) bindThread() (func(), error) {
	runtime.LockOSThread()
	if r := d.drv.cuCtxSetCurrent(d.ctx); r != cudaSuccess {
		runtime.UnlockOSThread()
		return nil, d.cuErr("cuCtxSetCurrent", r)
	}
	return runtime.UnlockOSThread, nil
}

func (d *Device) cuErr(what string, r int32) error {
	var p *byte
	name := ""
	if d.drv.cuGetErrorName != nil && d.drv.cuGetErrorName(r, &p) == cudaSuccess {
		name = goString(p)
	}
	if name == "" {
		name = fmt.Sprintf("CUresult %d", r)
	}
	return fmt.Errorf("cuda: %s: %s", what, name)
}

func (d *Device) cu(what string, r int32) error {
	if r == cudaSuccess {
		return nil
	}
	return d.cuErr(what, r)
}

func (d *Device) dnnErr(what string, r int32) error {
	if r == cudaSuccess {
		return nil
	}
	return fmt.Errorf("cudnn: %s: %s (%d)", what, goString(d.dnn.cudnnGetErrorString(r)), r)
}

func (d *Device) blasErr(what string, r int32) error {
	if r == cudaSuccess {
		return nil
	}
	return fmt.Errorf("cublas: %s: status %d", what, r)
}

// alloc returns device memory for n float32s.
func (d *Device) alloc(n int) (uintptr, error) {
	var p uintptr
	if r := d.drv.cuMemAlloc(&p, uintptr(max(n, 1)*4)); r != cudaSuccess {
		return 0, d.cuErr(fmt.Sprintf("cuMemAlloc %d floats", n), r)
	}
	return p, nil
}

// upload copies host floats to device memory and waits for the copy to
// land: from Go's (pageable) memory the call may return while the last
// part is still in flight, on the driver's default stream, which the
// non-blocking streams here do not wait for.
func (d *Device) upload(dst uintptr, src []float32) error {
	if len(src) == 0 {
		return nil
	}
	if err := d.cu("cuMemcpyHtoD", d.drv.cuMemcpyHtoD(dst, unsafe.Pointer(&src[0]), uintptr(len(src)*4))); err != nil {
		return err
	}
	return d.cu("cuStreamSynchronize (default stream)", d.drv.cuStreamSynchronize(0))
}

// pinned returns zeroed page-locked host memory for n float32s: copies
// from it run asynchronously and can be captured in a CUDA graph.
func (d *Device) pinned(n int) ([]float32, error) {
	var p unsafe.Pointer
	if r := d.drv.cuMemHostAlloc(&p, uintptr(max(n, 1)*4), cuMemHostAllocPortable); r != cudaSuccess {
		return nil, d.cuErr(fmt.Sprintf("cuMemHostAlloc %d floats", n), r)
	}
	s := unsafe.Slice((*float32)(p), max(n, 1))
	clear(s)
	return s[:n], nil
}

func (d *Device) freePinned(s []float32) {
	if cap(s) > 0 {
		d.drv.cuMemFreeHost(unsafe.Pointer(unsafe.SliceData(s[:1])))
	}
}

// loadKernels has the driver compile kernelsPTX for this GPU.
func (d *Device) loadKernels() error {
	unbind, err := d.bindThread()
	if err != nil {
		return err
	}
	defer unbind()
	image := append([]byte(kernelsPTX), 0)
	if err := d.cu("cuModuleLoadData (compiling the PTX kernels)", d.drv.cuModuleLoadData(&d.module, &image[0])); err != nil {
		return err
	}
	for _, k := range d.kernelNames() {
		name := append([]byte(k.name), 0)
		if err := d.cu("cuModuleGetFunction "+k.name, d.drv.cuModuleGetFunction(k.f, d.module, &name[0])); err != nil {
			return err
		}
	}
	return nil
}
