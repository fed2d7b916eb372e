//go:build amd64

#include "textflag.h"

// The batch norm's loops over rows of values with AVX2 and FMA, eight
// values a step (sixteen where a sum is taken, four float64 sums in
// flight per result). Each takes rows of n values, stride values from
// one row's start to the next's, and adds each row's sums to its own
// float64s, or reads its own parameters, a row at a time; n and rows are
// positive and n is a multiple of 8: the Go wrappers in rowsums_amd64.go
// leave each row's last width mod 8 values to the scalar loops.

// ROWS loads n+off(FP) into R9, rows into R8 and the bytes from a row's
// end to the next row's start ((stride − n)·4) into R10.
#define ROWS(noff, rowsoff, strideoff) \
	MOVQ noff(FP), R9 \
	MOVQ rowsoff(FP), R8 \
	MOVQ strideoff(FP), R10 \
	SUBQ R9, R10 \
	SHLQ $2, R10

// SUM4 adds the four float64 lanes of a, b, c and d into X(a)'s low lane.
#define SUM4(a, b, c, d, ax, tx) \
	VADDPD b, a, a \
	VADDPD d, c, c \
	VADDPD c, a, a \
	VEXTRACTF128 $1, a, tx \
	VADDPD tx, ax, ax \
	VUNPCKHPD ax, ax, tx \
	VADDSD tx, ax, ax

// ADDTO adds X(x)'s low lane to the float64 at ptr and moves ptr on to
// the next.
#define ADDTO(x, ptr) \
	VADDSD (ptr), x, x \
	VMOVSD x, (ptr) \
	ADDQ $8, ptr

#define ZERO4 \
	VXORPD Y0, Y0, Y0 \
	VXORPD Y1, Y1, Y1 \
	VXORPD Y2, Y2, Y2 \
	VXORPD Y3, Y3, Y3

// func rowSumAVX2(v *float32, n, rows, stride int, out *float64)
TEXT ·rowSumAVX2(SB), NOSPLIT, $0-40
	MOVQ v+0(FP), SI
	ROWS(n+8, rows+16, stride+24)
	MOVQ out+32(FP), R11

sumrow:
	MOVQ R9, CX
	ZERO4

sum16:
	CMPQ CX, $16
	JLT  sum8
	VCVTPS2PD (SI), Y4
	VCVTPS2PD 16(SI), Y5
	VCVTPS2PD 32(SI), Y6
	VCVTPS2PD 48(SI), Y7
	VADDPD Y4, Y0, Y0
	VADDPD Y5, Y1, Y1
	VADDPD Y6, Y2, Y2
	VADDPD Y7, Y3, Y3
	ADDQ $64, SI
	SUBQ $16, CX
	JMP  sum16

sum8:
	TESTQ CX, CX
	JZ    sumnext
	VCVTPS2PD (SI), Y4
	VCVTPS2PD 16(SI), Y5
	VADDPD Y4, Y0, Y0
	VADDPD Y5, Y1, Y1
	ADDQ $32, SI

sumnext:
	SUM4(Y0, Y1, Y2, Y3, X0, X4)
	ADDTO(X0, R11)
	ADDQ R10, SI
	DECQ R8
	JNZ  sumrow
	VZEROUPPER
	RET

// func rowSquaresAVX2(v *float32, n, rows, stride int, mean, out *float64)
//
// Each row's squares about its own mean.
TEXT ·rowSquaresAVX2(SB), NOSPLIT, $0-48
	MOVQ v+0(FP), SI
	ROWS(n+8, rows+16, stride+24)
	MOVQ mean+32(FP), R12
	MOVQ out+40(FP), R11

sqrow:
	MOVQ R9, CX
	VBROADCASTSD (R12), Y8
	ADDQ $8, R12
	ZERO4

sq16:
	CMPQ CX, $16
	JLT  sq8
	VCVTPS2PD (SI), Y4
	VCVTPS2PD 16(SI), Y5
	VCVTPS2PD 32(SI), Y6
	VCVTPS2PD 48(SI), Y7
	VSUBPD Y8, Y4, Y4
	VSUBPD Y8, Y5, Y5
	VSUBPD Y8, Y6, Y6
	VSUBPD Y8, Y7, Y7
	VFMADD231PD Y4, Y4, Y0
	VFMADD231PD Y5, Y5, Y1
	VFMADD231PD Y6, Y6, Y2
	VFMADD231PD Y7, Y7, Y3
	ADDQ $64, SI
	SUBQ $16, CX
	JMP  sq16

