package vec

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	be "encoding/binary"
	"math/rand/v2"
	"testing"
)

// stdCTR is crypto/aes's keystream under key from counter (hi, lo).
func stdCTR(key *[32]byte, hi, lo uint64) cipher.Stream {
	b, err := aes.NewCipher(key[:])
	if err != nil {
		panic(err)
	}
	var iv [16]byte
	be.BigEndian.PutUint64(iv[:8], hi)
	be.BigEndian.PutUint64(iv[8:], lo)
	return cipher.NewCTR(b, iv[:])
}

// TestAESCTRMatchesCrypto reads AESCTR's keystream in pieces of random
// lengths (partial blocks, whole 256-byte chunks, long runs) and compares
// it with crypto/aes in counter mode, also across a wrap of the counter's
// low word and after a Reset.
func TestAESCTRMatchesCrypto(t *testing.T) {
	for _, vaes := range []bool{false, true} {
		if vaes && !useVAES {
			t.Log("no VAES on this CPU: only the crypto/aes form is checked")
			continue
		}
		saved := useVAES
		useVAES = vaes
		checkAESCTR(t)
		useVAES = saved
	}
}

func checkAESCTR(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var s AESCTR
	for trial := range 40 {
		var key [32]byte
		for i := range key {
			key[i] = byte(rng.Uint32())
		}
		s.Reset(&key)
		var hi, lo uint64
		if trial%4 == 3 && useVAES { // start just before the low word wraps
			hi, lo = rng.Uint64(), -uint64(1+rng.IntN(40))
			s.hi, s.lo = hi, lo
		}
		want := stdCTR(&key, hi, lo)
		for range 30 {
			var n int
			switch rng.IntN(4) {
			case 0:
				n = rng.IntN(17)
			case 1:
				n = 256 * (1 + rng.IntN(4))
			case 2:
				n = rng.IntN(5000)
			default:
				n = 8 * rng.IntN(600)
			}
			got := make([]byte, n)
			s.Keystream(got)
			exp := make([]byte, n)
			want.XORKeyStream(exp, exp)
			if !bytes.Equal(got, exp) {
				t.Fatalf("VAES %v, trial %d: %d bytes differ from crypto/aes's keystream", useVAES, trial, n)
			}
		}
	}
}

// BenchmarkAESCTR fills a 16,384-word noise block.
func BenchmarkAESCTR(b *testing.B) {
	var key [32]byte
	buf := make([]byte, 8*16384)
	for _, vaes := range []bool{true, false} {
		name := "crypto"
		if vaes {
			name = "vaes"
		}
		b.Run(name, func(b *testing.B) {
			saved := useVAES
			useVAES = vaes && useVAES
			defer func() { useVAES = saved }()
			var s AESCTR
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				s.Reset(&key)
				s.Keystream(buf)
			}
		})
	}
}
