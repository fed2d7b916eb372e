package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/nn"
)

// TestNewInt8Conv: each output channel's largest weight becomes ±127,
// every weight is its byte × its channel's scale within half a scale,
// and a channel of zeros has scale 0 and zero bytes.
func TestNewInt8Conv(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const in, out = 12, 20
	c := foldedConv{kernel: 3, in: in, out: out, w: make([]float32, 9*in*out), b: make([]float32, out)}
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
		case o != 7 && most != 127:
			t.Errorf("channel %d: largest byte %d, want 127", o, most)
		}
	}
}

// TestQuantizePixels: each position's pixels become bytes scaled by its
// own largest value (which becomes 255; a position of zeros stays zero),
// each value within half a scale of its byte × the scale, the pixels not
// listed (the padding) untouched — and AVX-512 (channels in sixteens)
// writes what the Go loops do.
func TestQuantizePixels(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, channels := range []int{8, 16, 20, 64, 80} {
		const positions, cells, stride = 4, 10, 3
		var pix []int32
		for p := 1; p < positions*cells*stride; p += stride { // every third pixel, as padding skips some
			pix = append(pix, int32(p))
		}
		pixels := positions * cells * stride
		src := make([]float32, pixels*channels)
		for i := range src {
			if p := i / channels / (cells * stride); p != 2 && rng.IntN(3) > 0 { // position 2 all zeros, others a third zeros
				src[i] = float32(rng.ExpFloat64() * math.Pow(10, float64(p-1)))
			}
		}
		dst, goDst := make([]uint8, len(src)), make([]uint8, len(src))
		for i := range dst {
			dst[i], goDst[i] = 0xab, 0xab
		}
		scale, goScale := make([]float32, pixels), make([]float32, pixels)
		quantizePixels(dst, scale, src, pix, cells, channels)
		for first := 0; first < len(pix); first += cells { // the Go loops alone
			pos := pix[first : first+cells]
			most := maxPixelsGo(src, pos, channels)
			var s, inv float32
			if most != 0 {
				s, inv = most/255, 255/most
			}
			for _, p := range pos {
				goScale[p] = s
			}
			quantPixelsGo(goDst, src, pos, channels, inv)
		}
		listed := map[int]bool{}
		for i, p := range pix {
			listed[int(p)] = true
			s := scale[p]
			if s != goScale[p] {
				t.Fatalf("channels %d, pixel %d: scale %g, the Go loop's %g", channels, p, s, goScale[p])
			}
			if (i/cells == 2) != (s == 0) {
				t.Fatalf("channels %d, pixel %d of position %d: scale %g", channels, p, i/cells, s)
			}
			for j := range channels {
				k := int(p)*channels + j
				if dst[k] != goDst[k] {
					t.Fatalf("channels %d, pixel %d, channel %d: %v is byte %d, the Go loop's %d", channels, p, j, src[k], dst[k], goDst[k])
				}
				if d := math.Abs(float64(dst[k])*float64(s) - float64(src[k])); d > 0.5*float64(s)*(1+1e-5) {
					t.Fatalf("channels %d, pixel %d, channel %d: %v is byte %d × %g, off by %g", channels, p, j, src[k], dst[k], s, d)
				}
			}
		}
		for first := 0; first < len(pix); first += cells {
			if first/cells == 2 {
				continue
			}
			most := uint8(0)
			for _, p := range pix[first : first+cells] {
				for _, b := range dst[int(p)*channels:][:channels] {
					most = max(most, b)
				}
			}
			if most != 255 {
				t.Errorf("channels %d, position %d: largest byte %d, want 255", channels, first/cells, most)
			}
		}
		for p := range pixels {
			if !listed[p] && (dst[p*channels] != 0xab || dst[(p+1)*channels-1] != 0xab) {
				t.Fatalf("channels %d: pixel %d, not listed, was written", channels, p)
			}
		}
	}
}

// TestVNNIKernelsMatchIntegerSums: the VNNI kernels compute each output
// as the exact integer sum of its byte products × its channel's weight
// scale × its pixel's scale + the bias (then the skip and ReLU) — every
// number of channel groups, part of one, more than one block, padded and
// compact outputs, a part of a batch alone, Othello's board and YINSH's.
func TestVNNIKernelsMatchIntegerSums(t *testing.T) {
	archs := directInt8Archs()
	if len(archs) == 0 {
		t.Skip("this CPU has no AVX-512 VNNI")
	}
	for _, size := range []int{8, 11} {
		for _, filters := range []int{8, 16, 24, 32, 40, 64, 80, 128} {
			for _, batch := range []int{1, 5, 32} {
				t.Run(fmt.Sprintf("%dx%d/filters%d/batch%d", size, size, filters, batch), func(t *testing.T) {
					testVNNIKernels(t, archs[0], size, filters, batch)
				})
			}
		}
	}
}

