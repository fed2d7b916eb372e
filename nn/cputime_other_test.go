//go:build !unix

package nn

import "time"

// cpuTime is unknown here; per-CPU-second figures come out infinite.
func cpuTime() time.Duration { return 0 }
