package nn

import (
	"fmt"
	"hash"
	"sync"

	"github.com/chewxy/hm"
	"github.com/dpgnn/dpgnn/internal/parallel"
	"github.com/dpgnn/dpgnn/internal/vec"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// matMulOp is op(A)·op(B), where op transposes when ta (tb) is set, by the
// row kernels (mulRows, mulDots; gonum's Gemm for Aᵀ·Bᵀ). Gorgonia's Mul
// materialises a transposed copy for every Aᵀ·B and A·Bᵀ of its backward
// pass (and DP-SGD's Σ xᵢᵀδᵢ): the copies were a tenth of a DP-SGD run.
type matMulOp struct {
	pure
	ta, tb bool
}

// MatMul returns a·b for matrices.
func MatMul(a, b *G.Node) *G.Node { return G.Must(G.ApplyOp(matMulOp{}, a, b)) }

// MatMulTA returns aᵀ·b (a is n×p, b is n×q: the result is p×q) without
// forming aᵀ.
func MatMulTA(a, b *G.Node) *G.Node { return G.Must(G.ApplyOp(matMulOp{ta: true}, a, b)) }

func (o matMulOp) label() string {
	switch {
	case o.ta && o.tb:
		return "Aᵀ × Bᵀ"
	case o.ta:
		return "Aᵀ × B"
	case o.tb:
		return "A × Bᵀ"
	}
	return "A × B"
}

func (matMulOp) Arity() int              { return 2 }
func (matMulOp) Type() hm.Type           { return matFn(2) }
func (o matMulOp) WriteHash(h hash.Hash) { fmt.Fprint(h, "MatMul", o.ta, o.tb) }
func (o matMulOp) Hashcode() uint32      { return hash32(o.WriteHash) }
func (o matMulOp) String() string        { return o.label() }
func (matMulOp) DiffWRT(int) []bool      { return []bool{true, true} }
func (o matMulOp) dims(a, b tensor.Shape) (m, k, k2, n int, err error) {
	if len(a) != 2 || len(b) != 2 {
		return 0, 0, 0, 0, fmt.Errorf("nn: %s wants matrices, got %v and %v", o.label(), a, b)
	}
	m, k = a[0], a[1]
	if o.ta {
		m, k = k, m
	}
	k2, n = b[0], b[1]
	if o.tb {
		k2, n = n, k2
	}
	if k != k2 {
		return 0, 0, 0, 0, fmt.Errorf("nn: %s of %v and %v: inner sizes %d and %d differ", o.label(), a, b, k, k2)
	}
	return m, k, k2, n, nil
}

func (o matMulOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	a, ok1 := in[0].(tensor.Shape)
	b, ok2 := in[1].(tensor.Shape)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("nn: %s wants matrix shapes, got %v and %v", o.label(), in[0], in[1])
	}
	m, _, _, n, err := o.dims(a, b)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{m, n}, nil
}

func (o matMulOp) Do(vals ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, vals...) }

// rowInputs: A·B is row-wise in A (row i of the product is row i of A
// times B); a transposed product is not.
func (o matMulOp) rowInputs() []bool {
	if o.ta {
		return nil
	}
	return []bool{true, false}
}

func (o matMulOp) rows(prealloc G.Value, vals []G.Value) (*tensor.Dense, int, func(lo, hi int), error) {
	if !o.tb {
		return mulBiasRows(o.label(), prealloc, vals, nil)
	}
	a, ad, b, bd, err := densePair(vals, o.label())
	if err != nil {
		return nil, 0, nil, err
	}
	m, k, _, n, err := o.dims(a.Shape(), b.Shape())
	if err != nil {
		return nil, 0, nil, err
	}
	t, out := output(prealloc, m, n)
	ga := blas64.General{Rows: a.Shape()[0], Cols: a.Shape()[1], Stride: a.Shape()[1], Data: ad}
	gb := blas64.General{Rows: b.Shape()[0], Cols: b.Shape()[1], Stride: b.Shape()[1], Data: bd}
	if m == 0 || n == 0 || k == 0 {
		return t, 0, func(lo, hi int) { clear(out[lo*n : hi*n]) }, nil
	}
	// Bᵀ is the run's own: the chain's blocks read it after rows returns.
	return t, m * n * k, mulDotsRows(m, n, ga, gb, out, make([]float64, k*n)), nil
}

