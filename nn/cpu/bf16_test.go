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

func fromBF16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

func TestToBF16(t *testing.T) {
	for _, tc := range []struct {
		bits uint32
		want uint16
	}{
		{0x00000000, 0x0000}, // zero
		{0x3f800000, 0x3f80}, // 1: exact
		{0xc0200000, 0xc020}, // −2.5: exact
		{0x3f807fff, 0x3f80}, // just under half way: down
		{0x3f808001, 0x3f81}, // just over half way: up
		{0x3f808000, 0x3f80}, // half way, even below: stays
		{0x3f818000, 0x3f82}, // half way, odd below: up to even
		{0xbf818000, 0xbf82}, // the same, negative
		{0x3fffffff, 0x4000}, // rounds up into the next exponent
	} {
		if got := toBF16(math.Float32frombits(tc.bits)); got != tc.want {
			t.Errorf("toBF16(%#08x) = %#04x, want %#04x", tc.bits, got, tc.want)
		}
	}
}

// TestBF16KernelsMatchFloat32: on inputs and weights that bfloat16 holds
// exactly, each set of bfloat16 kernels the CPU has computes what the
// float32 kernels do (all sum in float32) — every number of channel
// groups, part of one, more than one block, with and without skip and
// ReLU, padded and compact outputs, batches that end in a partial tile,
// a part of a batch alone, Othello's board and YINSH's.
func TestBF16KernelsMatchFloat32(t *testing.T) {
	archs := directBF16Archs()
	if len(archs) == 0 {
		t.Skip("this CPU has no AVX-512 BF16")
	}
	for _, arch := range archs {
		for _, size := range []int{8, 11} {
			for _, filters := range []int{8, 16, 24, 32, 40, 64, 80, 128} {
				for _, batch := range []int{1, 5, 32} {
					t.Run(fmt.Sprintf("%s/%dx%d/filters%d/batch%d", arch.name, size, size, filters, batch), func(t *testing.T) {
						testBF16Kernels(t, arch, size, filters, batch)
					})
				}
			}
		}
	}
}

func testBF16Kernels(t *testing.T, arch directArch, size, filters, batch int) {
	sh := shape{planes: filters, height: size, width: size}
	g := newDirectGeom(arch, sh, batch)
	rng := rand.New(rand.NewPCG(uint64(filters), uint64(batch)))
	// Normal numbers of the given spread that bfloat16 holds exactly.
	exact := func(spread float64) float32 { return fromBF16(toBF16(float32(spread * rng.NormFloat64()))) }
	c := foldedConv{kernel: 3, in: filters, out: filters,
		w: make([]float32, 9*filters*filters, 9*filters*filters+weightSlack), b: make([]float32, filters, filters+weightSlack)}
	for i := range c.w {
		c.w[i] = exact(1 / float64(3*filters))
	}
	for i := range c.b {
		c.b[i] = exact(1)
	}
	n := batch * sh.cells()
	src := make([]float32, g.pixels(batch)*filters)
	half := make([]uint16, g.halfPixels(batch)*filters)
	skip := make([]float32, len(src))
	for _, p := range g.pix {
		for j := range filters {
			k := int(p)*filters + j
			src[k], skip[k] = exact(1), float32(rng.NormFloat64())
			half[k] = toBF16(src[k])
		}
	}
	bc := newBF16Conv(c)
	for _, tc := range []struct {
		name          string
		skip          []float32
		relu, compact bool
		lo, hi        int
	}{
		{"plain", nil, false, false, 0, n},
		{"ReLU", nil, true, false, 0, n},
		{"skip and ReLU", skip, true, false, 0, n},
		{"compact", nil, true, true, 0, n},
		{"a third, compact", nil, false, true, n / 3, 2 * n / 3},
		{"a third, skip", skip, false, false, n / 3, 2 * n / 3},
	} {
		want, got := make([]float32, len(src)), make([]float32, len(src))
		g.conv(&c, src, want, tc.skip, tc.lo, tc.hi, tc.relu, tc.compact)
		g.convBF16(&bc, half, got, tc.skip, tc.lo, tc.hi, tc.relu, tc.compact)
		nonzero := 0
		for i := range want {
			if d := math.Abs(float64(want[i] - got[i])); d > 1e-4*max(1, math.Abs(float64(want[i]))) {
				t.Fatalf("%s: output %d is %v, the float32 kernels give %v", tc.name, i, got[i], want[i])
			}
			if want[i] != 0 {
				nonzero++
			}
		}
		if nonzero < (tc.hi-tc.lo)*filters/4 {
			t.Fatalf("%s: only %d of %d outputs nonzero: the comparison proves little", tc.name, nonzero, n*filters)
		}
		if g.roundsOutputs(&bc) && !tc.compact {
			checkRoundedOutputs(t, tc.name, g, &bc, half, got, tc.skip, tc.lo, tc.hi, tc.relu, filters)
		}
	}
}

