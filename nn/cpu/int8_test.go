package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/nn"
)

// TestNewInt8Conv: each output channel's largest weight becomes
// ±byteWeights, every weight is its byte × its channel's scale within
// half a scale, and a channel of zeros has scale 0 and zero bytes.
func TestNewInt8Conv(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const in, out = 12, 20
	c := foldedConv{kernel: 3, in: in, out: out, w: make([]float32, 9*in*out), b: make([]float32, out, out+weightSlack)}
	for i := range c.w {
		if i%out != 7 { // output channel 7 stays zero
			c.w[i] = float32(rng.NormFloat64() * math.Pow(10, float64(i%out%5-3)))
		}
	}
	ic := newInt8Conv(c)
	for o := range out {
		most := 0
		for k := range 9 {
			for ch := range in {
				q := int(int8(ic.w[(k*in/4+ch/4)*out+o] >> (8 * (ch % 4))))
				most = max(most, q, -q)
				w := float64(c.w[(k*in+ch)*out+o])
				if d := math.Abs(float64(q)*float64(ic.wscale[o]) - w); d > 0.5*float64(ic.wscale[o])*(1+1e-6) {
					t.Fatalf("channel %d, offset %d, input %d: weight %g is byte %d × %g, off by %g", o, k, ch, w, q, ic.wscale[o], d)
				}
			}
		}
		switch {
		case o == 7 && (most != 0 || ic.wscale[o] != 0):
			t.Errorf("a zero channel: largest byte %d, scale %g", most, ic.wscale[o])
		case o != 7 && most != byteWeights:
			t.Errorf("channel %d: largest byte %d, want %d", o, most, byteWeights)
		}
	}
}

// TestQuantizePixels: each position's pixels become bytes scaled by its
// own range (the largest value becomes the top level, 255 or AVX2's 127,
// and, with a sign, the least 0;
// a position of zeros stays zero), each value within half a scale of
// (its byte − the zero point) × the scale, the zero point written into
// the position's padding, the pixels neither listed nor padding
// untouched. These hold of whichever loops run (the assembly this CPU
// has, or Go's); TestPixelLoopsAssembly compares the assembly with Go's.
func TestQuantizePixels(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, levels := range []int{archAVX512VNNI.byteInputs, archAVX2Int8.byteInputs} {
		for _, signed := range []bool{false, true} {
			for _, channels := range []int{8, 16, 20, 64, 80} {
				testQuantizePixels(t, rng, signed, channels, levels)
			}
		}
	}
}

