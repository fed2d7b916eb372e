// Package dlopen loads shared libraries at run time, without cgo, with
// errors that say why.
package dlopen

import (
	"runtime"

	"github.com/ebitengine/purego"
)

// Open loads the library name with dlopen's mode flags (purego.RTLD_*).
//
// dlerror's message lives in the calling OS thread; purego reads it in a
// second call after dlopen fails, and a goroutine may move to another
// thread between the two, which loses the reason ("cannot load X: ").
// Holding the thread across both keeps it.
func Open(name string, mode int) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return purego.Dlopen(name, mode)
}
