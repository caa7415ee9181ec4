package vec

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// withAVX runs f with the assembly kernels on (asm) or off.
func withAVX(asm bool, f func()) {
	saved := useAVX
	useAVX = asm && useAVX
	defer func() { useAVX = saved }()
	f()
}

// ZigFast's kernel gives the Go form's candidates and misses bit for bit,
// for every layer, both signs and the extremes of u, on lengths with tails.
func TestZigFastMatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var xt, rt [ZigLayers]float64
	for i := range xt {
		xt[i] = 4 * rng.Float64()
		rt[i] = rng.Float64()
	}
	rt[3] = 0 // a layer that never accepts
	rt[5] = 1 // one that always does
	for _, n := range []int{1, 4, 7, 64, 1001} {
		words := make([]float64, n)
		for j := range words {
			w := rng.Uint64()
			switch j % 7 {
			case 1:
				w |= math.MaxUint64 &^ 0xfff // u just below 1
			case 2:
				w &= 0xfff // u = 0
			}
			words[j] = math.Float64frombits(w)
		}
		var got [2][]float64
		var miss [2][]int32
		for k, asm := range []bool{false, true} {
			w := slices.Clone(words)
			m := make([]int32, n)
			withAVX(asm, func() { m = m[:ZigFast(w, &xt, &rt, m)] })
			got[k], miss[k] = w, m
		}
		if !slices.Equal(miss[0], miss[1]) {
			t.Fatalf("n=%d: misses differ: %v vs %v", n, miss[0], miss[1])
		}
		for j := range words {
			if math.Float64bits(got[0][j]) != math.Float64bits(got[1][j]) {
				t.Fatalf("n=%d word %d: Go %v, kernel %v", n, j, got[0][j], got[1][j])
			}
			x, ok := ZigWord(math.Float64bits(words[j]), &xt, &rt)
			if ok != !slices.Contains(miss[0], int32(j)) || ok && x != got[0][j] {
				t.Fatalf("n=%d word %d: ZigWord (%v, %v) disagrees", n, j, x, ok)
			}
			if !ok && got[0][j] != words[j] && !math.IsNaN(words[j]) {
				t.Fatalf("n=%d word %d: a missed word was overwritten", n, j)
			}
		}
	}
}

// ScaleAddDiv's kernel equals its scalar loop bit for bit.
func TestScaleAddDivMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for c, n := range []int{1, 3, 4, 10, 67, 64, 67, 67} {
		d := []float64{37, 37, 37, 37, 37, 256, 0.125, 0x1p20}[c] // powers of two: the reciprocal path
		e0, x := randRows(rng, n), randRows(rng, n)
		if c == 7 {
			for i := range x { // subnormal results
				x[i] *= 0x1p-1010
				e0[i] *= 0x1p-1010
			}
		}
		var es, outs [2][]float64
		for k, asm := range []bool{false, true} {
			e, out := slices.Clone(e0), make([]float64, n)
			withAVX(asm, func() { ScaleAddDiv(e, x, out, 1.7, d) })
			es[k], outs[k] = e, out
		}
		for i := range x {
			v := 1.7 * e0[i]
			want := (x[i] + v) / d
			for k := range es {
				if es[k][i] != v || outs[k][i] != want {
					t.Fatalf("n=%d entry %d (assembly %v): %v, %v; want %v, %v", n, i, k == 1, es[k][i], outs[k][i], v, want)
				}
			}
		}
	}
}

func BenchmarkZigFast(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	var xt, rt [ZigLayers]float64
	for i := range xt {
		xt[i], rt[i] = 1, 0.99
	}
	words := make([]float64, 4096)
	w := make([]float64, len(words))
	for j := range words {
		words[j] = math.Float64frombits(rng.Uint64())
	}
	m := make([]int32, len(w))
	copy(w, words)
	for _, asm := range []bool{true, false} {
		name := map[bool]string{true: "kernel", false: "go"}[asm]
		b.Run(name, func(b *testing.B) {
			withAVX(asm, func() {
				for b.Loop() {
					ZigFast(w, &xt, &rt, m)
				}
			})
		})
	}
}
