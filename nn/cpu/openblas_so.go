//go:build (linux || freebsd || netbsd) && !android

package cpu

// openBLASName is the library's soname, as the distributions install it
// (Debian: libopenblas0-pthread, behind the alternatives system).
const openBLASName = "libopenblas.so.0"