func testQuantizePixels(t *testing.T, rng *rand.Rand, signed bool, channels, levels int) {
	// A position's pixels are 3·cells: the listed ones 1, 4, 7, …, its
	// padding 0, 3, 6, …, and 2, 5, 8, … neither.
	const positions, cells = 4, 10
	pixels := positions * cells * 3
	var pix, border []int32
	for p := 0; p < pixels; p += 3 {
		border, pix = append(border, int32(p)), append(pix, int32(p+1))
	}
	src := make([]float32, pixels*channels)
	for i := range src {
		if p := i / channels / (cells * 3); p != 2 && rng.IntN(3) > 0 { // position 2 all zeros, the others a third
			src[i] = float32(rng.ExpFloat64() * math.Pow(10, float64(p-1)))
			if signed && rng.IntN(2) == 0 {
				src[i] = -src[i] / 3
			}
		}
	}
	bytes := func() []uint8 {
		b := make([]uint8, len(src))
		for i := range b {
			b[i] = 0xab
		}
		return b
	}
	q := quantized{bytes(), make([]float32, pixels), make([]float32, pixels)}
	quantizePixels(q, src, pix, cells, channels, border, cells, signed, levels)
	name := fmt.Sprintf("levels %d, signed %v, channels %d", levels, signed, channels)
	for i, p := range pix {
		s, zp, off := q.scale[p], 0.0, 0.0
		if s != 0 { // zero holds the zero point × the scale
			zp = math.Round(float64(q.zero[p]) / float64(s))
			off = math.Abs(float64(q.zero[p])/float64(s) - zp)
		}
		if off > 1e-4 || zp < 0 || zp > float64(levels) || (!signed && zp != 0) {
			t.Fatalf("%s, pixel %d: zero point %g (off a whole byte by %g)", name, p, zp, off)
		}
		if (i/cells == 2) != (s == 0) {
			t.Fatalf("%s, pixel %d of position %d: scale %g", name, p, i/cells, s)
		}
		for j := range channels {
			k := int(p)*channels + j
			if d := math.Abs((float64(q.bytes[k])-zp)*float64(s) - float64(src[k])); d > 0.5*float64(s)*(1+1e-5) {
				t.Fatalf("%s, pixel %d, channel %d: %v is (byte %d − %g) × %g, off by %g", name, p, j, src[k], q.bytes[k], zp, s, d)
			}
		}
		if pad := q.bytes[int(border[i])*channels:][:channels]; float64(pad[0]) != zp || float64(pad[channels-1]) != zp {
			t.Fatalf("%s, pixel %d: padding %d, %d, want the zero point %g", name, border[i], pad[0], pad[channels-1], zp)
		}
		if other := q.bytes[(int(p)+1)*channels:][:channels]; other[0] != 0xab || other[channels-1] != 0xab {
			t.Fatalf("%s: pixel %d, neither listed nor padding, was written", name, p+1)
		}
	}
	for first := 0; first < len(pix); first += cells {
		if first/cells == 2 {
			continue
		}
		least, most := 255, 0
		for _, p := range pix[first : first+cells] {
			for _, b := range q.bytes[int(p)*channels:][:channels] {
				least, most = min(least, int(b)), max(most, int(b))
			}
		}
		// The largest input's byte and the zero point round apart: one
		// over the top level at most.
		if most < levels || most > min(levels+1, 255) || (signed && least != 0) {
			t.Errorf("%s, position %d: bytes %d..%d, want ..%d (and 0.. with a sign)", name, first/cells, least, most, levels)
		}
	}
}

// TestInt8KernelsMatchIntegerSums: each int8 kernel set computes each
// output as the exact integer sum of its byte products (less the zero
// point from each input, where there is one) × its channel's weight
// scale × its pixel's scale + the bias (then the skip and ReLU) — every
// number of channel groups, part of one, more than one block, padded
// and compact outputs, a part of a batch alone, Othello's board and
// YINSH's — with weights over the set's whole range, and at its
// extremes (every input at the top a quantization reaches, byteInputs + 1
// up to 255, every weight ±byteWeights: AVX2's int16 pairs at their
// largest).
//
// -short keeps a batch of 32 to 32 channels or fewer: the reference
// sums of 128 channels over 32 YINSH boards take minutes under the race
// detector, and pixels are tiled alike whatever the channel count
// (tiles walks the pixels within each block of output channels); batches
// of 1 and 5 still run every count.
func TestInt8KernelsMatchIntegerSums(t *testing.T) {
	forEachInt8Set(t, func(t *testing.T, arch directArch) {
		for _, size := range []int{8, 11} {
			for _, filters := range []int{8, 16, 24, 32, 40, 64, 80, 128} {
				for _, batch := range []int{1, 5, 32} {
					if testing.Short() && batch == 32 && filters > 32 {
						continue
					}
					for _, extreme := range []bool{false, true} {
						if extreme && batch != 5 {
							continue
						}
						t.Run(fmt.Sprintf("%dx%d/filters%d/batch%d/extreme=%v", size, size, filters, batch, extreme), func(t *testing.T) {
							testInt8Kernels(t, arch, size, filters, batch, extreme)
						})
					}
				}
			}
		}
	})
}

