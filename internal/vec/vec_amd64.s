#include "textflag.h"

// Masks for the last 1, 2 or 3 columns of a row (VMASKMOVPD).
DATA tailmask<>+0(SB)/8, $-1
DATA tailmask<>+8(SB)/8, $0
DATA tailmask<>+16(SB)/8, $0
DATA tailmask<>+24(SB)/8, $0
DATA tailmask<>+32(SB)/8, $-1
DATA tailmask<>+40(SB)/8, $-1
DATA tailmask<>+48(SB)/8, $0
DATA tailmask<>+56(SB)/8, $0
DATA tailmask<>+64(SB)/8, $-1
DATA tailmask<>+72(SB)/8, $-1
DATA tailmask<>+80(SB)/8, $-1
DATA tailmask<>+88(SB)/8, $0
GLOBL tailmask<>(SB), RODATA|NOPTR, $96

// Register use in both kernels:
//   DI  the current block of dst      CX  columns left
//   SI  vals                          DX  vinc in bytes
//   R9  k (terms)                     R10 b, offset to the current block
//   R11 ldb in bytes                  AX  term counter
//   R13 the current factor            BX  the current row of b
//   Y0–Y3 the block's sums, Y4 the broadcast factor, Y5–Y8 products.
// Each term is VMULPD then VADDPD: the product is rounded before the sum.

// func sumIdxAVX(dst *float64, n int, vals *float64, vinc int, idx *int, k int, b *float64, ldb int, rows int) (ok bool)
// The sums start at 0 (dst is only written).
// Every index is checked against rows (unsigned, so negative ones fail
// too) before its row is read; a bad one stops the kernel with ok false.
TEXT ·sumIdxAVX(SB), NOSPLIT, $0-73
	MOVQ dst+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ vals+16(FP), SI
	MOVQ vinc+24(FP), DX
	SHLQ $3, DX
	MOVQ idx+32(FP), R8
	MOVQ k+40(FP), R9
	MOVQ b+48(FP), R10
	MOVQ ldb+56(FP), R11
	SHLQ $3, R11
	MOVQ rows+64(FP), R12

idx16:
	CMPQ CX, $16
	JLT  idx4
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	MOVQ SI, R13
	XORQ AX, AX

idx16loop:
	CMPQ AX, R9
	JGE  idx16done
	VBROADCASTSD (R13), Y4
	MOVQ (R8)(AX*8), BX
	CMPQ BX, R12
	JAE  idxbad
	IMULQ R11, BX
	ADDQ R10, BX
	VMULPD (BX), Y4, Y5
	VMULPD 32(BX), Y4, Y6
	VMULPD 64(BX), Y4, Y7
	VMULPD 96(BX), Y4, Y8
	VADDPD Y5, Y0, Y0
	VADDPD Y6, Y1, Y1
	VADDPD Y7, Y2, Y2
	VADDPD Y8, Y3, Y3
	ADDQ DX, R13
	INCQ AX
	JMP  idx16loop

idx16done:
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	ADDQ $128, DI
	ADDQ $128, R10
	SUBQ $16, CX
	JMP  idx16

idx4:
	CMPQ CX, $4
	JLT  idxtail
	VXORPD Y0, Y0, Y0
	MOVQ SI, R13
	XORQ AX, AX

idx4loop:
	CMPQ AX, R9
	JGE  idx4done
	VBROADCASTSD (R13), Y4
	MOVQ (R8)(AX*8), BX
	CMPQ BX, R12
	JAE  idxbad
	IMULQ R11, BX
	ADDQ R10, BX
	VMULPD (BX), Y4, Y5
	VADDPD Y5, Y0, Y0
	ADDQ DX, R13
	INCQ AX
	JMP  idx4loop

idx4done:
	VMOVUPD Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, R10
	SUBQ $4, CX
	JMP  idx4

idxtail:
	TESTQ CX, CX
	JZ    idxret
	LEAQ  tailmask<>(SB), BX
	DECQ  CX
	SHLQ  $5, CX
	VMOVDQU (BX)(CX*1), Y6
	VXORPD Y0, Y0, Y0
	MOVQ SI, R13
	XORQ AX, AX

idxtailloop:
	CMPQ AX, R9
	JGE  idxtaildone
	VBROADCASTSD (R13), Y4
	MOVQ (R8)(AX*8), BX
	CMPQ BX, R12
	JAE  idxbad
	IMULQ R11, BX
	ADDQ R10, BX
	VMASKMOVPD (BX), Y6, Y5
	VMULPD Y5, Y4, Y5
	VADDPD Y5, Y0, Y0
	ADDQ DX, R13
	INCQ AX
	JMP  idxtailloop

idxtaildone:
	VMASKMOVPD Y0, Y6, (DI)

idxret:
	MOVB $1, ok+72(FP)
	VZEROUPPER
	RET

idxbad:
	MOVB $0, ok+72(FP)
	VZEROUPPER
	RET

// func axpySeqAVX(dst *float64, n int, vals *float64, vinc int, k int, b *float64, ldb int, zero bool)
TEXT ·axpySeqAVX(SB), NOSPLIT, $0-57
	MOVQ dst+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ vals+16(FP), SI
	MOVQ vinc+24(FP), DX
	SHLQ $3, DX
	MOVQ k+32(FP), R9
	MOVQ b+40(FP), R10
	MOVQ ldb+48(FP), R11
	SHLQ $3, R11

seq16:
	CMPQ CX, $16
	JLT  seq4
	CMPB zero+56(FP), $0
	JNE  seq16zero
	VMOVUPD (DI), Y0
	VMOVUPD 32(DI), Y1
	VMOVUPD 64(DI), Y2
	VMOVUPD 96(DI), Y3
	JMP  seq16init
seq16zero:
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
seq16init:
	MOVQ SI, R13
	MOVQ R10, BX
	XORQ AX, AX

seq16loop:
	CMPQ AX, R9
	JGE  seq16done
	VBROADCASTSD (R13), Y4
	VMULPD (BX), Y4, Y5
	VMULPD 32(BX), Y4, Y6
	VMULPD 64(BX), Y4, Y7
	VMULPD 96(BX), Y4, Y8
	VADDPD Y5, Y0, Y0
	VADDPD Y6, Y1, Y1
	VADDPD Y7, Y2, Y2
	VADDPD Y8, Y3, Y3
	ADDQ DX, R13
	ADDQ R11, BX
	INCQ AX
	JMP  seq16loop

seq16done:
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	ADDQ $128, DI
	ADDQ $128, R10
	SUBQ $16, CX
	JMP  seq16

seq4:
	CMPQ CX, $4
	JLT  seqtail
	CMPB zero+56(FP), $0
	JNE  seq4zero
	VMOVUPD (DI), Y0
	JMP  seq4init
seq4zero:
	VXORPD Y0, Y0, Y0
seq4init:
	MOVQ SI, R13
	MOVQ R10, BX
	XORQ AX, AX

seq4loop:
	CMPQ AX, R9
	JGE  seq4done
	VBROADCASTSD (R13), Y4
	VMULPD (BX), Y4, Y5
	VADDPD Y5, Y0, Y0
	ADDQ DX, R13
	ADDQ R11, BX
	INCQ AX
	JMP  seq4loop

seq4done:
	VMOVUPD Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, R10
	SUBQ $4, CX
	JMP  seq4

seqtail:
	TESTQ CX, CX
	JZ    seqret
	LEAQ  tailmask<>(SB), BX
	DECQ  CX
	SHLQ  $5, CX
	VMOVDQU (BX)(CX*1), Y6
	CMPB zero+56(FP), $0
	JNE  seqtailzero
	VMASKMOVPD (DI), Y6, Y0
	JMP  seqtailinit
seqtailzero:
	VXORPD Y0, Y0, Y0
seqtailinit:
	MOVQ SI, R13
	MOVQ R10, BX
	XORQ AX, AX

seqtailloop:
	CMPQ AX, R9
	JGE  seqtaildone
	VBROADCASTSD (R13), Y4
	VMASKMOVPD (BX), Y6, Y5
	VMULPD Y5, Y4, Y5
	VADDPD Y5, Y0, Y0
	ADDQ DX, R13
	ADDQ R11, BX
	INCQ AX
	JMP  seqtailloop

seqtaildone:
	VMASKMOVPD Y0, Y6, (DI)

seqret:
	VZEROUPPER
	RET

