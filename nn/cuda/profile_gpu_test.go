package cuda

import (
	"fmt"
	"testing"
	"time"

	"github.com/flipzero/flipzero/env"
	"github.com/flipzero/flipzero/env/othello"
	"github.com/flipzero/flipzero/env/yinsh"
	"github.com/flipzero/flipzero/nn"
)

// TestGPUProfile logs each plan's algorithms and how a call's time splits
// between the graph's launch and the GPU's work.
// logFind logs cuDNN's timing of every algorithm for the tower's convolution.
func logFind(t *testing.T, inf *Inference, p *plan) {
	if len(inf.blocks) == 0 {
		return
	}
	d := inf.d
	unbind, _ := d.bindThread()
	defer unbind()
	for _, math := range []int32{cudnnFMAMath, cudnnDefaultMath} {
		var desc uintptr
		d.dnn.cudnnCreateConvolutionDescriptor(&desc)
		d.dnn.cudnnSetConvolution2dDescriptor(desc, 1, 1, 1, 1, 1, 1, cudnnCrossCorrelation, cudnnDataFloat)
		d.dnn.cudnnSetConvolutionMathType(desc, math)
		var perf [cudnnFwdAlgoCount]convFwdPerf
		var got int32
		c := &inf.blocks[0][0]
		r := d.dnn.cudnnFindConvolutionForwardAlgorithm(inf.dnn, p.actDesc, c.wDesc, desc, p.actDesc, int32(len(perf)), &got, &perf[0])
		line := ""
		for _, q := range perf[:got] {
			line += fmt.Sprintf(" algo %d status %d math %d %.1fµs ws %d;", q.Algo, q.Status, q.MathType, q.Time*1000, q.Memory)
		}
		t.Logf("batch %d tower conv math %d (find %d):%s", p.n, math, r, line)
		d.dnn.cudnnDestroyConvolutionDescriptor(desc)
	}
}

func TestGPUProfile(t *testing.T) {
	d := openGPU(t)
	for _, g := range []env.Game{othello.Othello(), yinsh.Full()} {
		net, err := nn.New(g, nn.DefaultConfig(g), 3)
		if err != nil {
			t.Fatal(err)
		}
		inputs := encode(env.RandomPositions(g, 2048, 9, false))
		size := len(inputs) / 2048
		inf, err := d.NewInference(net.Fold().Layers(), 2048)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 256, 2048} {
			for range 3 {
				if _, _, err := inf.Forward(inputs[:n*size], n); err != nil {
					t.Fatal(err)
				}
			}
			p := inf.plans[n]
			t.Logf("%s batch %d: algorithms stem %d tower %d head %d, workspace %d bytes", g.Name(), n, p.stemConv.algo, p.towerConv.algo, p.headConv.algo, p.wsBytes)
			const reps = 50
			unbind, _ := d.bindThread()
			start := time.Now()
			for range reps {
				d.drv.cuGraphLaunch(p.exec, inf.stream)
			}
			queued := time.Since(start)
			d.drv.cuStreamSynchronize(inf.stream)
			graph := time.Since(start)
			start = time.Now()
			for range reps {
				inf.enqueue(p)
			}
			eagerQueued := time.Since(start)
			d.drv.cuStreamSynchronize(inf.stream)
			eager := time.Since(start)
			unbind()
			start = time.Now()
			for range reps {
				inf.Forward(inputs[:n*size], n)
			}
			fwd := time.Since(start)
			t.Logf("%s batch %d per call: graph launch %v, graph total %v, eager enqueue %v, eager total %v, Forward %v",
				g.Name(), n, queued/reps, graph/reps, eagerQueued/reps, eager/reps, fwd/reps)
			logFind(t, inf, p)
		}
		inf.Close()
	}
}
