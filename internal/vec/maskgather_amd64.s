#include "textflag.h"

// Register use in the masked gather with AVX (sumIdxBits32AVX):
//   DI  the current strip of dst      CX  its first column c
//   R8  the current index             R9  the end of idx
//   R13 the current factor            DX  vinc in bytes
//   R10 b                             R11 n (b's row width)
//   R12 the mask's table (BitMask.lut: the four factors of each nibble)
//   R14 bits                          BX  the gathered entry r·n + c
//   AX  the entry's mask bits, ×32    SI  a nibble's place in the table
//   Y0–Y7 the strip's sums, Y8 the broadcast factor, Y9 the mask's
//   factors and the products, Y10 the converted values.
// An entry's bit is bit r·n + c of the mask: the 64 bits from its byte,
// shifted by its place in the byte (SHRX), hold the strip's 32 bits. Each
// term is the mask's product (factor·x, as MulBits), then v·that, then
// the sum (as SumIdx): each product rounded before it is used. The row
// index is checked against rows (unsigned) before its row is read.

// The AVX-512 masked gather (sumIdxBits32AVX512) takes
// eight columns per register and the mask's bits straight into K1: a
// term's factors are keep under the mask and +0 elsewhere (a zeroing
// move), MulBits' factors, with half the instructions per gathered row of
// the table's nibbles (a row's gathers are bound by how many of them the
// CPU keeps in flight). Registers as above but R12 rows (no table), Z8
// the broadcast factor, Z9 the factors and products, Z10 keep, Z11 the
// converted values.

// GATHERPOS loads the next term's factor and index, checks the index and
// leaves the entry in BX and its mask bits (×32) in AX.
#define GATHERPOS(bad) \
	VBROADCASTSD (R13), Y8; \
	MOVQ (R8), BX; \
	CMPQ BX, rows+64(FP); \
	JAE  bad; \
	IMULQ R11, BX; \
	ADDQ CX, BX; \
	MOVQ BX, AX; \
	SHRQ $3, AX; \
	MOVQ BX, SI; \
	ANDQ $7, SI; \
	SHRXQ SI, (R14)(AX*1), AX; \
	SHLQ $5, AX

// NIBBLE loads the factors of the next four entries into Y9.
#define NIBBLE \
	MOVQ AX, SI; \
	ANDQ $480, SI; \
	SHRQ $4, AX; \
	VMOVUPD (R12)(SI*1), Y9

// CHUNK32 adds four masked terms of a float32 row (from byte off of the
// entry) to acc.
#define CHUNK32(off, acc) \
	NIBBLE; \
	VCVTPS2PD off(R10)(BX*4), Y10; \
	VMULPD Y10, Y9, Y9; \
	VMULPD Y9, Y8, Y9; \
	VADDPD Y9, acc, acc

// MASKARGS loads the arguments both kernels share (they have the same
// frame but for the last argument) and starts at column 0; MASKSETUP loads
// sumIdxBits32AVX's, MASKSETUP512 sumIdxBits32AVX512's.
#define MASKARGS \
	MOVQ dst+0(FP), DI; \
	MOVQ n+16(FP), R11; \
	MOVQ vinc+32(FP), DX; \
	SHLQ $3, DX; \
	MOVQ idx+40(FP), R9; \
	MOVQ k+48(FP), AX; \
	LEAQ (R9)(AX*8), R9; \
	MOVQ b+56(FP), R10; \
	MOVQ bits+72(FP), R14; \
	XORQ CX, CX

#define MASKSETUP \
	MASKARGS; \
	MOVQ lut+80(FP), R12

// STRIPSTART starts a strip of w columns at column CX (to next when fewer
// are left), its sums cleared by the caller.
#define STRIPSTART(w, next) \
	MOVQ n4+8(FP), AX; \
	SUBQ CX, AX; \
	CMPQ AX, $w; \
	JLT  next; \
	MOVQ idx+40(FP), R8; \
	MOVQ vals+24(FP), R13

// STRIPEND steps to the next term.
#define STRIPEND \
	ADDQ $8, R8; \
	ADDQ DX, R13

// GATHERPOS512 is GATHERPOS for the AVX-512 kernels: the entry in BX, its
// mask bits in AX (not scaled).
#define GATHERPOS512(bad) \
	VBROADCASTSD (R13), Z8; \
	MOVQ (R8), BX; \
	CMPQ BX, R12; \
	JAE  bad; \
	IMULQ R11, BX; \
	ADDQ CX, BX; \
	MOVQ BX, AX; \
	SHRQ $3, AX; \
	MOVQ BX, SI; \
	ANDQ $7, SI; \
	SHRXQ SI, (R14)(AX*1), AX

// Z32 adds eight masked terms of a float32 row (from byte off of the
// entry) to acc; Y32 four (from the entry).
#define Z32(off, acc) \
	KMOVW AX, K1; \
	SHRQ $8, AX; \
	VMOVAPD.Z Z10, K1, Z9; \
	VCVTPS2PD off(R10)(BX*4), Z11; \
	VMULPD Z11, Z9, Z9; \
	VMULPD Z9, Z8, Z9; \
	VADDPD Z9, acc, acc

#define Y32(acc) \
	KMOVW AX, K1; \
	VMOVAPD.Z Y10, K1, Y9; \
	VCVTPS2PD (R10)(BX*4), Y11; \
	VMULPD Y11, Y9, Y9; \
	VMULPD Y9, Y8, Y9; \
	VADDPD Y9, acc, acc

