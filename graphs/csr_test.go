package graphs

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMulDenseTMatchesTranspose: Mᵀ·X by scattering equals MulDense over
// Transpose bit for bit, weighted and pattern-only, at widths of two and
// four strips, with sparse-dropout zeros stored and empty rows and
// columns; and only widths of whole strips (two or more) are taken.
func TestMulDenseTMatchesTranspose(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	m := &CSR{Rows: 300, Cols: 120, Indptr: []int{0}}
	for i := 0; i < m.Rows; i++ {
		for j := 0; j < m.Cols; j++ {
			if i%17 != 0 && j%13 != 0 && rng.IntN(10) == 0 {
				m.Indices = append(m.Indices, j)
				v := rng.NormFloat64()
				if rng.IntN(20) == 0 {
					v = 0 // a dropped entry kept as a stored zero
				}
				m.Data = append(m.Data, v)
			}
		}
		m.Indptr = append(m.Indptr, len(m.Indices))
	}
	pattern := &CSR{Rows: m.Rows, Cols: m.Cols, Indptr: m.Indptr, Indices: m.Indices}
	for _, a := range []*CSR{m, pattern} {
		for _, k := range []int{32, 64} {
			x := make([]float64, a.Rows*k)
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			want := make([]float64, a.Cols*k)
			a.Transpose().MulDense(x, k, want)
			got := make([]float64, a.Cols*k)
			for i := range got {
				got[i] = math.NaN() // overwritten, not added to
			}
			a.MulDenseT(x, k, got)
			for e := range want {
				if math.Float64bits(got[e]) != math.Float64bits(want[e]) {
					t.Fatalf("weighted %v, k %d, entry %d: %v, want %v", a.Data != nil, k, e, got[e], want[e])
				}
			}
		}
	}
	for k, want := range map[int]bool{16: false, 24: false, 32: true, 40: false, 48: true, 7: false} {
		if ScattersT(k) != want {
			t.Errorf("ScattersT(%d) = %v, want %v", k, !want, want)
		}
	}
}
