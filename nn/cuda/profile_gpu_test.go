package cuda

import (
	"fmt"
	"testing"
	"time"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/env/yinsh"
	"github.com/flipzero/flipzero/nn"
	"github.com/flipzero/flipzero/nn/nntest"
)

// TestGPUProfile logs the time of a call through each path's graph at
// several batch sizes, in float32 and in TF32, and what cuDNN measures for
// each algorithm of the tower's convolution: the data behind the choice
// of path.
func TestGPUProfile(t *testing.T) {
	d := openGPU(t)
	defer fp32.set(d)
	const most = 2048
	for _, g := range []env.Game{othello.Othello(), yinsh.Full()} {
		net, err := nn.New(g, nn.DefaultConfig(g), 3)
		if err != nil {
			t.Fatal(err)
		}
		positions := nntest.Encode(env.RandomPositions(g, 512, 9, false))
		size := len(positions) / 512
		inputs := make([]float32, most*size)
		for i := 0; i < len(inputs); i += len(positions) {
			copy(inputs[i:], positions)
		}
		for _, mode := range []precision{fp32, tf32, fp16} {
			mode.set(d)
			for _, only := range []path{cudnnPath, nhwcPath, halfPath, gemmPath} {
				if (only == halfPath) != (mode == fp16) {
					continue
				}
				inf, err := d.NewInference(net.Fold().Layers(), most)
				if err != nil {
					t.Fatal(err)
				}
				inf.only = only
				line := ""
				for _, n := range []int{1, 8, 32, 128, 256, 512, most} {
					if only == gemmPath && n > inf.gemmMax {
						continue
					}
					for range 3 {
						if _, _, err := inf.Forward(inputs[:n*size], n); err != nil {
							t.Fatal(err)
						}
					}
					const reps = 50
					start := time.Now()
					for range reps {
						if _, _, err := inf.Forward(inputs[:n*size], n); err != nil {
							t.Fatal(err)
						}
					}
					line += fmt.Sprintf(" %d: %v;", n, time.Since(start)/reps)
				}
				t.Logf("%s %v path, %v, per call:%s", g.Name(), only, mode, line)
				if only == cudnnPath && mode == fp32 {
					logFind(t, inf, inf.plans[256])
				}
				inf.Close()
			}
		}
	}
}

// logFind logs cuDNN's timing of every algorithm for the tower's convolution.
func logFind(t *testing.T, inf *Inference, p *plan) {
	if len(inf.blocks) == 0 || p == nil {
		return
	}
	d := inf.d
	unbind, _ := d.bindThread()
	defer unbind()
	var desc uintptr
	d.dnn.cudnnCreateConvolutionDescriptor(&desc)
	defer d.dnn.cudnnDestroyConvolutionDescriptor(desc)
	d.dnn.cudnnSetConvolution2dDescriptor(desc, 1, 1, 1, 1, 1, 1, cudnnCrossCorrelation, cudnnDataFloat)
	d.dnn.cudnnSetConvolutionMathType(desc, cudnnFMAMath)
	var perf [cudnnFwdAlgoCount]convFwdPerf
	var got int32
	c := &inf.blocks[0][0]
	r := d.dnn.cudnnFindConvolutionForwardAlgorithm(inf.dnn, p.actDesc, c.wDesc, desc, p.actDesc, int32(len(perf)), &got, &perf[0])
	line := ""
	for _, q := range perf[:got] {
		if q.Status == cudaSuccess {
			line += fmt.Sprintf(" algo %d %.1fµs;", q.Algo, q.Time*1000)
		}
	}
	t.Logf("batch %d tower convolution, cuDNN Find (status %d):%s", p.n, r, line)
}