#define MASKSETUP512 \
	MASKARGS; \
	MOVQ rows+64(FP), R12; \
	VBROADCASTSD keep+80(FP), Z10

// func sumIdxBits32AVX(dst *float64, n4, n int, vals *float64, vinc int, idx *int, k int, b *float32, rows int, bits *uint64, lut *[16][4]float64) (ok bool)
// SumIdxBits32 over the first n4 (a multiple of four) of b's n columns:
// strips of 32 columns, then 16, then 4, each a pass over the terms, each
// value converted to float64 (VCVTPS2PD, exact) before its products.
TEXT ·sumIdxBits32AVX(SB), NOSPLIT, $0-89
	MASKSETUP

mc32:
	STRIPSTART(32, mc16)
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7

mc32loop:
	CMPQ R8, R9
	JAE  mc32done
	GATHERPOS(mcbad)
	CHUNK32(0, Y0)
	CHUNK32(16, Y1)
	CHUNK32(32, Y2)
	CHUNK32(48, Y3)
	CHUNK32(64, Y4)
	CHUNK32(80, Y5)
	CHUNK32(96, Y6)
	CHUNK32(112, Y7)
	STRIPEND
	JMP  mc32loop

mc32done:
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	VMOVUPD Y4, 128(DI)
	VMOVUPD Y5, 160(DI)
	VMOVUPD Y6, 192(DI)
	VMOVUPD Y7, 224(DI)
	ADDQ $256, DI
	ADDQ $32, CX
	JMP  mc32

mc16:
	STRIPSTART(16, mc4)
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3

mc16loop:
	CMPQ R8, R9
	JAE  mc16done
	GATHERPOS(mcbad)
	CHUNK32(0, Y0)
	CHUNK32(16, Y1)
	CHUNK32(32, Y2)
	CHUNK32(48, Y3)
	STRIPEND
	JMP  mc16loop

mc16done:
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	ADDQ $128, DI
	ADDQ $16, CX

mc4:
	STRIPSTART(4, mcret)
	VXORPD Y0, Y0, Y0

mc4loop:
	CMPQ R8, R9
	JAE  mc4done
	GATHERPOS(mcbad)
	CHUNK32(0, Y0)
	STRIPEND
	JMP  mc4loop

mc4done:
	VMOVUPD Y0, (DI)
	ADDQ $32, DI
	ADDQ $4, CX
	JMP  mc4

mcret:
	MOVB $1, ok+88(FP)
	VZEROUPPER
	RET

mcbad:
	MOVB $0, ok+88(FP)
	VZEROUPPER
	RET

// func prefetchBitsAVX(idx *int, k int, bits *uint64, n, rows int)
// PREFETCHT0 of the byte of bit idx[p]·n of a mask, p < k: the first bit
// of row idx[p] of a masked matrix of width n. Indices outside [0, rows)
// are skipped.
TEXT ·prefetchBitsAVX(SB), NOSPLIT, $0-40
	MOVQ idx+0(FP), R8
	MOVQ k+8(FP), CX
	MOVQ bits+16(FP), R10
	MOVQ n+24(FP), R11
	MOVQ rows+32(FP), R12
	XORQ AX, AX

pbloop:
	CMPQ AX, CX
	JGE  pbdone
	MOVQ (R8)(AX*8), BX
	CMPQ BX, R12
	JAE  pbnext
	IMULQ R11, BX
	SHRQ $3, BX
	PREFETCHT0 (R10)(BX*1)

pbnext:
	INCQ AX
	JMP  pbloop

pbdone:
	RET

// func sumIdxBits32AVX512(dst *float64, n4, n int, vals *float64, vinc int, idx *int, k int, b *float32, rows int, bits *uint64, keep float64) (ok bool)
// sumIdxBits32AVX with AVX-512: strips of 32 columns, then 8, then 4.
TEXT ·sumIdxBits32AVX512(SB), NOSPLIT, $0-89
	MASKSETUP512

me32:
	STRIPSTART(32, me8)
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3

me32loop:
	CMPQ R8, R9
	JAE  me32done
	GATHERPOS512(mebad)
	Z32(0, Z0)
	Z32(32, Z1)
	Z32(64, Z2)
	Z32(96, Z3)
	STRIPEND
	JMP  me32loop

me32done:
	VMOVUPD Z0, (DI)
	VMOVUPD Z1, 64(DI)
	VMOVUPD Z2, 128(DI)
	VMOVUPD Z3, 192(DI)
	ADDQ $256, DI
	ADDQ $32, CX
	JMP  me32

me8:
	STRIPSTART(8, me4)
	VPXORQ Z0, Z0, Z0

me8loop:
	CMPQ R8, R9
	JAE  me8done
	GATHERPOS512(mebad)
	Z32(0, Z0)
	STRIPEND
	JMP  me8loop

me8done:
	VMOVUPD Z0, (DI)
	ADDQ $64, DI
	ADDQ $8, CX
	JMP  me8

me4:
	STRIPSTART(4, meret)
	VXORPD Y0, Y0, Y0

me4loop:
	CMPQ R8, R9
	JAE  me4done
	GATHERPOS512(mebad)
	Y32(Y0)
	STRIPEND
	JMP  me4loop

me4done:
	VMOVUPD Y0, (DI)
	ADDQ $32, DI
	ADDQ $4, CX
	JMP  me4

meret:
	MOVB $1, ok+88(FP)
	VZEROUPPER
	RET

mebad:
	MOVB $0, ok+88(FP)
	VZEROUPPER
	RET
