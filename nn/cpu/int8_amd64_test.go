package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestPixelLoopsAssembly: each assembly of the int8 pixel loops this CPU
// runs, called directly whatever pixelAsm would pick, finds the range
// and writes the bytes that the Go loops do, over inputs of both signs
// and past the bytes' range (held to 0..255).
func TestPixelLoopsAssembly(t *testing.T) {
	type loops struct {
		name   string
		has    bool
		lanes  int
		rangeF func(src *float32, pix *int32, n int, channels int) (lo, hi float32)
		quantF func(dst *uint8, src *float32, pix *int32, n int, channels int, inv float32, zp int32)
	}
	for _, l := range []loops{
		{"AVX2", cpu.X86.HasAVX2, 8, rangePixelsAVX2, quantPixelsAVX2},
		{"AVX-512", cpu.X86.HasAVX512F, 16, rangePixelsAVX512, quantPixelsAVX512},
	} {
		t.Run(l.name, func(t *testing.T) {
			if !l.has {
				t.Skipf("this CPU has no %s: its pixel loops are not run", l.name)
			}
			rng := rand.New(rand.NewPCG(3, uint64(l.lanes)))
			for _, channels := range []int{l.lanes, 2 * l.lanes, 5 * l.lanes} {
				const pixels = 40
				src := make([]float32, pixels*channels)
				for i := range src {
					src[i] = float32(rng.NormFloat64() * 3)
				}
				pix := []int32{1, 2, 5, 6, 7, 20, 39}
				wantLo, wantHi := rangePixelsGo(src, pix, channels)
				lo, hi := l.rangeF(&src[0], &pix[0], len(pix), channels)
				if lo != wantLo || hi != wantHi {
					t.Fatalf("%d channels: range %v..%v, the Go loop's %v..%v", channels, lo, hi, wantLo, wantHi)
				}
				// A scale that sends some values past 0..255 either way.
				inv, zp := float32(255/(hi-lo)*1.3), int32(math.Round(float64(-lo*255/(hi-lo))))
				want, got := make([]uint8, len(src)), make([]uint8, len(src))
				quantPixelsGo(want, src, pix, channels, inv, zp)
				l.quantF(&got[0], &src[0], &pix[0], len(pix), channels, inv, zp)
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("%d channels, value %d (%v): byte %d, the Go loop's %d", channels, i, src[i], got[i], want[i])
					}
				}
				clamped := 0
				for _, p := range pix {
					for i := int(p) * channels; i < int(p+1)*channels; i++ {
						if v := float64(src[i]*inv) + float64(zp); v > 256 || v < -1 {
							clamped++
						}
					}
				}
				if clamped == 0 {
					t.Fatalf("%d channels: no value past 0..255: the clamp is not tested", channels)
				}
			}
		})
	}
}
