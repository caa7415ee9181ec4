package dp

import (
	"encoding/binary"
	"math"
	"math/bits"
	"sync"
	"unsafe"

	"github.com/dpgnn/dpgnn/internal/vec"
)

// Standard normal draws: a 256-layer ziggurat (Marsaglia and Tsang 2000, in
// Doornik's 2005 form) over 64-bit words of a keyed stream.
//
// The ziggurat covers the half density f(x) = exp(−x²/2) with zigLayers
// layers of equal area v: layer 0 is the rectangle [0, r]×[0, f(r)] plus
// the tail beyond r, stored as a rectangle of width zigX[0] = v/f(r); layer
// i ≥ 1 is [0, zigX[i]]×[f(zigX[i]), f(zigX[i+1])], with zigX[1] = r and
// zigX[zigLayers] = 0. One word gives a layer i (its low 8 bits), a sign
// (bit 8) and a uniform u in [0, 1) (its top 52 bits times 2⁻⁵²); the bit
// ranges are disjoint. x = ±u·zigX[i] is returned at once when
// u < zigX[i+1]/zigX[i], so |x| < zigX[i+1], inside the density (98.5 %
// of draws). Otherwise layer 0 draws from the tail by Marsaglia's
// exponential method, and the other layers accept x with probability
// (f(x) − f(zigX[i])) / (f(zigX[i+1]) − f(zigX[i])) or start over, each
// from further words of the same stream.
// The result is an exact sample of N(0, 1) up to the tables' rounding and
// the 2⁻⁵² grid of u: r is solved at start-up so that the layers close to
// double precision (TestZigguratTables).
//
// This replaces math/rand/v2's NormFloat64 (128 layers, float32 tables, a
// 31-bit grid): the finer grid and float64 tables are at least as exact,
// and with the stream below a long vector costs 2.3–3× less per draw.
const zigLayers = 256

var (
	zigX [zigLayers + 1]float64 // layer widths
	zigR [zigLayers]float64     // zigX[i+1]/zigX[i]: the fast-path bound on |u|
	zigF [zigLayers + 1]float64 // f(zigX[i])
	zigr float64                // start of the tail

	// The wedge's squeeze (zigSqueeze): for |x| in layer i at chord
	// position t, the wedge test's threshold lies in [t+zigLo[i], t+zigHi[i]].
	zigInvW      [zigLayers]float64 // 1/(zigX[i] − zigX[i+1])
	zigLo, zigHi [zigLayers]float64
)

func init() { zigr = zigSetup() }

// zigHalfDensity is f(x) = exp(−x²/2).
func zigHalfDensity(x float64) float64 { return math.Exp(-0.5 * x * x) }

// zigArea is the layers' common area v for tail start r: the rectangle
// r·f(r) plus the tail ∫_r^∞ f = √(π/2)·erfc(r/√2).
func zigArea(r float64) float64 {
	return r*zigHalfDensity(r) + math.Sqrt(math.Pi/2)*math.Erfc(r/math.Sqrt2)
}

// zigFill builds the layers for tail start r and returns how much area
// the top layer, [0, zigX[C−1]]×[f(zigX[C−1]), 1], lacks against v:
// positive when r is too small (v too large: the layers reach the mode
// early, or overshoot it, which returns +1), negative when r is too large,
// zero at the right r.
func zigFill(r float64) float64 {
	v := zigArea(r)
	f := zigHalfDensity(r)
	zigX[0], zigX[1] = v/f, r
	for i := 2; i < zigLayers; i++ {
		y := f + v/zigX[i-1] // the top of layer i−1
		if y >= 1 {
			return 1
		}
		zigX[i] = math.Sqrt(-2 * math.Log(y))
		f = y
	}
	zigX[zigLayers] = 0
	return v - zigX[zigLayers-1]*(1-f)
}

