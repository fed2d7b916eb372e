package cpu

// float32Sets are arm64's float32 kernel sets and the instructions each
// needs.
var float32Sets = []kernelSet{{archNEON, "NEON"}}
