package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"gorgonia.org/tensor"
)

// TestNoiseDiv: AddNoiseDiv's op gives (x + std·z)/div with z the source's
// draws, bit for bit — what AddNoise followed by gorgonia's division gives
// — through the block filler (several blocks, finished in parallel) and
// through a plain NormalSource; with std 0 it gives x/div and no noise.
func TestNoiseDiv(t *testing.T) {
	const n, std, div = 40000, 1.7, 37.0
	x := randSlice(rand.New(rand.NewPCG(1, 2)), n)
	run := func(src NormalSource, s float64) ([]float64, []float64) {
		nz := &Noise{Name: "w", Std: s, Src: src}
		in := tensor.New(tensor.WithShape(n), tensor.WithBacking(append([]float64(nil), x...)))
		v, err := gaussianNoiseOp{n: nz, div: div}.UsePreallocDo(nil, in)
		if err != nil {
			t.Fatal(err)
		}
		return v.(*tensor.Dense).Data().([]float64), nz.Last
	}
	z := make([]float64, n)
	dp.NewSource(3).FillNormal(z)
	zs := dp.NewSource(3)
	for name, c := range map[string]struct {
		src NormalSource
		z   func(i int) float64
	}{
		"blocks": {dp.NewSource(3), func(i int) float64 { return z[i] }},
		"scalar": {struct{ NormalSource }{dp.NewSource(3)}, func(int) float64 { return zs.Normal() }},
	} {
		out, last := run(c.src, std)
		for i := range out {
			e := std * c.z(i)
			if last[i] != e || out[i] != (x[i]+e)/div {
				t.Fatalf("%s: entry %d: noise %v out %v, want %v and %v", name, i, last[i], out[i], e, (x[i]+e)/div)
			}
		}
	}
	out, last := run(dp.NewSource(3), 0)
	for i := range out {
		if last[i] != 0 || out[i] != x[i]/div {
			t.Fatalf("std 0: entry %d: noise %v out %v, want 0 and %v", i, last[i], out[i], x[i]/div)
		}
	}
}

// TestPrefetchNoise: noises prefetched together draw from their shared
// source in the order given, as runs in that order would, and their runs
// add exactly those draws; a prefetch no run consumed is dropped by
// WaitNoise, after which runs draw for themselves again.
func TestPrefetchNoise(t *testing.T) {
	const std, div = 0.5, 3.0
	sizes := []int{7, 40000} // a bias (drawn one by one) and a long vector (blocks)
	x := [][]float64{randSlice(rand.New(rand.NewPCG(3, 4)), sizes[0]), randSlice(rand.New(rand.NewPCG(5, 6)), sizes[1])}
	run := func(n *Noise, x []float64) []float64 {
		in := tensor.New(tensor.WithShape(len(x)), tensor.WithBacking(append([]float64(nil), x...)))
		v, err := gaussianNoiseOp{n: n, div: div}.UsePreallocDo(nil, in)
		if err != nil {
			t.Fatal(err)
		}
		return v.(*tensor.Dense).Data().([]float64)
	}
	src := dp.NewSource(8)
	ns := []*Noise{{Name: "b", Std: std, Src: src}, {Name: "w", Std: std, Src: src}}
	PrefetchNoise(ns, sizes)
	ref := dp.NewSource(8)
	for i, n := range ns {
		out := run(n, x[i])
		z := make([]float64, sizes[i])
		ref.FillNormal(z)
		for j := range z {
			e := std * z[j]
			if n.Last[j] != e || out[j] != (x[i][j]+e)/div {
				t.Fatalf("noise %s entry %d: %v, %v; want %v, %v", n.Name, j, n.Last[j], out[j], e, (x[i][j]+e)/div)
			}
		}
	}
	// unconsumed: dropped, and the next run draws the stream's next values
	PrefetchNoise(ns[:1], sizes[:1])
	WaitNoise(ns)
	skip := make([]float64, sizes[0])
	ref.FillNormal(skip)
	run(ns[0], x[0])
	z := make([]float64, sizes[0])
	ref.FillNormal(z)
	for j := range z {
		if ns[0].Last[j] != std*z[j] {
			t.Fatalf("after a dropped prefetch, entry %d: %v, want %v", j, ns[0].Last[j], std*z[j])
		}
	}
}

// TestAddNoiseDivRefusesBadDivisors: a divisor that is not positive and
// finite is refused when the node is built.
func TestAddNoiseDivRefusesBadDivisors(t *testing.T) {
	m := NewModel(1)
	x := m.Input("x", make([]float64, 6), 2, 3)
	for _, d := range []float64{0, -1, math.Inf(1), math.NaN()} {
		if _, err := AddNoiseDiv(x, &Noise{Name: "n", Std: 1}, d); err == nil {
			t.Errorf("divisor %v accepted", d)
		}
	}
	if _, err := AddNoiseDiv(x, &Noise{Name: "n", Std: 1}, 64); err != nil {
		t.Errorf("divisor 64: %v", err)
	}
}