// checkRoundedOutputs runs c on AMX again, its outputs also rounded to
// bfloat16: the float32 outputs are got's, the rounded ones each got's
// rounded, at the pixels lo..hi−1 and nowhere else.
func checkRoundedOutputs(t *testing.T, name string, g directGeom, c *bf16Conv, src []uint16, got, skip []float32, lo, hi int, relu bool, filters int) {
	t.Helper()
	const unwritten = 0xdead
	rounded, again := make([]uint16, len(src)), make([]float32, len(got))
	for i := range rounded {
		rounded[i] = unwritten
	}
	g.convBF16Rounding(c, src, again, skip, rounded, lo, hi, relu)
	written := make([]bool, len(src)/filters)
	for _, p := range g.pix[lo:hi] {
		written[p] = true
	}
	for i, r := range rounded {
		p := i / filters
		switch {
		case written[p] && (again[i] != got[i] || r != toBF16(got[i])):
			t.Fatalf("%s: pixel %d channel %d: %v rounded to %#x, want %v and %#x", name, p, i%filters, again[i], r, got[i], toBF16(got[i]))
		case !written[p] && r != unwritten:
			t.Fatalf("%s: pixel %d, outside the convolution's, rounded %#x", name, p, r)
		}
	}
}

// bf16Tolerance is how far bfloat16 inference may move a network's
// outputs from float32's: the policy's probabilities and the value's
// win/draw/loss probabilities. bfloat16 keeps 8 bits of a number's
// mantissa, so each tower input and weight moves by up to 2⁻⁹ of itself;
// over a tower these errors mostly cancel: on the random networks here
// the largest move measured was 0.017 (a yinsh policy) and most were
// under 0.006.
const bf16Tolerance = 0.03

// TestBF16EvaluatorAgreesWithFloat32 runs every game's default network
// (random weights and batch norms) with the bfloat16 kernels and the
// float32 ones on the same positions: the policies and values agree
// within bf16Tolerance, and differ somewhere, which shows the bfloat16
// kernels ran.
func TestBF16EvaluatorAgreesWithFloat32(t *testing.T) {
	archs := directBF16Archs()
	if len(archs) == 0 {
		t.Skip("this CPU has no AVX-512 BF16")
	}
	for _, arch := range archs {
		for _, tg := range testGames(t) {
			t.Run(arch.name+"/"+tg.game.Name(), func(t *testing.T) { testBF16Evaluator(t, arch, tg) })
		}
	}
}

func testBF16Evaluator(t *testing.T, arch directArch, tg testGame) {
	cfg := nn.DefaultConfig(tg.game)
	forward := reducedForward(t, tg, cfg)
	checkReduced(t, "bfloat16", forward(archAVX512), forward(arch), bf16Tolerance)
	// AMX sums in another order than AVX-512 BF16: where its tower's
	// channels come in 32s, some output differs in its last bits.
	if arch.amx && cfg.Filters%32 == 0 && maxAbsDiff(forward(arch), forward(archAVX512BF16)) == 0 {
		t.Error("AMX gives AVX-512 BF16's results exactly: the AMX kernel did not run")
	}
}

// reducedForward is the probabilities of a game's default-sized network
// (cfg), its weights and batch norms random, over 7 positions, on any
// kernel set: what reduced-precision kernels are compared with float32 on.
func reducedForward(t *testing.T, tg testGame, cfg nn.Config) func(directArch) []float32 {
	t.Helper()
	n, err := nn.New(tg.game, cfg, 11)
	if err != nil {
		t.Fatal(err)
	}
	perturbBatchNorm(n, 5)
	const count = 7
	inputs := encodeAll(tg.states(count, 21))
	return func(a directArch) []float32 { return probabilities(t, n, a, inputs, count) }
}