// func adamAVX(pp, gp, mp, vp *float64, n int, k *[8]float64)
// k holds wd, β₁, 1−β₁, β₂, 1−β₂, step, corr2, ε; n is a multiple of 4.
TEXT ·adamAVX(SB), NOSPLIT, $0-48
	MOVQ pp+0(FP), DI
	MOVQ gp+8(FP), SI
	MOVQ mp+16(FP), R8
	MOVQ vp+24(FP), R9
	MOVQ n+32(FP), CX
	MOVQ k+40(FP), AX
	VBROADCASTSD 0(AX), Y8   // wd
	VBROADCASTSD 8(AX), Y9   // β₁
	VBROADCASTSD 16(AX), Y10 // 1−β₁
	VBROADCASTSD 24(AX), Y11 // β₂
	VBROADCASTSD 32(AX), Y12 // 1−β₂
	VBROADCASTSD 40(AX), Y13 // step
	VBROADCASTSD 48(AX), Y14 // corr2
	VBROADCASTSD 56(AX), Y15 // ε
	XORQ BX, BX

adamloop:
	CMPQ BX, CX
	JGE  adamdone
	VMOVUPD (DI)(BX*8), Y0 // p
	VMULPD Y0, Y8, Y1      // wd·p
	VADDPD (SI)(BX*8), Y1, Y1 // g + wd·p  (g on the left: addition commutes)
	VMULPD (R8)(BX*8), Y9, Y2 // β₁·m
	VMULPD Y1, Y10, Y3     // (1−β₁)·g
	VADDPD Y3, Y2, Y2      // m
	VMOVUPD Y2, (R8)(BX*8)
	VMULPD (R9)(BX*8), Y11, Y4 // β₂·v
	VMULPD Y1, Y12, Y5     // (1−β₂)·g
	VMULPD Y1, Y5, Y5      // ·g
	VADDPD Y5, Y4, Y4      // v
	VMOVUPD Y4, (R9)(BX*8)
	VDIVPD Y14, Y4, Y4     // v/corr2
	VSQRTPD Y4, Y4
	VADDPD Y15, Y4, Y4     // + ε
	VMULPD Y2, Y13, Y2     // step·m
	VDIVPD Y4, Y2, Y2      // step·m / (…)
	VSUBPD Y2, Y0, Y0      // p − …
	VMOVUPD Y0, (DI)(BX*8)
	ADDQ $4, BX
	JMP  adamloop

adamdone:
	VZEROUPPER
	RET

