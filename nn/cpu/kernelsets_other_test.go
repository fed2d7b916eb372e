//go:build !amd64 && !arm64

package cpu

// float32Sets: no direct kernels on this architecture.
var float32Sets []kernelSet

// int8Sets: no int8 kernels on this architecture.
var int8Sets []kernelSet
