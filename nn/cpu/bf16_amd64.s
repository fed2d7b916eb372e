//go:build amd64

#include "textflag.h"

// func bf16Pixels(dst *uint16, src *float32, pix *int32, n int, channels int)
//
// For each of the n pixel indices at pix, rounds the pixel's channels
// float32s at src to bfloat16 at dst, the same index of pixel (channels a
// multiple of 16, n at least 1): VCVTNEPS2BF16 rounds to nearest even,
// 16 channels an instruction (encoded by hand: Go's assembler lacks
// AVX-512 BF16).
TEXT ·bf16Pixels(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ pix+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ channels+32(FP), BX

pixel:
	MOVLQSX (DX), AX
	IMULQ   BX, AX
	LEAQ    (SI)(AX*4), R8
	LEAQ    (DI)(AX*2), R9
	MOVQ    BX, R10

group:
	VMOVUPS       (R8), Z0
	BYTE $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xc8 // VCVTNEPS2BF16 Z0, Y1
	VMOVDQU       Y1, (R9)
	ADDQ          $64, R8
	ADDQ          $32, R9
	SUBQ          $16, R10
	JNZ           group
	ADDQ          $4, DX
	DECQ          CX
	JNZ           pixel
	VZEROUPPER
	RET
