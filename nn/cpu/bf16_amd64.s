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

// func bf16Grid(dst *uint16, src *float32, planes, h, w, dstPlane, dstRow int)
//
// Rounds planes of h rows of w float32s, consecutive at src, to bfloat16
// at dst: row r of plane q at dst + q·dstPlane + r·dstRow (elements).
// Sixteen at a time, the last of a row masked, so that a row of any
// width is one or two instructions on a board.
TEXT ·bf16Grid(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ planes+16(FP), R11
	MOVQ dstPlane+40(FP), R12
	SHLQ $1, R12
	MOVQ dstRow+48(FP), R13
	SHLQ $1, R13

plane:
	MOVQ DI, R9
	MOVQ h+24(FP), R10

row:
	MOVQ R9, R8
	MOVQ w+32(FP), CX

chunk:
	MOVQ  $16, BX
	MOVL  $0xffff, AX
	CMPQ  CX, $16
	JGE   full
	MOVQ  CX, BX
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX

full:
	KMOVW     AX, K1
	VMOVUPS.Z (SI), K1, Z0
	BYTE $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xc8 // VCVTNEPS2BF16 Z0, Y1
	VMOVDQU16 Y1, K1, (R8)
	LEAQ      (SI)(BX*4), SI
	LEAQ      (R8)(BX*2), R8
	SUBQ      BX, CX
	JNZ       chunk
	ADDQ      R13, R9
	DECQ      R10
	JNZ       row
	ADDQ      R12, DI
	DECQ      R11
	JNZ       plane
	VZEROUPPER
	RET

// GATHER16_BF16 rounds 16 float32s to bfloat16 in Y1: those at R10 plus
// 4 × each lane of Z5 (K4 all ones; K3 and Z0 clobbered).
#define GATHER16_BF16 \
	KMOVW      K4, K3 \
	VGATHERDPS (R10)(Z5*4), K3, Z0 \
	BYTE $0x62; BYTE $0xf2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xc8

// func bf16Pairs(dst *uint16, src *float32, pix *int32, n, channels int, lanes *[16]int32)
//
// For each of the n pixels i, at index p = pix[i], rounds its channels
// (planes of n at src) to bfloat16 at dst[(p>>1)·2·channels + 2·o + p&1]:
// the pixel pairs interleaved, AMX's layout for a tile product's second
// operand. lanes holds o·n for o < 16: a gather reads 16 channels of a
// pixel, and a store masked to every other word writes them beside the
// other pixel of the pair without touching it (channels a multiple of 16,
// n at least 1).
TEXT ·bf16Pairs(SB), NOSPLIT, $0-48
	MOVQ      dst+0(FP), DI
	MOVQ      src+8(FP), SI
	MOVQ      pix+16(FP), DX
	MOVQ      n+24(FP), CX
	MOVQ      channels+32(FP), BX
	MOVQ      lanes+40(FP), AX
	VMOVDQU32 (AX), Z5
	MOVQ      CX, R12
	SHLQ      $6, R12
	MOVL      $0x55555555, AX
	KMOVD     AX, K2
	MOVL      $0xffff, AX
	KMOVW     AX, K4

pixel:
	MOVLQSX (DX), R8
	MOVQ    R8, R9
	ANDQ    $1, R9
	SHRQ    $1, R8
	IMULQ   BX, R8
	SHLQ    $1, R8
	ADDQ    R9, R8
	LEAQ    (DI)(R8*2), R8
	MOVQ    SI, R10
	MOVQ    BX, R11

group:
	GATHER16_BF16
	VPMOVZXWD  Y1, Z2
	VMOVDQU16  Z2, K2, (R8)
	ADDQ       R12, R10
	ADDQ       $64, R8
	SUBQ       $16, R11
	JNZ        group
	ADDQ       $4, SI
	ADDQ       $4, DX
	DECQ       CX
	JNZ        pixel
	VZEROUPPER
	RET

// func bf16FromPlanes(dst *uint16, src *float32, pix *int32, n, channels int, lanes *[16]int32)
//
// For each of the n pixels i, at index p = pix[i], rounds its channels
// (planes of n at src) to bfloat16 at dst[p·channels + o]: a gather reads
// 16 channels of a pixel, lanes holding o·n for o < 16 (channels a
// multiple of 16, n at least 1).
TEXT ·bf16FromPlanes(SB), NOSPLIT, $0-48
	MOVQ      dst+0(FP), DI
	MOVQ      src+8(FP), SI
	MOVQ      pix+16(FP), DX
	MOVQ      n+24(FP), CX
	MOVQ      channels+32(FP), BX
	MOVQ      lanes+40(FP), AX
	VMOVDQU32 (AX), Z5
	MOVQ      CX, R12
	SHLQ      $6, R12
	MOVL      $0xffff, AX
	KMOVW     AX, K4

pixel:
	MOVLQSX (DX), R8
	IMULQ   BX, R8
	LEAQ    (DI)(R8*2), R8
	MOVQ    SI, R10
	MOVQ    BX, R11

group:
	GATHER16_BF16
	VMOVDQU    Y1, (R8)
	ADDQ       R12, R10
	ADDQ       $32, R8
	SUBQ       $16, R11
	JNZ        group
	ADDQ       $4, SI
	ADDQ       $4, DX
	DECQ       CX
	JNZ        pixel
	VZEROUPPER
	RET
