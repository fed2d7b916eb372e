//go:build arm64

package cpu

//go:generate go run ./internal/genneon

// The kernels of direct_arm64.s: NEON, one per number of 4-channel groups
// in a tile of 5 pixels.

//go:noescape
func direct5x1NEON(t *directTile)

//go:noescape
func direct5x2NEON(t *directTile)

//go:noescape
func direct5x3NEON(t *directTile)

//go:noescape
func direct5x4NEON(t *directTile)

// archNEON is arm64's kernel set: 5 pixels × up to 4 groups of 4
// channels, 20 of NEON's 32 registers of sums (genneon says why).
var archNEON = directArch{name: "NEON", pixels: 5, lanes: 4, groups: 4}

// directArchs lists the kernel sets this CPU runs: NEON, which every
// arm64 CPU has (Go's arm64 port requires it).
func directArchs() []directArch { return []directArch{archNEON} }

// directKernel computes tile t with the NEON kernel for its number of
// channel groups. arm64 has float32 kernels only: no arch here is bf16
// or int8, so prec is always float32.
func directKernel(arch directArch, groups int, prec precision, t *directTile) {
	if prec != precFloat32 {
		panic("nn: reduced-precision direct convolution on arm64")
	}
	switch groups {
	case 1:
		direct5x1NEON(t)
	case 2:
		direct5x2NEON(t)
	case 3:
		direct5x3NEON(t)
	default:
		direct5x4NEON(t)
	}
}
