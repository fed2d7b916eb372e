package nn

import (
	"math/rand/v2"
	"time"
)

// MeasureMatMul measures this build's float32 matrix multiply on the
// calling goroutine: square size×size products repeated for at least
// minTime. It returns GFLOP/s (a multiply-add counts two), the peak the
// network's speed is compared with.
func MeasureMatMul(size int, minTime time.Duration) float64 {
	rng := rand.New(rand.NewPCG(1, 1))
	a := make([]float32, size*size)
	b := make([]float32, size*size)
	c := make([]float32, size*size)
	for i := range a {
		a[i] = rng.Float32()
		b[i] = rng.Float32()
	}
	sgemm(size, size, size, a, size, b, size, c, size) // warm up
	runs := 0
	start := time.Now()
	for runs == 0 || time.Since(start) < minTime {
		sgemm(size, size, size, a, size, b, size, c, size)
		runs++
	}
	flops := 2 * float64(size) * float64(size) * float64(size) * float64(runs)
	return flops / time.Since(start).Seconds() / 1e9
}
