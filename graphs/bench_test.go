package graphs

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/dpgnn/dpgnn/internal/parallel"
	"github.com/dpgnn/dpgnn/internal/vec"
)

// BenchmarkMaskedProduct is GCN's first aggregation with input dropout:
// 70 % of the rows of a random adjacency (average degree 10) times an
// N×32 feature matrix under a mask of bits, at N = 10⁵ and 10⁶, as
// vec.MulBits then MulDense over float64 values ("masked": the masked
// matrix written, then gathered) and as MulDenseBits32 over float32 ones
// ("bits32": the rows gathered under the mask), with MulDense of the
// unmasked float64 values ("gather") for scale.
func BenchmarkMaskedProduct(b *testing.B) {
	const k = 32
	for _, n := range []int{100_000, 1_000_000} {
		r := rand.New(rand.NewPCG(3, 4))
		a := &CSR{Rows: n * 7 / 10, Cols: n, Indptr: make([]int, 1, n*7/10+1)}
		for range a.Rows {
			for range 10 {
				a.Indices = append(a.Indices, r.IntN(n))
				a.Data = append(a.Data, r.Float64())
			}
			a.Indptr = append(a.Indptr, len(a.Indices))
		}
		x, x32 := make([]float64, n*k), make([]float32, n*k)
		for i := range x {
			x32[i] = float32(r.NormFloat64())
			x[i] = float64(x32[i])
		}
		bits := make([]uint64, vec.MaskWords(n*k))
		for i := range bits {
			bits[i] = r.Uint64()
		}
		masked, out := make([]float64, n*k), make([]float64, a.Rows*k)
		b.Run(fmt.Sprintf("masked/%d", n), func(b *testing.B) {
			for b.Loop() {
				vec.MulBits(masked, x, bits, 0, 2)
				a.MulDense(masked, k, out)
			}
		})
		b.Run(fmt.Sprintf("gather/%d", n), func(b *testing.B) {
			for b.Loop() {
				a.MulDense(x, k, out)
			}
		})
		b.Run(fmt.Sprintf("bits32/%d", n), func(b *testing.B) {
			for b.Loop() {
				a.MulDenseBits32(x32, k, bits, 2, out)
			}
		})
	}
}

// BenchmarkRandomRows is the floor of a sparse product's gathers beyond
// the caches: 10⁷ reads of random rows of a 10⁶-row matrix, one value per
// cache line of each row, on every core, for rows of 128 bytes (32 float32
// values) and of 256 (32 float64 values).
func BenchmarkRandomRows(b *testing.B) {
	const n, reads = 1_000_000, 10_000_000
	r := rand.New(rand.NewPCG(5, 6))
	idx := make([]int, reads)
	for i := range idx {
		idx[i] = r.IntN(n)
	}
	x := make([]float64, n*32) // 256-byte rows, or 128-byte rows in its first half
	for i := range x {
		x[i] = float64(i & 7)
	}
	for _, row := range []int{16, 32} { // float64 values a row
		b.Run(fmt.Sprintf("%dB", 8*row), func(b *testing.B) {
			sums := make([]float64, reads)
			for b.Loop() {
				parallel.Rows(reads, reads, func(lo, hi int) {
					for p := lo; p < hi; p++ {
						base := idx[p] * row
						s := 0.0
						for c := 0; c < row; c += 8 {
							s += x[base+c]
						}
						sums[p] = s
					}
				})
			}
		})
	}
}
