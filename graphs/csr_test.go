package graphs

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dpgnn/dpgnn/internal/vec"
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

// TestSelectRowsProductIsRestricted: the product with the selected rows is
// the full product's rows bit for bit, for rows in any order, repeated and
// empty, with and without stored values; the selection owns its arrays.
func TestSelectRowsProductIsRestricted(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	m := &CSR{Rows: 50, Cols: 40, Indptr: []int{0}}
	for i := 0; i < m.Rows; i++ {
		for j := 0; j < m.Cols; j++ {
			if i%7 != 3 && rng.IntN(6) == 0 {
				m.Indices = append(m.Indices, j)
				m.Data = append(m.Data, rng.NormFloat64())
			}
		}
		m.Indptr = append(m.Indptr, len(m.Indices))
	}
	pattern := &CSR{Rows: m.Rows, Cols: m.Cols, Indptr: m.Indptr, Indices: m.Indices}
	const k = 5
	x := make([]float64, m.Cols*k)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	for _, a := range []*CSR{m, pattern} {
		full := make([]float64, a.Rows*k)
		a.MulDense(x, k, full)
		for _, rows := range [][]int{nil, {3}, {0, 1, 2}, {49, 10, 3, 10, 24}} {
			s := a.SelectRows(rows)
			if s.Rows != len(rows) || s.Cols != a.Cols || (s.Data == nil) != (a.Data == nil) {
				t.Fatalf("rows %v: %d×%d (values %v)", rows, s.Rows, s.Cols, s.Data != nil)
			}
			if err := s.Validate(); err != nil {
				t.Fatalf("rows %v: %v", rows, err)
			}
			got := make([]float64, len(rows)*k)
			s.MulDense(x, k, got)
			for r, i := range rows {
				for c := 0; c < k; c++ {
					if math.Float64bits(got[r*k+c]) != math.Float64bits(full[i*k+c]) {
						t.Fatalf("rows %v: row %d col %d = %v, full product %v", rows, i, c, got[r*k+c], full[i*k+c])
					}
				}
			}
			if len(s.Indices) > 0 {
				s.Indices[0] = -1
				if slices.Contains(a.Indices, -1) {
					t.Fatal("the selection shares its indices with the matrix")
				}
			}
		}
	}
}

// TestMulDenseBits32MatchesMaskedProduct: the masked product from float32
// values gives the bits of vec.MulBits over their float64 values followed
// by MulDense, for weighted and pattern-only matrices, on an X small
// enough for the caches and on one large enough for the prefetching path.
func TestMulDenseBits32MatchesMaskedProduct(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, c := range []struct{ rows, cols, k int }{{300, 120, 32}, {200, 90, 5}, {2000, 1 << 16, 36}} {
		m := &CSR{Rows: c.rows, Cols: c.cols, Indptr: []int{0}}
		for i := 0; i < m.Rows; i++ {
			for range rng.IntN(12) {
				m.Indices = append(m.Indices, rng.IntN(m.Cols))
				m.Data = append(m.Data, rng.NormFloat64())
			}
			m.Indptr = append(m.Indptr, len(m.Indices))
		}
		pattern := &CSR{Rows: m.Rows, Cols: m.Cols, Indptr: m.Indptr, Indices: m.Indices}
		x32 := make([]float32, m.Cols*c.k)
		x := make([]float64, len(x32))
		for i := range x {
			x32[i] = float32(rng.NormFloat64())
			x[i] = float64(x32[i])
		}
		bits := make([]uint64, vec.MaskWords(len(x)))
		for i := range bits[:len(bits)-1] {
			bits[i] = rng.Uint64()
		}
		masked := make([]float64, len(x))
		vec.MulBits(masked, x, bits, 0, 2)
		for _, a := range []*CSR{m, pattern} {
			want := make([]float64, a.Rows*c.k)
			a.MulDense(masked, c.k, want)
			got := make([]float64, len(want))
			for i := range got {
				got[i] = math.NaN() // overwritten, not added to
			}
			a.MulDenseBits32(x32, c.k, bits, 2, got)
			for e := range want {
				if math.Float64bits(got[e]) != math.Float64bits(want[e]) {
					t.Fatalf("%d×%d, k %d, weighted %v, entry %d: %v, want %v", a.Rows, a.Cols, c.k, a.Data != nil, e, got[e], want[e])
				}
			}
		}
	}
}
