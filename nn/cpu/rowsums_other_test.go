//go:build !amd64

package cpu

import "runtime"

// rowAssembly tells whether batch norm's row loops run in assembly on
// this CPU, and if not, why.
func rowAssembly() (bool, string) {
	return false, "batch norm's row loops have no assembly on " + runtime.GOARCH
}
