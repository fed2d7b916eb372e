//go:build amd64

#include "textflag.h"

// SPLAT puts the float32 whose bits are given in every lane of y (x its
// low half); AX is clobbered.
#define SPLAT(bits, x, y) MOVL $bits, AX; VMOVD AX, x; VBROADCASTSS x, y

// BT6 is F(4×4, 3×3)'s input transform in one dimension on 8 lanes:
// Y6..Y11 = B^T (Y0..Y5), with Y12 = 4, Y13 = 5 and Y14 = 2 in every lane;
// Y15 is clobbered.
#define BT6 \
	VMOVAPS Y4, Y6; \
	VFMADD231PS Y12, Y0, Y6; \
	VFNMADD231PS Y13, Y2, Y6; \
	VMOVAPS Y5, Y11; \
	VFMADD231PS Y12, Y1, Y11; \
	VFNMADD231PS Y13, Y3, Y11; \
	VADDPS Y2, Y1, Y15; \
	VADDPS Y4, Y3, Y7; \
	VFNMADD231PS Y12, Y15, Y7; \
	VSUBPS Y2, Y1, Y15; \
	VSUBPS Y3, Y4, Y8; \
	VFMADD231PS Y12, Y15, Y8; \
	VSUBPS Y1, Y3, Y15; \
	VSUBPS Y2, Y4, Y9; \
	VMOVAPS Y9, Y10; \
	VFMADD231PS Y14, Y15, Y9; \
	VFNMADD231PS Y14, Y15, Y10

// AT6 is its output transform in one dimension on 8 lanes:
// Y6..Y9 = A^T (Y0..Y5), with Y12 = 4, Y13 = 8 and Y14 = 2 in every lane;
// Y10, Y11 and Y15 are clobbered.
#define AT6 \
	VADDPS Y2, Y1, Y10; \
	VSUBPS Y2, Y1, Y11; \
	VADDPS Y4, Y3, Y15; \
	VADDPS Y10, Y0, Y6; \
	VADDPS Y15, Y6, Y6; \
	VMOVAPS Y10, Y8; \
	VFMADD231PS Y12, Y15, Y8; \
	VSUBPS Y4, Y3, Y15; \
	VMOVAPS Y11, Y7; \
	VFMADD231PS Y14, Y15, Y7; \
	VADDPS Y11, Y5, Y9; \
	VFMADD231PS Y13, Y15, Y9

// func winogradInputAVX2(dst, src, scratch *float32, srcRow, dstXi, channels int)
TEXT ·winogradInputAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ scratch+16(FP), BX
	MOVQ srcRow+24(FP), R8
	MOVQ dstXi+32(FP), R9
	MOVQ channels+40(FP), R10
	MOVQ R10, CX
	SHRQ $3, CX
	SHLQ $2, R10
	SPLAT(0x40800000, X12, Y12)
	SPLAT(0x40a00000, X13, Y13)
	SPLAT(0x40000000, X14, Y14)

inblock:
	// Down each of the 6 columns: scratch[6i+j] = (B^T d)[i][j].
	MOVQ SI, R11
	MOVQ BX, R12
	MOVQ $6, DX

incol:
	MOVQ R11, AX
	VMOVUPS (AX), Y0
	ADDQ R8, AX
	VMOVUPS (AX), Y1
	ADDQ R8, AX
	VMOVUPS (AX), Y2
	ADDQ R8, AX
	VMOVUPS (AX), Y3
	ADDQ R8, AX
	VMOVUPS (AX), Y4
	ADDQ R8, AX
	VMOVUPS (AX), Y5
	BT6
	VMOVUPS Y6, 0(R12)
	VMOVUPS Y7, 192(R12)
	VMOVUPS Y8, 384(R12)
	VMOVUPS Y9, 576(R12)
	VMOVUPS Y10, 768(R12)
	VMOVUPS Y11, 960(R12)
	ADDQ R10, R11
	ADDQ $32, R12
	DECQ DX
	JNZ incol

	// Along each of the 6 rows: dst[(6i+j)·dstXi] = (B^T d B)[i][j].
	MOVQ BX, R12
	MOVQ DI, AX
	MOVQ $6, DX

inrow:
	VMOVUPS 0(R12), Y0
	VMOVUPS 32(R12), Y1
	VMOVUPS 64(R12), Y2
	VMOVUPS 96(R12), Y3
	VMOVUPS 128(R12), Y4
	VMOVUPS 160(R12), Y5
	BT6
	VMOVUPS Y6, (AX)
	ADDQ R9, AX
	VMOVUPS Y7, (AX)
	ADDQ R9, AX
	VMOVUPS Y8, (AX)
	ADDQ R9, AX
	VMOVUPS Y9, (AX)
	ADDQ R9, AX
	VMOVUPS Y10, (AX)
	ADDQ R9, AX
	VMOVUPS Y11, (AX)
	ADDQ R9, AX
	ADDQ $192, R12
	DECQ DX
	JNZ inrow

	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ inblock
	VZEROUPPER
	RET

