//go:build !amd64 && !arm64

package cpu

// directArchs: the direct convolution has kernels for amd64 and arm64
// only; elsewhere the network convolves by im2row.
func directArchs() []directArch { return nil }

func directKernel(directArch, int, precision, *directTile) {
	panic("nn: no direct convolution kernels on this architecture")
}
