//go:build !(darwin || freebsd || linux || netbsd || windows)

package dlopen

import (
	"errors"
	"fmt"
	"runtime"
)

var errUnsupported = errors.New("shared libraries are not loaded on " + runtime.GOOS)

// Open fails: this system has no loader flipzero can call without cgo.
func Open(name string, _ Scope) (uintptr, error) {
	return 0, fmt.Errorf("%s: %w", name, errUnsupported)
}

// Sym fails, as Open does.
func Sym(uintptr, string) (uintptr, error) { return 0, errUnsupported }

// NotFound is true: no library is ever there.
func NotFound(err error) bool { return errors.Is(err, errUnsupported) }