// func winogradOutputAVX2(dst *float32, offs *int64, src, scratch *float32, srcXi, channels int, skip *float32, relu int)
TEXT ·winogradOutputAVX2(SB), NOSPLIT, $0-64
	MOVQ dst+0(FP), DI
	MOVQ offs+8(FP), R8
	MOVQ src+16(FP), SI
	MOVQ scratch+24(FP), BX
	MOVQ srcXi+32(FP), R9
	MOVQ channels+40(FP), CX
	MOVQ skip+48(FP), R14
	SHRQ $3, CX
	MOVQ R9, R10
	IMULQ $6, R10
	SPLAT(0x40800000, X12, Y12)
	SPLAT(0x41000000, X13, Y13)
	SPLAT(0x40000000, X14, Y14)

outblock:
	// Down each of the 6 columns: scratch[6r+j] = (A^T m)[r][j].
	MOVQ SI, R11
	MOVQ BX, R12
	MOVQ $6, DX

outcol:
	MOVQ R11, AX
	VMOVUPS (AX), Y0
	ADDQ R10, AX
	VMOVUPS (AX), Y1
	ADDQ R10, AX
	VMOVUPS (AX), Y2
	ADDQ R10, AX
	VMOVUPS (AX), Y3
	ADDQ R10, AX
	VMOVUPS (AX), Y4
	ADDQ R10, AX
	VMOVUPS (AX), Y5
	AT6
	VMOVUPS Y6, 0(R12)
	VMOVUPS Y7, 192(R12)
	VMOVUPS Y8, 384(R12)
	VMOVUPS Y9, 576(R12)
	ADDQ R9, R11
	ADDQ $32, R12
	DECQ DX
	JNZ outcol

	// Along each of the 4 rows: output 4r+k = (A^T m A)[r][k], plus the
	// skip at its pixel where there is one, through the ReLU where asked,
	// stored at dst + 4·offs[4r+k] unless that is negative.
	MOVQ BX, R12
	MOVQ R8, R13
	MOVQ $4, DX

outrow:
	VMOVUPS 0(R12), Y0
	VMOVUPS 32(R12), Y1
	VMOVUPS 64(R12), Y2
	VMOVUPS 96(R12), Y3
	VMOVUPS 128(R12), Y4
	VMOVUPS 160(R12), Y5
	AT6
	VXORPS Y15, Y15, Y15
	MOVQ 0(R13), AX
	TESTQ AX, AX
	JS done0
	TESTQ R14, R14
	JZ relu0
	VADDPS (R14)(AX*4), Y6, Y6

relu0:
	CMPQ relu+56(FP), $0
	JEQ store0
	VMAXPS Y15, Y6, Y6

store0:
	VMOVUPS Y6, (DI)(AX*4)

done0:
	MOVQ 8(R13), AX
	TESTQ AX, AX
	JS done1
	TESTQ R14, R14
	JZ relu1
	VADDPS (R14)(AX*4), Y7, Y7

relu1:
	CMPQ relu+56(FP), $0
	JEQ store1
	VMAXPS Y15, Y7, Y7

store1:
	VMOVUPS Y7, (DI)(AX*4)

done1:
	MOVQ 16(R13), AX
	TESTQ AX, AX
	JS done2
	TESTQ R14, R14
	JZ relu2
	VADDPS (R14)(AX*4), Y8, Y8

relu2:
	CMPQ relu+56(FP), $0
	JEQ store2
	VMAXPS Y15, Y8, Y8

store2:
	VMOVUPS Y8, (DI)(AX*4)

done2:
	MOVQ 24(R13), AX
	TESTQ AX, AX
	JS done3
	TESTQ R14, R14
	JZ relu3
	VADDPS (R14)(AX*4), Y9, Y9

relu3:
	CMPQ relu+56(FP), $0
	JEQ store3
	VMAXPS Y15, Y9, Y9

store3:
	VMOVUPS Y9, (DI)(AX*4)

done3:
	ADDQ $32, R13
	ADDQ $192, R12
	DECQ DX
	JNZ outrow

	ADDQ $32, SI
	ADDQ $32, DI
	TESTQ R14, R14
	JZ noskip
	ADDQ $32, R14

noskip:
	DECQ CX
	JNZ outblock
	VZEROUPPER
	RET

// A4 is the output transform's transpose in one dimension on 8 lanes:
// Y6..Y11 = A (Y0..Y3), with Y12 = 4 and Y14 = 2 in every lane; Y4 and
// Y5 are clobbered.
#define A4 \
	VMOVAPS Y0, Y6; \
	VMOVAPS Y3, Y11; \
	VADDPS Y2, Y0, Y4; \
	VADDPS Y3, Y1, Y5; \
	VADDPS Y5, Y4, Y7; \
	VSUBPS Y5, Y4, Y8; \
	VMOVAPS Y0, Y4; \
	VFMADD231PS Y12, Y2, Y4; \
	VMOVAPS Y1, Y5; \
	VFMADD231PS Y12, Y3, Y5; \
	VMOVAPS Y4, Y9; \
	VFMADD231PS Y14, Y5, Y9; \
	VMOVAPS Y4, Y10; \
	VFNMADD231PS Y14, Y5, Y10

