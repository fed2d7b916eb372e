package cpu

// rowAssembly tells whether batch norm's row loops run in assembly on
// this CPU, and if not, why.
func rowAssembly() (bool, string) { return rowBulk(8) > 0, "this CPU has no AVX2 and FMA" }
