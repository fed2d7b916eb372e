//go:build amd64

package cpu

import "golang.org/x/sys/cpu"

//go:generate go run ./internal/gendirect

// The kernels of direct_amd64.s: for AVX-512 one per number of 16-channel
// groups in a tile of 6 pixels, for AVX2 one per number of 8-channel
// groups in a tile of 4.

//go:noescape
func direct6x1(t *directTile)

//go:noescape
func direct6x2(t *directTile)

//go:noescape
func direct6x3(t *directTile)

//go:noescape
func direct6x4(t *directTile)

//go:noescape
func direct4x1AVX2(t *directTile)

//go:noescape
func direct4x2AVX2(t *directTile)

//go:noescape
func direct4x3AVX2(t *directTile)

// directArchs lists the kernel sets this CPU runs, fastest first (the
// x/sys/cpu flags include the system's saving of the registers).
func directArchs() []directArch {
	var archs []directArch
	if cpu.X86.HasAVX512F {
		archs = append(archs, archAVX512)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		archs = append(archs, archAVX2)
	}
	return archs
}

// directKernel computes tile t with arch's kernel for its number of
// channel groups. The kernels are called directly, not through function
// values, so that t stays on the caller's stack.
func directKernel(arch directArch, groups int, t *directTile) {
	if arch.lanes == archAVX512.lanes {
		switch groups {
		case 1:
			direct6x1(t)
		case 2:
			direct6x2(t)
		case 3:
			direct6x3(t)
		default:
			direct6x4(t)
		}
		return
	}
	switch groups {
	case 1:
		direct4x1AVX2(t)
	case 2:
		direct4x2AVX2(t)
	default:
		direct4x3AVX2(t)
	}
}
