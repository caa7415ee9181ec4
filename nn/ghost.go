package nn

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// RowGroups assigns the rows of a batch to samples: Of[r] is the sample of
// row r, or −1 for a padding row; Samples is the number of samples. A
// sample is one row in most models and several rows when one training
// example is spread over rows (DPAR). It is mutable: a DP-SGD step sets it
// for the sampled batch before running the graph.
type RowGroups struct {
	Of      []int
	Samples int
}

// Singletons makes row r its own sample for r < n and marks rows n… as
// padding (rows = len(g.Of)).
func (g *RowGroups) Singletons(n int) {
	for r := range g.Of {
		if r < n {
			g.Of[r] = r
		} else {
			g.Of[r] = -1
		}
	}
	g.Samples = n
}

func vecType() hm.Type { return G.TensorType{Dims: 1, Of: hm.TypeVariable('a')} }

// groupGramOp computes, for each sample g, the squared norm of its gradient
// contribution Σ_{r,r'∈g} (aᵣ·aᵣ')(δᵣ·δᵣ') — the Gram form of the ghost norm
// (for one row per sample, ‖aᵣ‖²‖δᵣ‖²). Without an input a (bias, norm
// scale with δ already multiplied by x̂) it is ‖Σ_{r∈g} δᵣ‖². The output is
// a vector of length capacity = number of rows (entries past Samples are
// zero). It is not differentiable: DP-SGD never differentiates through
// clipping.
type groupGramOp struct {
	pure
	groups *RowGroups
	sparse *Sparse // constant sparse input a, or nil
	dense  bool    // a is the first (dense) input
	name   string
	// members is the last run's rows per sample, reused by the next (the
	// op runs on one path, the DP-SGD training step's).
	members [][]int
}

// GhostNormSq returns per-sample squared gradient norms of a linear
// weight from its dense input a (R, in) and output gradient delta (R, out).
// With a nil, it returns ‖Σ_{r∈g} δᵣ‖² (the bias term).
func GhostNormSq(a, delta *G.Node, groups *RowGroups, name string) (*G.Node, error) {
	if a == nil {
		return G.ApplyOp(&groupGramOp{groups: groups, name: name}, delta)
	}
	return G.ApplyOp(&groupGramOp{groups: groups, dense: true, name: name}, a, delta)
}

// GhostNormSqSparse is GhostNormSq for a constant sparse input.
func GhostNormSqSparse(a *Sparse, delta *G.Node, groups *RowGroups, name string) (*G.Node, error) {
	return G.ApplyOp(&groupGramOp{groups: groups, sparse: a, name: name}, delta)
}

