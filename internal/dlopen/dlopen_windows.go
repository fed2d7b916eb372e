package dlopen

import (
	"errors"
	"fmt"

	"golang.org/x/sys/windows"
)

// Open loads the DLL name. A bare name is looked for where Windows looks
// by default (the program's folder, the system's, then PATH), which is
// where the installers of OpenBLAS put it.
func Open(name string, _ Scope) (uintptr, error) {
	h, err := windows.LoadLibrary(name)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return uintptr(h), nil
}

// Sym is the address of the function name exported by the DLL lib.
func Sym(lib uintptr, name string) (uintptr, error) {
	p, err := windows.GetProcAddress(windows.Handle(lib), name)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return p, nil
}

// NotFound tells, of an error from Open, whether the DLL (or one it
// needs) is not installed, rather than there and broken.
func NotFound(err error) bool {
	return errors.Is(err, windows.ERROR_MOD_NOT_FOUND)
}
