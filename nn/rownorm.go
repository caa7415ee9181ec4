package nn

import (
	"fmt"
	"hash"
	"hash/fnv"
	"math"

	"github.com/chewxy/hm"
	"github.com/dpgnn/dpgnn/internal/vec"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// rowNormOp maps each row x_i of a matrix to x_i/‖x_i‖₂. Rows with zero
// norm stay zero (and pass a zero gradient), which NAP relies on: a node
// with no features contributes nothing to its neighbours' sums.
type rowNormOp struct{ labelled }

var rowNorm = rowNormOp{labelled{label: "RowNormalize", arity: 1}}

// RowNormalize returns the row-wise L2-normalised x (zero rows stay zero).
// After it every row has norm 1 or 0, so summing such rows over neighbours
// has L2 sensitivity 1 per edge.
func RowNormalize(x *G.Node) (*G.Node, error) { return G.ApplyOp(rowNorm, x) }

func matType() hm.Type { return G.TensorType{Dims: 2, Of: hm.TypeVariable('a')} }

func denseF64(v G.Value, what string) (*tensor.Dense, []float64, error) {
	d, ok := v.(*tensor.Dense)
	if !ok {
		return nil, nil, fmt.Errorf("nn: %s wants a dense tensor, got %T", what, v)
	}
	f, ok := float64s(d)
	if !ok {
		return nil, nil, fmt.Errorf("nn: %s wants float64 data, got %T", what, d.Data())
	}
	return d, f, nil
}

// densePair reads the two float64 matrices of a binary op's inputs.
func densePair(vals []G.Value, what string) (a *tensor.Dense, ad []float64, b *tensor.Dense, bd []float64, err error) {
	if a, ad, err = denseF64(vals[0], what); err != nil {
		return nil, nil, nil, nil, err
	}
	if b, bd, err = denseF64(vals[1], what); err != nil {
		return nil, nil, nil, nil, err
	}
	return a, ad, b, bd, nil
}

func shape2(v *tensor.Dense) (int, int) {
	s := v.Shape()
	if len(s) == 1 {
		return s[0], 1
	}
	return s[0], s[1]
}

func hash32(w func(hash.Hash)) uint32 {
	h := fnv.New32a()
	w(h)
	return h.Sum32()
}

func (rowNormOp) DiffWRT(int) []bool { return []bool{true} }

func (op rowNormOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

func (op rowNormOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	return runRows(op.rows(prealloc, vals))
}

func (rowNormOp) rowInputs() []bool { return []bool{true} }

func (rowNormOp) rows(prealloc G.Value, vals []G.Value) (*tensor.Dense, int, func(lo, hi int), error) {
	x, xd, err := denseF64(vals[0], "RowNormalize")
	if err != nil {
		return nil, 0, nil, err
	}
	n, k := shape2(x)
	t, out := output(prealloc, n, k)
	return t, 3 * n * k, func(lo, hi int) {
		sp := getScratch(rowBlock(k))
		defer putScratch(sp)
		for b0 := lo; b0 < hi; b0 += len(*sp) {
			b1 := min(b0+len(*sp), hi)
			// 1/‖x_i‖ of the block's rows (−0 marks a zero row, cleared
			// after), then the rows scaled by them (vec.ScaleRows).
			inv := (*sp)[:b1-b0]
			i := b0
			for ; i+4 <= b1; i += 4 {
				for j, sj := range sumSq4(xd, k, i) {
					inv[i+j-b0] = invNorm(sj, xd[(i+j)*k:(i+j+1)*k])
				}
			}
			for ; i < b1; i++ {
				r := xd[i*k : (i+1)*k]
				inv[i-b0] = invNorm(sumSq(r), r)
			}
			vec.ScaleRows(out[b0*k:b1*k], xd[b0*k:b1*k], inv, k)
			for i, v := range inv {
				if v == 0 && math.Signbit(v) {
					clear(out[(b0+i)*k : (b0+i+1)*k])
				}
			}
		}
	}, nil
}

// rowBlock is the number of rows of width k (a multiple of four, at least
// four) that the row normalisation's two passes take at a time: 64 KB of
// them, so the second pass reads them from the cache, not from memory
// (a chunk of a 10⁶-row matrix is tens of megabytes).
func rowBlock(k int) int { return max(4, (64<<10)/8/max(k, 1)) &^ 3 }

// invNorm is 1/‖r‖ for s = Σ r_c² (vec.Norm2: √s, or the scaled norm when
// s underflowed or overflowed, so that every output row has norm 1), and
// −0 for a row of zeros (1/‖r‖ is never −0).
func invNorm(s float64, r []float64) float64 {
	n := vec.Norm2(r, s)
	if n == 0 {
		return math.Copysign(0, -1)
	}
	return 1 / n
}

// sumSq4 is sumSq of the four rows i, …, i+3 of x (rows of k values), each
// summed in order as sumSq sums it (the same bits), the four sums
// interleaved so that the CPU runs their chains of dependent additions at
// once: 40 against 49–51 µs for 2708 rows of 16, 73–76 against 117–130 µs
// for rows of 32.
func sumSq4(x []float64, k, i int) [4]float64 {
	r0, r1, r2, r3 := x[i*k:(i+1)*k], x[(i+1)*k:(i+2)*k], x[(i+2)*k:(i+3)*k], x[(i+3)*k:(i+4)*k]
	var s0, s1, s2, s3 float64
	for c, v := range r0 {
		w1, w2, w3 := r1[c], r2[c], r3[c]
		s0 += v * v
		s1 += w1 * w1
		s2 += w2 * w2
		s3 += w3 * w3
	}
	return [4]float64{s0, s1, s2, s3}
}

// sumSq is Σ r_c², summed in order.
func sumSq(r []float64) float64 {
	s := 0.0
	for _, v := range r {
		s += v * v
	}
	return s
}

func (rowNormOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	return gradient(G.ApplyOp(rowNormGradOp{labelled{label: "RowNormalizeGrad", arity: 2}}, inputs[0], grad))
}

// rowNormGradOp computes dx_i = (dy_i − y_i⟨y_i, dy_i⟩)/‖x_i‖ with
// y_i = x_i/‖x_i‖, and 0 for zero rows.
type rowNormGradOp struct{ labelled }

func (op rowNormGradOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

func (op rowNormGradOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	return runRows(op.rows(prealloc, vals))
}

func (rowNormGradOp) rowInputs() []bool { return []bool{true, true} }

func (rowNormGradOp) rows(prealloc G.Value, vals []G.Value) (*tensor.Dense, int, func(lo, hi int), error) {
	x, xd, _, dy, err := densePair(vals, "RowNormalizeGrad")
	if err != nil {
		return nil, 0, nil, err
	}
	n, k := shape2(x)
	t, out := output(prealloc, n, k)
	return t, 6 * n * k, func(lo, hi int) {
		rb := rowBlock(k)
		sp := getScratch(2 * rb)
		defer putScratch(sp)
		for b0 := lo; b0 < hi; b0 += rb {
			b1 := min(b0+rb, hi)
			// ‖x_i‖ and ⟨y_i, dy_i⟩ of the block's rows, then the rows
			// (vec.RowNormGrad); zero rows are cleared.
			norms, dots := (*sp)[:b1-b0], (*sp)[rb:rb+b1-b0]
			for i := b0; i < b1; i++ {
				r := xd[i*k : (i+1)*k]
				g := dy[i*k : (i+1)*k]
				norm := vec.Norm2(r, sumSq(r))
				dot := 0.0
				for c, v := range r {
					dot += v * g[c]
				}
				norms[i-b0], dots[i-b0] = norm, dot/norm // ⟨y, dy⟩
			}
			vec.RowNormGrad(out[b0*k:b1*k], xd[b0*k:b1*k], dy[b0*k:b1*k], norms, dots, k)
			for i, v := range norms {
				if v == 0 {
					clear(out[(b0+i)*k : (b0+i+1)*k])
				}
			}
		}
	}, nil
}

var _ G.SDOp = rowNorm
