package cuda

import (
	"math"
	"testing"
)

// fromHalf is a float16's value, exactly.
func fromHalf(h uint16) float32 {
	sign := float32(1)
	if h&0x8000 != 0 {
		sign = -1
	}
	exp, mant := int(h>>10&0x1f), float64(h&0x3ff)
	switch exp {
	case 0:
		return sign * float32(math.Ldexp(mant, -24))
	case 31:
		if mant != 0 {
			return float32(math.NaN())
		}
		return sign * float32(math.Inf(1))
	}
	return sign * float32(math.Ldexp(1024+mant, exp-25))
}

// TestToHalf: every float16 converts to itself; a value between two
// neighbours rounds to the nearer, a tie to the even one; overflow gives
// infinity, underflow a zero of its sign.
func TestToHalf(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		v := fromHalf(uint16(h))
		if v != v { // NaN
			if got := toHalf(v); got&0x7c00 != 0x7c00 || got&0x3ff == 0 {
				t.Fatalf("NaN %#04x became %#04x", h, got)
			}
			continue
		}
		if got := toHalf(v); got != uint16(h) {
			t.Fatalf("%g (%#04x) became %#04x", v, h, got)
		}
		if h&0x7fff >= 0x7bff { // the largest finite and beyond: no next neighbour
			continue
		}
		next := fromHalf(uint16(h + 1))
		mid := (float64(v) + float64(next)) / 2 // exact in float32: float16 has 11 bits
		want := uint16(h)
		if h&1 == 1 {
			want = uint16(h + 1)
		}
		if got := toHalf(float32(mid)); got != want {
			t.Fatalf("the tie between %#04x and %#04x became %#04x, want %#04x", h, h+1, got, want)
		}
		above, below := math.Nextafter32(float32(mid), float32(math.Inf(1))), math.Nextafter32(float32(mid), float32(math.Inf(-1)))
		if h&0x8000 != 0 {
			above, below = below, above // away from zero is down
		}
		if got := toHalf(above); got != uint16(h+1) {
			t.Fatalf("just past the middle of %#04x and %#04x became %#04x", h, h+1, got)
		}
		if got := toHalf(below); got != uint16(h) {
			t.Fatalf("just short of the middle of %#04x and %#04x became %#04x", h, h+1, got)
		}
	}
	for _, tc := range []struct {
		v    float32
		want uint16
	}{
		{65520, 0x7c00},                            // the tie above 65504 rounds to even: infinity
		{65519.99, 0x7bff},                         // below it, the largest finite
		{-1e9, 0xfc00},                             // overflow, negative
		{float32(math.Ldexp(1, -25)), 0x0000},      // half the smallest subnormal: a tie, to zero
		{float32(math.Ldexp(1.5, -25)), 0x0001},    // more than half: the smallest subnormal
		{-float32(math.Ldexp(1, -30)), 0x8000},     // underflow keeps the sign
		{float32(math.Ldexp(1023.5, -24)), 0x0400}, // the largest subnormal rounds up into the normals
	} {
		if got := toHalf(tc.v); got != tc.want {
			t.Errorf("toHalf(%g) = %#04x, want %#04x", tc.v, got, tc.want)
		}
	}
}

// TestPadInputs: padding a convolution's NHWC inputs keeps each weight
// at its (out, ky, kx, in) and zeroes the new inputs.
func TestPadInputs(t *testing.T) {
	const out, taps, in, padded = 3, 4, 5, 8
	w := make([]float32, out*taps*in)
	for i := range w {
		w[i] = float32(i + 1)
	}
	p := padInputs(w, in, padded)
	if len(p) != out*taps*padded {
		t.Fatalf("%d padded weights, want %d", len(p), out*taps*padded)
	}
	for k := 0; k < out*taps; k++ {
		for i := 0; i < padded; i++ {
			want := float32(0)
			if i < in {
				want = w[k*in+i]
			}
			if p[k*padded+i] != want {
				t.Fatalf("tap %d input %d: %g, want %g", k, i, p[k*padded+i], want)
			}
		}
	}
	if halfPlanes(4) != 8 || halfPlanes(13) != 16 || halfPlanes(16) != 16 {
		t.Errorf("planes padded to %d, %d, %d; want 8, 16, 16", halfPlanes(4), halfPlanes(13), halfPlanes(16))
	}
}
