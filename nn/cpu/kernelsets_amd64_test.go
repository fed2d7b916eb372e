package cpu

// float32Sets are amd64's float32 kernel sets and the instructions each
// needs.
var float32Sets = []kernelSet{
	{archAVX512, "AVX-512 (F)"},
	{archAVX2, "AVX2 and FMA"},
}