// mulBiasRows prepares A·B + bias (bias nil: none) for mulRowsBiasRows.
func mulBiasRows(label string, prealloc G.Value, vals []G.Value, bias []float64) (*tensor.Dense, int, func(lo, hi int), error) {
	a, ad, b, bd, err := densePair(vals, label)
	if err != nil {
		return nil, 0, nil, err
	}
	m, k, _, n, err := matMulOp{}.dims(a.Shape(), b.Shape())
	if err != nil {
		return nil, 0, nil, err
	}
	if bias != nil && len(bias) != n {
		return nil, 0, nil, fmt.Errorf("nn: %s of (%d, %d) got a bias of %d", label, m, n, len(bias))
	}
	t, out := output(prealloc, m, n)
	ga := blas64.General{Rows: a.Shape()[0], Cols: a.Shape()[1], Stride: a.Shape()[1], Data: ad}
	return t, m * n * k, mulRowsBiasRows(false, n, ga, bd, out, bias), nil
}

func (o matMulOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	if !o.ta && !o.tb {
		return runRows(o.rows(prealloc, vals))
	}
	a, ad, b, bd, err := densePair(vals, o.label())
	if err != nil {
		return nil, err
	}
	m, _, _, n, err := o.dims(a.Shape(), b.Shape())
	if err != nil {
		return nil, err
	}
	t, out := output(prealloc, m, n)
	trans := func(t bool) blas.Transpose {
		if t {
			return blas.Trans
		}
		return blas.NoTrans
	}
	ga := blas64.General{Rows: a.Shape()[0], Cols: a.Shape()[1], Stride: a.Shape()[1], Data: ad}
	gb := blas64.General{Rows: b.Shape()[0], Cols: b.Shape()[1], Stride: b.Shape()[1], Data: bd}
	if !o.tb {
		mulRows(o.ta, m, n, ga, bd, out)
		return t, nil
	}
	if !o.ta && o.tb && m > 0 && n > 0 && ga.Cols > 0 {
		mulDots(m, n, ga, gb, out)
		return t, nil
	}
	if m > 0 && n > 0 && ga.Rows > 0 && ga.Cols > 0 && gb.Rows > 0 && gb.Cols > 0 {
		blas64.Gemm(trans(o.ta), trans(o.tb), 1, ga, gb, 0, blas64.General{Rows: m, Cols: n, Stride: n, Data: out})
	} else {
		clear(out)
	}
	return t, nil
}

// mulRows computes C = op(A)·B (C is m×n) one row at a time, rows split
// over the cores and the inner index in cache-sized blocks: row i of C is
// the sum over the inner index l, in
// increasing order, of op(A)[i][l]·B[l,:] (vec.AxpySeqRows, AVX on amd64).
// gonum's serial and blocked Gemm sum every entry in the same order, one
// rounded product at a time; gonum skips zero factors, where this adds ±0,
// which leaves every sum unchanged (a sum starting at +0 never becomes −0),
// so the result is bit-identical to blas64.Gemm's for finite B.
func mulRows(ta bool, m, n int, a blas64.General, b, c []float64) {
	mulRowsBias(ta, m, n, a, b, c, nil)
}

// mulRowsBias is mulRows adding the vector bias (n values, nil: none) to
// every row of C, each chunk of rows right after its product, while the
// chunk is still in the cache (AddRow's pass over all of C read it back
// from memory on a large C). C's entries are the product's plus the
// bias's: AddRow's bits.
func mulRowsBias(ta bool, m, n int, a blas64.General, b, c, bias []float64) {
	k := a.Cols
	if ta {
		k = a.Rows
	}
	// With op(A) = Aᵀ every chunk of rows streams all of B (k rows, e.g. the
	// output gradient of a whole layer): one chunk per core (in fours, for
	// the four-row kernels) reads it once per core instead of once per
	// chunk of the balanced split.
	if ta {
		parallel.Parts(m, 4, m*n*k, mulRowsBiasRows(ta, n, a, b, c, bias))
		return
	}
	parallel.Rows(m, m*n*k, mulRowsBiasRows(ta, n, a, b, c, bias))
}

