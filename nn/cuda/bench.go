package cuda

import (
	"fmt"
	"time"

	"github.com/flipzero/flipzero/nn"
)

// BenchForward measures Forward at one batch size: positions per second
// over at least minTime, after a warm-up that picks the algorithms and
// captures the graph. inputs holds encoded positions, repeated as needed
// to fill the batch.
func BenchForward(d *Device, l nn.Layers, inputs []float32, batch int, minTime time.Duration) (float64, error) {
	size := l.Planes * l.Height * l.Width
	if size == 0 || len(inputs) < size || len(inputs)%size != 0 {
		return 0, fmt.Errorf("cuda bench: %d input values for positions of %d", len(inputs), size)
	}
	inf, err := d.NewInference(l, batch)
	if err != nil {
		return 0, err
	}
	defer inf.Close()
	in := make([]float32, batch*size)
	for i := 0; i < len(in); i += len(inputs) {
		copy(in[i:], inputs)
	}
	for range 3 {
		if _, _, err := inf.Forward(in, batch); err != nil {
			return 0, err
		}
	}
	calls := 0
	start := time.Now()
	for time.Since(start) < minTime || calls < 10 {
		if _, _, err := inf.Forward(in, batch); err != nil {
			return 0, err
		}
		calls++
	}
	return float64(calls*batch) / time.Since(start).Seconds(), nil
}
