//go:build amd64

#include "textflag.h"
#include "go_asm.h"

// The AMX instructions are encoded by hand (Go's assembler lacks them),
// each with the registers its comment names.
#define LDTILECFG_DX BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0x02
#define TILERELEASE BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0xc0
#define TILEZERO_T0 BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc0
#define TILEZERO_T1 BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc8
#define TILEZERO_T2 BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xd0
#define TILEZERO_T3 BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xd8
// TILELOADD T4, (SI)(DI*1) and T5, (R8)(DI*1): the inputs of 2×16 pixels.
#define TILELOADD_T4_SI_DI BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x24; BYTE $0x3e
#define TILELOADD_T5_R8_DI BYTE $0xc4; BYTE $0xc2; BYTE $0x7b; BYTE $0x4b; BYTE $0x2c; BYTE $0x38
// TILELOADD T6, (BX)(CX*1) and T7, (R9)(CX*1): the weights of 2×16 outputs.
#define TILELOADD_T6_BX_CX BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x34; BYTE $0x0b
#define TILELOADD_T7_R9_CX BYTE $0xc4; BYTE $0xc2; BYTE $0x7b; BYTE $0x4b; BYTE $0x3c; BYTE $0x09
// TDPBF16PS Tc, Ta, Tb: Tc += Ta·Tb.
#define TDPBF16PS_T0_T4_T6 BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xc4
#define TDPBF16PS_T1_T4_T7 BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xcc
#define TDPBF16PS_T2_T5_T6 BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xd5
#define TDPBF16PS_T3_T5_T7 BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xdd
// TILE_PRODUCTS: T0–T3 += the products of T4, T5 (from SI and R8 at
// stride DI) and T6, T7 (from BX and R9 at stride CX), the step both
// kernels repeat.
#define TILE_PRODUCTS TILELOADD_T4_SI_DI; TILELOADD_T5_R8_DI; TILELOADD_T6_BX_CX; TILELOADD_T7_R9_CX; TDPBF16PS_T0_T4_T6; TDPBF16PS_T1_T4_T7; TDPBF16PS_T2_T5_T6; TDPBF16PS_T3_T5_T7
// TILESTORED (DX)(R10*1), Tn.
#define TILESTORED_T0_DX_R10 BYTE $0xc4; BYTE $0xa2; BYTE $0x7a; BYTE $0x4b; BYTE $0x04; BYTE $0x12
#define TILESTORED_T1_DX_R10 BYTE $0xc4; BYTE $0xa2; BYTE $0x7a; BYTE $0x4b; BYTE $0x0c; BYTE $0x12
#define TILESTORED_T2_DX_R10 BYTE $0xc4; BYTE $0xa2; BYTE $0x7a; BYTE $0x4b; BYTE $0x14; BYTE $0x12
#define TILESTORED_T3_DX_R10 BYTE $0xc4; BYTE $0xa2; BYTE $0x7a; BYTE $0x4b; BYTE $0x1c; BYTE $0x12

// func amxConvBF16(t *amxTile)
//
// For each block of 32 pixels of the grid from t.first (until the block
// that holds t.end−1) and each 32 output channels: tiles T0–T3 sum the
// block's 32 pixels × 32 outputs over t.steps (T0: pixels 0–15, outputs
// 0–15; T1: pixels 0–15, outputs 16–31; T2, T3 the same for pixels
// 16–31), are stored to t.scratch, and each pixel whose interior index is
// in [t.lo, t.hi) gets the bias, the skip and the ReLU and is written.
//
// Registers: AX t; R13 the block's first pixel; R12 the outputs' byte
// offset (4 × the first output channel); R11 the block's inputs.
TEXT ·amxConvBF16(SB), NOSPLIT, $0-8
	MOVQ t+0(FP), AX
	LEAQ amxTile_cfg(AX), DX
	LDTILECFG_DX
	MOVQ amxTile_first(AX), R13

block:
	CMPQ R13, amxTile_end(AX)
	JGE  done
	XORQ R12, R12