sq8:
	TESTQ CX, CX
	JZ    sqnext
	VCVTPS2PD (SI), Y4
	VCVTPS2PD 16(SI), Y5
	VSUBPD Y8, Y4, Y4
	VSUBPD Y8, Y5, Y5
	VFMADD231PD Y4, Y4, Y0
	VFMADD231PD Y5, Y5, Y1
	ADDQ $32, SI

sqnext:
	SUM4(Y0, Y1, Y2, Y3, X0, X4)
	ADDTO(X0, R11)
	ADDQ R10, SI
	DECQ R8
	JNZ  sqrow
	VZEROUPPER
	RET

// DOT8 adds eight gradients (float32, in Y(g), X(gx) its low half) to
// the sums s0 and s1 and their products with the eight inputs at xlo and
// xhi (four each) to the sums d0 and d1.
#define DOT8(g, gx, xlo, xhi, s0, s1, d0, d1) \
	VCVTPS2PD gx, Y10 \
	VEXTRACTF128 $1, g, X11 \
	VCVTPS2PD X11, Y11 \
	VADDPD Y10, s0, s0 \
	VADDPD Y11, s1, s1 \
	VCVTPS2PD xlo, Y12 \
	VCVTPS2PD xhi, Y13 \
	VFMADD231PD Y12, Y10, d0 \
	VFMADD231PD Y13, Y11, d1

#define ZERO8 \
	ZERO4 \
	VXORPD Y4, Y4, Y4 \
	VXORPD Y5, Y5, Y5 \
	VXORPD Y6, Y6, Y6 \
	VXORPD Y7, Y7, Y7

// SUMDOTTO adds a row's two sums to the float64s at R11 and R12 and
// moves both on.
#define SUMDOTTO \
	SUM4(Y0, Y1, Y2, Y3, X0, X8) \
	SUM4(Y4, Y5, Y6, Y7, X4, X8) \
	ADDTO(X0, R11) \
	ADDTO(X4, R12)

// func rowSumDotAVX2(grad, x *float32, n, rows, stride int, sum, dot *float64)
TEXT ·rowSumDotAVX2(SB), NOSPLIT, $0-56
	MOVQ grad+0(FP), SI
	MOVQ x+8(FP), BX
	ROWS(n+16, rows+24, stride+32)
	MOVQ sum+40(FP), R11
	MOVQ dot+48(FP), R12

sdrow:
	MOVQ R9, CX
	ZERO8

sd16:
	CMPQ CX, $16
	JLT  sd8
	VMOVUPS (SI), Y8
	VMOVUPS 32(SI), Y9
	DOT8(Y8, X8, (BX), 16(BX), Y0, Y1, Y4, Y5)
	DOT8(Y9, X9, 32(BX), 48(BX), Y2, Y3, Y6, Y7)
	ADDQ $64, SI
	ADDQ $64, BX
	SUBQ $16, CX
	JMP  sd16

sd8:
	TESTQ CX, CX
	JZ    sdnext
	VMOVUPS (SI), Y8
	DOT8(Y8, X8, (BX), 16(BX), Y0, Y1, Y4, Y5)
	ADDQ $32, SI
	ADDQ $32, BX

sdnext:
	SUMDOTTO
	ADDQ R10, SI
	ADDQ R10, BX
	DECQ R8
	JNZ  sdrow
	VZEROUPPER
	RET

// func rowMaskSumDotAVX2(dst, grad, y, x *float32, n, rows, stride int, sum, dot *float64)
//
// dst = grad where y > 0 (y's bits, read as an int32, above 0), else 0; and
// each row's sums of dst and of dst·x.
TEXT ·rowMaskSumDotAVX2(SB), NOSPLIT, $0-72
	MOVQ dst+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ y+16(FP), DX
	MOVQ x+24(FP), BX
	ROWS(n+32, rows+40, stride+48)
	MOVQ sum+56(FP), R11
	MOVQ dot+64(FP), R12
	VPXOR Y15, Y15, Y15

mdrow:
	MOVQ R9, CX
	ZERO8

md16:
	CMPQ CX, $16
	JLT  md8
	VMOVDQU (DX), Y8
	VMOVDQU 32(DX), Y9
	VPCMPGTD Y15, Y8, Y8
	VPCMPGTD Y15, Y9, Y9
	VPAND (SI), Y8, Y8
	VPAND 32(SI), Y9, Y9
	VMOVDQU Y8, (DI)
	VMOVDQU Y9, 32(DI)
	DOT8(Y8, X8, (BX), 16(BX), Y0, Y1, Y4, Y5)
	DOT8(Y9, X9, 32(BX), 48(BX), Y2, Y3, Y6, Y7)
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, DI
	ADDQ $64, BX
	SUBQ $16, CX
	JMP  md16

