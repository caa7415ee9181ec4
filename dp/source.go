package dp

import (
	cryptorand "crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dpgnn/dpgnn/internal/parallel"
	"github.com/dpgnn/dpgnn/internal/vec"
)

// Source is dpgnn's seeded noise source: a ChaCha8 stream (math/rand/v2)
// whose 32-byte key is derived deterministically from a uint64 seed with
// SHA-256. The same seed gives the same stream bit for bit, and the stream
// is cryptographically strong, so the noise is not predictable from
// outputs without the seed. Normal draws come from dpgnn's own ziggurat
// (normal.go), so they do not change with the Go release; the long vectors
// of FillNormal are drawn from AES-256 keystreams under child keys.
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
	rng    *rand.Rand // over chacha, for integer draws
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
func (s *Source) Split(label string) *Source { return newSourceFromKey(s.splitKey(label)) }

// splitKey derives the next child key (Split's).
func (s *Source) splitKey(label string) [32]byte {
	// One Sum256 over the concatenation: the bits of hashing the parts in
	// turn, without the hasher and its result allocated per call (a
	// DP-SGD step splits a key per noise block).
	var buf [256]byte
	in := append(buf[:0], splitDomain...)
	in = append(in, s.key[:]...)
	in = binary.LittleEndian.AppendUint64(in, s.splits)
	in = append(in, label...)
	s.splits++
	return sha256.Sum256(in)
}

// Uint64 returns 64 uniformly random bits (math/rand/v2's Source interface).
func (s *Source) Uint64() uint64 { return s.chacha.Uint64() }

// Uniform returns a uniform draw from the open interval (0, 1): one of the
// 2^52 midpoints (k+½)/2^52, equally likely, so it is never 0 or 1 and is
// safe to pass to log (vec.UnitOpen).
func (s *Source) Uniform() float64 { return vec.UnitOpen(s.chacha.Uint64()) }

// Normal returns a standard normal draw (mean 0, variance 1): the
// ziggurat of normal.go over the source's own stream.
func (s *Source) Normal() float64 {
	w := s.chacha.Uint64()
	if x, ok := zigFast(w); ok {
		return x
	}
	return zigFinish(w, s)
}

// normalBlock is how many draws each child stream of FillNormal makes.
const normalBlock = 1 << 14

// FillNormal fills dst with independent standard normal draws. Up to
// normalBlock draws come from s itself, in order (the same as calling
// Normal len(dst) times). A longer dst is cut into blocks of normalBlock
// draws, each drawn from the AES-256 keystream (normal.go) under its own
// child key (one Split per block, made in order), and the blocks are filled
// in parallel: the draws depend on the source's state only, not on the
// number of CPUs. DP-SGD's noise on a wide first layer is most of a
// private run's work, so this is its hot loop.
func (s *Source) FillNormal(dst []float64) { s.FillNormalBlocks(dst, nil) }

// FillNormalBlocks is FillNormal that also calls then(lo, hi) as soon as
// dst[lo:hi] is filled, on the goroutine that filled it, while the block is
// still in cache: a caller scales and adds the noise in the same pass.
// Blocks are disjoint and may be handed to then concurrently; then may be
// nil.
func (s *Source) FillNormalBlocks(dst []float64, then func(lo, hi int)) {
	if len(dst) <= normalBlock {
		for i := range dst {
			dst[i] = s.Normal()
		}
		if then != nil {
			then(0, len(dst))
		}
		return
	}
	keys := make([][32]byte, (len(dst)+normalBlock-1)/normalBlock)
	for b := range keys {
		keys[b] = s.splitKey("FillNormal block")
	}
	parallel.Rows(len(keys), 16*len(dst), func(lo, hi int) {
		for b := lo; b < hi; b++ {
			l, h := b*normalBlock, min((b+1)*normalBlock, len(dst))
			a := newAESStream(keys[b])
			a.fill(dst[l:h])
			a.release()
			if then != nil {
				then(l, h)
			}
		}
	})
}

// Exponential returns a draw from the exponential law with rate 1 (mean 1).
func (s *Source) Exponential() float64 { return -math.Log(s.Uniform()) }

// NewSecureSource returns a source keyed from the operating system's
// cryptographic random generator (crypto/rand). Its noise cannot be
// regenerated by anyone, including whoever knows the run's --seed: use it
// for real releases, where a public seed would let an adversary subtract
// the noise. Runs with it do not repeat.
func NewSecureSource() (*Source, error) {
	var key [32]byte
	if _, err := cryptorand.Read(key[:]); err != nil {
		return nil, fmt.Errorf("dp: reading the system's random generator: %w", err)
	}
	return newSourceFromKey(key), nil
}
