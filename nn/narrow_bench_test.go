package nn

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

func BenchmarkNarrow(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	m, k, n := 2708, 64, 7
	ad := randSlice(rng, m*k)
	bd := randSlice(rng, k*n)
	c := make([]float64, m*n)
	for _, ta := range []bool{false, true} {
		mm, kk := m, k
		rows, cols := m, k
		if ta {
			mm, kk = k, m
			bd = randSlice(rng, m*n)
			c = make([]float64, k*n)
		}
		_ = kk
		a := blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: ad}
		name := "NotNot"
		tr := blas.NoTrans
		if ta {
			name, tr = "TransNot", blas.Trans
		}
		b.Run(name+"/own", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				mulNarrow(ta, mm, n, a, bd, c)
			}
		})
		b.Run(name+"/gonum", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				blas64.Gemm(tr, blas.NoTrans, 1, a, blas64.General{Rows: len(bd) / n, Cols: n, Stride: n, Data: bd}, 0, blas64.General{Rows: mm, Cols: n, Stride: n, Data: c})
			}
		})
	}
}
