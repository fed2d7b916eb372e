//go:build !amd64

package cpu

// directArchs: the direct convolution has kernels for amd64 only.
func directArchs() []directArch { return nil }

func directBF16() (directArch, bool) { return directArch{}, false }

func directBF16Archs() []directArch { return nil }

func directInt8Archs() []directArch { return nil }

const amxBlock = 32

func amxFits(*bf16Conv) bool { return false }

func (g *directGeom) convAMX(*bf16Conv, []uint16, []float32, []float32, int, int, bool, bool) {
	panic("nn: no AMX on this architecture")
}

func amxWeightGradBF16(*amxGradTile) {
	panic("nn: no AMX on this architecture")
}

func directKernel(directArch, int, precision, *directTile) {
	panic("nn: no direct convolution kernels on this architecture")
}