md8:
	TESTQ CX, CX
	JZ    mdnext
	VMOVDQU (DX), Y8
	VPCMPGTD Y15, Y8, Y8
	VPAND (SI), Y8, Y8
	VMOVDQU Y8, (DI)
	DOT8(Y8, X8, (BX), 16(BX), Y0, Y1, Y4, Y5)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	ADDQ $32, BX

mdnext:
	SUMDOTTO
	ADDQ R10, SI
	ADDQ R10, DX
	ADDQ R10, DI
	ADDQ R10, BX
	DECQ R8
	JNZ  mdrow
	VZEROUPPER
	RET

// AFFINE_LOOP is rowAffineAVX2's loop for one kind: each row's scale
// and shift (from R11 and R12) into Y14 and Y15, then eight values of
// x·Y14 + Y15 at a time from SI to DI, what extra does to them in Y0
// before the store (nothing, a ReLU, or the skip at DX added and a
// ReLU), advance and next moving DX on as SI and DI are, a step and a
// row at a time.
#define AFFINE_LOOP(row, step, next, extra, advance) \
row: \
	MOVQ R9, CX \
	VBROADCASTSS (R11), Y14 \
	VBROADCASTSS (R12), Y15 \
	ADDQ $4, R11 \
	ADDQ $4, R12 \
step: \
	VMOVUPS (SI), Y0 \
	VFMADD213PS Y15, Y14, Y0 \
	extra \
	VMOVUPS Y0, (DI) \
	ADDQ $32, SI \
	ADDQ $32, DI \
	advance \
	SUBQ $8, CX \
	JNZ  step \
	ADDQ R10, SI \
	ADDQ R10, DI \
	next \
	DECQ R8 \
	JNZ  row \
	VZEROUPPER \
	RET

#define NOTHING
#define RELU VMAXPS Y0, Y13, Y0
#define SKIPRELU VADDPS (DX), Y0, Y0; VMAXPS Y0, Y13, Y0
#define SKIPSTEP ADDQ $32, DX
#define SKIPNEXT ADDQ R10, DX

// func rowAffineAVX2(dst, x, skip *float32, n, rows, stride int, scale, shift *float32, kind int)
//
// dst = x·scale + shift, each row with its own scale and shift; kind 1:
// then max(·, 0); kind 2: max(· + skip, 0) (skip is read for kind 2 only).
TEXT ·rowAffineAVX2(SB), NOSPLIT, $0-72
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ skip+16(FP), DX
	ROWS(n+24, rows+32, stride+40)
	MOVQ scale+48(FP), R11
	MOVQ shift+56(FP), R12
	VXORPS Y13, Y13, Y13
	MOVQ kind+64(FP), AX
	CMPQ AX, $1
	JEQ  relurow
	JGT  skiprow
	AFFINE_LOOP(plainrow, plain, NOTHING, NOTHING, NOTHING)
	AFFINE_LOOP(relurow, relu, NOTHING, RELU, NOTHING)
	AFFINE_LOOP(skiprow, skipped, SKIPNEXT, SKIPRELU, SKIPSTEP)

// func rowGradXAVX2(dst, grad, x *float32, n, rows, stride int, s, a, k *float32)
//
// dst = s·grad − a·x + k, each row with its own s, a and k: batch norm's
// input gradient.
TEXT ·rowGradXAVX2(SB), NOSPLIT, $0-72
	MOVQ dst+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ x+16(FP), DX
	ROWS(n+24, rows+32, stride+40)
	MOVQ s+48(FP), R11
	MOVQ a+56(FP), R12
	MOVQ k+64(FP), BX

gxrow:
	MOVQ R9, CX
	VBROADCASTSS (R11), Y13
	VBROADCASTSS (R12), Y14
	VBROADCASTSS (BX), Y15
	ADDQ $4, R11
	ADDQ $4, R12
	ADDQ $4, BX

gx:
	VMOVUPS (SI), Y0
	VFMADD213PS Y15, Y13, Y0
	VFNMADD231PS (DX), Y14, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ  gx
	ADDQ R10, SI
	ADDQ R10, DX
	ADDQ R10, DI
	DECQ R8
	JNZ  gxrow
	VZEROUPPER
	RET

