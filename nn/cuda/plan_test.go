package cuda

import (
	"strings"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/env/yinsh"
	"github.com/flipzero/flipzero/nn"
)

func layersOf(t testing.TB, g env.Game) nn.Layers {
	t.Helper()
	net, err := nn.New(g, nn.DefaultConfig(g), 7)
	if err != nil {
		t.Fatal(err)
	}
	return net.Fold().Layers()
}

func TestCheckLayers(t *testing.T) {
	for _, g := range []env.Game{tictactoe.Game{}, othello.Othello(), yinsh.Full()} {
		if err := checkLayers(layersOf(t, g)); err != nil {
			t.Fatalf("%s: %v", g.Name(), err)
		}
	}
	for _, tc := range []struct {
		name   string
		break_ func(*nn.Layers)
		want   string
	}{
		{"short stem", func(l *nn.Layers) { l.Stem.Weights = l.Stem.Weights[1:] }, "stem has"},
		{"block width", func(l *nn.Layers) { l.Blocks[1][0].In++ }, "block 1 a"},
		{"policy fc", func(l *nn.Layers) { l.PolicyFC.Out-- }, "policy fc"},
		{"value bias", func(l *nn.Layers) { l.ValueFC2.Bias = nil }, "value fc2"},
		{"outputs", func(l *nn.Layers) { l.ValueOutputs = 2 }, "value outputs"},
		{"input", func(l *nn.Layers) { l.Planes = 0 }, "input"},
	} {
		l := layersOf(t, othello.Othello())
		tc.break_(&l)
		err := checkLayers(l)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
}

func TestMergeHeads(t *testing.T) {
	l := layersOf(t, othello.Othello())
	m := mergeHeads(l.PolicyConv, l.ValueConv)
	if m.Out != l.PolicyConv.Out+l.ValueConv.Out || m.In != l.Filters || m.Kernel != 1 {
		t.Fatalf("merged head %d→%d k%d", m.In, m.Out, m.Kernel)
	}
	per := m.In
	for o := 0; o < m.Out; o++ {
		src, bias := l.PolicyConv, l.PolicyConv.Bias
		oo := o
		if o >= l.PolicyConv.Out {
			src, bias, oo = l.ValueConv, l.ValueConv.Bias, o-l.PolicyConv.Out
		}
		if m.Bias[o] != bias[oo] || m.Weights[o*per+per-1] != src.Weights[oo*per+per-1] {
			t.Fatalf("output %d does not come from its head", o)
		}
	}
}

func TestBucket(t *testing.T) {
	for _, tc := range []struct{ count, max, want int }{
		{1, 2048, 1}, {3, 2048, 3}, {5, 2048, 6}, {7, 2048, 8}, {13, 2048, 16},
		{200, 2048, 256}, {256, 2048, 256}, {257, 2048, 384}, {2000, 2048, 2048}, {300, 300, 300}, {250, 300, 256},
	} {
		if got := bucket(tc.count, tc.max); got != tc.want {
			t.Errorf("bucket(%d, %d) = %d, want %d", tc.count, tc.max, got, tc.want)
		}
	}
	sizes := map[int]bool{}
	for c := 1; c <= 4096; c++ {
		b := bucket(c, 4096)
		if b < c || b > 4096 || 2*b > 3*c {
			t.Fatalf("count %d runs at %d", c, b)
		}
		sizes[b] = true
	}
	if len(sizes) > 26 {
		t.Fatalf("%d batch sizes for counts up to 4096", len(sizes))
	}
}

// TestDenseGemm checks the cuBLAS arguments against a row-major product,
// with the input rows strided and offset as the merged heads lay them out.
func TestDenseGemm(t *testing.T) {
	const rows, in, out, stride, offset = 5, 7, 3, 11, 4
	x := make([]float32, rows*stride)
	for i := range x {
		x[i] = float32(i%13) - 6
	}
	w := make([]float32, in*out)
	for i := range w {
		w[i] = float32(i%5) - 2
	}
	got := make([]float32, rows*out)
	columnMajorGemm(denseGemm(in, out, rows, stride, offset), w, x, got)
	for r := 0; r < rows; r++ {
		for o := 0; o < out; o++ {
			var want float32
			for i := 0; i < in; i++ {
				want += x[r*stride+offset+i] * w[i*out+o]
			}
			if got[r*out+o] != want {
				t.Fatalf("row %d output %d: %g, want %g", r, o, got[r*out+o], want)
			}
		}
	}
}

func TestPickAlgo(t *testing.T) {
	perf := []convFwdPerf{
		{Algo: 6, Status: 3, MathType: cudnnFMAMath},
		{Algo: 1, Status: 0, MathType: 1},
		{Algo: 0, Status: 0, MathType: cudnnFMAMath},
	}
	if got := pickAlgo(perf, true); got != 1 {
		t.Errorf("tf32: picked %d, want the fastest working one, 1", got)
	}
	if got := pickAlgo(perf, false); got != 2 {
		t.Errorf("fp32: picked %d, want the FMA one, 2", got)
	}
	if got := pickAlgo(perf[:1], false); got != -1 {
		t.Errorf("only failures: picked %d", got)
	}
}

func TestForwardChecksArguments(t *testing.T) {
	inf := &Inference{maxBatch: 4, planes: 2, h: 3, w: 3, cells: 9}
	for _, tc := range []struct {
		n, count int
		want     string
	}{
		{0, 0, "0 positions"}, {90, 5, "5 positions"}, {17, 1, "17 input values, want 18"},
	} {
		_, _, err := inf.Forward(make([]float32, tc.n), tc.count)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("forward %d values as %d positions: %v, want %q", tc.n, tc.count, err, tc.want)
		}
	}
	inf.closed = true
	if _, _, err := inf.Forward(make([]float32, 18), 1); err == nil {
		t.Error("forward on a closed inference succeeded")
	}
}

