package nn

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// BenchmarkMulRows sets the row kernel against gonum's Gemm on a GCN's
// products on cora: the output layer's H·W (2708×64 · 64×7) and Hᵀ·G
// (64×2708 · 2708×7), a hidden layer's H·W (2708×64 · 64×64) and Hᵀ·G
// (64×2708 · 2708×64), and dense features times a first layer
// (2708×1433 · 1433×32).
//
//	go test ./nn -run '^$' -bench MulRows
func BenchmarkMulRows(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const rows = 2708
	for _, tc := range []struct {
		name    string
		ta      bool
		m, k, n int // C is m×n, the inner size is k
	}{
		{"NotNot/64x7", false, rows, 64, 7},
		{"TransNot/64x7", true, 64, rows, 7},
		{"NotNot/64x64", false, rows, 64, 64},
		{"TransNot/64x64", true, 64, rows, 64},
		{"NotNot/1433x32", false, rows, 1433, 32},
		{"TransNot/1433x32", true, 1433, rows, 32},
		{"TransNot/1433x64", true, 1433, rows, 64},
	} {
		ar, ac := tc.m, tc.k
		if tc.ta {
			ar, ac = tc.k, tc.m
		}
		a := blas64.General{Rows: ar, Cols: ac, Stride: ac, Data: randSlice(rng, ar*ac)}
		bd := randSlice(rng, tc.k*tc.n)
		c := make([]float64, tc.m*tc.n)
		tr := blas.NoTrans
		if tc.ta {
			tr = blas.Trans
		}
		b.Run(tc.name+"/own", func(b *testing.B) {
			for b.Loop() {
				mulRows(tc.ta, tc.m, tc.n, a, bd, c)
			}
		})
		b.Run(tc.name+"/gonum", func(b *testing.B) {
			gb := blas64.General{Rows: tc.k, Cols: tc.n, Stride: tc.n, Data: bd}
			gc := blas64.General{Rows: tc.m, Cols: tc.n, Stride: tc.n, Data: c}
			for b.Loop() {
				blas64.Gemm(tr, blas.NoTrans, 1, a, gb, 0, gc)
			}
		})
	}
}

// BenchmarkMulDots sets A·Bᵀ as sums of rows against gonum's Gemm on the
// input gradients of a GCN on cora: G·Wᵀ for the output layer (2708×7 ·
// 7×64) and a hidden layer (2708×64 · 64×64), and a first layer's over
// dense features (2708×32 · 32×1433).
//
//	go test ./nn -run '^$' -bench MulDots
func BenchmarkMulDots(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const rows = 2708
	for _, tc := range []struct {
		name string
		k, n int // A is rows×k, B is n×k
	}{
		{"7x64", 7, 64},
		{"64x64", 64, 64},
		{"32x1433", 32, 1433},
	} {
		a := blas64.General{Rows: rows, Cols: tc.k, Stride: tc.k, Data: randSlice(rng, rows*tc.k)}
		bm := blas64.General{Rows: tc.n, Cols: tc.k, Stride: tc.k, Data: randSlice(rng, tc.n*tc.k)}
		c := make([]float64, rows*tc.n)
		b.Run(tc.name+"/own", func(b *testing.B) {
			for b.Loop() {
				mulDots(rows, tc.n, a, bm, c)
			}
		})
		b.Run(tc.name+"/gonum", func(b *testing.B) {
			gc := blas64.General{Rows: rows, Cols: tc.n, Stride: tc.n, Data: c}
			for b.Loop() {
				blas64.Gemm(blas.NoTrans, blas.Trans, 1, a, bm, 0, gc)
			}
		})
	}
}