// checkReduced: a reduced precision's probabilities (got) are within
// tolerance of float32's (want), and differ from them, which shows its
// kernels ran.
func checkReduced(t *testing.T, precision string, want, got []float32, tolerance float64) {
	t.Helper()
	d := maxAbsDiff(want, got)
	t.Logf("largest difference of a probability: %.2g", d)
	if d > tolerance {
		t.Errorf("%s moves a probability by %g, more than %g", precision, d, tolerance)
	}
	if d == 0 {
		t.Errorf("%s inference gives float32's results exactly: the %s kernels did not run", precision, precision)
	}
}

// TestFastBackendTakesBF16: the fast backend evaluates in bfloat16 where
// the CPU has it, on AMX where it has that, unless FLIPZERO_CONV names
// another kernel set or the CPU has AVX-512 VNNI and no AMX (then it
// evaluates on bytes: TestInt8Choice); the float32 backend never does.
func TestFastBackendTakesBF16(t *testing.T) {
	_, hasBF16 := directBF16()
	hasAMX := hasBF16 && directBF16Archs()[0].amx
	hasVNNI := len(directInt8Archs()) > 0
	for _, tc := range []struct {
		env               string
		fast              bool
		wantBF16, wantAMX bool
	}{
		{"", true, hasBF16 && (hasAMX || !hasVNNI), hasAMX},
		{"", false, false, false},
		{"avx512", true, false, false},
		{"avx512bf16", false, hasBF16, false},
		{"avx512bf16", true, hasBF16, false},
		{"amxbf16", false, hasAMX, hasAMX},
		{"im2row", true, false, false},
	} {
		t.Setenv("FLIPZERO_CONV", tc.env)
		b := backend{fast: tc.fast}
		arch, direct := b.arch()
		if got := direct && arch.bf16; got != tc.wantBF16 {
			t.Errorf("FLIPZERO_CONV=%q, fast %v: bfloat16 %v (%s), want %v", tc.env, tc.fast, got, b.ConvInfo(), tc.wantBF16)
		}
		if got := direct && arch.amx; got != tc.wantAMX {
			t.Errorf("FLIPZERO_CONV=%q, fast %v: AMX %v (%s), want %v", tc.env, tc.fast, got, b.ConvInfo(), tc.wantAMX)
		}
		if strings.Contains(b.Summary(), "BF16") != tc.wantBF16 {
			t.Errorf("FLIPZERO_CONV=%q, fast %v: summary %q", tc.env, tc.fast, b.Summary())
		}
	}
}

// TestTrainingTakesAMX: the fast backend trains in mixed precision where
// its evaluators run on AMX, and nowhere else unless FLIPZERO_CONV names
// a bfloat16 set; the float32 backend trains in float32 unless it does.
// The trainer a backend makes convolves on the kernels it says.
func TestTrainingTakesAMX(t *testing.T) {
	_, hasBF16 := directBF16()
	hasAMX := hasBF16 && directBF16Archs()[0].amx
	g := othello.Othello()
	for _, tc := range []struct {
		env               string
		fast              bool
		wantBF16, wantAMX bool
	}{
		{"", true, hasAMX, hasAMX},
		{"", false, false, false},
		{"avx512", true, false, false},
		{"avx512bf16", true, hasBF16, false},
		{"avx512bf16", false, hasBF16, false},
		{"amxbf16", false, hasAMX, hasAMX},
		{"avx512vnni", true, false, false},
		{"im2row", true, false, false},
	} {
		t.Setenv("FLIPZERO_CONV", tc.env)
		b := backend{fast: tc.fast}
		arch, direct := b.trainArch()
		if got := direct && arch.bf16; got != tc.wantBF16 {
			t.Errorf("FLIPZERO_CONV=%q, fast %v: trains in bfloat16 %v (%s), want %v", tc.env, tc.fast, got, b.TrainInfo(), tc.wantBF16)
		}
		if got := direct && arch.amx; got != tc.wantAMX {
			t.Errorf("FLIPZERO_CONV=%q, fast %v: trains on AMX %v (%s), want %v", tc.env, tc.fast, got, b.TrainInfo(), tc.wantAMX)
		}
		if direct && arch.int8 {
			t.Errorf("FLIPZERO_CONV=%q, fast %v: trains on the byte kernels %s", tc.env, tc.fast, arch.name)
		}
		if strings.Contains(b.TrainInfo(), "mixed") != tc.wantBF16 || !strings.Contains(b.Name(), b.TrainInfo()) {
			t.Errorf("FLIPZERO_CONV=%q, fast %v: name %q, training %q", tc.env, tc.fast, b.Name(), b.TrainInfo())
		}
		net, err := nn.New(g, nn.DefaultConfig(g), 1)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := b.NewTraining(nn.TrainingState{Network: net, Config: nn.DefaultTrainConfig()})
		if err != nil {
			t.Fatal(err)
		}
		kernels := tr.(*Trainer).kernels
		if (kernels != nil) != direct || direct && kernels.name != arch.name {
			t.Errorf("FLIPZERO_CONV=%q, fast %v: the trainer's kernels %v, want %s", tc.env, tc.fast, kernels, arch.name)
		}
	}
}