func TestNewInferenceChecksBatch(t *testing.T) {
	d := &Device{}
	for _, n := range []int{0, -1, maxBatchLimit + 1} {
		if _, err := d.NewInference(layersOf(t, tictactoe.Game{}), n); err == nil || !strings.Contains(err.Error(), "batch size") {
			t.Errorf("batch %d: %v", n, err)
		}
	}
	l := layersOf(t, tictactoe.Game{})
	l.Stem.Bias = nil
	if _, err := d.NewInference(l, 8); err == nil || !strings.Contains(err.Error(), "stem") {
		t.Errorf("broken layers: %v", err)
	}
}

func TestRowGemm(t *testing.T) {
	const m, n, k = 3, 4, 5
	val := func(i int) float32 { return float32(i%7) - 3 }
	for _, tc := range []struct{ transA, transB bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		a := make([]float32, m*k)
		b := make([]float32, k*n)
		for i := range a {
			a[i] = val(i)
		}
		for i := range b {
			b[i] = val(3 * i)
		}
		// A(i, p) and B(p, j) as the row-major matrices op(A) and op(B).
		A := func(i, p int) float32 {
			if tc.transA {
				return a[p*m+i]
			}
			return a[i*k+p]
		}
		B := func(p, j int) float32 {
			if tc.transB {
				return b[j*k+p]
			}
			return b[p*n+j]
		}
		g := rowGemm(tc.transA, tc.transB, m, n, k)
		c := make([]float32, m*n)
		columnMajorGemmOps(g.opFirst, g.opSecond, g.m, g.n, g.k, b, g.ldFirst, a, g.ldSecond, c, g.ldc)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				var want float32
				for p := 0; p < k; p++ {
					want += A(i, p) * B(p, j)
				}
				if c[i*n+j] != want {
					t.Fatalf("transA %v transB %v: C(%d,%d) = %g, want %g", tc.transA, tc.transB, i, j, c[i*n+j], want)
				}
			}
		}
	}
}

// TestLayersShape: the architecture Reload must keep tells networks of
// other widths, heads and pooling apart, and not networks that differ in
// weights alone.
func TestLayersShape(t *testing.T) {
	g := yinsh.Full()
	base := nn.DefaultConfig(g)
	variants := map[string]nn.Config{"default": base}
	wide, pool, conv := base, base, base
	wide.Filters = 32
	pool.GlobalPooling = true
	conv.PolicyHead, conv.PolicyFilters = "conv", 32
	variants["wide"], variants["pool"], variants["conv"] = wide, pool, conv
	seen := map[string]string{}
	for name, cfg := range variants {
		a, err := nn.New(g, cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		b, err := nn.New(g, cfg, 2)
		if err != nil {
			t.Fatal(err)
		}
		sa, sb := layersShape(a.Fold().Layers()), layersShape(b.Fold().Layers())
		if sa != sb {
			t.Errorf("%s: two networks of one architecture differ: %q, %q", name, sa, sb)
		}
		if other, ok := seen[sa]; ok {
			t.Errorf("%s and %s look the same", name, other)
		}
		seen[sa] = name
	}
}

// TestNHWCWeights convolves one input both ways: in NCHW with the layer's
// own weights, and in NHWC with nhwcWeights' layout, on a board that is
// not square so that rows and columns cannot be confused. Integer values
// keep every sum exact.
func TestNHWCWeights(t *testing.T) {
	const in, out, k, h, w = 3, 4, 3, 4, 5
	c := nn.ConvLayer{Kernel: k, In: in, Out: out, Weights: make([]float32, out*in*k*k)}
	for i := range c.Weights {
		c.Weights[i] = float32(i%7) - 3
	}
	x := make([]float32, in*h*w) // NCHW, one position
	for i := range x {
		x[i] = float32(i%5) - 2
	}
	xT := make([]float32, len(x)) // the same position NHWC, as cudnnTransformTensor writes it
	for i := 0; i < in; i++ {
		for p := 0; p < h*w; p++ {
			xT[p*in+i] = x[i*h*w+p]
		}
	}
	nhwc := nhwcWeights(c)
	for o := 0; o < out; o++ {
		for y := 0; y < h; y++ {
			for xx := 0; xx < w; xx++ {
				var want, got float32
				for ky := 0; ky < k; ky++ {
					for kx := 0; kx < k; kx++ {
						sy, sx := y+ky-k/2, xx+kx-k/2
						if sy < 0 || sy >= h || sx < 0 || sx >= w {
							continue
						}
						for i := 0; i < in; i++ {
							want += c.Weights[((o*in+i)*k+ky)*k+kx] * x[(i*h+sy)*w+sx]
							got += nhwc[((o*k+ky)*k+kx)*in+i] * xT[(sy*w+sx)*in+i]
						}
					}
				}
				if got != want {
					t.Fatalf("output %d at (%d, %d): %g with NHWC weights, want %g", o, y, xx, got, want)
				}
			}
		}
	}
}
