package cpu

import (
	"math/rand/v2"
	"time"
)

// MeasureMatMul measures this build's float32 matrix multiply on the
// calling goroutine: products of an m×k and a k×n matrix repeated for at
// least minTime. It returns GFLOP/s (a multiply-add counts two), the peak
// the network's speed is compared with.
func MeasureMatMul(m, n, k int, minTime time.Duration) float64 {
	rng := rand.New(rand.NewPCG(1, 1))
	a := make([]float32, m*k)
	b := make([]float32, k*n)
	c := make([]float32, m*n)
	// Random, not zero: gonum skips the work of zero entries.
	for i := range a {
		a[i] = rng.Float32()
	}
	for i := range b {
		b[i] = rng.Float32()
	}
	sgemm(m, n, k, a, k, b, n, c, n) // warm up
	runs := 0
	start := time.Now()
	for runs == 0 || time.Since(start) < minTime {
		sgemm(m, n, k, a, k, b, n, c, n)
		runs++
	}
	flops := 2 * float64(m) * float64(n) * float64(k) * float64(runs)
	return flops / time.Since(start).Seconds() / 1e9
}
