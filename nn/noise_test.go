package nn

import (
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
