// Package dlopen loads shared libraries at run time, without cgo, with
// errors that say why: through dlopen on Linux, macOS and the BSDs, and
// LoadLibrary on Windows. Elsewhere (js/wasm, plan9) nothing loads, and
// Open says so.
package dlopen

// Scope is whether a library's symbols are seen by the libraries loaded
// after it. Windows has no such choice: each DLL's exports are its own.
type Scope int

const (
	// Local keeps the library's symbols to itself (RTLD_LOCAL).
	Local Scope = iota
	// Global lets libraries loaded later bind to them (RTLD_GLOBAL), as
	// CUDA's libraries do to each other's.
	Global
)