// TestRoundPixelsBF16: rounding the pixels of a padded batch to bfloat16
// gives toBF16 of every channel of every listed pixel, and leaves the
// pixels not listed (the padding) alone — AVX-512 BF16's conversion where
// the channels come in sixteens, the Go loop otherwise. The conversion
// instruction treats subnormal inputs as zero: they round to a zero of
// their sign.
func TestRoundPixelsBF16(t *testing.T) {
	if _, ok := directBF16(); !ok {
		t.Skip("this CPU has no AVX-512 BF16: roundPixelsBF16 is the Go loop of toBF16 here, which TestToBF16 checks")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	specials := []uint32{0x3f808000, 0x3f818000, 0xbf818000, 0x3fffffff, 0x7f7fffff, 0x80000000, 0x00000000}
	for _, channels := range []int{16, 24, 64, 80, 128} {
		const pixels = 40
		var pix []int32
		for p := 1; p < pixels; p += 3 { // every third pixel, as padding skips some
			pix = append(pix, int32(p))
		}
		src := make([]float32, pixels*channels)
		for i := range src {
			switch {
			case i%97 == 5:
				src[i] = math.Float32frombits(specials[i%len(specials)])
			case i%89 == 7:
				src[i] = math.Float32frombits(uint32(rng.IntN(1 << 23))) // subnormal
			default:
				src[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(9)-4)))
			}
		}
		dst := make([]uint16, len(src))
		for i := range dst {
			dst[i] = 0xdead
		}
		roundPixelsBF16(dst, src, pix, channels)
		listed := map[int]bool{}
		for _, p := range pix {
			listed[int(p)] = true
		}
		for i, v := range src {
			want := toBF16(v)
			if bits := math.Float32bits(v); bits&0x7f800000 == 0 && bits&0x007fffff != 0 {
				want = uint16(bits>>16) & 0x8000
				if got := dst[i]; listed[i/channels] && got != want && got != toBF16(v) {
					t.Fatalf("%d channels, subnormal %#08x: %#04x, want a signed zero %#04x", channels, bits, got, want)
				}
				continue
			}
			if !listed[i/channels] {
				want = 0xdead
			}
			if dst[i] != want {
				t.Fatalf("%d channels, pixel %d channel %d, %g (%#08x): %#04x, want %#04x", channels, i/channels, i%channels, v, math.Float32bits(v), dst[i], want)
			}
		}
	}
}

// TestDirectTrainBF16: a training graph's convolution on the bfloat16
// kernels computes what the float32 ones do on inputs and weights that
// bfloat16 holds exactly, and rounds inputs that it does not hold (the
// results then differ, a little); an odd number of inputs stays float32.
func TestDirectTrainBF16(t *testing.T) {
	archs := directBF16Archs()
	if len(archs) == 0 {
		t.Skip("this CPU has no AVX-512 BF16")
	}
	for _, arch := range archs {
		t.Run(arch.name, func(t *testing.T) { testDirectTrainBF16(t, arch) })
	}
}