func testInt8Kernels(t *testing.T, arch directArch, size, filters, batch int, extreme bool) {
	sh := shape{planes: filters, height: size, width: size}
	g := newDirectGeom(arch, sh, batch)
	rng := rand.New(rand.NewPCG(uint64(filters), uint64(batch)))
	c := &int8Conv{kernel: 3, in: filters, out: filters, w: make([]uint32, 9*filters/4*filters, 9*filters/4*filters+weightSlack),
		wscale: make([]float32, filters, filters+weightSlack), wsum: make([]float32, filters, filters+weightSlack), b: make([]float32, filters, filters+weightSlack)}
	// weightByte is a weight over the set's range, or at one of its ends
	// (the same sign for an output channel's weights).
	weightByte := func(o int) uint32 {
		if extreme {
			return uint32(uint8(int8((o%2*2 - 1) * byteWeights)))
		}
		return uint32(uint8(int8(rng.IntN(2*byteWeights+1) - byteWeights)))
	}
	for i := range c.w {
		for b := range 4 {
			c.w[i] |= weightByte(i%filters) << (8 * b)
		}
	}
	for o := range c.wscale {
		c.wscale[o] = float32((0.5 + rng.Float64()) / (128 * 64 * math.Sqrt(float64(9*filters))))
		c.b[o] = float32(rng.NormFloat64())
	}
	for o := range c.wsum {
		sum := 0
		for r := 0; r < 9*filters/4; r++ {
			for b := range 4 {
				sum += int(int8(c.w[r*filters+o] >> (8 * b)))
			}
		}
		c.wsum[o] = float32(sum) * c.wscale[o]
	}
	n := batch * sh.cells()
	// Each position's inputs: bytes, a scale and a zero point (0 without
	// a sign), which its padding holds.
	plain := quantized{make([]uint8, g.pixels(batch)*filters), make([]float32, g.pixels(batch)), make([]float32, g.pixels(batch))}
	signed := quantized{make([]uint8, len(plain.bytes)), plain.scale, make([]float32, len(plain.zero))}
	// top is the largest byte quantizePixels writes: its top level, one
	// more where rounding apart lifts it (int8.go), at most 255.
	top := min(arch.byteInputs+1, 255)
	zps := make([]int32, batch)
	for b := range zps {
		zps[b] = int32(rng.IntN(arch.byteInputs + 1))
		for p := b * g.padCells; p < (b+1)*g.padCells; p++ {
			plain.scale[p] = float32(0.5 + rng.Float64())
			signed.zero[p] = float32(zps[b]) * plain.scale[p]
			for j := range filters {
				signed.bytes[p*filters+j] = uint8(zps[b])
			}
		}
	}
	skip := make([]float32, len(plain.bytes))
	for _, p := range g.pix {
		for j := range filters {
			k := int(p)*filters + j
			plain.bytes[k], signed.bytes[k], skip[k] = uint8(rng.IntN(top+1)), uint8(rng.IntN(top+1)), float32(rng.NormFloat64())
			if extreme {
				plain.bytes[k], signed.bytes[k] = uint8(top), uint8(top)
			}
		}
	}
	// want is the output of pixel i, channel o, from the integer sum.
	want := func(i, o int, q quantized, zp int32, skip []float32, relu bool) float32 {
		p := int(g.pix[i])
		var sum int32
		for ky := range 3 {
			for kx := range 3 {
				at := p + (ky-1)*g.padWidth + kx - 1
				for ch := range filters {
					w := int8(c.w[((ky*3+kx)*filters/4+ch/4)*filters+o] >> (8 * (ch % 4)))
					sum += (int32(q.bytes[at*filters+ch]) - zp) * int32(w)
				}
			}
		}
		v := float64(sum)*float64(c.wscale[o])*float64(q.scale[p]) + float64(c.b[o])
		if skip != nil {
			v += float64(skip[p*filters+o])
		}
		if relu {
			v = max(v, 0)
		}
		return float32(v)
	}
	for _, tc := range []struct {
		name          string
		signed        bool
		skip          []float32
		relu, compact bool
		lo, hi        int
	}{
		{"plain", false, nil, false, false, 0, n},
		{"skip and ReLU", false, skip, true, false, 0, n},
		{"compact", false, nil, true, true, 0, n},
		{"a third, skip", false, skip, false, false, n / 3, 2 * n / 3},
		{"zero point", true, nil, false, false, 0, n},
		{"zero point, skip and ReLU", true, skip, true, false, 0, n},
		{"zero point, a third, compact", true, nil, true, true, n / 3, 2 * n / 3},
	} {
		q := plain
		if tc.signed {
			q = signed
		}
		got := make([]float32, len(skip))
		g.convInt8(c, q, tc.signed, got, tc.skip, tc.lo, tc.hi, tc.relu, tc.compact)
		nonzero := 0
		for i := tc.lo; i < tc.hi; i++ {
			at := int(g.pix[i]) * filters
			if tc.compact {
				at = i * filters
			}
			zp := int32(0)
			if tc.signed {
				zp = zps[i/sh.cells()]
			}
			for o := range filters {
				w := want(i, o, q, zp, tc.skip, tc.relu)
				// The zero point's term is taken away in float32 after
				// the sum, a few roundings of the plain sum's size.
				if d := math.Abs(float64(got[at+o] - w)); d > 1e-4*max(1, math.Abs(float64(w))) {
					t.Fatalf("%s: pixel %d, channel %d is %v, the integer sum gives %v", tc.name, i, o, got[at+o], w)
				}
				if w != 0 {
					nonzero++
				}
			}
		}
		if nonzero < (tc.hi-tc.lo)*filters/4 {
			t.Fatalf("%s: only %d of %d outputs nonzero: the comparison proves little", tc.name, nonzero, (tc.hi-tc.lo)*filters)
		}
	}
}

