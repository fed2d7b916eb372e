//go:build !amd64

package cpu

// The bfloat16, int8 and AMX kernels are amd64 only.

func directBF16() (directArch, bool) { return directArch{}, false }

func directBF16Archs() []directArch { return nil }

func directInt8Archs() []directArch { return nil }

func directWinogradArchs() []directArch { return nil }

const amxBlock = 32

func amxFits(*bf16Conv) bool { return false }

func (g *directGeom) convAMX(*bf16Conv, []uint16, []float32, []float32, []uint16, int, int, bool, bool) {
	panic("nn: no AMX on this architecture")
}

func amxWeightGradBF16(*amxGradTile) {
	panic("nn: no AMX on this architecture")
}