func testVNNIKernels(t *testing.T, arch directArch, size, filters, batch int) {
	sh := shape{planes: filters, height: size, width: size}
	g := newDirectGeom(arch, sh, batch)
	rng := rand.New(rand.NewPCG(uint64(filters), uint64(batch)))
	c := &int8Conv{kernel: 3, in: filters, out: filters, w: make([]uint32, 9*filters/4*filters),
		wscale: make([]float32, filters), b: make([]float32, filters, filters+weightSlack)}
	for i := range c.w {
		c.w[i] = rng.Uint32()
	}
	for o := range c.wscale {
		c.wscale[o] = float32((0.5 + rng.Float64()) / (128 * 64 * math.Sqrt(float64(9*filters))))
		c.b[o] = float32(rng.NormFloat64())
	}
	n := batch * sh.cells()
	src := make([]uint8, batch*g.padCells*filters)
	scale := make([]float32, batch*g.padCells)
	skip := make([]float32, len(src))
	for i, p := range g.pix {
		scale[p] = float32(0.5 + float64(i/sh.cells())/float64(batch))
		for j := range filters {
			k := int(p)*filters + j
			src[k], skip[k] = uint8(rng.IntN(256)), float32(rng.NormFloat64())
		}
	}
	// want is the output of pixel i, channel o, from the integer sum.
	want := func(i, o int, skip []float32, relu bool) float32 {
		p := int(g.pix[i])
		var sum int32
		for ky := range 3 {
			for kx := range 3 {
				q := p + (ky-1)*g.padWidth + kx - 1
				for ch := range filters {
					w := int8(c.w[((ky*3+kx)*filters/4+ch/4)*filters+o] >> (8 * (ch % 4)))
					sum += int32(src[q*filters+ch]) * int32(w)
				}
			}
		}
		v := float64(sum)*float64(c.wscale[o])*float64(scale[p]) + float64(c.b[o])
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
		skip          []float32
		relu, compact bool
		lo, hi        int
	}{
		{"plain", nil, false, false, 0, n},
		{"skip and ReLU", skip, true, false, 0, n},
		{"compact", nil, true, true, 0, n},
		{"a third, skip", skip, false, false, n / 3, 2 * n / 3},
	} {
		got := make([]float32, len(skip))
		g.convInt8(c, src, scale, got, tc.skip, tc.lo, tc.hi, tc.relu, tc.compact)
		nonzero := 0
		for i := tc.lo; i < tc.hi; i++ {
			at := int(g.pix[i]) * filters
			if tc.compact {
				at = i * filters
			}
			for o := range filters {
				w := want(i, o, tc.skip, tc.relu)
				if d := math.Abs(float64(got[at+o] - w)); d > 1e-5*max(1, math.Abs(float64(w))) {
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
// bfloat16's there 0.017), most under 0.03; on a trained YINSH blitz
// network 0.0014 for a policy and 0.0086 for a value.
const int8Tolerance = 0.15

// TestInt8EvaluatorAgreesWithFloat32 runs every game's default network,
// and one with global pooling (whose pooled blocks' second convolutions
// stay out of bytes), with random weights and batch norms, with the int8
// kernels and the float32 ones on the same positions: the policies and
// values agree within int8Tolerance, and differ from bfloat16's, which
// shows the int8 kernels ran.
func TestInt8EvaluatorAgreesWithFloat32(t *testing.T) {
	archs := directInt8Archs()
	if len(archs) == 0 {
		t.Skip("this CPU has no AVX-512 VNNI")
	}
	for _, tg := range testGames(t) {
		for _, pooling := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/pooling=%v", tg.game.Name(), pooling), func(t *testing.T) {
				cfg := nn.DefaultConfig(tg.game)
				cfg.GlobalPooling = pooling
				n, err := nn.New(tg.game, cfg, 11)
				if err != nil {
					t.Fatal(err)
				}
				perturbBatchNorm(n, 5)
				const count = 7
				inputs := encodeAll(tg.states(count, 21))
				forward := func(a directArch) []float32 {
					ev, err := newEvaluator(n.Fold(), 8, a, true)
					if err != nil {
						t.Fatal(err)
					}
					logits, wdl, err := ev.Forward(inputs, count)
					if err != nil {
						t.Fatal(err)
					}
					actions := len(logits) / count
					for b := 0; b < count; b++ {
						softmaxInPlace(logits[b*actions : (b+1)*actions])
					}
					return append(append([]float32(nil), logits...), wdl...)
				}
				want, got := forward(archAVX512), forward(archs[0])
				d := maxAbsDiff(want, got)
				t.Logf("largest difference of a probability: %.2g", d)
				if d > int8Tolerance {
					t.Errorf("int8 moves a probability by %g, more than %g", d, int8Tolerance)
				}
				fallback := archAVX512
				if archs[0].bf16 {
					fallback = archAVX512BF16
				}
				if maxAbsDiff(got, forward(fallback)) == 0 {
					t.Error("int8 inference gives the results of its fallback exactly: the int8 kernels did not run")
				}
			})
		}
	}
}

// TestInt8OnlyWhenAsked: FLIPZERO_CONV=avx512vnni gives every evaluator
// the int8 kernels, and the trainer float32 ones; nothing else does.
func TestInt8OnlyWhenAsked(t *testing.T) {
	net, err := nn.New(othello.Othello(), nn.Config{Blocks: 1, Filters: 8, PolicyFilters: 2, ValueFilters: 1, ValueHidden: 8}, 1)
	if err != nil {
		t.Fatal(err)
	}
	hasVNNI := len(directInt8Archs()) > 0
	for _, env := range []string{"", "avx512", "avx512bf16", "avx512vnni"} {
		t.Setenv("FLIPZERO_CONV", env)
		for _, fast := range []bool{false, true} {
			arch, direct := backend{bf16: fast}.arch()
			if got, want := direct && arch.int8, env == "avx512vnni" && hasVNNI; got != want {
				t.Errorf("FLIPZERO_CONV=%q, fast %v: int8 %v, want %v", env, fast, got, want)
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
}