func testDirectTrainBF16(t *testing.T, arch directArch) {
	sh := shape{height: 8, width: 8}
	const out, batch = 32, 3
	for _, in := range []int{4, 5, 64} {
		rng := rand.New(rand.NewPCG(uint64(in), 1))
		exact := func() float32 { return fromBF16(toBF16(float32(rng.NormFloat64()))) }
		x := make([]float32, batch*in*sh.cells())
		w := make([]float32, out*in*9)
		for i := range x {
			x[i] = exact()
		}
		for i := range w {
			w[i] = exact()
		}
		pack := func(dst []float32) {
			g := convGeom{in: in, out: out, kernel: 3}
			g.packWeights(w, dst, false)
		}
		conv := func(a directArch, x []float32) []float32 {
			var dt directTrain
			y := make([]float32, batch*out*sh.cells())
			dt.run(a, sh, 3, in, out, batch, 2, x, y, pack)
			if a.bf16 && (dt.half != nil) != (in%2 == 0) {
				t.Fatalf("%d inputs: bfloat16 buffers %v", in, dt.half != nil)
			}
			return y
		}
		want, got := conv(archAVX512, x), conv(arch, x)
		if d := maxAbsDiff(want, got); d > 1e-4*max(1, maxAbs(want)) {
			t.Errorf("%d inputs held exactly: bfloat16 training convolution differs from float32's by %g", in, d)
		}
		for i := range x {
			x[i] += float32(rng.NormFloat64()) * 1e-3 // now between bfloat16s
		}
		want, got = conv(archAVX512, x), conv(arch, x)
		d := maxAbsDiff(want, got)
		if in%2 == 1 && d > 1e-4*max(1, maxAbs(want)) {
			t.Errorf("%d inputs (odd, float32): differs by %g", in, d)
		}
		if in%2 == 0 && (d == 0 || d > 0.05*maxAbs(want)) {
			t.Errorf("%d inputs between bfloat16s: differs from float32 by %g of %g, want a little", in, d, maxAbs(want))
		}
	}
}

func maxAbs(v []float32) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, math.Abs(float64(x)))
	}
	return m
}

// TestTrainerBF16: with the bfloat16 kernels named (FLIPZERO_CONV), a
// trainer's steps on the Othello network follow float32's: the same
// losses to within bfloat16's rounding, the weights moved the same way,
// and not bit for bit (bfloat16 ran).
func TestTrainerBF16(t *testing.T) {
	archs := directBF16Archs()
	if len(archs) == 0 {
		t.Skip("this CPU has no AVX-512 BF16")
	}
	for _, arch := range archs {
		t.Run(arch.name, func(t *testing.T) { testTrainerBF16(t, strings.ReplaceAll(strings.ToLower(arch.name), " ", "")) })
	}
}

func testTrainerBF16(t *testing.T, conv string) {
	g := othello.Othello()
	b := randomBatch(g, 32, 5)
	train := func(conv string) ([]nn.Losses, []float32) {
		t.Setenv("FLIPZERO_CONV", conv)
		net, err := nn.New(g, nn.DefaultConfig(g), 4)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := NewTrainer(net, nn.DefaultTrainConfig())
		if err != nil {
			t.Fatal(err)
		}
		var losses []nn.Losses
		for range 3 {
			l, err := tr.Step(b)
			if err != nil {
				t.Fatal(err)
			}
			losses = append(losses, l)
		}
		var w []float32
		for _, p := range net.Learnables() {
			w = append(w, p.Data...)
		}
		return losses, w
	}
	want, w32 := train("avx512")
	got, w16 := train(conv)
	for i := range want {
		for _, pair := range [][2]float64{{want[i].Policy, got[i].Policy}, {want[i].Value, got[i].Value}} {
			if d := math.Abs(pair[0] - pair[1]); d > 0.01*max(1, pair[0]) {
				t.Errorf("step %d: loss %g in bfloat16, %g in float32", i+1, pair[1], pair[0])
			}
		}
	}
	if d := maxAbsDiff(w32, w16); d == 0 || d > 0.01*maxAbs(w32) {
		t.Errorf("after 3 steps the weights differ by %g (largest %g): want a little, not nothing", d, maxAbs(w32))
	}
}