// int8Tolerance is how far int8 inference may move a network's outputs
// from float32's: the policy's probabilities and the value's
// win/draw/loss probabilities. A byte keeps a value to within half of
// 1/255 of its position's largest (or 1/127 of its channel's largest
// weight), coarser than bfloat16's 2⁻⁹ of itself for the small values:
// on the random networks here (wide batch-norm scales, so large
// activations) the largest move measured was 0.11 (a fake YINSH policy;
// bfloat16's there 0.017), most under 0.04; on two trained YINSH blitz
// networks up to 0.0011 for a policy and 0.0115 for a value.
const int8Tolerance = 0.15

// TestInt8EvaluatorAgreesWithFloat32 runs every game's default network,
// and one with global pooling (whose pooled blocks' second convolutions
// take inputs with a zero point), with random weights and batch norms,
// with each int8 kernel set and the float32 set of its width on the same
// positions: the policies and values agree within int8Tolerance, and
// differ from float32's, which shows the int8 kernels ran.
func TestInt8EvaluatorAgreesWithFloat32(t *testing.T) {
	forEachInt8Set(t, func(t *testing.T, arch directArch) {
		for _, tg := range testGames(t) {
			for _, pooling := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/pooling=%v", tg.game.Name(), pooling), func(t *testing.T) {
					cfg := nn.DefaultConfig(tg.game)
					cfg.GlobalPooling = pooling
					forward := reducedForward(t, tg, cfg)
					checkReduced(t, "int8", forward(arch.forTraining()), forward(arch), int8Tolerance)
				})
			}
		}
	})
}

