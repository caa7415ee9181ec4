package dp

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"math/rand/v2"
)

// Source is dpgnn's seeded noise source: a ChaCha8 stream (math/rand/v2)
// whose 32-byte key is derived deterministically from a uint64 seed with
// SHA-256. The same seed gives the same stream bit for bit (for a given Go
// release: Normal uses math/rand/v2's ziggurat, whose algorithm is fixed by
// the standard library), and the stream is cryptographically strong, so the
// noise is not predictable from outputs without the seed.
//
// A Source is not safe for concurrent use; give each goroutine its own child
// from Split. Source implements math/rand/v2's Source interface (Uint64), so
// it can drive gonum's distuv samplers as their Src.
//
// Floating-point noise samplers are known to leak through the low-order bits
// of their output (Mironov 2012); like the papers dpgnn reproduces, this
// package does not defend against that.
type Source struct {
	key    [32]byte
	chacha *rand.ChaCha8
	rng    *rand.Rand
	splits uint64
}

const (
	seedDomain  = "dpgnn/dp.Source/seed/v1\x00"
	splitDomain = "dpgnn/dp.Source/split/v1\x00"
)

// NewSource returns the Source for seed.
func NewSource(seed uint64) *Source {
	h := sha256.New()
	h.Write([]byte(seedDomain))
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	var key [32]byte
	copy(key[:], h.Sum(nil))
	return newSourceFromKey(key)
}

func newSourceFromKey(key [32]byte) *Source {
	c := rand.NewChaCha8(key)
	return &Source{key: key, chacha: c, rng: rand.New(c)}
}

// Split returns a child Source whose stream is independent of the parent's
// and of every other child. The child's key is SHA-256 of the parent's key,
// a per-parent split counter and label, so:
//   - Split does not consume from, or otherwise perturb, the parent's stream;
//   - the result depends on the seed, the label and how many Splits the
//     parent has made before (calling Split twice with the same label gives
//     two different streams: noise is never reused by accident);
//   - a program that makes the same Split calls in the same order gets the
//     same children.
//
// Use it to give each stage, matrix row block or goroutine its own stream so
// results do not depend on scheduling.
func (s *Source) Split(label string) *Source {
	h := sha256.New()
	h.Write([]byte(splitDomain))
	h.Write(s.key[:])
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], s.splits)
	h.Write(b[:])
	h.Write([]byte(label))
	s.splits++
	var key [32]byte
	copy(key[:], h.Sum(nil))
	return newSourceFromKey(key)
}

// Uint64 returns 64 uniformly random bits (math/rand/v2's Source interface).
func (s *Source) Uint64() uint64 { return s.chacha.Uint64() }

// Uniform returns a uniform draw from the open interval (0, 1): one of the
// 2^53 midpoints (k+½)/2^53, so it is never 0 or 1 and is safe to pass to
// log.
func (s *Source) Uniform() float64 {
	return (float64(s.chacha.Uint64()>>11) + 0.5) * (1.0 / (1 << 53))
}

// Normal returns a standard normal draw (mean 0, variance 1).
func (s *Source) Normal() float64 { return s.rng.NormFloat64() }

// Exponential returns a draw from the exponential law with rate 1 (mean 1).
func (s *Source) Exponential() float64 { return -math.Log(s.Uniform()) }
