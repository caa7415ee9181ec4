#include "textflag.h"

// AES-256 for the noise stream (aes.go): key expansion with AES-NI and the
// counter-mode keystream with VAES, two blocks per 256-bit register.

// bswap128 reverses the bytes of each 128-bit lane: a counter kept as two
// little-endian quadwords (low, high) becomes the big-endian block.
DATA bswap128<>+0(SB)/8, $0x08090a0b0c0d0e0f
DATA bswap128<>+8(SB)/8, $0x0001020304050607
DATA bswap128<>+16(SB)/8, $0x08090a0b0c0d0e0f
DATA bswap128<>+24(SB)/8, $0x0001020304050607
GLOBL bswap128<>(SB), RODATA|NOPTR, $32

// lane1 and two: the second block of a register is one counter further;
// each register is two counters further than the one before.
DATA lane1<>+0(SB)/8, $0
DATA lane1<>+8(SB)/8, $0
DATA lane1<>+16(SB)/8, $1
DATA lane1<>+24(SB)/8, $0
GLOBL lane1<>(SB), RODATA|NOPTR, $32
DATA two<>+0(SB)/8, $2
DATA two<>+8(SB)/8, $0
DATA two<>+16(SB)/8, $2
DATA two<>+24(SB)/8, $0
GLOBL two<>(SB), RODATA|NOPTR, $32

// EXPAND_EVEN: X1 ← the next even round key from X1 (the previous even
// one) and the AESKEYGENASSIST result in X2 (its top word, rotated and
// substituted, with the round constant).
#define EXPAND_EVEN \
	PSHUFD $0xff, X2, X2 \
	MOVO   X1, X4        \
	PSLLO  $4, X4        \
	PXOR   X4, X1        \
	PSLLO  $4, X4        \
	PXOR   X4, X1        \
	PSLLO  $4, X4        \
	PXOR   X4, X1        \
	PXOR   X2, X1        \
	MOVOU  X1, (BX)      \
	ADDQ   $16, BX

// EXPAND_ODD: X3 ← the next odd round key from X3 and SubWord of X1's top
// word (AESKEYGENASSIST with no rotation or constant).
#define EXPAND_ODD \
	AESKEYGENASSIST $0x00, X1, X2 \
	PSHUFD $0xaa, X2, X2 \
	MOVO   X3, X4        \
	PSLLO  $4, X4        \
	PXOR   X4, X3        \
	PSLLO  $4, X4        \
	PXOR   X4, X3        \
	PSLLO  $4, X4        \
	PXOR   X4, X3        \
	PXOR   X2, X3        \
	MOVOU  X3, (BX)      \
	ADDQ   $16, BX

// func expandKey256(key *[32]byte, rk *[15][16]byte)
TEXT ·expandKey256(SB), NOSPLIT, $0-16
	MOVQ key+0(FP), AX
	MOVQ rk+8(FP), BX
	MOVOU (AX), X1
	MOVOU 16(AX), X3
	MOVOU X1, (BX)
	MOVOU X3, 16(BX)
	ADDQ  $32, BX
	AESKEYGENASSIST $0x01, X3, X2
	EXPAND_EVEN
	EXPAND_ODD
	AESKEYGENASSIST $0x02, X3, X2
	EXPAND_EVEN
	EXPAND_ODD
	AESKEYGENASSIST $0x04, X3, X2
	EXPAND_EVEN
	EXPAND_ODD
	AESKEYGENASSIST $0x08, X3, X2
	EXPAND_EVEN
	EXPAND_ODD
	AESKEYGENASSIST $0x10, X3, X2
	EXPAND_EVEN
	EXPAND_ODD
	AESKEYGENASSIST $0x20, X3, X2
	EXPAND_EVEN
	EXPAND_ODD
	AESKEYGENASSIST $0x40, X3, X2
	EXPAND_EVEN
	RET

