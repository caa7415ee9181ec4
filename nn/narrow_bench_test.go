package nn

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// BenchmarkNarrow sets the narrow-product kernel against gonum's Gemm on a
// GCN output layer's products: H·W (2708×64 · 64×7) and Hᵀ·G (64×2708 ·
// 2708×7).
//
//	go test ./nn -run '^$' -bench Narrow
func BenchmarkNarrow(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const rows, hidden, classes = 2708, 64, 7
	h := blas64.General{Rows: rows, Cols: hidden, Stride: hidden, Data: randSlice(rng, rows*hidden)}
	for _, tc := range []struct {
		name string
		ta   bool
		m, k int // C is m×classes, the inner size is k
	}{
		{"NotNot", false, rows, hidden},
		{"TransNot", true, hidden, rows},
	} {
		bd := randSlice(rng, tc.k*classes)
		c := make([]float64, tc.m*classes)
		tr := blas.NoTrans
		if tc.ta {
			tr = blas.Trans
		}
		b.Run(tc.name+"/own", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				mulNarrow(tc.ta, tc.m, classes, h, bd, c)
			}
		})
		b.Run(tc.name+"/gonum", func(b *testing.B) {
			gb := blas64.General{Rows: tc.k, Cols: classes, Stride: classes, Data: bd}
			gc := blas64.General{Rows: tc.m, Cols: classes, Stride: classes, Data: c}
			for i := 0; i < b.N; i++ {
				blas64.Gemm(tr, blas.NoTrans, 1, h, gb, 0, gc)
			}
		})
	}
}