// func winogradGradAVX2(dst, src, scratch *float32, srcRow, dstXi, channels int)
TEXT ·winogradGradAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ scratch+16(FP), BX
	MOVQ srcRow+24(FP), R8
	MOVQ dstXi+32(FP), R9
	MOVQ channels+40(FP), R10
	MOVQ R10, CX
	SHRQ $3, CX
	SHLQ $2, R10
	SPLAT(0x40800000, X12, Y12)
	SPLAT(0x40000000, X14, Y14)

gradblock:
	// Down each of the 4 columns: scratch[4i+j] = (A dy)[i][j].
	MOVQ SI, R11
	MOVQ BX, R12
	MOVQ $4, DX

gradcol:
	MOVQ R11, AX
	VMOVUPS (AX), Y0
	ADDQ R8, AX
	VMOVUPS (AX), Y1
	ADDQ R8, AX
	VMOVUPS (AX), Y2
	ADDQ R8, AX
	VMOVUPS (AX), Y3
	A4
	VMOVUPS Y6, 0(R12)
	VMOVUPS Y7, 128(R12)
	VMOVUPS Y8, 256(R12)
	VMOVUPS Y9, 384(R12)
	VMOVUPS Y10, 512(R12)
	VMOVUPS Y11, 640(R12)
	ADDQ R10, R11
	ADDQ $32, R12
	DECQ DX
	JNZ gradcol

	// Along each of the 6 rows: dst[(6i+j)·dstXi] = (A dy A^T)[i][j].
	MOVQ BX, R12
	MOVQ DI, AX
	MOVQ $6, DX

gradrow:
	VMOVUPS 0(R12), Y0
	VMOVUPS 32(R12), Y1
	VMOVUPS 64(R12), Y2
	VMOVUPS 96(R12), Y3
	A4
	VMOVUPS Y6, (AX)
	ADDQ R9, AX
	VMOVUPS Y7, (AX)
	ADDQ R9, AX
	VMOVUPS Y8, (AX)
	ADDQ R9, AX
	VMOVUPS Y9, (AX)
	ADDQ R9, AX
	VMOVUPS Y10, (AX)
	ADDQ R9, AX
	VMOVUPS Y11, (AX)
	ADDQ R9, AX
	ADDQ $128, R12
	DECQ DX
	JNZ gradrow

	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ gradblock
	VZEROUPPER
	RET

// func transpose8AVX2(dst, src *float32, srcStride, dstStride, blockRows, blockCols int)
TEXT ·transpose8AVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ srcStride+16(FP), R8
	MOVQ dstStride+24(FP), R9
	MOVQ blockRows+32(FP), CX
	MOVQ R8, R12
	SHLQ $3, R12
	MOVQ R9, R13
	SHLQ $3, R13

trow:
	MOVQ blockCols+40(FP), DX
	MOVQ SI, R10
	MOVQ DI, R11

tcol:
	MOVQ R10, AX
	VMOVUPS (AX), Y0
	ADDQ R8, AX
	VMOVUPS (AX), Y1
	ADDQ R8, AX
	VMOVUPS (AX), Y2
	ADDQ R8, AX
	VMOVUPS (AX), Y3
	ADDQ R8, AX
	VMOVUPS (AX), Y4
	ADDQ R8, AX
	VMOVUPS (AX), Y5
	ADDQ R8, AX
	VMOVUPS (AX), Y6
	ADDQ R8, AX
	VMOVUPS (AX), Y7
	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15
	VSHUFPS $0x44, Y10, Y8, Y0
	VSHUFPS $0xEE, Y10, Y8, Y1
	VSHUFPS $0x44, Y11, Y9, Y2
	VSHUFPS $0xEE, Y11, Y9, Y3
	VSHUFPS $0x44, Y14, Y12, Y4
	VSHUFPS $0xEE, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xEE, Y15, Y13, Y7
	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15
	MOVQ R11, AX
	VMOVUPS Y8, (AX)
	ADDQ R9, AX
	VMOVUPS Y9, (AX)
	ADDQ R9, AX
	VMOVUPS Y10, (AX)
	ADDQ R9, AX
	VMOVUPS Y11, (AX)
	ADDQ R9, AX
	VMOVUPS Y12, (AX)
	ADDQ R9, AX
	VMOVUPS Y13, (AX)
	ADDQ R9, AX
	VMOVUPS Y14, (AX)
	ADDQ R9, AX
	VMOVUPS Y15, (AX)
	ADDQ $32, R10
	ADDQ R13, R11
	DECQ DX
	JNZ tcol

	ADDQ R12, SI
	ADDQ $32, DI
	DECQ CX
	JNZ trow
	VZEROUPPER
	RET
