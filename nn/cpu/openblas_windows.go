package cpu

// openBLASName is the DLL of OpenBLAS's own Windows builds and of MSYS2's
// package, found where Windows looks for a DLL (the program's folder, the
// system's, PATH).
const openBLASName = "libopenblas.dll"
