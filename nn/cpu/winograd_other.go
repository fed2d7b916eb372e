//go:build !amd64

package cpu

// winogradKernels says whether the CPU runs the transforms' kernels:
// only amd64 has them (arm64's training keeps the direct NEON kernels).
func winogradKernels() bool { return false }

func winogradInput(dst, src, _ []float32, srcRow, dstXi, channels int) {
	winogradInputGo(dst, src, srcRow, dstXi, channels)
}

func winogradOutput(dst []float32, offs []int64, src, _ []float32, srcXi, channels int, skip []float32, relu bool) {
	winogradOutputGo(dst, offs, src, srcXi, channels, skip, relu)
}

func winogradGrad(dst, src, _ []float32, srcRow, dstXi, channels int) {
	winogradGradGo(dst, src, srcRow, dstXi, channels)
}

func transposeBlocks([]float32, []float32, int, int) (int, int) { return 0, 0 }