// TRANSPOSE8 transposes the 8×8 block of floats in Y0–Y7 (row r in Yr)
// into Y8–Y15 (column c in Y(8+c)), using Y0–Y7 as scratch.
#define TRANSPOSE8 \
	VUNPCKLPS Y1, Y0, Y8 \
	VUNPCKHPS Y1, Y0, Y9 \
	VUNPCKLPS Y3, Y2, Y10 \
	VUNPCKHPS Y3, Y2, Y11 \
	VUNPCKLPS Y5, Y4, Y12 \
	VUNPCKHPS Y5, Y4, Y13 \
	VUNPCKLPS Y7, Y6, Y14 \
	VUNPCKHPS Y7, Y6, Y15 \
	VSHUFPS $0x44, Y10, Y8, Y0 \
	VSHUFPS $0xEE, Y10, Y8, Y1 \
	VSHUFPS $0x44, Y11, Y9, Y2 \
	VSHUFPS $0xEE, Y11, Y9, Y3 \
	VSHUFPS $0x44, Y14, Y12, Y4 \
	VSHUFPS $0xEE, Y14, Y12, Y5 \
	VSHUFPS $0x44, Y15, Y13, Y6 \
	VSHUFPS $0xEE, Y15, Y13, Y7 \
	VPERM2F128 $0x20, Y4, Y0, Y8 \
	VPERM2F128 $0x20, Y5, Y1, Y9 \
	VPERM2F128 $0x20, Y6, Y2, Y10 \
	VPERM2F128 $0x20, Y7, Y3, Y11 \
	VPERM2F128 $0x31, Y4, Y0, Y12 \
	VPERM2F128 $0x31, Y5, Y1, Y13 \
	VPERM2F128 $0x31, Y6, Y2, Y14 \
	VPERM2F128 $0x31, Y7, Y3, Y15

// LOAD8 loads eight rows of eight float32s into Y0..Y7, the rows at
// base, base+stride, …, base+7·stride (stride3 = 3·stride, in bytes);
// R11 is scratch.
#define LOAD8(base, stride, stride3) \
	LEAQ (base)(stride*4), R11 \
	VMOVUPS (base), Y0 \
	VMOVUPS (base)(stride*1), Y1 \
	VMOVUPS (base)(stride*2), Y2 \
	VMOVUPS (base)(stride3*1), Y3 \
	VMOVUPS (R11), Y4 \
	VMOVUPS (R11)(stride*1), Y5 \
	VMOVUPS (R11)(stride*2), Y6 \
	VMOVUPS (R11)(stride3*1), Y7

// STOREPIX stores Y(reg), one cell's eight channels, at its pixel: the
// cell's index at off(DX), times the pixel stride R9, from DI.
#define STOREPIX(off, reg) \
	MOVLQSX off(DX), R12 \
	IMULQ R9, R12 \
	VMOVUPS reg, (DI)(R12*1)

// func toPixelsAVX2(dst, src *float32, pix *int32, blocks, cells, channels int)
//
// Eight planes of src (plane stride cells) into pixels: blocks × 8 cells,
// cell i's eight values stored at dst + pix[i]·channels.
TEXT ·toPixelsAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ pix+16(FP), DX
	MOVQ blocks+24(FP), CX
	MOVQ cells+32(FP), R8
	SHLQ $2, R8
	MOVQ channels+40(FP), R9
	SHLQ $2, R9
	LEAQ (R8)(R8*2), R10

tp:
	LOAD8(SI, R8, R10)
	TRANSPOSE8
	STOREPIX(0, Y8)
	STOREPIX(4, Y9)
	STOREPIX(8, Y10)
	STOREPIX(12, Y11)
	STOREPIX(16, Y12)
	STOREPIX(20, Y13)
	STOREPIX(24, Y14)
	STOREPIX(28, Y15)
	ADDQ $32, SI
	ADDQ $32, DX
	DECQ CX
	JNZ  tp
	VZEROUPPER
	RET

// func fromPixelsAVX2(dst, src *float32, blocks, cells, channels int)
//
// Compact pixels (pixel stride channels) into eight planes of dst (plane
// stride cells): blocks × 8 cells of eight channels each.
TEXT ·fromPixelsAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ blocks+16(FP), CX
	MOVQ cells+24(FP), R8
	SHLQ $2, R8
	MOVQ channels+32(FP), R9
	SHLQ $2, R9
	LEAQ (R9)(R9*2), R10
	LEAQ (R8)(R8*2), R12

fp:
	LOAD8(SI, R9, R10)
	TRANSPOSE8
	LEAQ (DI)(R8*4), R11
	VMOVUPS Y8, (DI)
	VMOVUPS Y9, (DI)(R8*1)
	VMOVUPS Y10, (DI)(R8*2)
	VMOVUPS Y11, (DI)(R12*1)
	VMOVUPS Y12, (R11)
	VMOVUPS Y13, (R11)(R8*1)
	VMOVUPS Y14, (R11)(R8*2)
	VMOVUPS Y15, (R11)(R12*1)
	LEAQ (SI)(R9*8), SI
	ADDQ $32, DI
	DECQ CX
	JNZ  fp
	VZEROUPPER
	RET
