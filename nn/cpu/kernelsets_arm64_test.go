package cpu

// float32Sets are arm64's float32 kernel sets and the instructions each
// needs.
var float32Sets = []kernelSet{{archNEON, "NEON"}}

// int8Sets: no int8 kernels on arm64; the network evaluates in float32.
var int8Sets []kernelSet
