//go:build amd64

package cpu

import "golang.org/x/sys/cpu"

//go:generate go run ./internal/gendirect

// The kernels of direct_amd64.s: for AVX-512 (float32, and bfloat16 with
// AVX-512 BF16) one per number of 16-channel groups in a tile of 6
// pixels, for AVX2 one per number of 8-channel groups in a tile of 4.

//go:noescape
func direct6x1(t *directTile)

//go:noescape
func direct6x2(t *directTile)

//go:noescape
func direct6x3(t *directTile)

//go:noescape
func direct6x4(t *directTile)

// The BF16 kernels: direct6xN on bfloat16 pairs of inputs and weights.

//go:noescape
func direct6x1BF16(t *directTile)

//go:noescape
func direct6x2BF16(t *directTile)

//go:noescape
func direct6x3BF16(t *directTile)

//go:noescape
func direct6x4BF16(t *directTile)

// The VNNI kernels: direct6xN on quads of byte inputs and weights.

//go:noescape
func direct6x1VNNI(t *directTile)

//go:noescape
func direct6x2VNNI(t *directTile)

//go:noescape
func direct6x3VNNI(t *directTile)

//go:noescape
func direct6x4VNNI(t *directTile)

//go:noescape
func direct4x1AVX2(t *directTile)

//go:noescape
func direct4x2AVX2(t *directTile)

//go:noescape
func direct4x3AVX2(t *directTile)

// The AVX2 int8 kernels: direct4xNAVX2 on quads of byte inputs and
// weights, through VPMADDUBSW and VPMADDWD.

//go:noescape
func direct4x1AVX2Int8(t *directTile)

//go:noescape
func direct4x2AVX2Int8(t *directTile)

//go:noescape
func direct4x3AVX2Int8(t *directTile)

// The AVX-VNNI kernels: direct4xNAVX2Int8 with VPDPBUSD.

//go:noescape
func direct4x1AVXVNNI(t *directTile)

//go:noescape
func direct4x2AVXVNNI(t *directTile)

//go:noescape
func direct4x3AVXVNNI(t *directTile)

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

// directWinogradArchs lists the Winograd kernel sets this CPU runs,
// fastest first: they take the transforms' AVX2 kernels.
func directWinogradArchs() []directArch {
	var archs []directArch
	if winogradKernels() {
		if cpu.X86.HasAVX512F {
			archs = append(archs, archAVX512Winograd)
		}
		archs = append(archs, archAVX2Winograd)
	}
	return archs
}

// directBF16Archs lists the bfloat16 kernel sets this CPU runs, fastest
// first: AMX where the CPU has it and the system allows it, AVX-512 BF16.
func directBF16Archs() []directArch {
	var archs []directArch
	if amxReady() {
		archs = append(archs, archAMXBF16)
	}
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BF16 {
		archs = append(archs, archAVX512BF16)
	}
	return archs
}

// directInt8Archs lists the int8 kernel sets this CPU runs, fastest
// first: AVX-512 VNNI, AVX-VNNI, and AVX2's emulation of them.
func directInt8Archs() []directArch {
	var archs []directArch
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512VNNI {
		archs = append(archs, archAVX512VNNI)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		if cpu.X86.HasAVXVNNI {
			archs = append(archs, archAVXVNNI)
		}
		archs = append(archs, archAVX2Int8)
	}
	return archs
}

// directBF16 is the fastest bfloat16 kernel set, where the CPU has one.
func directBF16() (directArch, bool) {
	archs := directBF16Archs()
	if len(archs) == 0 {
		return directArch{}, false
	}
	return archs[0], true
}

// directKernel computes tile t with arch's kernel for its number of
// channel groups, on bfloat16 pairs or byte quads where prec says (an
// arch.bf16 or arch.int8 set's 3×3 tower convolutions). The kernels are
// called directly, not through function values, so that t stays on the
// caller's stack.
func directKernel(arch directArch, groups int, prec precision, t *directTile) {
	switch {
	case prec == precInt8 && arch.lanes == archAVX512.lanes:
		switch groups {
		case 1:
			direct6x1VNNI(t)
		case 2:
			direct6x2VNNI(t)
		case 3:
			direct6x3VNNI(t)
		default:
			direct6x4VNNI(t)
		}
	case prec == precInt8 && arch.pairSums:
		switch groups {
		case 1:
			direct4x1AVX2Int8(t)
		case 2:
			direct4x2AVX2Int8(t)
		default:
			direct4x3AVX2Int8(t)
		}
	case prec == precInt8:
		switch groups {
		case 1:
			direct4x1AVXVNNI(t)
		case 2:
			direct4x2AVXVNNI(t)
		default:
			direct4x3AVXVNNI(t)
		}
	case prec == precBF16:
		switch groups {
		case 1:
			direct6x1BF16(t)
		case 2:
			direct6x2BF16(t)
		case 3:
			direct6x3BF16(t)
		default:
			direct6x4BF16(t)
		}
	case arch.lanes == archAVX512.lanes:
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
	default:
		switch groups {
		case 1:
			direct4x1AVX2(t)
		case 2:
			direct4x2AVX2(t)
		default:
			direct4x3AVX2(t)
		}
	}
}
