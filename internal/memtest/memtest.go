// Package memtest measures what a call allocates, for tests that a
// reader of outside bytes allocates in proportion to what it was given.
package memtest

import "runtime"

// Allocated is the bytes fn allocates, counted by the runtime.
func Allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