func (op *groupGramOp) Arity() int {
	if op.dense {
		return 2
	}
	return 1
}
func (op *groupGramOp) Type() hm.Type {
	if op.dense {
		return hm.NewFnType(matType(), matType(), vecType())
	}
	return hm.NewFnType(matType(), vecType())
}
func (op *groupGramOp) Hashcode() uint32      { return hash32(op.WriteHash) }
func (op *groupGramOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "GhostNormSq(%s,%p)", op.name, op) }
func (op *groupGramOp) String() string        { return fmt.Sprintf("GhostNormSq(%s)", op.name) }
func (op *groupGramOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s := in[len(in)-1].(tensor.Shape)
	return tensor.Shape{s[0]}, nil
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

func (op *groupGramOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

func (op *groupGramOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	dv := vals[len(vals)-1]
	d, dd, err := denseF64(dv, "GhostNormSq")
	if err != nil {
		return nil, err
	}
	rows, k := shape2(d)
	var ad []float64
	var ak int
	if op.dense {
		a, x, err := denseF64(vals[0], "GhostNormSq")
		if err != nil {
			return nil, err
		}
		ad = x
		_, ak = shape2(a)
	}
	if len(op.groups.Of) != rows {
		return nil, fmt.Errorf("nn: GhostNormSq %s: %d row groups for %d rows", op.name, len(op.groups.Of), rows)
	}
	// rowDot returns aᵣ·aₛ (1 without an input).
	rowDot := func(r, s int) float64 {
		switch {
		case op.dense:
			return dot(ad[r*ak:(r+1)*ak], ad[s*ak:(s+1)*ak])
		case op.sparse != nil:
			return op.sparse.rowDot(r, s)
		}
		return 1
	}
	// members[g] are sample g's rows (kept across steps: a step's slices
	// were a quarter of a DP-MLP run's allocations).
	if len(op.members) < op.groups.Samples {
		op.members = append(op.members, make([][]int, op.groups.Samples-len(op.members))...)
	}
	members := op.members[:op.groups.Samples]
	for g := range members {
		members[g] = members[g][:0]
	}
	for r, g := range op.groups.Of {
		if g >= 0 {
			if g >= op.groups.Samples {
				return nil, fmt.Errorf("nn: GhostNormSq %s: row %d in sample %d of %d", op.name, r, g, op.groups.Samples)
			}
			members[g] = append(members[g], r)
		}
	}
	in := 1 // the terms of a row dot product of the input
	switch {
	case op.dense:
		in = ak
	case op.sparse != nil:
		in = op.sparse.A.Cols
	}
	t, out := output(prealloc, rows)
	clear(out)
	gamma := gramGamma(in, k, 0)
	for g, rs := range members {
		var s, tn, an, dn float64
		for i, r := range rs {
			dr := dd[r*k : (r+1)*k]
			aa, ee := rowDot(r, r), dot(dr, dr)
			s += aa * ee
			// ‖aᵣ‖ and ‖δᵣ‖ from above: the computed sums of squares lose
			// a relative γ and, in the subnormal range, up to n·2⁻¹⁰⁷⁵
			na, nd := math.Sqrt(aa*(1+gamma)+float64(in)*0x1p-1074), math.Sqrt(ee*(1+gamma)+float64(k)*0x1p-1074)
			tn, an, dn = tn+na*nd, an+na, dn+nd
			for _, q := range rs[i+1:] {
				s += 2 * rowDot(r, q) * dot(dr, dd[q*k:(q+1)*k])
			}
		}
		out[g] = gramBound(s, tn, an, dn, in, k, len(rs))
	}
	return t, nil
}

// gramGamma is gramBound's relative rounding allowance γ = 4·(in + out +
// m² + m + 16)·2⁻⁵³ for m rows of widths in and out.
func gramGamma(in, out, m int) float64 {
	return 4 * float64(in+out+m*m+m+16) * 0x1p-53
}

// gramBound is an upper bound on a sample's squared gradient norm ‖g‖²
// from its Gram form s = Σ_{r,q} (aᵣ·a_q)(δᵣ·δ_q) as computed in float64,
// tn = Σ_r ‖aᵣ‖‖δᵣ‖, an = Σ_r ‖aᵣ‖ and dn = Σ_r ‖δᵣ‖ as bounded from above,
// for m rows, input width in and output width out. The Gram form cancels: rows with large opposite terms can sum
// to 0 or below in float64 while ‖g‖ is large (the fourth outside audit of
// issue 38: features 2^40, computed norm 0, the example released unclipped,
// Δ 1024·C for a declared C; with features near 2^31, Δ 8·C). Each
// computed dot product is within γ_n·Σ|xᵢyᵢ| ≤ γ_n·‖x‖‖y‖ of the exact one
// (γ_n = n·u/(1 − n·u), u = 2⁻⁵³) and the sum of the m² terms within
// γ_{m²}·Σ|terms| ≤ γ_{m²}·T² (T = Σ_r ‖aᵣ‖‖δᵣ‖, the exact tn), so
// |s − ‖g‖²| ≤ γ·T² with γ = 4·(in + out + m² + m + 16)·u, generous for the
// products' own rounding; tn is within a relative γ/4 of T (sums of
// squares and non-negative terms), so T² ≤ tn²·(1 + γ), and ‖g‖² ≤ T² by
// the triangle inequality. The bound is min(tn²·(1+γ), max(s, 0) + γ·tn²·
// (1+γ)), which is ≥ ‖g‖² and within a relative γ of the Gram form where
// it does not cancel. The result is (√b + 2γ·tn)² for that bound b: the
// clipped sum computes the sample's contribution c·Σ_r aᵣᵀδᵣ with an error
// up to c·γ·T, so with c = C/√result the computed contribution is within
// c·(‖g‖ + γ·T) ≤ C (where the Gram form does not cancel, the margin is a
// relative ~γ, invisible; under full cancellation it is up to 2√γ). (The
// rounding of sums across samples, and C/(norm + 1e-6) in the clip factor,
// are within a relative 1e-15 of C and not modelled.)
//
// Underflow (the fifth outside audit: features near 2^−537 square to 0 and
// the norm was computed as 0) is covered by an absolute allowance: in the
// subnormal range a dot product of n terms is off by up to n·2⁻¹⁰⁷⁵ besides
// its relative error, so s is off by up to η = 2⁻¹⁰⁷³·(in·D² + out·A²) +
// m²·2⁻¹⁰⁷² more (D = Σ_r ‖δᵣ‖, A = Σ_r ‖aᵣ‖); tn, an and dn are computed
// from the row norms bounded from above (the caller adds n·2⁻¹⁰⁷⁴ to each
// sum of squares), so tn ≥ T up to a relative γ.
func gramBound(s, tn, an, dn float64, in, out, m int) float64 {
	gamma := gramGamma(in, out, m)
	t2 := tn * tn * (1 + gamma)
	eta := 0x1p-1073*float64(in)*dn*dn + 0x1p-1073*float64(out)*an*an + float64(m*m)*0x1p-1072
	b := math.Min(t2, math.Max(s, 0)+gamma*t2+eta)
	r := math.Sqrt(b) + 2*gamma*tn
	return r * r
}

// rowDot is the dot product of rows r and s of the sparse matrix.
func (s *Sparse) rowDot(r, q int) float64 {
	a := s.A
	i, iEnd := a.Indptr[r], a.Indptr[r+1]
	j, jEnd := a.Indptr[q], a.Indptr[q+1]
	sum := 0.0
	for i < iEnd && j < jEnd {
		switch {
		case a.Indices[i] < a.Indices[j]:
			i++
		case a.Indices[i] > a.Indices[j]:
			j++
		default:
			sum += a.Value(i) * a.Value(j)
			i++
			j++
		}
	}
	return sum
}

// clipFactorOp maps squared norms n to min(1, C/(√n + 1e-6)) (Opacus's flat
// clipping factor), and a squared norm that is not a finite number ≥ 0
// (NaN, +Inf: an example whose features or loss overflow) to 0.
type clipFactorOp struct {
	pure
	c float64
}

// ClipFactors returns the per-sample clipping factors min(1, C/(‖g‖+1e-6))
// for a vector of squared per-sample gradient norms, and exactly 0 for a
// squared norm that is NaN, infinite or negative.
//
// Privacy meaning: a factor is always a finite number in [0, 1] with
// factor·‖g‖ ≤ C when ‖g‖ is finite (min(1, C/(‖g‖+1e-6))·‖g‖ < C), so
// an example whose gradient overflows contributes nothing instead of
// turning the released sum into NaN (math.Min(1, NaN) is NaN). With
// ScaleRows (which selects a zero row for factor 0, not 0·δ) and the
// per-sample rules' ClippedSum (which select zero input rows where the
// clipped gradient row is zero), each example's contribution to the
// clipped sum is exactly 0 or c·g with c·‖g‖ ≤ C, for every input.
func ClipFactors(normSq *G.Node, c float64) (*G.Node, error) {
	return G.ApplyOp(clipFactorOp{c: c}, normSq)
}

func (op clipFactorOp) Arity() int            { return 1 }
func (op clipFactorOp) Type() hm.Type         { return hm.NewFnType(vecType(), vecType()) }
func (op clipFactorOp) Hashcode() uint32      { return hash32(op.WriteHash) }
func (op clipFactorOp) WriteHash(h hash.Hash) { fmt.Fprint(h, op.String()) }
func (op clipFactorOp) String() string        { return fmt.Sprintf("ClipFactor(C=%g)", op.c) }
func (op clipFactorOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}
func (op clipFactorOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

func (op clipFactorOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	_, n, err := denseF64(vals[0], "ClipFactor")
	if err != nil {
		return nil, err
	}
	t, out := output(prealloc, len(n))
	for i, v := range n {
		if v >= 0 && !math.IsInf(v, 1) { // false for NaN
			out[i] = math.Min(1, op.c/(math.Sqrt(v)+1e-6))
		} else {
			out[i] = 0 // select: no example's non-finite norm reaches the sum
		}
	}
	return t, nil
}

// expandOp maps per-sample values to rows: out[r] = v[groups.Of[r]] (0 for
// padding rows).
type expandOp struct {
	pure
	groups *RowGroups
}

// ExpandToRows gives each row its sample's value (clip factor).
func ExpandToRows(v *G.Node, groups *RowGroups) (*G.Node, error) {
	return G.ApplyOp(expandOp{groups: groups}, v)
}

func (op expandOp) Arity() int            { return 1 }
func (op expandOp) Type() hm.Type         { return hm.NewFnType(vecType(), vecType()) }
func (op expandOp) Hashcode() uint32      { return hash32(op.WriteHash) }
func (op expandOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "ExpandToRows(%p)", op.groups) }
func (op expandOp) String() string        { return "ExpandToRows" }
func (op expandOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{len(op.groups.Of)}, nil
}
func (op expandOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

func (op expandOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	_, v, err := denseF64(vals[0], "ExpandToRows")
	if err != nil {
		return nil, err
	}
	t, out := output(prealloc, len(op.groups.Of))
	for r, g := range op.groups.Of {
		if g >= 0 {
			out[r] = v[g]
		} else {
			out[r] = 0
		}
	}
	return t, nil
}