// mulRowsBiasRows returns mulRowsBias's loop body: it writes rows [lo, hi)
// of C (n columns) from those rows of op(A), all of B and the bias.
func mulRowsBiasRows(ta bool, n int, a blas64.General, b, c, bias []float64) func(lo, hi int) {
	// op(A)[i][l] is ad[i*ri + l*li].
	k, ri, li := a.Cols, a.Stride, 1
	if ta {
		k, ri, li = a.Rows, 1, a.Stride
	}
	ad := a.Data
	// The inner index runs in blocks of rows of B that fit a core's L2
	// cache (128 KB), each block added to every row of the chunk in turn.
	// With op(A) = Aᵀ the block's rows of A are read by every group of
	// four rows as well: they too stay within 256 KB (a 10⁶×64 A times a
	// narrow B read A from memory about four times over otherwise).
	kb := max(16, (128<<10)/8/max(n, 1))
	if ta {
		kb = max(16, min(kb, (256<<10)/8/max(a.Stride, 1)))
	}
	if k == 0 {
		return func(lo, hi int) {
			clear(c[lo*n : hi*n])
			if bias != nil {
				vec.AddRows(c[lo*n:hi*n], c[lo*n:hi*n], bias)
			}
		}
	}
	// With a bias the chunk goes in blocks of rows whose result (256 KB)
	// is still in the cache when the bias is added to it.
	rb := 0 // the whole chunk
	if bias != nil {
		rb = max(4, (256<<10)/8/max(n, 1))
	}
	return func(lo, hi int) {
		step := rb
		if step == 0 {
			step = max(1, hi-lo)
		}
		for r0 := lo; r0 < hi; r0 += step {
			r1 := min(r0+step, hi)
			for l0 := 0; l0 < k; l0 += kb {
				l1 := min(l0+kb, k)
				bl := b[l0*n:]
				ai := ad[r0*ri+l0*li:]
				if l0 == 0 { // the first block sets the rows
					vec.SumSeqRows(c[r0*n:r1*n], r1-r0, n, n, ai, ri, li, l1-l0, bl, n)
				} else {
					vec.AxpySeqRows(c[r0*n:r1*n], r1-r0, n, n, ai, ri, li, l1-l0, bl, n)
				}
			}
			if bias != nil {
				vec.AddRows(c[r0*n:r1*n], c[r0*n:r1*n], bias)
			}
		}
	}
}

// mulDots computes C = A·Bᵀ (A is m×k, B is n×k, C is m×n) in the order
// gonum's Gemm sums it, so the result is bit-identical, but as sums of
// scaled rows of Bᵀ (vec.AxpySeq) instead of one short dot product per
// entry. gonum takes every entry as a dot product (f64.DotUnitary) over
// the whole inner range, or, when C has at least four 64×64 blocks, over
// blocks of 64 added to the entry in turn; DotUnitary adds x[l]·y[l] into
// four partial sums s₀…s₃ by l mod 4 over whole groups of four, the
// remaining 1–3 terms into s₀, and returns (s₁+s₃) + (s₀+s₂). Here the
// four partial sums of a row are four rows of scratch, each one strided
// sum of rows of Bᵀ.
func mulDots(m, n int, a, b blas64.General, c []float64) {
	bt := getScratch(a.Cols * n)
	defer putScratch(bt)
	parallel.Rows(m, m*n*a.Cols, mulDotsRows(m, n, a, b, c, *bt))
}

// mulDotsRows returns mulDots's loop body, which writes rows [lo, hi) of
// C; bt (k·n values) is its scratch for Bᵀ, filled here.
func mulDotsRows(m, n int, a, b blas64.General, c, bt []float64) func(lo, hi int) {
	k := a.Cols
	kb := k
	if blocks64(m)*blocks64(n) >= 4 {
		kb = 64
	}
	for j := 0; j < n; j++ {
		for l, v := range b.Data[j*b.Stride : j*b.Stride+k] {
			bt[l*n+j] = v
		}
	}
	// Rows go in blocks of rb, whose four partial sums (rb×n each) stay in
	// a core's L2 cache; each partial sum of a block is one product of
	// strided rows (vec.SumSeqRows), so the per-call work is a block's, not
	// a row's.
	rb := max(4, min(64, (32<<10)/8/max(n, 1)))
	return func(lo, hi int) {
		sp := getScratch(4 * rb * n)
		defer putScratch(sp)
		s := *sp
		clear(c[lo*n : hi*n])
		for i0 := lo; i0 < hi; i0 += rb {
			rows := min(rb, hi-i0)
			w := rows * n
			s0, s1, s2, s3 := s[:w], s[w:2*w], s[2*w:3*w], s[3*w:4*w]
			for l0 := 0; l0 < k; l0 += kb {
				size := min(kb, k-l0)
				q := size / 4
				ai := a.Data[i0*a.Stride+l0:]
				if q > 0 {
					for r, sr := range [4][]float64{s0, s1, s2, s3} {
						vec.SumSeqRows(sr, rows, n, n, ai[r:], a.Stride, 4, q, bt[(l0+r)*n:], 4*n)
					}
				} else {
					clear(s[:4*w])
				}
				if t := size - 4*q; t > 0 {
					vec.AxpySeqRows(s0, rows, n, n, ai[4*q:], a.Stride, 1, t, bt[(l0+4*q)*n:], n)
				}
				vec.AddSums4(c[i0*n:i0*n+w], s0, s1, s2, s3)
			}
		}
	}
}

