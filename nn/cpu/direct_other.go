//go:build !amd64

package cpu

// directArchs: the direct convolution has kernels for amd64 only.
func directArchs() []directArch { return nil }

func directBF16() (directArch, bool) { return directArch{}, false }

func directKernel(directArch, int, bool, *directTile) {
	panic("nn: no direct convolution kernels on this architecture")
}