outputs:
	TILEZERO_T0
	TILEZERO_T1
	TILEZERO_T2
	TILEZERO_T3
	MOVQ  amxTile_inStride(AX), DI
	MOVQ  R13, R11
	IMULQ DI, R11
	ADDQ  amxTile_in(AX), R11
	MOVQ  amxTile_ldw(AX), CX
	LEAQ  amxTile_steps(AX), DX
	MOVQ  amxTile_nsteps(AX), R10

step:
	MOVQ 0(DX), SI
	ADDQ R11, SI
	MOVQ DI, R8
	SHLQ $4, R8
	ADDQ SI, R8
	MOVQ 8(DX), BX
	ADDQ amxTile_w(AX), BX
	ADDQ R12, BX
	LEAQ 64(BX), R9
	TILE_PRODUCTS
	ADDQ $16, DX
	DECQ R10
	JNZ  step

	LEAQ amxTile_scratch(AX), DX
	MOVQ $64, R10
	TILESTORED_T0_DX_R10
	ADDQ $1024, DX
	TILESTORED_T1_DX_R10
	ADDQ $1024, DX
	TILESTORED_T2_DX_R10
	ADDQ $1024, DX
	TILESTORED_T3_DX_R10

	// The epilogue: Z0, Z1 the bias of the 32 outputs, Z2 zero; R8 the
	// pixel in the block.
	MOVQ    amxTile_bias(AX), SI
	VMOVUPS (SI)(R12*1), Z0
	VMOVUPS 64(SI)(R12*1), Z1
	VPXORD  Z2, Z2, Z2
	LEAQ    amxTile_scratch(AX), SI
	XORQ    R8, R8

pixel:
	MOVQ    R13, R9
	ADDQ    R8, R9
	MOVQ    amxTile_index(AX), BX
	MOVLQSX (BX)(R9*4), BX
	CMPQ    BX, amxTile_lo(AX)
	JLT     next
	CMPQ    BX, amxTile_hi(AX)
	JGE     next
	CMPQ    amxTile_compact(AX), $0
	JEQ     padded
	MOVQ    BX, R9

padded:
	IMULQ   amxTile_ldw(AX), R9
	ADDQ    R12, R9
	// The pixel's sums: row R8 of T0 and T1, or row R8−16 of T2 and T3,
	// which lie 32 rows of 64 bytes further on.
	MOVQ    R8, R10
	CMPQ    R8, $16
	JLT     low
	ADDQ    $16, R10

low:
	SHLQ    $6, R10
	VMOVUPS (SI)(R10*1), Z3
	VMOVUPS 1024(SI)(R10*1), Z4
	VADDPS  Z0, Z3, Z3
	VADDPS  Z1, Z4, Z4
	MOVQ    amxTile_skip(AX), DX
	TESTQ   DX, DX
	JZ      relu
	VADDPS  (DX)(R9*1), Z3, Z3
	VADDPS  64(DX)(R9*1), Z4, Z4

relu:
	CMPQ    amxTile_relu(AX), $0
	JEQ     store
	VMAXPS  Z2, Z3, Z3
	VMAXPS  Z2, Z4, Z4

store:
	MOVQ    amxTile_out(AX), DX
	VMOVUPS Z3, (DX)(R9*1)
	VMOVUPS Z4, 64(DX)(R9*1)
	// And rounded to bfloat16, at half the offset: VCVTNE2PS2BF16 Z4,
	// Z3, Z5 (encoded by hand) puts Z3's sixteen in Z5's low half.
	MOVQ      amxTile_half(AX), DX
	TESTQ     DX, DX
	JZ        next
	BYTE $0x62; BYTE $0xf2; BYTE $0x5f; BYTE $0x48; BYTE $0x72; BYTE $0xeb
	SHRQ      $1, R9
	VMOVDQU32 Z5, (DX)(R9*1)

next:
	INCQ R8
	CMPQ R8, $32
	JLT  pixel

	ADDQ $128, R12
	CMPQ R12, amxTile_ldw(AX)
	JLT  outputs
	ADDQ $32, R13
	JMP  block

done:
	TILERELEASE
	VZEROUPPER
	RET

