package cuda

import _ "embed"

//go:generate clang -x cuda --cuda-device-only --cuda-gpu-arch=sm_70 -nocudainc -nocudalib -O3 -ffp-contract=off -S -o kernels.ptx kernels.cu

// kernelsPTX is kernels.cu compiled to PTX by clang (go generate; the
// file is committed, so that building needs no compiler for the GPU): the
// elementwise kernels that cuBLAS and cuDNN lack, which the driver
// compiles for whatever GPU it finds. kernels.cu says what each does.
//
//go:embed kernels.ptx
var kernelsPTX string

// ptxClang is the major version of the clang that wrote kernels.ptx: a
// test compiles kernels.cu again with the clang at hand and, when it is
// this version, wants the same file.
const ptxClang = 14

// kernelNames are kernels.cu's kernels, each bound to its field of Device.
func (d *Device) kernelNames() []struct {
	name string
	f    *uintptr
} {
	return []struct {
		name string
		f    *uintptr
	}{
		{"im2row", &d.im2row}, {"biasact", &d.biasact}, {"chanbias", &d.chanBias},
		{"pool", &d.pool}, {"poolgrad", &d.poolGrad}, {"gather", &d.gather}, {"scatter", &d.scatter},
		{"tanhsq", &d.tanhSq}, {"masklogits", &d.maskLogits}, {"rowscale", &d.rowScale},
		{"softgrad", &d.softGrad}, {"sgd", &d.sgd},
		{"tohalf", &d.toHalf}, {"tofloat", &d.toFloat}, {"poolh", &d.poolHalf}, {"chanbiash", &d.chanBiasHalf},
	}
}