// TestInt8Choice: the fast backend's evaluators take the int8 kernels
// where the CPU has no AMX and has int8 kernels as wide as its widest
// float32 ones that sum four products at once (AVX-512 VNNI; or,
// without AVX-512, AVX-VNNI; not AVX2's pairs, where float32 by Winograd
// is faster),
// unless FLIPZERO_CONV names another set; FLIPZERO_CONV naming an int8
// set gives it to every evaluator; the trainer never takes them, and
// trains on the float32 kernels of the int8 set's width.
func TestInt8Choice(t *testing.T) {
	net, err := nn.New(othello.Othello(), nn.Config{Blocks: 1, Filters: 8, PolicyFilters: 2, ValueFilters: 1, ValueHidden: 8}, 1)
	if err != nil {
		t.Fatal(err)
	}
	int8s := directInt8Archs()
	floats := directArchs()
	bf16s := directBF16Archs()
	hasAMX := len(bf16s) > 0 && bf16s[0].amx
	_, byWinograd := winogradOver(floats, int8s)
	wide := len(int8s) > 0 && int8s[0].lanes == floats[0].lanes && !byWinograd
	// in says whether the CPU runs a set of archs that env names.
	in := func(archs []directArch, env string) bool {
		for _, a := range archs {
			if strings.EqualFold(strings.NewReplacer("-", "", " ", "").Replace(a.name), env) {
				return true
			}
		}
		return false
	}
	for _, env := range []string{"", "avx512", "avx2", "avx2winograd", "avx512bf16", "avx512vnni", "avxvnni", "avx2int8"} {
		t.Setenv("FLIPZERO_CONV", env)
		for _, fast := range []bool{false, true} {
			arch, direct := backend{fast: fast}.arch()
			// A set the CPU lacks is not named: the default stands.
			named := in(floats, env) || in(bf16s, env) || in(int8s, env) || in(directWinogradArchs(), env)
			want := in(int8s, env) || !named && fast && !hasAMX && wide
			if got := direct && arch.int8; got != want {
				t.Errorf("FLIPZERO_CONV=%q, fast %v: int8 %v (%s), want %v", env, fast, got, arch.name, want)
			}
			if want && named && !strings.EqualFold(strings.NewReplacer("-", "", " ", "").Replace(arch.name), env) {
				t.Errorf("FLIPZERO_CONV=%q: kernels %s", env, arch.name)
			}
		}
		tr, err := NewTrainer(net, nn.DefaultTrainConfig())
		if err != nil {
			t.Fatal(err)
		}
		if tr.kernels != nil && tr.kernels.int8 {
			t.Errorf("FLIPZERO_CONV=%q: the trainer got the int8 kernels", env)
		}
	}
	for _, arch := range []directArch{archAVX512VNNI, archAVXVNNI, archAVX2Int8} {
		if tr := arch.forTraining(); tr.int8 || tr.lanes != arch.lanes {
			t.Errorf("%s trains on %s", arch.name, tr.name)
		}
	}
}

// TestWinogradOver: evaluators take float32 by Winograd by default only
// where the fastest float32 set is AVX2's and the bytes, if any, are
// AVX2's pairs — and only where the CPU runs the transforms.
func TestWinogradOver(t *testing.T) {
	runs := len(directWinogradArchs()) > 0
	for _, c := range []struct {
		name         string
		floats, int8 []directArch
		want         bool
	}{
		{"AVX2", []directArch{archAVX2}, []directArch{archAVX2Int8}, runs},
		{"AVX2 without bytes", []directArch{archAVX2}, nil, runs},
		{"AVX-VNNI", []directArch{archAVX2}, []directArch{archAVXVNNI, archAVX2Int8}, false},
		{"AVX-512", []directArch{archAVX512, archAVX2}, []directArch{archAVX2Int8}, false},
		{"AVX-512 VNNI", []directArch{archAVX512, archAVX2}, []directArch{archAVX512VNNI, archAVX2Int8}, false},
		{"none", nil, nil, false},
	} {
		arch, ok := winogradOver(c.floats, c.int8)
		if ok != c.want || ok && (!arch.winograd || arch.lanes != c.floats[0].lanes) {
			t.Errorf("%s: %v (%s), want %v", c.name, ok, arch.name, c.want)
		}
	}
}
