package vec

import (
	"crypto/aes"
	"crypto/cipher"
	"fmt"
)

// AESCTR is the keystream of AES-256 in counter mode with a zero initial
// counter (a 128-bit big-endian block counter): the bytes that
// crypto/cipher's NewCTR over crypto/aes XORs onto its input, bit for bit
// (TestAESCTRMatchesCrypto). Where the CPU has VAES and AVX2 it is
// computed sixteen blocks at a time, two per 256-bit register, about
// twice crypto/aes's rate, and re-keying allocates nothing; elsewhere it
// is crypto/aes's.
type AESCTR struct {
	rk      [15][16]byte // round keys (VAES)
	lo, hi  uint64       // the next block's counter
	rest    [ctrChunk]byte
	restPos int // rest[restPos:] is keystream not yet read
	std     cipher.Stream
}

// ctrChunk is the kernel's unit: 16 blocks.
const ctrChunk = 256

// Reset rekeys s to the start of key's keystream.
func (s *AESCTR) Reset(key *[32]byte) {
	s.lo, s.hi, s.restPos = 0, 0, ctrChunk
	if !useVAES {
		b, err := aes.NewCipher(key[:])
		if err != nil {
			panic(fmt.Sprintf("vec: %v", err)) // a 32-byte key is always valid
		}
		var iv [aes.BlockSize]byte
		s.std = cipher.NewCTR(b, iv[:])
		return
	}
	expandKey256(key, &s.rk)
}

// Keystream fills dst with the next len(dst) bytes of the keystream.
func (s *AESCTR) Keystream(dst []byte) {
	if !useVAES {
		clear(dst)
		s.std.XORKeyStream(dst, dst)
		return
	}
	n := copy(dst, s.rest[s.restPos:])
	s.restPos += n
	dst = dst[n:]
	if whole := len(dst) / ctrChunk * ctrChunk; whole > 0 {
		s.blocks(dst[:whole])
		dst = dst[whole:]
	}
	if len(dst) > 0 {
		s.blocks(s.rest[:])
		s.restPos = copy(dst, s.rest[:])
	}
}

// blocks writes the next len(dst)/16 blocks (a multiple of 16) to dst,
// splitting where the counter's low word wraps.
func (s *AESCTR) blocks(dst []byte) {
	for len(dst) > 0 {
		n := uint64(len(dst) / 16)
		if room := -s.lo; s.lo != 0 && room < n { // lo+n would wrap
			n = room
		}
		if n%16 != 0 { // the 16 blocks around a wrap, one at a time
			s.wrapChunk(dst[:ctrChunk])
			dst = dst[ctrChunk:]
			continue
		}
		ctr256VAES(&s.rk, &dst[0], int(n), s.lo, s.hi)
		s.lo += n
		if s.lo == 0 {
			s.hi++
		}
		dst = dst[16*n:]
	}
}

// wrapChunk writes 16 blocks whose counters cross a wrap of the low word,
// each from a 16-block kernel call of its own (2⁶⁴ blocks into a stream:
// here for completeness and its test).
func (s *AESCTR) wrapChunk(dst []byte) {
	var one [ctrChunk]byte
	for b := 0; b < 16; b++ {
		ctr256VAES(&s.rk, &one[0], 16, s.lo, s.hi)
		copy(dst[16*b:], one[:16])
		s.lo++
		if s.lo == 0 {
			s.hi++
		}
	}
}
