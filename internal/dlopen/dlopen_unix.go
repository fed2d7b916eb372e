//go:build darwin || freebsd || linux || netbsd

package dlopen

import (
	"runtime"
	"strings"

	"github.com/ebitengine/purego"
)

// Open loads the library name, resolving all its symbols now.
//
// dlerror's message lives in the calling OS thread; purego reads it in a
// second call after dlopen fails, and a goroutine may move to another
// thread between the two, which loses the reason ("cannot load X: ").
// Holding the thread across both keeps it.
func Open(name string, scope Scope) (uintptr, error) {
	mode := purego.RTLD_NOW | purego.RTLD_LOCAL
	if scope == Global {
		mode = purego.RTLD_NOW | purego.RTLD_GLOBAL
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return purego.Dlopen(name, mode)
}

// Sym is the address of the symbol name in the library lib. It holds the
// thread for dlerror as Open does.
func Sym(lib uintptr, name string) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return purego.Dlsym(lib, name)
}

// NotFound tells, of an error from Open, whether the library (or one it
// needs) is not installed, rather than there and broken.
func NotFound(err error) bool {
	return err != nil && strings.Contains(err.Error(), "No such file")
}
