package cuda

import (
	"fmt"
	"time"

	"github.com/flipzero/flipzero/nn"
)

// BenchResult is the speed of Forward at one batch size.
type BenchResult struct {
	Batch              int
	PositionsPerSecond float64
	// Path says how the batch ran: "cudnn graph", "cudnn-nhwc graph",
	// "cudnn-nhwc-fp16 graph", "sgemm graph" (im2row and cuBLAS), or
	// "… eager" where no graph could be captured; and why an NHWC path did
	// not run, where it did not.
	Path string
}

// BenchForward measures Forward at one batch size over at least minTime,
// after a warm-up that picks the algorithms and captures the graph.
// inputs holds encoded positions, repeated as needed to fill the batch.
func BenchForward(d *Device, l nn.Layers, inputs []float32, batch int, minTime time.Duration) (BenchResult, error) {
	r := BenchResult{Batch: batch}
	size := l.Planes * l.Height * l.Width
	if size == 0 || len(inputs) < size || len(inputs)%size != 0 {
		return r, fmt.Errorf("cuda bench: %d input values for positions of %d", len(inputs), size)
	}
	inf, err := d.NewInference(l, batch)
	if err != nil {
		return r, err
	}
	defer inf.Close()
	in := make([]float32, batch*size)
	for i := 0; i < len(in); i += len(inputs) {
		copy(in[i:], inputs)
	}
	for range 3 {
		if _, _, err := inf.Forward(in, batch); err != nil {
			return r, err
		}
	}
	calls := 0
	start := time.Now()
	for time.Since(start) < minTime || calls < 10 {
		if _, _, err := inf.Forward(in, batch); err != nil {
			return r, err
		}
		calls++
	}
	r.PositionsPerSecond = float64(calls*batch) / time.Since(start).Seconds()
	if p := inf.plans[bucket(batch, batch)]; p != nil {
		r.Path = p.path.String() + " graph"
		if p.exec == 0 {
			r.Path = p.path.String() + " eager"
		}
		for _, c := range []path{nhwcPath, halfPath} {
			if err := p.refusal(c); err != nil {
				r.Path += fmt.Sprintf("; %v path not run: %v", c, err)
			}
		}
	}
	return r, nil
}

// BenchTrain measures training steps on one batch, repeated, over at
// least minTime after a warm-up step: samples per second. The network's
// own arrays are left as they were (the trainer is never synced).
func BenchTrain(d *Device, net *nn.Network, b nn.Batch, minTime time.Duration) (float64, error) {
	t, err := d.NewTrainer(net, nn.DefaultTrainConfig(), nil)
	if err != nil {
		return 0, err
	}
	defer t.Close()
	planes, h, w := net.Game().EncodedShape()
	n := len(b.Inputs) / (planes * h * w)
	if _, err := t.Step(b); err != nil {
		return 0, err
	}
	steps := 0
	start := time.Now()
	for time.Since(start) < minTime || steps < 3 {
		if _, err := t.Step(b); err != nil {
			return 0, err
		}
		steps++
	}
	return float64(steps*n) / time.Since(start).Seconds(), nil
}
