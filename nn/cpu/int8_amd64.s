//go:build amd64

#include "textflag.h"

// func maxPixelsAVX512(src *float32, pix *int32, n int, channels int) float32
//
// The largest of the channels float32s of each of the n pixels at pix
// (indices), at least 0 (channels a multiple of 16, n at least 1).
TEXT ·maxPixelsAVX512(SB), NOSPLIT, $0-36
	MOVQ   src+0(FP), SI
	MOVQ   pix+8(FP), DX
	MOVQ   n+16(FP), CX
	MOVQ   channels+24(FP), BX
	VPXORD Z0, Z0, Z0

pixel:
	MOVLQSX (DX), AX
	IMULQ   BX, AX
	LEAQ    (SI)(AX*4), R8
	MOVQ    BX, R10

group:
	VMAXPS (R8), Z0, Z0
	ADDQ   $64, R8
	SUBQ   $16, R10
	JNZ    group
	ADDQ   $4, DX
	DECQ   CX
	JNZ    pixel
	VEXTRACTF64X4 $1, Z0, Y1
	VMAXPS        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VMAXPS        X1, X0, X0
	VPERMILPS     $0x4e, X0, X1
	VMAXPS        X1, X0, X0
	VPERMILPS     $0xb1, X0, X1
	VMAXPS        X1, X0, X0
	VMOVSS        X0, ret+32(FP)
	VZEROUPPER
	RET

// func quantPixelsAVX512(dst *uint8, src *float32, pix *int32, n int, channels int, inv float32)
//
// For each of the n pixel indices at pix, the pixel's channels float32s
// at src × inv, rounded to nearest even (VCVTPS2DQ under Go's rounding
// mode), held to 0..255, as bytes at dst (the same index of pixel).
TEXT ·quantPixelsAVX512(SB), NOSPLIT, $0-44
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         pix+16(FP), DX
	MOVQ         n+24(FP), CX
	MOVQ         channels+32(FP), BX
	VBROADCASTSS inv+40(FP), Z2
	VPXORD       Z3, Z3, Z3

qpixel:
	MOVLQSX (DX), AX
	IMULQ   BX, AX
	LEAQ    (SI)(AX*4), R8
	LEAQ    (DI)(AX*1), R9
	MOVQ    BX, R10

qgroup:
	VMULPS    (R8), Z2, Z0
	VCVTPS2DQ Z0, Z0
	VPMAXSD   Z3, Z0, Z0
	VPMOVUSDB Z0, (R9)
	ADDQ      $64, R8
	ADDQ      $16, R9
	SUBQ      $16, R10
	JNZ       qgroup
	ADDQ      $4, DX
	DECQ      CX
	JNZ       qpixel
	VZEROUPPER
	RET