// func addSums4AVX(dst, s0, s1, s2, s3 *float64, n int)
// dst += (s1 + s3) + (s0 + s2), four entries at a time; n is a multiple of
// four.
TEXT ·addSums4AVX(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ s0+8(FP), R8
	MOVQ s1+16(FP), R9
	MOVQ s2+24(FP), R10
	MOVQ s3+32(FP), R11
	MOVQ n+40(FP), CX
	XORQ BX, BX

sums4loop:
	CMPQ BX, CX
	JGE  sums4done
	VMOVUPD (R9)(BX*8), Y0
	VADDPD  (R11)(BX*8), Y0, Y0 // s1 + s3
	VMOVUPD (R8)(BX*8), Y1
	VADDPD  (R10)(BX*8), Y1, Y1 // s0 + s2
	VADDPD  Y1, Y0, Y0
	VMOVUPD (DI)(BX*8), Y2
	VADDPD  Y0, Y2, Y2 // dst + that
	VMOVUPD Y2, (DI)(BX*8)
	ADDQ $4, BX
	JMP  sums4loop

sums4done:
	VZEROUPPER
	RET

// func binaryAVX(op int, dst, x, y *float64, n int)
// op: 0 x+y, 1 x·y, 2 ReLU(x), 3 y where x ≥ 0; n is a multiple of 4.
TEXT ·binaryAVX(SB), NOSPLIT, $0-40
	MOVQ op+0(FP), AX
	MOVQ dst+8(FP), DI
	MOVQ x+16(FP), SI
	MOVQ y+24(FP), DX
	MOVQ n+32(FP), CX
	XORQ BX, BX
	VXORPD Y7, Y7, Y7 // zeros
	CMPQ AX, $1
	JEQ  mulloop
	CMPQ AX, $2
	JEQ  reluloop
	CMPQ AX, $3
	JEQ  gradloop

addloop:
	CMPQ BX, CX
	JGE  binarydone
	VMOVUPD (SI)(BX*8), Y0
	VADDPD (DX)(BX*8), Y0, Y0
	VMOVUPD Y0, (DI)(BX*8)
	ADDQ $4, BX
	JMP  addloop

mulloop:
	CMPQ BX, CX
	JGE  binarydone
	VMOVUPD (SI)(BX*8), Y0
	VMULPD (DX)(BX*8), Y0, Y0
	VMOVUPD Y0, (DI)(BX*8)
	ADDQ $4, BX
	JMP  mulloop

reluloop:
	// mask = !(x < 0) (predicate NLT_US, 5: true for NaN), dst = x AND mask
	CMPQ BX, CX
	JGE  binarydone
	VMOVUPD (SI)(BX*8), Y0
	VCMPPD $5, Y7, Y0, Y1
	VANDPD Y0, Y1, Y0
	VMOVUPD Y0, (DI)(BX*8)
	ADDQ $4, BX
	JMP  reluloop

gradloop:
	// mask = x ≥ 0 (predicate GE_OQ, 29: false for NaN), dst = dy AND mask
	CMPQ BX, CX
	JGE  binarydone
	VMOVUPD (SI)(BX*8), Y0
	VCMPPD $29, Y7, Y0, Y1
	VANDPD (DX)(BX*8), Y1, Y0
	VMOVUPD Y0, (DI)(BX*8)
	ADDQ $4, BX
	JMP  gradloop

binarydone:
	VZEROUPPER
	RET

// The four-vector SELU: SELU_R(off, r) forms r = x − k·ln2Hi − k·ln2Lo for
// the vector at byte offset off into r; SELU_POLY(off) takes the four
// polynomials (Y4–Y7, in r = Y0–Y3) one Horner step on with the
// coefficient at off; SELU_E(off, p) forms x (Y8), the mask x > 0 (Y9) and
// e = p·2^k (0 below expLow) in p; SELU_FWD and SELU_GRAD finish a vector
// from them into its dst. Every operation and its order per lane are
// seluloop's.
#define SELU_R(off, r) \
	VMOVUPD off(SI)(BX*8), Y8 \
	VMULPD Y12, Y8, Y9 \
	VROUNDPD $0, Y9, Y9 \
	VMULPD 128(R9), Y9, Y10 \
	VSUBPD Y10, Y8, r \
	VMULPD 160(R9), Y9, Y10 \
	VSUBPD Y10, r, r

#define SELU_POLY(off) \
	VMULPD Y0, Y4, Y4 \
	VMULPD Y1, Y5, Y5 \
	VMULPD Y2, Y6, Y6 \
	VMULPD Y3, Y7, Y7 \
	VADDPD off(R8), Y4, Y4 \
	VADDPD off(R8), Y5, Y5 \
	VADDPD off(R8), Y6, Y6 \
	VADDPD off(R8), Y7, Y7

#define SELU_E(off, p) \
	VMOVUPD off(SI)(BX*8), Y8 \
	VMULPD Y12, Y8, Y9 \
	VROUNDPD $0, Y9, Y9 \
	VCVTPD2DQY Y9, X9 \
	VPMOVSXDQ X9, Y9 \
	VPADDQ 224(R9), Y9, Y9 \
	VPSLLQ $52, Y9, Y9 \
	VMULPD Y9, p, p \
	VCMPPD $1, Y13, Y8, Y10 \
	VANDNPD p, Y10, p \
	VXORPD Y9, Y9, Y9 \
	VCMPPD $0x1e, Y9, Y8, Y9

#define SELU_FWD(off, p) \
	SELU_E(off, p) \
	VSUBPD 192(R9), p, Y10 \
	VMULPD Y14, Y10, Y10 \
	VMULPD Y15, Y8, Y11 \
	VBLENDVPD Y9, Y11, Y10, Y10 \
	VMOVUPD Y10, off(DI)(BX*8)

#define SELU_GRAD(off, p) \
	SELU_E(off, p) \
	VMULPD Y14, p, Y10 \
	VBLENDVPD Y9, Y15, Y10, Y10 \
	VMULPD off(DX)(BX*8), Y10, Y10 \
	VMOVUPD Y10, off(DI)(BX*8)

#define SELU_HEAD \
	SELU_R(0, Y0) \
	SELU_R(32, Y1) \
	SELU_R(64, Y2) \
	SELU_R(96, Y3) \
	VMOVUPD 0(R8), Y4 \
	VMOVUPD 0(R8), Y5 \
	VMOVUPD 0(R8), Y6 \
	VMOVUPD 0(R8), Y7 \
	SELU_POLY(32) \
	SELU_POLY(64) \
	SELU_POLY(96) \
	SELU_POLY(128) \
	SELU_POLY(160) \
	SELU_POLY(192) \
	SELU_POLY(224) \
	SELU_POLY(256) \
	SELU_POLY(288) \
	SELU_POLY(320) \
	SELU_POLY(352) \
	SELU_POLY(384) \
	SELU_POLY(416)

// func seluAVX(mode int, dst, x, dy *float64, n int, poly *[14][4]float64, k *[8][4]float64)
// mode 0: dst = SELU(x); mode 1: dst = SELU'(x)·dy. n is a multiple of 4.
// k: λ, λα, expLow, log2e, ln2Hi, ln2Lo, 1, int64 1023. The exp is vec.exp
// step by step (the same IEEE operations in the same order).
TEXT ·seluAVX(SB), NOSPLIT, $0-56
	MOVQ mode+0(FP), AX
	MOVQ dst+8(FP), DI
	MOVQ x+16(FP), SI
	MOVQ dy+24(FP), DX
	MOVQ n+32(FP), CX
	MOVQ poly+40(FP), R8
	MOVQ k+48(FP), R9 // the constants, each repeated four times
	VMOVUPD 0(R9), Y15  // λ
	VMOVUPD 32(R9), Y14 // λα
	VMOVUPD 64(R9), Y13 // expLow
	VMOVUPD 96(R9), Y12 // log2e
	XORQ BX, BX

	// four vectors at once, so that their chains of dependent operations
	// (13 multiply-adds of the polynomial) overlap. Y0–Y3 hold r, Y4–Y7
	// the polynomial; x and k are formed again from memory for the finish.
	// ln2Hi, ln2Lo, 1 and the bias are read from memory: Y8–Y11 are
	// scratch here.
	CMPQ AX, $0
	JNE  selu4grad

selu4fwd:
	LEAQ 16(BX), R10
	CMPQ R10, CX
	JGT  selutail
	SELU_HEAD
	SELU_FWD(0, Y4)
	SELU_FWD(32, Y5)
	SELU_FWD(64, Y6)
	SELU_FWD(96, Y7)
	ADDQ $16, BX
	JMP  selu4fwd

selu4grad:
	LEAQ 16(BX), R10
	CMPQ R10, CX
	JGT  selutail
	SELU_HEAD
	SELU_GRAD(0, Y4)
	SELU_GRAD(32, Y5)
	SELU_GRAD(64, Y6)
	SELU_GRAD(96, Y7)
	ADDQ $16, BX
	JMP  selu4grad

selutail:
	VMOVUPD 128(R9), Y11 // ln2Hi
	VMOVUPD 160(R9), Y10 // ln2Lo
	VMOVUPD 192(R9), Y9  // 1
	VMOVUPD 224(R9), Y8  // 1023

seluloop:
	CMPQ BX, CX
	JGE  seludone
	VMOVUPD (SI)(BX*8), Y0
	VMULPD Y12, Y0, Y1 // x·log2e
	VROUNDPD $0, Y1, Y1 // k
	VMULPD Y11, Y1, Y2
	VSUBPD Y2, Y0, Y2 // r = x − k·ln2Hi
	VMULPD Y10, Y1, Y3
	VSUBPD Y3, Y2, Y2 // r − k·ln2Lo
	VMOVUPD 0(R8), Y3 // p = c₀
	VMULPD Y2, Y3, Y3
	VADDPD 32(R8), Y3, Y3
	VMULPD Y2, Y3, Y3
	VADDPD 64(R8), Y3, Y3
	VMULPD Y2, Y3, Y3
	VADDPD 96(R8), Y3, Y3
	VMULPD Y2, Y3, Y3
	VADDPD 128(R8), Y3, Y3
	VMULPD Y2, Y3, Y3
	VADDPD 160(R8), Y3, Y3
	VMULPD Y2, Y3, Y3
	VADDPD 192(R8), Y3, Y3
	VMULPD Y2, Y3, Y3
	VADDPD 224(R8), Y3, Y3
	VMULPD Y2, Y3, Y3
	VADDPD 256(R8), Y3, Y3
	VMULPD Y2, Y3, Y3
	VADDPD 288(R8), Y3, Y3
	VMULPD Y2, Y3, Y3
	VADDPD 320(R8), Y3, Y3
	VMULPD Y2, Y3, Y3
	VADDPD 352(R8), Y3, Y3
	VMULPD Y2, Y3, Y3
	VADDPD 384(R8), Y3, Y3
	VMULPD Y2, Y3, Y3
	VADDPD 416(R8), Y3, Y3
	VCVTPD2DQY Y1, X4
	VPMOVSXDQ X4, Y4
	VPADDQ Y8, Y4, Y4
	VPSLLQ $52, Y4, Y4 // 2^k
	VMULPD Y4, Y3, Y3 // e = p·2^k
	VCMPPD $1, Y13, Y0, Y5 // x < expLow
	VANDNPD Y3, Y5, Y3 // e = 0 there
	VXORPD Y5, Y5, Y5
	VCMPPD $0x1e, Y5, Y0, Y5 // x > 0 (GT_OQ)
	CMPQ AX, $0
	JNE  selugrad
	VSUBPD Y9, Y3, Y6 // e − 1
	VMULPD Y14, Y6, Y6 // λα·(e − 1)
	VMULPD Y15, Y0, Y7 // λ·x
	VBLENDVPD Y5, Y7, Y6, Y6
	VMOVUPD Y6, (DI)(BX*8)
	ADDQ $4, BX
	JMP  seluloop

selugrad:
	VMULPD Y14, Y3, Y6 // λα·e
	VBLENDVPD Y5, Y15, Y6, Y6 // λ where x > 0
	VMULPD (DX)(BX*8), Y6, Y6 // ·dy
	VMOVUPD Y6, (DI)(BX*8)
	ADDQ $4, BX
	JMP  seluloop

seludone:
	VZEROUPPER
	RET

// ROWS_LOOP(OP, row, s16, s4, next): every row of x combined with b by
// OP (VADDPD or VMULPD: dst[i,:] = x[i,:] OP b), 16 columns at a time,
// then 4; the labels are the caller's, one set per OP.
#define ROWS_LOOP(OP, row, s16, s4, next) \
row: \
	TESTQ CX, CX \
	JZ    rowsdone \
	XORQ  BX, BX \
s16: \
	LEAQ 16(BX), R9 \
	CMPQ R9, R8 \
	JGT  s4 \
	VMOVUPD (SI)(BX*8), Y0 \
	VMOVUPD 32(SI)(BX*8), Y1 \
	VMOVUPD 64(SI)(BX*8), Y2 \
	VMOVUPD 96(SI)(BX*8), Y3 \
	OP (DX)(BX*8), Y0, Y0 \
	OP 32(DX)(BX*8), Y1, Y1 \
	OP 64(DX)(BX*8), Y2, Y2 \
	OP 96(DX)(BX*8), Y3, Y3 \
	VMOVUPD Y0, (DI)(BX*8) \
	VMOVUPD Y1, 32(DI)(BX*8) \
	VMOVUPD Y2, 64(DI)(BX*8) \
	VMOVUPD Y3, 96(DI)(BX*8) \
	ADDQ $16, BX \
	JMP  s16 \
s4: \
	CMPQ BX, R8 \
	JGE  next \
	VMOVUPD (SI)(BX*8), Y0 \
	OP (DX)(BX*8), Y0, Y0 \
	VMOVUPD Y0, (DI)(BX*8) \
	ADDQ $4, BX \
	JMP  s4 \
next: \
	LEAQ (DI)(R8*8), DI \
	LEAQ (SI)(R8*8), SI \
	DECQ CX \
	JMP  row

// func rowsAVX(op int, dst, x, b *float64, rows, d int)
// op 0: dst[i,:] = x[i,:] + b; op 1: x[i,:]·b. d is a multiple of 4.
TEXT ·rowsAVX(SB), NOSPLIT, $0-48
	MOVQ op+0(FP), AX
	MOVQ dst+8(FP), DI
	MOVQ x+16(FP), SI
	MOVQ b+24(FP), DX
	MOVQ rows+32(FP), CX
	MOVQ d+40(FP), R8
	CMPQ AX, $0
	JNE  rowsmulrow
	ROWS_LOOP(VADDPD, rowsaddrow, rowsadd16, rowsadd4, rowsaddnext)
	ROWS_LOOP(VMULPD, rowsmulrow, rowsmul16, rowsmul4, rowsmulnext)

rowsdone:
	VZEROUPPER
	RET

// func zigAVX2(w *float64, n int, xt, rt *[256]float64, missed *int32) (k int)
// ZigFast four words at a time (n is a multiple of 4): loads xt[i] and
// rt[i] lane by lane (two VGATHERQPDs made the pass twice as slow on an AMD
// Zen 4 core), forms u from the top 52 bits, writes the accepted candidates over
// their words and appends the other lanes' indices to missed.
TEXT ·zigAVX2(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ xt+16(FP), R8
	MOVQ rt+24(FP), R9
	MOVQ missed+32(FP), R10
	XORQ BX, BX // word index
	XORQ DX, DX // misses appended
	MOVQ $0x3ff0000000000000, AX
	MOVQ AX, X14
	VPBROADCASTQ X14, Y14 // 1.0
	MOVQ $0x8000000000000000, AX
	MOVQ AX, X12
	VPBROADCASTQ X12, Y12 // sign bit

zigloop:
	CMPQ BX, CX
	JGE  zigdone
	VMOVDQU (DI)(BX*8), Y0 // words
	VPSRLQ $12, Y0, Y2
	VPOR Y14, Y2, Y2       // 1 + u, in [1, 2)
	VSUBPD Y14, Y2, Y2     // u (exact)
	// the layers i (low bytes), then xt[i] and rt[i]
	MOVBQZX 0(DI)(BX*8), R11
	MOVBQZX 8(DI)(BX*8), R12
	MOVBQZX 16(DI)(BX*8), R13
	MOVBQZX 24(DI)(BX*8), R14
	VMOVSD (R8)(R11*8), X4
	VMOVHPD (R8)(R12*8), X4, X4
	VMOVSD (R8)(R13*8), X3
	VMOVHPD (R8)(R14*8), X3, X3
	VINSERTF128 $1, X3, Y4, Y4 // xt[i]
	VMOVSD (R9)(R11*8), X6
	VMOVHPD (R9)(R12*8), X6, X6
	VMOVSD (R9)(R13*8), X5
	VMOVHPD (R9)(R14*8), X5, X5
	VINSERTF128 $1, X5, Y6, Y6 // rt[i]
	VMULPD Y4, Y2, Y7      // u·xt[i] ≥ 0
	VPSLLQ $55, Y0, Y8     // bit 8 to the sign
	VPAND Y12, Y8, Y8
	VORPD Y8, Y7, Y7       // candidate
	VCMPPD $1, Y6, Y2, Y9  // u < rt[i] (LT_OS)
	VBLENDVPD Y9, Y7, Y0, Y10 // accepted ? candidate : word
	VMOVUPD Y10, (DI)(BX*8)
	VMOVMSKPD Y9, AX
	CMPQ AX, $15
	JNE  zigmiss

zignext:
	ADDQ $4, BX
	JMP  zigloop

zigmiss:
	XORQ R11, R11 // lane

zigbit:
	BTQ R11, AX
	JCS zigbitnext
	LEAQ (BX)(R11*1), R12
	MOVL R12, (R10)(DX*4)
	INCQ DX

zigbitnext:
	INCQ R11
	CMPQ R11, $4
	JLT  zigbit
	JMP  zignext

zigdone:
	MOVQ DX, k+40(FP)
	VZEROUPPER
	RET

// func scaleAddDivAVX(e, x, out *float64, n int, s, d float64, mul bool)
// e = s·e, out = (x + e)/d, four entries at a time (n a multiple of 4);
// with mul, out = (x + e)·d instead (d then holds an exact reciprocal).
TEXT ·scaleAddDivAVX(SB), NOSPLIT, $0-49
	MOVQ e+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ out+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSD s+32(FP), Y8
	VBROADCASTSD d+40(FP), Y9
	MOVBLZX mul+48(FP), AX
	XORQ BX, BX
	TESTQ AX, AX
	JNE   samloop

sadloop:
	CMPQ BX, CX
	JGE  saddone
	VMULPD (DI)(BX*8), Y8, Y0 // s·e
	VMOVUPD Y0, (DI)(BX*8)
	VADDPD (SI)(BX*8), Y0, Y1 // x + e (addition commutes)
	VDIVPD Y9, Y1, Y1         // / d
	VMOVUPD Y1, (DX)(BX*8)
	ADDQ $4, BX
	JMP  sadloop

samloop:
	CMPQ BX, CX
	JGE  saddone
	VMULPD (DI)(BX*8), Y8, Y0 // s·e
	VMOVUPD Y0, (DI)(BX*8)
	VADDPD (SI)(BX*8), Y0, Y1 // x + e
	VMULPD Y9, Y1, Y1         // · 1/d
	VMOVUPD Y1, (DX)(BX*8)
	ADDQ $4, BX
	JMP  samloop

saddone:
	VZEROUPPER
	RET

// func mulBitsAVX(dst, x *float64, bits *uint64, words int, lut *[16][4]float64)
// dst = x·lut[nibble] four entries at a time, 16 nibbles per word of bits.
TEXT ·mulBitsAVX(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ bits+16(FP), R8
	MOVQ words+24(FP), CX
	MOVQ lut+32(FP), R9

mbword:
	TESTQ CX, CX
	JEQ   mbdone
	MOVQ  (R8), R10
	MOVQ  $16, R11

mbnib:
	MOVQ R10, AX
	ANDQ $15, AX
	SHLQ $5, AX
	VMOVUPD (R9)(AX*1), Y1
	VMULPD (SI), Y1, Y0 // factor·x (multiplication commutes)
	VMOVUPD Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SHRQ $4, R10
	DECQ R11
	JNE  mbnib
	ADDQ $8, R8
	DECQ CX
	JMP  mbword

mbdone:
	VZEROUPPER
	RET

// func scatterCSRAVX(out *float64, ldo int, indptr *int, rows int, idx *int, vals *float64, vinc int, x *float64, ldx int, outRows int) (ok bool)
// For each row i, the 16-wide strip of x's row i, scaled by each entry's
// factor, is added to the strip of out's row idx[p]; idx and vals start at
// entry indptr[0] and advance one entry at a time. An index not below
// outRows stops the kernel with ok false.
TEXT ·scatterCSRAVX(SB), NOSPLIT, $0-81
	MOVQ out+0(FP), DI
	MOVQ ldo+8(FP), R8
	SHLQ $3, R8
	MOVQ indptr+16(FP), R9
	MOVQ rows+24(FP), R10
	MOVQ idx+32(FP), R11
	MOVQ vals+40(FP), SI
	MOVQ vinc+48(FP), DX
	SHLQ $3, DX
	MOVQ x+56(FP), R12
	MOVQ ldx+64(FP), R13
	SHLQ $3, R13
	MOVQ outRows+72(FP), R15
	XORQ CX, CX

scrow:
	CMPQ CX, R10
	JGE  scdone
	MOVQ 8(R9)(CX*8), BX
	SUBQ (R9)(CX*8), BX // the row's entries
	VMOVUPD 0(R12), Y8
	VMOVUPD 32(R12), Y9
	VMOVUPD 64(R12), Y10
	VMOVUPD 96(R12), Y11

scent:
	TESTQ BX, BX
	JEQ   scnext
	MOVQ  (R11), R14
	CMPQ  R14, R15
	JAE   scbad
	IMULQ R8, R14
	ADDQ  DI, R14
	VBROADCASTSD (SI), Y4
	VMULPD Y8, Y4, Y0
	VMULPD Y9, Y4, Y1
	VMULPD Y10, Y4, Y2
	VMULPD Y11, Y4, Y3
	VADDPD 0(R14), Y0, Y0 // out + v·x (addition commutes)
	VADDPD 32(R14), Y1, Y1
	VADDPD 64(R14), Y2, Y2
	VADDPD 96(R14), Y3, Y3
	VMOVUPD Y0, 0(R14)
	VMOVUPD Y1, 32(R14)
	VMOVUPD Y2, 64(R14)
	VMOVUPD Y3, 96(R14)
	ADDQ $8, R11
	ADDQ DX, SI
	DECQ BX
	JMP  scent

scnext:
	ADDQ R13, R12
	INCQ CX
	JMP  scrow

scdone:
	MOVB $1, ok+80(FP)
	VZEROUPPER
	RET

scbad:
	MOVB $0, ok+80(FP)
	VZEROUPPER
	RET

// func axpySeq2AVX(dst0, dst1 *float64, n int, vals0, vals1 *float64, vinc int, k int, b *float64, ldb int, zero bool)
// axpySeqAVX's 16-column strips for two rows at once (n a multiple of 16):
// row 0's sums in Y0–Y3, row 1's in Y9–Y12, each row of b read once.
TEXT ·axpySeq2AVX(SB), NOSPLIT, $0-73
	MOVQ dst0+0(FP), DI
	MOVQ dst1+8(FP), R12
	MOVQ n+16(FP), CX
	MOVQ vals0+24(FP), SI
	MOVQ vals1+32(FP), R14
	MOVQ vinc+40(FP), DX
	SHLQ $3, DX
	MOVQ k+48(FP), R9
	MOVQ b+56(FP), R10
	MOVQ ldb+64(FP), R11
	SHLQ $3, R11

s2strip:
	CMPQ CX, $16
	JLT  s2ret
	CMPB zero+72(FP), $0
	JNE  s2zero
	VMOVUPD (DI), Y0
	VMOVUPD 32(DI), Y1
	VMOVUPD 64(DI), Y2
	VMOVUPD 96(DI), Y3
	VMOVUPD (R12), Y9
	VMOVUPD 32(R12), Y10
	VMOVUPD 64(R12), Y11
	VMOVUPD 96(R12), Y12
	JMP  s2init

s2zero:
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
	VXORPD Y12, Y12, Y12

s2init:
	MOVQ SI, R13
	MOVQ R14, R15
	MOVQ R10, BX
	XORQ AX, AX

s2loop:
	CMPQ AX, R9
	JGE  s2done
	VBROADCASTSD (R13), Y4
	VBROADCASTSD (R15), Y13
	VMOVUPD (BX), Y5
	VMOVUPD 32(BX), Y6
	VMOVUPD 64(BX), Y7
	VMOVUPD 96(BX), Y8
	VMULPD Y5, Y4, Y14
	VMULPD Y5, Y13, Y15
	VADDPD Y14, Y0, Y0
	VADDPD Y15, Y9, Y9
	VMULPD Y6, Y4, Y14
	VMULPD Y6, Y13, Y15
	VADDPD Y14, Y1, Y1
	VADDPD Y15, Y10, Y10
	VMULPD Y7, Y4, Y14
	VMULPD Y7, Y13, Y15
	VADDPD Y14, Y2, Y2
	VADDPD Y15, Y11, Y11
	VMULPD Y8, Y4, Y14
	VMULPD Y8, Y13, Y15
	VADDPD Y14, Y3, Y3
	VADDPD Y15, Y12, Y12
	ADDQ DX, R13
	ADDQ DX, R15
	ADDQ R11, BX
	INCQ AX
	JMP  s2loop

s2done:
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	VMOVUPD Y9, (R12)
	VMOVUPD Y10, 32(R12)
	VMOVUPD Y11, 64(R12)
	VMOVUPD Y12, 96(R12)
	ADDQ $128, DI
	ADDQ $128, R12
	ADDQ $128, R10
	SUBQ $16, CX
	JMP  s2strip

s2ret:
	VZEROUPPER
	RET

// func seq4AVX(dst *float64, ldd, n int, vals *float64, rinc, vinc, k int, b *float64, ldb int, zero bool, groups int)
// groups ≥ 1 groups of four rows of width 1 ≤ n ≤ 8 (row r of dst at dst +
// r·ldd, its factors at vals + r·rinc + l·vinc), k ≥ 1, strides in
// elements. Columns 0–3 and 4–7 of a row are one register each, loaded and
// stored under the masks Y14 and Y15, so eight (n > 4) or four chains of
// additions are in flight; each entry is summed in the order of axpySeqAVX.
TEXT ·seq4AVX(SB), NOSPLIT, $0-88
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R8
	SHLQ $3, R8
	LEAQ (R8)(R8*2), R12
	MOVQ n+16(FP), AX
	MOVQ vals+24(FP), R15
	MOVQ rinc+32(FP), DX
	SHLQ $3, DX
	LEAQ (DX)(DX*2), R9
	MOVQ vinc+40(FP), R10
	SHLQ $3, R10
	MOVQ b+56(FP), R14
	MOVQ ldb+64(FP), R11
	SHLQ $3, R11
	LEAQ tailmask<>(SB), R13

	VPCMPEQQ Y14, Y14, Y14
	VPCMPEQQ Y15, Y15, Y15
	CMPQ AX, $4
	JGT  s4wmask
	JEQ  s4nmasked
	LEAQ -1(AX), CX
	SHLQ $5, CX
	VMOVDQU (R13)(CX*1), Y14

s4nmasked:
	MOVQ groups+80(FP), R13
	JMP  s4narrow

s4wmask:
	CMPQ AX, $8
	JGE  s4wmasked
	LEAQ -5(AX), CX
	SHLQ $5, CX
	VMOVDQU (R13)(CX*1), Y15

s4wmasked:
	MOVQ groups+80(FP), R13

s4wide:
	MOVQ R15, SI
	MOVQ R14, BX
	MOVQ k+48(FP), CX
	CMPB zero+72(FP), $0
	JNE  s4wzero
	VMASKMOVPD (DI), Y14, Y0
	VMASKMOVPD 32(DI), Y15, Y1
	VMASKMOVPD (DI)(R8*1), Y14, Y2
	VMASKMOVPD 32(DI)(R8*1), Y15, Y3
	VMASKMOVPD (DI)(R8*2), Y14, Y4
	VMASKMOVPD 32(DI)(R8*2), Y15, Y5
	VMASKMOVPD (DI)(R12*1), Y14, Y6
	VMASKMOVPD 32(DI)(R12*1), Y15, Y7
	JMP  s4wloop

s4wzero:
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7

s4wloop:
	VMASKMOVPD (BX), Y14, Y8
	VMASKMOVPD 32(BX), Y15, Y9
	VBROADCASTSD (SI), Y10
	VBROADCASTSD (SI)(DX*1), Y11
	VMULPD Y8, Y10, Y12
	VMULPD Y9, Y10, Y13
	VADDPD Y12, Y0, Y0
	VADDPD Y13, Y1, Y1
	VMULPD Y8, Y11, Y12
	VMULPD Y9, Y11, Y13
	VADDPD Y12, Y2, Y2
	VADDPD Y13, Y3, Y3
	VBROADCASTSD (SI)(DX*2), Y10
	VBROADCASTSD (SI)(R9*1), Y11
	VMULPD Y8, Y10, Y12
	VMULPD Y9, Y10, Y13
	VADDPD Y12, Y4, Y4
	VADDPD Y13, Y5, Y5
	VMULPD Y8, Y11, Y12
	VMULPD Y9, Y11, Y13
	VADDPD Y12, Y6, Y6
	VADDPD Y13, Y7, Y7
	ADDQ R10, SI
	ADDQ R11, BX
	DECQ CX
	JNZ  s4wloop

	VMASKMOVPD Y0, Y14, (DI)
	VMASKMOVPD Y1, Y15, 32(DI)
	VMASKMOVPD Y2, Y14, (DI)(R8*1)
	VMASKMOVPD Y3, Y15, 32(DI)(R8*1)
	VMASKMOVPD Y4, Y14, (DI)(R8*2)
	VMASKMOVPD Y5, Y15, 32(DI)(R8*2)
	VMASKMOVPD Y6, Y14, (DI)(R12*1)
	VMASKMOVPD Y7, Y15, 32(DI)(R12*1)
	LEAQ (DI)(R8*4), DI
	LEAQ (R15)(DX*4), R15
	DECQ R13
	JNZ  s4wide
	VZEROUPPER
	RET

s4narrow:
	MOVQ R15, SI
	MOVQ R14, BX
	MOVQ k+48(FP), CX
	CMPB zero+72(FP), $0
	JNE  s4nzero
	VMASKMOVPD (DI), Y14, Y0
	VMASKMOVPD (DI)(R8*1), Y14, Y2
	VMASKMOVPD (DI)(R8*2), Y14, Y4
	VMASKMOVPD (DI)(R12*1), Y14, Y6
	JMP  s4nloop

s4nzero:
	VXORPD Y0, Y0, Y0
	VXORPD Y2, Y2, Y2
	VXORPD Y4, Y4, Y4
	VXORPD Y6, Y6, Y6

s4nloop:
	VMASKMOVPD (BX), Y14, Y8
	VBROADCASTSD (SI), Y10
	VBROADCASTSD (SI)(DX*1), Y11
	VMULPD Y8, Y10, Y12
	VMULPD Y8, Y11, Y13
	VADDPD Y12, Y0, Y0
	VADDPD Y13, Y2, Y2
	VBROADCASTSD (SI)(DX*2), Y10
	VBROADCASTSD (SI)(R9*1), Y11
	VMULPD Y8, Y10, Y12
	VMULPD Y8, Y11, Y13
	VADDPD Y12, Y4, Y4
	VADDPD Y13, Y6, Y6
	ADDQ R10, SI
	ADDQ R11, BX
	DECQ CX
	JNZ  s4nloop

	VMASKMOVPD Y0, Y14, (DI)
	VMASKMOVPD Y2, Y14, (DI)(R8*1)
	VMASKMOVPD Y4, Y14, (DI)(R8*2)
	VMASKMOVPD Y6, Y14, (DI)(R12*1)
	LEAQ (DI)(R8*4), DI
	LEAQ (R15)(DX*4), R15
	DECQ R13
	JNZ  s4narrow
	VZEROUPPER
	RET

// func affineRowsAVX(dst, x, a, s, gm, b *float64, rows, d int)
// dst[i,c] = ((x[i,c] + a[c])·s[c])·g[c] + b[c] for the leading multiple of
// four columns c of each of the rows rows of width d, 8 columns at a time,
// then 4.
TEXT ·affineRowsAVX(SB), NOSPLIT, $0-64
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ a+16(FP), R10
	MOVQ s+24(FP), R11
	MOVQ gm+32(FP), R12
	MOVQ b+40(FP), R13
	MOVQ rows+48(FP), CX
	MOVQ d+56(FP), R8
	MOVQ R8, R9
	ANDQ $-4, R9 // the columns done here

afrow:
	TESTQ CX, CX
	JZ    afdone
	XORQ  BX, BX

af8:
	LEAQ 8(BX), AX
	CMPQ AX, R9
	JGT  af4
	VMOVUPD (SI)(BX*8), Y0
	VMOVUPD 32(SI)(BX*8), Y1
	VADDPD (R10)(BX*8), Y0, Y0
	VADDPD 32(R10)(BX*8), Y1, Y1
	VMULPD (R11)(BX*8), Y0, Y0
	VMULPD 32(R11)(BX*8), Y1, Y1
	VMULPD (R12)(BX*8), Y0, Y0
	VMULPD 32(R12)(BX*8), Y1, Y1
	VADDPD (R13)(BX*8), Y0, Y0
	VADDPD 32(R13)(BX*8), Y1, Y1
	VMOVUPD Y0, (DI)(BX*8)
	VMOVUPD Y1, 32(DI)(BX*8)
	ADDQ $8, BX
	JMP  af8

af4:
	CMPQ BX, R9
	JGE  afnext
	VMOVUPD (SI)(BX*8), Y0
	VADDPD (R10)(BX*8), Y0, Y0
	VMULPD (R11)(BX*8), Y0, Y0
	VMULPD (R12)(BX*8), Y0, Y0
	VADDPD (R13)(BX*8), Y0, Y0
	VMOVUPD Y0, (DI)(BX*8)
	ADDQ $4, BX
	JMP  af4

afnext:
	LEAQ (DI)(R8*8), DI
	LEAQ (SI)(R8*8), SI
	DECQ CX
	JMP  afrow

afdone:
	VZEROUPPER
	RET

// The 512-bit SELU, eight vectors of eight (r in Z16–Z23, the polynomials
// in Z24–Z31): the macros of the 256-bit kernel with Z registers, the
// constants broadcast from the first of their four copies (.BCST), the
// masks x < expLow and x > 0 in K1 and K2, and masked moves where that
// kernel blends. Every operation and its order per lane are seluloop's.
#define SELU512_R(off, r) \
	VMOVUPD off(SI)(BX*8), Z8 \
	VMULPD Z12, Z8, Z9 \
	VRNDSCALEPD $0, Z9, Z9 \
	VMULPD.BCST 128(R9), Z9, Z10 \
	VSUBPD Z10, Z8, r \
	VMULPD.BCST 160(R9), Z9, Z10 \
	VSUBPD Z10, r, r

#define SELU512_POLY(off) \
	VMULPD Z16, Z24, Z24 \
	VMULPD Z17, Z25, Z25 \
	VMULPD Z18, Z26, Z26 \
	VMULPD Z19, Z27, Z27 \
	VMULPD Z20, Z28, Z28 \
	VMULPD Z21, Z29, Z29 \
	VMULPD Z22, Z30, Z30 \
	VMULPD Z23, Z31, Z31 \
	VADDPD.BCST off(R8), Z24, Z24 \
	VADDPD.BCST off(R8), Z25, Z25 \
	VADDPD.BCST off(R8), Z26, Z26 \
	VADDPD.BCST off(R8), Z27, Z27 \
	VADDPD.BCST off(R8), Z28, Z28 \
	VADDPD.BCST off(R8), Z29, Z29 \
	VADDPD.BCST off(R8), Z30, Z30 \
	VADDPD.BCST off(R8), Z31, Z31

#define SELU512_E(off, p) \
	VMOVUPD off(SI)(BX*8), Z8 \
	VMULPD Z12, Z8, Z9 \
	VRNDSCALEPD $0, Z9, Z9 \
	VCVTPD2DQ Z9, Y9 \
	VPMOVSXDQ Y9, Z9 \
	VPADDQ.BCST 224(R9), Z9, Z9 \
	VPSLLQ $52, Z9, Z9 \
	VMULPD Z9, p, p \
	VCMPPD $1, Z13, Z8, K1 \
	VPXORQ p, p, K1, p \
	VPXORQ Z9, Z9, Z9 \
	VCMPPD $0x1e, Z9, Z8, K2

#define SELU512_FWD(off, p) \
	SELU512_E(off, p) \
	VSUBPD.BCST 192(R9), p, Z10 \
	VMULPD Z14, Z10, Z10 \
	VMULPD Z15, Z8, K2, Z10 \
	VMOVUPD Z10, off(DI)(BX*8)

#define SELU512_GRAD(off, p) \
	SELU512_E(off, p) \
	VMULPD Z14, p, Z10 \
	VMOVAPD Z15, K2, Z10 \
	VMULPD off(DX)(BX*8), Z10, Z10 \
	VMOVUPD Z10, off(DI)(BX*8)

#define SELU512_HEAD \
	SELU512_R(0, Z16) \
	SELU512_R(64, Z17) \
	SELU512_R(128, Z18) \
	SELU512_R(192, Z19) \
	SELU512_R(256, Z20) \
	SELU512_R(320, Z21) \
	SELU512_R(384, Z22) \
	SELU512_R(448, Z23) \
	VBROADCASTSD 0(R8), Z24 \
	VMOVAPD Z24, Z25 \
	VMOVAPD Z24, Z26 \
	VMOVAPD Z24, Z27 \
	VMOVAPD Z24, Z28 \
	VMOVAPD Z24, Z29 \
	VMOVAPD Z24, Z30 \
	VMOVAPD Z24, Z31 \
	SELU512_POLY(32) \
	SELU512_POLY(64) \
	SELU512_POLY(96) \
	SELU512_POLY(128) \
	SELU512_POLY(160) \
	SELU512_POLY(192) \
	SELU512_POLY(224) \
	SELU512_POLY(256) \
	SELU512_POLY(288) \
	SELU512_POLY(320) \
	SELU512_POLY(352) \
	SELU512_POLY(384) \
	SELU512_POLY(416)

// func seluAVX512(mode int, dst, x, dy *float64, n int, poly *[14][4]float64, k *[8][4]float64)
// seluAVX for n a multiple of 64, 64 entries per step.
TEXT ·seluAVX512(SB), NOSPLIT, $0-56
	MOVQ mode+0(FP), AX
	MOVQ dst+8(FP), DI
	MOVQ x+16(FP), SI
	MOVQ dy+24(FP), DX
	MOVQ n+32(FP), CX
	MOVQ poly+40(FP), R8
	MOVQ k+48(FP), R9
	VBROADCASTSD 0(R9), Z15  // λ
	VBROADCASTSD 32(R9), Z14 // λα
	VBROADCASTSD 64(R9), Z13 // expLow
	VBROADCASTSD 96(R9), Z12 // log2e
	XORQ BX, BX
	CMPQ AX, $0
	JNE  s512grad

s512fwd:
	CMPQ BX, CX
	JGE  s512done
	SELU512_HEAD
	SELU512_FWD(0, Z24)
	SELU512_FWD(64, Z25)
	SELU512_FWD(128, Z26)
	SELU512_FWD(192, Z27)
	SELU512_FWD(256, Z28)
	SELU512_FWD(320, Z29)
	SELU512_FWD(384, Z30)
	SELU512_FWD(448, Z31)
	ADDQ $64, BX
	JMP  s512fwd

s512grad:
	CMPQ BX, CX
	JGE  s512done
	SELU512_HEAD
	SELU512_GRAD(0, Z24)
	SELU512_GRAD(64, Z25)
	SELU512_GRAD(128, Z26)
	SELU512_GRAD(192, Z27)
	SELU512_GRAD(256, Z28)
	SELU512_GRAD(320, Z29)
	SELU512_GRAD(384, Z30)
	SELU512_GRAD(448, Z31)
	ADDQ $64, BX
	JMP  s512grad

s512done:
	VZEROUPPER
	RET

// func seq4wAVX512(dst *float64, ldd, n int, vals *float64, rinc, vinc, k int, b *float64, ldb int, zero bool, groups int)
// groups ≥ 1 groups of four rows (row r of dst at dst + r·ldd, its factors
// at vals + r·rinc + l·vinc) over their first n columns, n a multiple of
// 16, k ≥ 1, strides in elements: each strip of 16 columns of the four
// rows is eight chains of additions (Z0–Z7), each product a row of b times
// a broadcast factor (.BCST); every entry is summed in the order of
// axpySeqAVX.
TEXT ·seq4wAVX512(SB), NOSPLIT, $0-88
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R8
	SHLQ $3, R8
	LEAQ (R8)(R8*2), R12
	MOVQ n+16(FP), R14
	SHLQ $3, R14
	MOVQ vals+24(FP), R15
	MOVQ rinc+32(FP), DX
	SHLQ $3, DX
	LEAQ (DX)(DX*2), R9
	MOVQ vinc+40(FP), R10
	SHLQ $3, R10
	MOVQ ldb+64(FP), R11
	SHLQ $3, R11
	MOVQ groups+80(FP), R13

w5group:
	XORQ AX, AX // the strip's byte offset; DI is the group's row 0 plus it

w5strip:
	MOVQ R15, SI
	MOVQ b+56(FP), BX
	ADDQ AX, BX
	MOVQ k+48(FP), CX
	CMPB zero+72(FP), $0
	JNE  w5zero
	VMOVUPD (DI), Z0
	VMOVUPD 64(DI), Z1
	VMOVUPD (DI)(R8*1), Z2
	VMOVUPD 64(DI)(R8*1), Z3
	VMOVUPD (DI)(R8*2), Z4
	VMOVUPD 64(DI)(R8*2), Z5
	VMOVUPD (DI)(R12*1), Z6
	VMOVUPD 64(DI)(R12*1), Z7
	JMP  w5loop

w5zero:
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	VPXORQ Z6, Z6, Z6
	VPXORQ Z7, Z7, Z7

w5loop:
	VMOVUPD (BX), Z8
	VMOVUPD 64(BX), Z9
	VMULPD.BCST (SI), Z8, Z10
	VMULPD.BCST (SI), Z9, Z11
	VADDPD Z10, Z0, Z0
	VADDPD Z11, Z1, Z1
	VMULPD.BCST (SI)(DX*1), Z8, Z12
	VMULPD.BCST (SI)(DX*1), Z9, Z13
	VADDPD Z12, Z2, Z2
	VADDPD Z13, Z3, Z3
	VMULPD.BCST (SI)(DX*2), Z8, Z10
	VMULPD.BCST (SI)(DX*2), Z9, Z11
	VADDPD Z10, Z4, Z4
	VADDPD Z11, Z5, Z5
	VMULPD.BCST (SI)(R9*1), Z8, Z12
	VMULPD.BCST (SI)(R9*1), Z9, Z13
	VADDPD Z12, Z6, Z6
	VADDPD Z13, Z7, Z7
	ADDQ R10, SI
	ADDQ R11, BX
	DECQ CX
	JNZ  w5loop

	VMOVUPD Z0, (DI)
	VMOVUPD Z1, 64(DI)
	VMOVUPD Z2, (DI)(R8*1)
	VMOVUPD Z3, 64(DI)(R8*1)
	VMOVUPD Z4, (DI)(R8*2)
	VMOVUPD Z5, 64(DI)(R8*2)
	VMOVUPD Z6, (DI)(R12*1)
	VMOVUPD Z7, 64(DI)(R12*1)
	ADDQ $128, DI
	ADDQ $128, AX
	CMPQ AX, R14
	JLT  w5strip

	SUBQ AX, DI
	LEAQ (DI)(R8*4), DI
	LEAQ (R15)(DX*4), R15
	DECQ R13
	JNZ  w5group
	VZEROUPPER
	RET

// exp constants: math.Exp's on amd64 (src/math/exp_amd64.s), each
// repeated four times: LOG2E, LN2U, LN2L, 1/16, the Taylor coefficients
// c64 … c24, 0.5, 1, 2, and the exponent bias 1023 (int64).
DATA expk<>+0(SB)/8, $1.4426950408889634073599246810018920
DATA expk<>+8(SB)/8, $0.69314718055966295651160180568695068359375
DATA expk<>+16(SB)/8, $0.28235290563031577122588448175013436025525412068e-12
DATA expk<>+24(SB)/8, $0.0625
DATA expk<>+32(SB)/8, $2.4801587301587301587e-5
DATA expk<>+40(SB)/8, $1.9841269841269841270e-4
DATA expk<>+48(SB)/8, $1.3888888888888888889e-3
DATA expk<>+56(SB)/8, $8.3333333333333333333e-3
DATA expk<>+64(SB)/8, $4.1666666666666666667e-2
DATA expk<>+72(SB)/8, $1.6666666666666666667e-1
DATA expk<>+80(SB)/8, $0.5
DATA expk<>+88(SB)/8, $1.0
DATA expk<>+96(SB)/8, $2.0
DATA expk<>+104(SB)/8, $1023
DATA expk<>+112(SB)/8, $-700.0
DATA expk<>+120(SB)/8, $700.0
GLOBL expk<>(SB), RODATA|NOPTR, $128

// func expFMA(dst, x *float64, n int) (done int)
// math.Exp's FMA path, four lanes at a time, the same operations in the
// same order per lane, over the leading groups of four (n a multiple of 4)
// whose entries all lie in [−700, 700] (finite, and the result neither
// overflows nor is subnormal, so none of math.Exp's special cases
// applies); it stops before the first group that does not and returns
// how many entries it did.
TEXT ·expFMA(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	LEAQ expk<>(SB), R8
	VBROADCASTSD 112(R8), Y14 // −700
	VBROADCASTSD 120(R8), Y15 // 700
	VBROADCASTSD 0(R8), Y13   // LOG2E
	XORQ BX, BX

exploop:
	CMPQ BX, CX
	JGE  expdone
	VMOVUPD (SI)(BX*8), Y0
	VCMPPD $0x1d, Y14, Y0, Y8 // x ≥ −700 (GE_OQ)
	VCMPPD $0x12, Y15, Y0, Y9 // x ≤ 700 (LE_OQ)
	VANDPD Y9, Y8, Y8
	VMOVMSKPD Y8, AX
	CMPQ AX, $15
	JNE  expdone
	VMULPD Y0, Y13, Y1        // x·LOG2E
	VCVTPD2DQY Y1, X2         // k (round to nearest even)
	VCVTDQ2PD X2, Y1
	VBROADCASTSD 8(R8), Y3
	VFNMADD231PD Y3, Y1, Y0   // x − k·LN2U
	VBROADCASTSD 16(R8), Y3
	VFNMADD231PD Y3, Y1, Y0   // − k·LN2L
	VBROADCASTSD 24(R8), Y3
	VMULPD Y3, Y0, Y0         // /16
	VBROADCASTSD 32(R8), Y1
	VBROADCASTSD 40(R8), Y3
	VFMADD213PD Y3, Y0, Y1
	VBROADCASTSD 48(R8), Y3
	VFMADD213PD Y3, Y0, Y1
	VBROADCASTSD 56(R8), Y3
	VFMADD213PD Y3, Y0, Y1
	VBROADCASTSD 64(R8), Y3
	VFMADD213PD Y3, Y0, Y1
	VBROADCASTSD 72(R8), Y3
	VFMADD213PD Y3, Y0, Y1
	VBROADCASTSD 80(R8), Y3
	VFMADD213PD Y3, Y0, Y1
	VBROADCASTSD 88(R8), Y4   // 1
	VFMADD213PD Y4, Y0, Y1
	VMULPD Y1, Y0, Y0
	VBROADCASTSD 96(R8), Y5   // 2
	VADDPD Y5, Y0, Y1
	VMULPD Y1, Y0, Y0
	VADDPD Y5, Y0, Y1
	VMULPD Y1, Y0, Y0
	VADDPD Y5, Y0, Y1
	VMULPD Y1, Y0, Y0
	VADDPD Y5, Y0, Y1
	VFMADD213PD Y4, Y1, Y0    // ·(y+2) + 1
	VPMOVSXDQ X2, Y2
	VPBROADCASTQ 104(R8), Y3
	VPADDQ Y3, Y2, Y2
	VPSLLQ $52, Y2, Y2        // 2^k
	VMULPD Y2, Y0, Y0
	VMOVUPD Y0, (DI)(BX*8)
	ADDQ $4, BX
	JMP  exploop

expdone:
	MOVQ BX, done+24(FP)
	VZEROUPPER
	RET

// func scaleRowsAVX(dst, x, f *float64, rows, k int)
// dst[i,c] = x[i,c]·f[i] for the leading multiple of four columns c of
// each of the rows rows of width k.
TEXT ·scaleRowsAVX(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ f+16(FP), DX
	MOVQ rows+24(FP), CX
	MOVQ k+32(FP), R8
	MOVQ R8, R9
	ANDQ $-4, R9

scrow:
	TESTQ CX, CX
	JZ    scdone
	VBROADCASTSD (DX), Y15
	XORQ BX, BX

sc16:
	LEAQ 16(BX), AX
	CMPQ AX, R9
	JGT  sc4
	VMULPD (SI)(BX*8), Y15, Y0
	VMULPD 32(SI)(BX*8), Y15, Y1
	VMULPD 64(SI)(BX*8), Y15, Y2
	VMULPD 96(SI)(BX*8), Y15, Y3
	VMOVUPD Y0, (DI)(BX*8)
	VMOVUPD Y1, 32(DI)(BX*8)
	VMOVUPD Y2, 64(DI)(BX*8)
	VMOVUPD Y3, 96(DI)(BX*8)
	ADDQ $16, BX
	JMP  sc16

sc4:
	CMPQ BX, R9
	JGE  scnext
	VMULPD (SI)(BX*8), Y15, Y0
	VMOVUPD Y0, (DI)(BX*8)
	ADDQ $4, BX
	JMP  sc4

scnext:
	LEAQ (DI)(R8*8), DI
	LEAQ (SI)(R8*8), SI
	ADDQ $8, DX
	DECQ CX
	JMP  scrow

scdone:
	VZEROUPPER
	RET

// func rowNormGradAVX(dst, x, dy, norm, dot *float64, rows, k int)
// dst[i,c] = (dy[i,c] − x[i,c]/norm[i]·dot[i])/norm[i] for the leading
// multiple of four columns c of each row (row normalisation's gradient:
// two divisions per entry, four lanes per instruction).
TEXT ·rowNormGradAVX(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ dy+16(FP), DX
	MOVQ norm+24(FP), R10
	MOVQ dot+32(FP), R11
	MOVQ rows+40(FP), CX
	MOVQ k+48(FP), R8
	MOVQ R8, R9
	ANDQ $-4, R9

rgrow:
	TESTQ CX, CX
	JZ    rgdone
	VBROADCASTSD (R10), Y14 // norm
	VBROADCASTSD (R11), Y15 // dot
	XORQ BX, BX

rg8:
	LEAQ 8(BX), AX
	CMPQ AX, R9
	JGT  rg4
	VMOVUPD (SI)(BX*8), Y0
	VMOVUPD 32(SI)(BX*8), Y1
	VDIVPD Y14, Y0, Y0
	VDIVPD Y14, Y1, Y1
	VMULPD Y15, Y0, Y0
	VMULPD Y15, Y1, Y1
	VMOVUPD (DX)(BX*8), Y2
	VMOVUPD 32(DX)(BX*8), Y3
	VSUBPD Y0, Y2, Y2
	VSUBPD Y1, Y3, Y3
	VDIVPD Y14, Y2, Y2
	VDIVPD Y14, Y3, Y3
	VMOVUPD Y2, (DI)(BX*8)
	VMOVUPD Y3, 32(DI)(BX*8)
	ADDQ $8, BX
	JMP  rg8

rg4:
	CMPQ BX, R9
	JGE  rgnext
	VMOVUPD (SI)(BX*8), Y0
	VDIVPD Y14, Y0, Y0
	VMULPD Y15, Y0, Y0
	VMOVUPD (DX)(BX*8), Y2
	VSUBPD Y0, Y2, Y2
	VDIVPD Y14, Y2, Y2
	VMOVUPD Y2, (DI)(BX*8)
	ADDQ $4, BX
	JMP  rg4

rgnext:
	LEAQ (DI)(R8*8), DI
	LEAQ (SI)(R8*8), SI
	LEAQ (DX)(R8*8), DX
	ADDQ $8, R10
	ADDQ $8, R11
	DECQ CX
	JMP  rgrow

rgdone:
	VZEROUPPER
	RET

// func prefetchRowsAVX(idx *int, k int, b unsafe.Pointer, ld, rows int)
// PREFETCHT0 of every cache line that row idx[p] of b (ld bytes from
// b + idx[p]·ld) touches, p < k: a row of five values straddles two lines
// more often than not. Indices outside [0, rows) are skipped.
TEXT ·prefetchRowsAVX(SB), NOSPLIT, $0-40
	MOVQ idx+0(FP), R8
	MOVQ k+8(FP), CX
	MOVQ b+16(FP), R10
	MOVQ ld+24(FP), R11
	MOVQ rows+32(FP), R12
	XORQ AX, AX

pfloop:
	CMPQ AX, CX
	JGE  pfdone
	MOVQ (R8)(AX*8), BX
	CMPQ BX, R12
	JAE  pfnext
	IMULQ R11, BX
	ADDQ R10, BX
	LEAQ -1(BX)(R11*1), DX // the row's last byte
	ANDQ $-64, BX

pfline:
	PREFETCHT0 (BX)
	ADDQ $64, BX
	CMPQ BX, DX
	JLS  pfline

pfnext:
	INCQ AX
	JMP  pfloop

pfdone:
	RET

// func colRedAVX(mode int, a, b, x, y, m, s *float64, rows, k4, ld int)
// Column reductions over rows, row after row (see colRed): mode 0
// a += x; mode 1 a += (x − m)²; mode 2 a += y, b += (y·(x − m))·s; k4
// columns (a multiple of four), rows ld apart in x and y.
TEXT ·colRedAVX(SB), NOSPLIT, $0-80
	MOVQ mode+0(FP), DX
	MOVQ a+8(FP), DI
	MOVQ b+16(FP), R10
	MOVQ x+24(FP), SI
	MOVQ y+32(FP), R11
	MOVQ m+40(FP), R12
	MOVQ s+48(FP), R13
	MOVQ rows+56(FP), CX
	MOVQ k4+64(FP), R9
	MOVQ ld+72(FP), R8

crrow:
	TESTQ CX, CX
	JZ    crdone
	XORQ  BX, BX
	CMPQ  DX, $1
	JEQ   crsq
	JGT   crgrad

crsum:
	CMPQ    BX, R9
	JGE     crnext
	VMOVUPD (DI)(BX*8), Y0
	VADDPD  (SI)(BX*8), Y0, Y0
	VMOVUPD Y0, (DI)(BX*8)
	ADDQ    $4, BX
	JMP     crsum

crsq:
	CMPQ    BX, R9
	JGE     crnext
	VMOVUPD (SI)(BX*8), Y0
	VSUBPD  (R12)(BX*8), Y0, Y0
	VMULPD  Y0, Y0, Y0
	VMOVUPD (DI)(BX*8), Y1
	VADDPD  Y0, Y1, Y1
	VMOVUPD Y1, (DI)(BX*8)
	ADDQ    $4, BX
	JMP     crsq

crgrad:
	CMPQ    BX, R9
	JGE     crnext
	VMOVUPD (R11)(BX*8), Y2
	VMOVUPD (DI)(BX*8), Y1
	VADDPD  Y2, Y1, Y1
	VMOVUPD Y1, (DI)(BX*8)
	VMOVUPD (SI)(BX*8), Y0
	VSUBPD  (R12)(BX*8), Y0, Y0
	VMULPD  Y0, Y2, Y0
	VMULPD  (R13)(BX*8), Y0, Y0
	VMOVUPD (R10)(BX*8), Y3
	VADDPD  Y0, Y3, Y3
	VMOVUPD Y3, (R10)(BX*8)
	ADDQ    $4, BX
	JMP     crgrad

crnext:
	LEAQ (SI)(R8*8), SI
	LEAQ (R11)(R8*8), R11
	DECQ CX
	JMP  crrow

crdone:
	VZEROUPPER
	RET
