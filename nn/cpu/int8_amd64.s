//go:build amd64

#include "textflag.h"

// func rangePixelsAVX512(src *float32, pix *int32, n int, channels int) (lo, hi float32)
//
// The least and the largest of the channels float32s of each of the n
// pixels at pix (indices), and 0 (channels a multiple of 16, n at least
// 1).
TEXT ·rangePixelsAVX512(SB), NOSPLIT, $0-40
	MOVQ   src+0(FP), SI
	MOVQ   pix+8(FP), DX
	MOVQ   n+16(FP), CX
	MOVQ   channels+24(FP), BX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1

pixel:
	MOVLQSX (DX), AX
	IMULQ   BX, AX
	LEAQ    (SI)(AX*4), R8
	MOVQ    BX, R10

group:
	VMOVUPS (R8), Z5
	VMAXPS  Z5, Z0, Z0
	VMINPS  Z5, Z1, Z1
	ADDQ    $64, R8
	SUBQ    $16, R10
	JNZ     group
	ADDQ    $4, DX
	DECQ    CX
	JNZ     pixel
	VEXTRACTF64X4 $1, Z0, Y6
	VMAXPS        Y6, Y0, Y0
	VEXTRACTF128  $1, Y0, X6
	VMAXPS        X6, X0, X0
	VPERMILPS     $0x4e, X0, X6
	VMAXPS        X6, X0, X0
	VPERMILPS     $0xb1, X0, X6
	VMAXPS        X6, X0, X0
	VMOVSS        X0, hi+36(FP)
	VEXTRACTF64X4 $1, Z1, Y7
	VMINPS        Y7, Y1, Y1
	VEXTRACTF128  $1, Y1, X7
	VMINPS        X7, X1, X1
	VPERMILPS     $0x4e, X1, X7
	VMINPS        X7, X1, X1
	VPERMILPS     $0xb1, X1, X7
	VMINPS        X7, X1, X1
	VMOVSS        X1, lo+32(FP)
	VZEROUPPER
	RET

// func quantPixelsAVX512(dst *uint8, src *float32, pix *int32, n int, channels int, inv float32, zp int32)
//
// For each of the n pixel indices at pix, the pixel's channels float32s
// at src × inv, rounded to nearest even (VCVTPS2DQ under Go's rounding
// mode), + zp, held to 0..255, as bytes at dst (the same index of pixel).
TEXT ·quantPixelsAVX512(SB), NOSPLIT, $0-48
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         pix+16(FP), DX
	MOVQ         n+24(FP), CX
	MOVQ         channels+32(FP), BX
	VBROADCASTSS inv+40(FP), Z2
	MOVL         zp+44(FP), AX
	VPBROADCASTD AX, Z4
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
	VPADDD    Z4, Z0, Z0
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

// func rangePixelsAVX2(src *float32, pix *int32, n int, channels int) (lo, hi float32)
//
// rangePixelsAVX512 with AVX2: channels a multiple of 8.
TEXT ·rangePixelsAVX2(SB), NOSPLIT, $0-40
	MOVQ   src+0(FP), SI
	MOVQ   pix+8(FP), DX
	MOVQ   n+16(FP), CX
	MOVQ   channels+24(FP), BX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1

pixel2:
	MOVLQSX (DX), AX
	IMULQ   BX, AX
	LEAQ    (SI)(AX*4), R8
	MOVQ    BX, R10

group2:
	VMOVUPS (R8), Y5
	VMAXPS  Y5, Y0, Y0
	VMINPS  Y5, Y1, Y1
	ADDQ    $32, R8
	SUBQ    $8, R10
	JNZ     group2
	ADDQ    $4, DX
	DECQ    CX
	JNZ     pixel2
	VEXTRACTF128 $1, Y0, X6
	VMAXPS       X6, X0, X0
	VPERMILPS    $0x4e, X0, X6
	VMAXPS       X6, X0, X0
	VPERMILPS    $0xb1, X0, X6
	VMAXPS       X6, X0, X0
	VMOVSS       X0, hi+36(FP)
	VEXTRACTF128 $1, Y1, X7
	VMINPS       X7, X1, X1
	VPERMILPS    $0x4e, X1, X7
	VMINPS       X7, X1, X1
	VPERMILPS    $0xb1, X1, X7
	VMINPS       X7, X1, X1
	VMOVSS       X1, lo+32(FP)
	VZEROUPPER
	RET

// func quantPixelsAVX2(dst *uint8, src *float32, pix *int32, n int, channels int, inv float32, zp int32)
//
// quantPixelsAVX512 with AVX2: channels a multiple of 8. The int32s are
// narrowed to int16 and then to bytes with saturation (VPACKSSDW,
// VPACKUSWB), which holds them to 0..255 as the AVX-512 kernel's clamp
// and VPMOVUSDB do.
TEXT ·quantPixelsAVX2(SB), NOSPLIT, $0-48
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         pix+16(FP), DX
	MOVQ         n+24(FP), CX
	MOVQ         channels+32(FP), BX
	VBROADCASTSS inv+40(FP), Y2
	MOVL         zp+44(FP), AX
	MOVL         AX, X4
	VPBROADCASTD X4, Y4

qpixel2:
	MOVLQSX (DX), AX
	IMULQ   BX, AX
	LEAQ    (SI)(AX*4), R8
	LEAQ    (DI)(AX*1), R9
	MOVQ    BX, R10

qgroup2:
	VMULPS       (R8), Y2, Y0
	VCVTPS2DQ    Y0, Y0
	VPADDD       Y4, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPACKSSDW    X1, X0, X0
	VPACKUSWB    X0, X0, X0
	MOVQ         X0, (R9)
	ADDQ         $32, R8
	ADDQ         $8, R9
	SUBQ         $8, R10
	JNZ          qgroup2
	ADDQ         $4, DX
	DECQ         CX
	JNZ          qpixel2
	VZEROUPPER
	RET