#define ROUND(k) \
	VBROADCASTI128 k(AX), Y8 \
	VAESENC Y8, Y0, Y0       \
	VAESENC Y8, Y1, Y1       \
	VAESENC Y8, Y2, Y2       \
	VAESENC Y8, Y3, Y3       \
	VAESENC Y8, Y4, Y4       \
	VAESENC Y8, Y5, Y5       \
	VAESENC Y8, Y6, Y6       \
	VAESENC Y8, Y7, Y7

// func ctr256VAES(rk *[15][16]byte, dst *byte, n int, lo, hi uint64)
// Writes the keystream blocks E(hi‖lo+j), j < n, big-endian counters, to
// dst; n is a multiple of 16 and lo+n does not wrap.
TEXT ·ctr256VAES(SB), NOSPLIT, $0-40
	MOVQ rk+0(FP), AX
	MOVQ dst+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ lo+24(FP), R8
	MOVQ hi+32(FP), R9
	VMOVDQU bswap128<>(SB), Y9
	VMOVDQU two<>(SB), Y10
	// Y12 = (lo, hi, lo+1, hi) as quadwords: the counters of the first register
	VMOVQ R8, X12
	VPINSRQ $1, R9, X12, X12
	VINSERTI128 $1, X12, Y12, Y12
	VPADDQ lane1<>(SB), Y12, Y12
	SHRQ $4, CX

ctrloop:
	TESTQ CX, CX
	JEQ   ctrdone
	VMOVDQA Y12, Y0
	VPADDQ  Y10, Y0, Y1
	VPADDQ  Y10, Y1, Y2
	VPADDQ  Y10, Y2, Y3
	VPADDQ  Y10, Y3, Y4
	VPADDQ  Y10, Y4, Y5
	VPADDQ  Y10, Y5, Y6
	VPADDQ  Y10, Y6, Y7
	VPADDQ  Y10, Y7, Y12 // the next iteration's first register
	VBROADCASTI128 0(AX), Y8
	VPSHUFB Y9, Y0, Y0
	VPSHUFB Y9, Y1, Y1
	VPSHUFB Y9, Y2, Y2
	VPSHUFB Y9, Y3, Y3
	VPSHUFB Y9, Y4, Y4
	VPSHUFB Y9, Y5, Y5
	VPSHUFB Y9, Y6, Y6
	VPSHUFB Y9, Y7, Y7
	VPXOR   Y8, Y0, Y0
	VPXOR   Y8, Y1, Y1
	VPXOR   Y8, Y2, Y2
	VPXOR   Y8, Y3, Y3
	VPXOR   Y8, Y4, Y4
	VPXOR   Y8, Y5, Y5
	VPXOR   Y8, Y6, Y6
	VPXOR   Y8, Y7, Y7
	ROUND(16)
	ROUND(32)
	ROUND(48)
	ROUND(64)
	ROUND(80)
	ROUND(96)
	ROUND(112)
	ROUND(128)
	ROUND(144)
	ROUND(160)
	ROUND(176)
	ROUND(192)
	ROUND(208)
	VBROADCASTI128 224(AX), Y8
	VAESENCLAST Y8, Y0, Y0
	VAESENCLAST Y8, Y1, Y1
	VAESENCLAST Y8, Y2, Y2
	VAESENCLAST Y8, Y3, Y3
	VAESENCLAST Y8, Y4, Y4
	VAESENCLAST Y8, Y5, Y5
	VAESENCLAST Y8, Y6, Y6
	VAESENCLAST Y8, Y7, Y7
	VMOVDQU Y0, 0(DI)
	VMOVDQU Y1, 32(DI)
	VMOVDQU Y2, 64(DI)
	VMOVDQU Y3, 96(DI)
	VMOVDQU Y4, 128(DI)
	VMOVDQU Y5, 160(DI)
	VMOVDQU Y6, 192(DI)
	VMOVDQU Y7, 224(DI)
	ADDQ $256, DI
	DECQ CX
	JMP  ctrloop

ctrdone:
	VZEROUPPER
	RET