// zigSetup solves zigFill(r) = 0 by bisection (the published value for 256
// layers is 3.6541528853610088) and fills the tables.
func zigSetup() float64 {
	lo, hi := 3.0, 4.5
	for {
		mid := (lo + hi) / 2
		if mid == lo || mid == hi {
			break
		}
		if zigFill(mid) > 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	r := lo
	if math.Abs(zigFill(hi)) < math.Abs(zigFill(lo)) {
		r = hi
	}
	zigFill(r)
	for i := range zigLayers {
		zigR[i] = zigX[i+1] / zigX[i]
	}
	for i := range zigX {
		zigF[i] = zigHalfDensity(zigX[i])
	}
	zigSqueezeSetup()
	return r
}

// The wedge test of layer i ≥ 1 draws |x| in [zigX[i+1], zigX[i]) and
// y = f_i + U·(f_{i+1} − f_i), f_i = f(zigX[i]), and accepts when
// y < f(|x|): when U < g(t) + t, with t = (zigX[i] − |x|)/(zigX[i] − zigX[i+1])
// in [0, 1] and g(t) = (f(|x|) − f_i)/(f_{i+1} − f_i) − t, the density's
// distance from the layer's chord in units of the layer's height, g(0) =
// g(1) = 0. zigSqueezeSetup bounds g on each layer, zigLo[i] ≤ g ≤
// zigHi[i], so U < t + zigLo[i] accepts and U ≥ t + zigHi[i] rejects
// without computing f(|x|) (McFarland 2016 squeezes the same way); only
// the band between needs the exponential. The decisions are those of the
// exact test, so the draws are bit for bit unchanged (TestNormalGoldenHash,
// TestZigSqueeze).
//
// The bounds: g at zigSqueezeSamples+1 equally spaced t, widened by how far
// g can rise between samples, g″·h²/8 for spacing h, where |g″| =
// |f″|·Δx²/Δf ≤ Δx²/Δf (|f″(x)| = |x²−1|·f(x) ≤ 1), plus 10⁻⁹ for the
// floating-point rounding of t, y and f (below 10⁻¹² in these units:
// every layer's height Δf exceeds 10⁻³).
const zigSqueezeSamples = 256

func zigSqueezeSetup() {
	h := 1.0 / zigSqueezeSamples
	for i := 1; i < zigLayers; i++ {
		dx, df := zigX[i]-zigX[i+1], zigF[i+1]-zigF[i]
		zigInvW[i] = 1 / dx
		lo, hi := 0.0, 0.0
		for k := 0; k <= zigSqueezeSamples; k++ {
			t := float64(k) * h
			g := (zigHalfDensity(zigX[i]-t*dx)-zigF[i])/df - t
			lo, hi = min(lo, g), max(hi, g)
		}
		slack := dx*dx/df*h*h/8 + 1e-9
		zigLo[i], zigHi[i] = lo-slack, hi+slack
	}
}

// zigSqueeze decides the wedge test of layer i ≥ 1 for magnitude ax and
// uniform u where the bounds allow: accept, and whether it decided.
func zigSqueeze(i int, ax, u float64) (accept, decided bool) {
	t := (zigX[i] - ax) * zigInvW[i]
	switch {
	case u < t+zigLo[i]:
		return true, true
	case u >= t+zigHi[i]:
		return false, true
	}
	return false, false
}

// zigFast is the ziggurat's fast path for word w: the draw and whether it
// is accepted as it is (vec.ZigWord, the form vec.ZigFast's kernel
// reproduces).
func zigFast(w uint64) (float64, bool) { return vec.ZigWord(w, zigXs, &zigR) }

// zigXs is zigX without its last entry (0), as vec's kernels take it.
var zigXs = (*[zigLayers]float64)(zigX[:zigLayers])

// wordSource is a stream of uniform 64-bit words.
type wordSource interface{ Uint64() uint64 }

// zigFinish completes a draw whose first word w missed the fast path,
// reading further words from src: zigSlow on w, then whole draws until one
// is accepted.
func zigFinish(w uint64, src wordSource) float64 {
	for {
		if x, ok := zigSlow(w, src); ok {
			return x
		}
		w = src.Uint64()
		if x, ok := zigFast(w); ok {
			return x
		}
	}
}

// zigSlow finishes a draw whose word w missed the fast path: a tail draw in
// layer 0 (always accepted), otherwise the wedge test.
func zigSlow(w uint64, src wordSource) (float64, bool) {
	i := int(uint8(w)) // an int: zigF[i+1] of the top layer is zigF[256]
	u := math.Float64frombits(0x3ff0000000000000|w>>12) - 1
	neg := w&0x100 != 0
	if i == 0 {
		// Marsaglia's tail method: x = −ln(U₁)/r, y = −ln(U₂), accepted
		// when 2y > x²; the draw is r + x with u's sign.
		for {
			x := -math.Log(vec.UnitOpen(src.Uint64())) / zigr
			y := -math.Log(vec.UnitOpen(src.Uint64()))
			if y+y > x*x {
				if neg {
					return -zigr - x, true
				}
				return zigr + x, true
			}
		}
	}
	x := u * zigX[i]
	uy := vec.UnitOpen(src.Uint64())
	ok, decided := zigSqueeze(i, x, uy)
	if !decided {
		ok = zigF[i]+uy*(zigF[i+1]-zigF[i]) < zigHalfDensity(x)
	}
	if neg {
		return -x, ok
	}
	return x, ok
}

// aesStream is the keystream of AES-256 in counter mode (IV 0) under a
// Source's key, read as little-endian 64-bit words: the stream of FillNormal's
// blocks. With AES instructions it runs at several GB/s (vec.AESCTR: about
// 14 GB/s on a core with VAES), several times math/rand/v2's ChaCha8, and
// it is a standard cryptographic generator (NIST SP 800-90A's CTR_DRBG is
// built on it).
type aesStream struct {
	ctr vec.AESCTR
	buf [4096]byte
	pos int
}

// streams keeps released aesStreams, so a block's buffers are not
// allocated again at every DP-SGD step.
var streams = sync.Pool{New: func() any { return new(aesStream) }}

// newAESStream returns the stream under key; release it when done.
func newAESStream(key [32]byte) *aesStream {
	a := streams.Get().(*aesStream)
	a.ctr.Reset(&key)
	a.pos = len(a.buf)
	return a
}

// release returns a to the pool; it must not be used afterwards.
func (a *aesStream) release() { streams.Put(a) }

// Uint64 returns the next word of the stream.
func (a *aesStream) Uint64() uint64 {
	if a.pos == len(a.buf) {
		a.ctr.Keystream(a.buf[:])
		a.pos = 0
	}
	w := binary.LittleEndian.Uint64(a.buf[a.pos:])
	a.pos += 8
	return w
}

// fill writes len(dst) N(0, 1) draws into dst. The keystream is written
// straight into dst, one word per entry; vec.ZigFast maps every word by the
// fast path, noting the 1.5 % it rejects, and the rejected entries are then
// finished in order from the words that follow.
func (a *aesStream) fill(dst []float64) {
	var scratch [512]int32 // misses of one chunk
	missed := make([]int32, 0, 512)
	for lo := 0; lo < len(dst); lo += len(scratch) {
		chunk := dst[lo:min(lo+len(scratch), len(dst))]
		raw := unsafe.Slice((*byte)(unsafe.Pointer(&chunk[0])), 8*len(chunk))
		a.ctr.Keystream(raw)
		if bigEndian {
			for k, v := range chunk {
				chunk[k] = math.Float64frombits(bits.ReverseBytes64(math.Float64bits(v)))
			}
		}
		for _, k := range scratch[:vec.ZigFast(chunk, zigXs, &zigR, scratch[:])] {
			missed = append(missed, int32(lo)+k)
		}
	}
	for _, k := range missed {
		dst[k] = zigFinish(math.Float64bits(dst[k]), a)
	}
}

// bigEndian: the keystream's words are little-endian on every machine.
var bigEndian = binary.NativeEndian.Uint16([]byte{0, 1}) == 1
