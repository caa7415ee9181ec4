package dp

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

var _ rand.Source = (*Source)(nil)

func TestSourceDeterministic(t *testing.T) {
	a, b := NewSource(42), NewSource(42)
	for i := 0; i < 1000; i++ {
		if x, y := a.Normal(), b.Normal(); x != y {
			t.Fatalf("draw %d differs for equal seeds: %v vs %v", i, x, y)
		}
		if x, y := a.Uniform(), b.Uniform(); x != y {
			t.Fatalf("uniform %d differs for equal seeds", i)
		}
	}
	c := NewSource(43)
	a = NewSource(42)
	same := 0
	for i := 0; i < 100; i++ {
		if a.Uint64() == c.Uint64() {
			same++
		}
	}
	if same > 0 {
		t.Errorf("seeds 42 and 43 share %d of 100 outputs", same)
	}
}

// TestSourceGolden pins the stream: a change here breaks reproducibility of
// every recorded run, so it must be deliberate.
func TestSourceGolden(t *testing.T) {
	s := NewSource(1)
	got := []uint64{s.Uint64(), s.Uint64(), s.Uint64()}
	s2 := NewSource(1)
	for i, g := range got {
		if x := s2.Uint64(); x != g {
			t.Fatalf("value %d not reproducible", i)
		}
	}
	// The key derivation is SHA-256("dpgnn/dp.Source/seed/v1\x00" ‖ LE64(seed)).
	want := []uint64{0x868693b59ebecb1a, 0xe5ecb0f46582bcc0, 0xc62691d3f503a5bb}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("NewSource(1) value %d = %#x, want %#x", i, got[i], want[i])
		}
	}
}

func TestSourceSplit(t *testing.T) {
	p := NewSource(7)
	before := NewSource(7)
	c1 := p.Split("stage")
	c2 := p.Split("stage")
	// Split does not consume the parent's stream.
	for i := 0; i < 10; i++ {
		if p.Uint64() != before.Uint64() {
			t.Fatal("Split perturbed the parent stream")
		}
	}
	// Same label twice gives different streams; replaying gives the same.
	q := NewSource(7)
	d1, d2 := q.Split("stage"), q.Split("stage")
	x1, x2 := c1.Uint64(), c2.Uint64()
	if x1 == x2 {
		t.Error("two Splits with the same label share a stream")
	}
	if d1.Uint64() != x1 || d2.Uint64() != x2 {
		t.Error("Split is not reproducible")
	}
	if NewSource(7).Split("a").Uint64() == NewSource(7).Split("b").Uint64() {
		t.Error("different labels give the same stream")
	}
}

func TestSourceUniformOpen(t *testing.T) {
	s := NewSource(3)
	const n = 200000
	var sum float64
	for i := 0; i < n; i++ {
		u := s.Uniform()
		if !(u > 0 && u < 1) {
			t.Fatalf("Uniform returned %v outside (0,1)", u)
		}
		sum += u
	}
	if m := sum / n; math.Abs(m-0.5) > 4*math.Sqrt(1.0/12/n) {
		t.Errorf("uniform mean %v", m)
	}
	x := make([]float64, 20000)
	for i := range x {
		x[i] = s.Uniform()
	}
	if _, p := ksPValue(x, func(v float64) float64 { return v }); p < 1e-3 {
		t.Errorf("Uniform fails KS test, p = %g", p)
	}
}

// TestSecureSourceIsNotSeeded: two secure sources differ (their keys come
// from crypto/rand), and neither repeats a seeded stream.
func TestSecureSourceIsNotSeeded(t *testing.T) {
	a, err := NewSecureSource()
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewSecureSource()
	if err != nil {
		t.Fatal(err)
	}
	if a.Uint64() == b.Uint64() && a.Uint64() == b.Uint64() {
		t.Fatal("two secure sources produced the same stream")
	}
	s := NewSource(1)
	if a.Uint64() == s.Uint64() && a.Uint64() == s.Uint64() {
		t.Fatal("a secure source repeated the seed-1 stream")
	}
}

// TestFillNormal: a short vector gets exactly the draws Normal would give;
// a long one (several blocks from child streams, filled in parallel) is
// N(0, 1) by the same moment, KS and χ² checks as Source.Normal, has no
// repeated block and no correlation between neighbouring blocks, and does
// not depend on the number of CPUs.
func TestFillNormal(t *testing.T) {
	short := make([]float64, 1000)
	NewSource(5).FillNormal(short)
	ref := NewSource(5)
	for i, v := range short {
		if w := ref.Normal(); v != w {
			t.Fatalf("short fill draw %d = %v, Normal gives %v", i, v, w)
		}
	}

	const n = 6*normalBlock + 123
	fill := func(procs int) []float64 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		x := make([]float64, n)
		NewSource(2025).FillNormal(x)
		return x
	}
	x := fill(2)
	for i, v := range fill(1) {
		if v != x[i] {
			t.Fatalf("draw %d differs between 1 and 2 CPUs: %v vs %v", i, v, x[i])
		}
	}
	zm, zv := auditMomentZ(x, 0, 1)
	_, pks := ksPValue(x, distuv.UnitNormal.CDF)
	if math.Abs(zm) > 5 || math.Abs(zv) > 5 || pks < 1e-4 || auditNormalChi2(x) < 1e-4 {
		t.Fatalf("FillNormal fails N(0,1): z(mean)=%.2f z(var)=%.2f KS p=%.3g χ² p=%.3g", zm, zv, pks, auditNormalChi2(x))
	}
	for b := 1; b*normalBlock < n-normalBlock; b++ {
		prev, cur := x[(b-1)*normalBlock:b*normalBlock], x[b*normalBlock:(b+1)*normalBlock]
		r := 0.0
		for i := range cur {
			r += prev[i] * cur[i]
		}
		r /= normalBlock // ≈ correlation; its sd is 1/√normalBlock ≈ 0.008
		if math.Abs(r) > 5/math.Sqrt(normalBlock) {
			t.Errorf("blocks %d and %d correlate: %.4f", b-1, b, r)
		}
		if prev[0] == cur[0] && prev[1] == cur[1] {
			t.Errorf("blocks %d and %d repeat the same stream", b-1, b)
		}
	}
}
