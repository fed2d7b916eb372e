//go:build amd64

#include "textflag.h"

// The global pooling's loops over a position's rows with AVX2, eight
// channels at a time (channels a positive multiple of 8, n positive): the
// Go wrappers in poolrows_amd64.go check the rows against the slices.

// ROWAT sets R12 to the address of row R11: pix[R11] (pix at DX), or R11
// itself where DX is nil, times the row's bytes R10, from SI.
#define ROWAT \
	MOVQ    R11, R12 \
	TESTQ   DX, DX \
	JZ      2(PC) \
	MOVLQSX (DX)(R11*4), R12 \
	IMULQ   R10, R12 \
	ADDQ    SI, R12

// func poolRowsAVX2(act *float32, pix *int32, n, channels int, sum, most *float32)
//
// Adds each of the n rows' channels to sum and keeps their maximum in
// most; the rows are pix[i], or i where pix is nil.
TEXT ·poolRowsAVX2(SB), NOSPLIT, $0-48
	MOVQ act+0(FP), SI
	MOVQ pix+8(FP), DX
	MOVQ n+16(FP), CX
	MOVQ channels+24(FP), R10
	SHLQ $2, R10
	MOVQ sum+32(FP), DI
	MOVQ most+40(FP), BX
	XORQ R11, R11

prow:
	ROWAT
	XORQ R13, R13

pgroup:
	VMOVUPS (R12)(R13*1), Y0
	VADDPS  (DI)(R13*1), Y0, Y1
	VMOVUPS Y1, (DI)(R13*1)
	VMAXPS  (BX)(R13*1), Y0, Y2
	VMOVUPS Y2, (BX)(R13*1)
	ADDQ    $32, R13
	CMPQ    R13, R10
	JLT     pgroup
	INCQ    R11
	CMPQ    R11, CX
	JLT     prow
	VZEROUPPER
	RET

// func addRowsAVX2(act *float32, pix *int32, n, channels int, bias *float32)
//
// Adds bias to each of the n rows pix[i].
TEXT ·addRowsAVX2(SB), NOSPLIT, $0-40
	MOVQ act+0(FP), SI
	MOVQ pix+8(FP), DX
	MOVQ n+16(FP), CX
	MOVQ channels+24(FP), R10
	SHLQ $2, R10
	MOVQ bias+32(FP), DI
	XORQ R11, R11

arow:
	ROWAT
	XORQ R13, R13

agroup:
	VMOVUPS (R12)(R13*1), Y0
	VADDPS  (DI)(R13*1), Y0, Y0
	VMOVUPS Y0, (R12)(R13*1)
	ADDQ    $32, R13
	CMPQ    R13, R10
	JLT     agroup
	INCQ    R11
	CMPQ    R11, CX
	JLT     arow
	VZEROUPPER
	RET
