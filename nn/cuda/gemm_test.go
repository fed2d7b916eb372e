package cuda

import (
	"math"
	"testing"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/env/tictactoe"
	"github.com/flipzero/flipzero/env/yinsh"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/cpu"
	"github.com/flipzero/flipzero/nn/nntest"
)

// sgemmPathHost runs the SGEMM path's steps on the CPU with the same
// arguments the GPU gets: im2rowFor and im2rowHost, rowWeights,
// denseGemm through columnMajorGemm, headWeights.
func sgemmPathHost(l nn.Layers, input []float32, n int) (logits, wdl []float32) {
	h, w, cells := l.Height, l.Width, l.Height*l.Width
	rows := n * cells
	epilogue := func(y, bias, skip []float32, channels int, relu bool) {
		for i := range y {
			y[i] += bias[i%channels]
			if skip != nil {
				y[i] += skip[i]
			}
			if relu {
				y[i] = max(y[i], 0)
			}
		}
	}
	conv := func(c nn.ConvLayer, src []float32, nchw bool, skip []float32) []float32 {
		a := im2rowFor(n, c.In, h, w, c.Kernel, nchw)
		buf := make([]float32, a.total)
		im2rowHost(a, src, buf)
		k := c.Kernel * c.Kernel * c.In
		out := make([]float32, rows*c.Out)
		columnMajorGemm(denseGemm(k, c.Out, rows, k, 0), rowWeights(c), buf, out)
		epilogue(out, c.Bias, skip, c.Out, true)
		return out
	}
	x := conv(l.Stem, input, true, nil)
	for _, b := range l.Blocks {
		x = conv(b[1], conv(b[0], x, false, nil), false, x)
	}
	heads := mergeHeads(l.PolicyConv, l.ValueConv)
	headOut := make([]float32, rows*heads.Out)
	columnMajorGemm(denseGemm(heads.In, heads.Out, rows, heads.In, 0), rowWeights(heads), x, headOut)
	epilogue(headOut, heads.Bias, nil, heads.Out, true)
	flat := cells * heads.Out
	logits = make([]float32, n*l.Actions)
	columnMajorGemm(denseGemm(flat, l.Actions, n, flat, 0), headWeights(l.PolicyFC, cells, heads.Out, 0, l.PolicyConv.Out), headOut, logits)
	epilogue(logits, l.PolicyFC.Bias, nil, l.Actions, false)
	hidden := make([]float32, n*l.ValueFC1.Out)
	columnMajorGemm(denseGemm(flat, l.ValueFC1.Out, n, flat, 0), headWeights(l.ValueFC1, cells, heads.Out, l.PolicyConv.Out, l.ValueConv.Out), headOut, hidden)
	epilogue(hidden, l.ValueFC1.Bias, nil, l.ValueFC1.Out, true)
	wdl = make([]float32, n*3)
	columnMajorGemm(denseGemm(l.ValueFC1.Out, 3, n, l.ValueFC1.Out, 0), l.ValueFC2.Weights, hidden, wdl)
	epilogue(wdl, l.ValueFC2.Bias, nil, 3, false)
	for i := 0; i < n; i++ {
		v := wdl[3*i : 3*i+3]
		m := max(v[0], v[1], v[2])
		sum := 0.0
		for k := range v {
			sum += math.Exp(float64(v[k] - m))
		}
		for k := range v {
			v[k] = float32(math.Exp(float64(v[k]-m)) / sum)
		}
	}
	return logits, wdl
}

// TestSGEMMPathLayout checks the SGEMM path's data layouts on the CPU:
// its policy logits must be the evaluator's.
func TestSGEMMPathLayout(t *testing.T) {
	for _, g := range []env.Game{tictactoe.Game{}, othello.Othello(), yinsh.Full()} {
		net, err := nn.New(g, nn.Config{Blocks: 1, Filters: 8, PolicyFilters: 2, ValueFilters: 1, ValueHidden: 8}, 5)
		if err != nil {
			t.Fatal(err)
		}
		nntest.Perturb(net, 6)
		folded := net.Fold()
		const n = 3
		input := nntest.Encode(env.RandomPositions(g, n, 2, false))
		ev, err := cpu.NewEvaluator(folded, n)
		if err != nil {
			t.Fatal(err)
		}
		wantLogits, wantWDL, err := ev.Forward(input, n)
		if err != nil {
			t.Fatal(err)
		}
		logits, wdl := sgemmPathHost(folded.Layers(), input, n)
		if d := maxDiff(logits, wantLogits); d > 1e-4 {
			t.Errorf("%s: SGEMM path's logits differ from the evaluator's by %g", g.Name(), d)
		}
		if d := maxDiff(wdl, wantWDL); d > 1e-5 {
			t.Errorf("%s: SGEMM path's win/draw/loss differ from the evaluator's by %g", g.Name(), d)
		}
	}
}

func TestIm2rowPadsWithZeros(t *testing.T) {
	// One 2×2 position, one channel: the 3×3 neighbourhood of cell (0, 0)
	// is zero outside the board.
	a := im2rowFor(1, 1, 2, 2, 3, true)
	dst := make([]float32, a.total)
	im2rowHost(a, []float32{1, 2, 3, 4}, dst)
	want := []float32{0, 0, 0, 0, 1, 2, 0, 3, 4}
	for i, v := range want {
		if dst[i] != v {
			t.Fatalf("row 0 is %v, want %v", dst[:9], want)
		}
	}
}
