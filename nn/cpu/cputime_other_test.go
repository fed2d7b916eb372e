//go:build !unix

package cpu

import "time"

// cpuTime is unknown here; per-CPU-second figures come out infinite.
func cpuTime() time.Duration { return 0 }
