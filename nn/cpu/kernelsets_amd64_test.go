package cpu

// float32Sets are amd64's float32 kernel sets and the instructions each
// needs.
var float32Sets = []kernelSet{
	{archAVX512, "AVX-512 (F)"},
	{archAVX2, "AVX2 and FMA"},
	{archAVX512Winograd, "AVX-512 (F), AVX2 and FMA"},
	{archAVX2Winograd, "AVX2 and FMA"},
}

// int8Sets are amd64's int8 kernel sets and the instructions each needs.
var int8Sets = []kernelSet{
	{archAVX512VNNI, "AVX-512 VNNI"},
	{archAVXVNNI, "AVX-VNNI"},
	{archAVX2Int8, "AVX2 and FMA"},
}
