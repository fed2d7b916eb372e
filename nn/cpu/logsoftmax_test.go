package cpu

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestLogSoftmaxRows: rows of very different scales, the case that makes
// Gorgonia's LogSoftMax return NaN, against log-softmax in float64; and
// the gradient of Σ t·logsoftmax against t − softmax·Σt.
func TestLogSoftmaxRows(t *testing.T) {
	x := []float32{
		illegalLogit, 0.5, -1, 2,
		7, illegalLogit, illegalLogit, illegalLogit,
		-3, -2, 90, illegalLogit,
	}
	target := []float32{0, 0.2, 0.3, 0.5, 1, 0, 0, 0, 0.5, 0.5, 0, 0}
	g := G.NewGraph()
	xn := G.NewMatrix(g, tensor.Float32, G.WithName("x"), G.WithValue(tensor.New(tensor.WithShape(3, 4), tensor.WithBacking(x))))
	tn := G.NewMatrix(g, tensor.Float32, G.WithName("t"), G.WithValue(tensor.New(tensor.WithShape(3, 4), tensor.WithBacking(target))))
	y, err := logSoftmaxRows(xn)
	if err != nil {
		t.Fatal(err)
	}
	prod, err := G.HadamardProd(tn, y)
	if err != nil {
		t.Fatal(err)
	}
	cost, err := G.Sum(prod)
	if err != nil {
		t.Fatal(err)
	}
	grads, err := G.Grad(cost, xn)
	if err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	got := y.Value().Data().([]float32)
	dx := grads[0].Value().Data().([]float32)
	for r := 0; r < 3; r++ {
		row := x[r*4 : (r+1)*4]
		m := math.Inf(-1)
		for _, v := range row {
			m = math.Max(m, float64(v))
		}
		sum, tsum := 0.0, 0.0
		for i, v := range row {
			sum += math.Exp(float64(v) - m)
			tsum += float64(target[r*4+i])
		}
		for i, v := range row {
			want := float64(v) - m - math.Log(sum)
			if g := float64(got[r*4+i]); math.IsNaN(g) || math.Abs(g-want) > 1e-4*math.Max(1, math.Abs(want)) {
				t.Errorf("row %d col %d: %g, want %g", r, i, g, want)
			}
			wantGrad := float64(target[r*4+i]) - math.Exp(want)*tsum
			if g := float64(dx[r*4+i]); math.Abs(g-wantGrad) > 1e-5 {
				t.Errorf("row %d col %d: gradient %g, want %g", r, i, g, wantGrad)
			}
		}
	}
}