// blocks64 is the number of 64-wide blocks gonum splits a size into.
func blocks64(x int) int { return (x + 63) / 64 }

var scratch sync.Pool

// getScratch returns a pooled slice of length n (contents undefined).
func getScratch(n int) *[]float64 {
	p, _ := scratch.Get().(*[]float64)
	if p == nil {
		p = new([]float64)
	}
	*p = resize(*p, n)
	return p
}

func putScratch(p *[]float64) { scratch.Put(p) }

// SymDiff of C = op(A)·op(B) with output gradient G:
// dA = G·op(B)ᵀ (ta unset) or op(B)·Gᵀ (ta set);
// dB = op(A)ᵀ·G (tb unset) or Gᵀ·op(A) (tb set) — each one MatMul with
// transpose flags, so no transposed copy is made.
func (o matMulOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	a, b := inputs[0], inputs[1]
	var da, db *G.Node
	if !o.ta {
		da = G.Must(G.ApplyOp(matMulOp{tb: !o.tb}, grad, b))
	} else {
		da = G.Must(G.ApplyOp(matMulOp{ta: o.tb, tb: true}, b, grad))
	}
	if !o.tb {
		db = G.Must(G.ApplyOp(matMulOp{ta: !o.ta}, a, grad))
	} else {
		db = G.Must(G.ApplyOp(matMulOp{ta: true, tb: o.ta}, grad, a))
	}
	return G.Nodes{da, db}, nil
}

var _ G.SDOp = matMulOp{}

// matMulBiasOp is x·W + b (x is m×k, W k×n, b n): MatMul and AddRow in one
// op whose kernel adds b to each chunk of rows as soon as they are
// computed (mulRowsBias), so the bias costs no pass of its own over the
// result (at 10⁶ nodes, a pass over 512 MB per hidden layer). The values
// and the gradients are those of AddRow(MatMul(x, W), b), bit for bit.
type matMulBiasOp struct{ pure }

// MatMulBias returns x·w + b with the vector b added to every row.
func MatMulBias(x, w, b *G.Node) *G.Node { return G.Must(G.ApplyOp(matMulBiasOp{}, x, w, b)) }

func (matMulBiasOp) Arity() int { return 3 }
func (matMulBiasOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(G.TensorType{Dims: 2, Of: a}, G.TensorType{Dims: 2, Of: a}, G.TensorType{Dims: 1, Of: a}, G.TensorType{Dims: 2, Of: a})
}
func (matMulBiasOp) WriteHash(h hash.Hash) { fmt.Fprint(h, "MatMulBias") }
func (o matMulBiasOp) Hashcode() uint32    { return hash32(o.WriteHash) }
func (matMulBiasOp) String() string        { return "A × B + b" }
func (matMulBiasOp) DiffWRT(int) []bool    { return []bool{true, true, true} }

func (matMulBiasOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, err := matMulOp{}.InferShape(in[0], in[1])
	if err != nil {
		return nil, err
	}
	if b, ok := in[2].(tensor.Shape); !ok || b.TotalSize() != s[1] {
		return nil, fmt.Errorf("nn: A × B + b of %v wants a bias of %d, got %v", s, s[1], in[2])
	}
	return s, nil
}

func (o matMulBiasOp) Do(vals ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, vals...) }

func (o matMulBiasOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	return runRows(o.rows(prealloc, vals))
}

func (matMulBiasOp) rowInputs() []bool { return []bool{true, false, false} }

func (matMulBiasOp) rows(prealloc G.Value, vals []G.Value) (*tensor.Dense, int, func(lo, hi int), error) {
	_, bias, err := denseF64(vals[2], "A × B + b")
	if err != nil {
		return nil, 0, nil, err
	}
	return mulBiasRows("A × B + b", prealloc, vals[:2], bias)
}

// SymDiff: those of AddRow then MatMul, dx = G·Wᵀ, dW = xᵀ·G, db = Σ_rows G.
func (matMulBiasOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	d, err := matMulOp{}.SymDiff(inputs[:2], output, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{d[0], d[1], ColSums(grad)}, nil
}

var _ G.SDOp = matMulBiasOp{}