// TILELOADD Tn, (DX)(R10*1): a block's sums, T0–T3.
#define TILELOADD_T0_DX_R10 BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x04; BYTE $0x12
#define TILELOADD_T1_DX_R10 BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x0c; BYTE $0x12
#define TILELOADD_T2_DX_R10 BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x14; BYTE $0x12
#define TILELOADD_T3_DX_R10 BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x1c; BYTE $0x12

// func amxWeightGradBF16(t *amxGradTile)
//
// For each t.block pixels from t.first to t.end and each of the t.njobs
// jobs: tiles T0–T3 load the job's 32 inputs × 32 outputs of sums (T0:
// inputs 0–15, outputs 0–15; T1: inputs 0–15, outputs 16–31; T2, T3 the
// same for inputs 16–31), add each 32 pixels' products — T4, T5 the 16
// inputs' rows at the pixels, T6, T7 the 16 outputs' gradients at them in
// pairs — and are stored back.
//
// Registers: AX t; R13 the block's first pixel; R12 the job; R11 the
// pixels' 32s left; SI, R8 the two input tiles' rows, DI their stride; BX,
// R9 the two gradient tiles, CX their stride, R10 16 of their rows; DX,
// R10 the sums and their stride.
TEXT ·amxWeightGradBF16(SB), NOSPLIT, $0-8
	MOVQ t+0(FP), AX
	LEAQ amxGradTile_cfg(AX), DX
	LDTILECFG_DX
	MOVQ amxGradTile_first(AX), R13

gblock:
	CMPQ R13, amxGradTile_end(AX)
	JGE  gdone
	MOVQ amxGradTile_jobs(AX), R12
	MOVQ amxGradTile_njobs(AX), R11
	MOVQ R11, amxGradTile_left(AX)

job:
	MOVQ 16(R12), DX
	ADDQ amxGradTile_sum(AX), DX
	MOVQ amxGradTile_sumStride(AX), R10
	TILELOADD_T0_DX_R10
	ADDQ $64, DX
	TILELOADD_T1_DX_R10
	MOVQ R10, R11
	SHLQ $4, R11
	ADDQ R11, DX
	TILELOADD_T3_DX_R10
	SUBQ $64, DX
	TILELOADD_T2_DX_R10

	// The inputs: SI = x + job.x + 2·first pixel, R8 16 rows on.
	MOVQ amxGradTile_xStride(AX), DI
	MOVQ 0(R12), SI
	ADDQ amxGradTile_x(AX), SI
	LEAQ (SI)(R13*2), SI
	MOVQ DI, R8
	SHLQ $4, R8
	ADDQ SI, R8

	// The gradients: BX = dy + job.dy + (first pixel / 2) rows, R9 the
	// next 16 outputs.
	MOVQ  amxGradTile_dyStride(AX), CX
	MOVQ  R13, BX
	SHRQ  $1, BX
	IMULQ CX, BX
	ADDQ  8(R12), BX
	ADDQ  amxGradTile_dy(AX), BX
	LEAQ  64(BX), R9
	MOVQ  CX, R10
	SHLQ  $4, R10

	// R11: the block's 32s of pixels, fewer at the end.
	MOVQ amxGradTile_end(AX), R11
	SUBQ R13, R11
	CMPQ R11, amxGradTile_block(AX)
	JLE  chunks
	MOVQ amxGradTile_block(AX), R11

chunks:
	SHRQ $5, R11

chunk:
	TILE_PRODUCTS
	ADDQ $64, SI
	ADDQ $64, R8
	ADDQ R10, BX
	ADDQ R10, R9
	DECQ R11
	JNZ  chunk

	MOVQ 16(R12), DX
	ADDQ amxGradTile_sum(AX), DX
	MOVQ amxGradTile_sumStride(AX), R10
	TILESTORED_T0_DX_R10
	ADDQ $64, DX
	TILESTORED_T1_DX_R10
	MOVQ R10, R11
	SHLQ $4, R11
	ADDQ R11, DX
	TILESTORED_T3_DX_R10
	SUBQ $64, DX
	TILESTORED_T2_DX_R10

	ADDQ $24, R12
	DECQ amxGradTile_left(AX)
	JNZ  job
	ADDQ amxGradTile_block(AX), R13
	JMP  gblock

gdone:
	TILERELEASE
	RET
