//go:build amd64 && !linux

package cpu

// amxPermit: AMX is used on Linux only, the one system here that asks
// a process to request the tiles' state.
func amxPermit() bool { return false }
