package nn

import (
	"fmt"
	"hash"
	"math"
	"sync/atomic"

	"github.com/chewxy/hm"
	"github.com/dpgnn/dpgnn/internal/parallel"
	"github.com/dpgnn/dpgnn/internal/vec"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// standardizeOp standardises a matrix to zero mean and unit variance,
// either per column over the batch (axis 0: BatchNorm, which mixes samples
// and is therefore not DP-safe) or per row over the features (axis 1:
// GroupNorm with one group, a per-sample operation usable under DP-SGD).
// The affine scale and shift are separate learnable nodes (see layers).
type standardizeOp struct {
	pure
	axis int
	eps  float64
	id   int64 // distinguishes independent BatchNorm layers (running stats)

	// BatchNorm only: running statistics (PyTorch convention: momentum 0.1,
	// unbiased running variance) and the mode.
	momentum      float64
	training      bool
	runMean       []float64
	runVar        []float64
	statsObserved bool

	last batchStats // BatchNorm: the batch statistics of the last pass
}

// batchStats holds a BatchNorm op's batch statistics (column means and
// 1/σ) and the input they are of, so that the gradient, which runs after
// its forward pass on the same input, reads them instead of computing them
// again (the same loops on the same values: the same numbers). neg, mdy
// and mdyy are scratch for the passes.
type batchStats struct {
	x              *float64 // &input[0]
	n, k           int
	mean, inv, neg []float64
	mdy, mdyy      []float64
}

// of reports whether the statistics are those of xd (n×k).
func (b *batchStats) of(xd []float64, n, k int) bool {
	return b.x != nil && n*k > 0 && b.x == &xd[0] && b.n == n && b.k == k
}

var standardizeIDs atomic.Int64

func newStandardize(axis int, eps, momentum float64) *standardizeOp {
	return &standardizeOp{axis: axis, eps: eps, id: standardizeIDs.Add(1), momentum: momentum, training: true}
}

// SetTraining switches a BatchNorm op between batch statistics (training)
// and running statistics (evaluation). It is a no-op for per-sample norms.
func (op *standardizeOp) SetTraining(t bool) { op.training = t }

func (op *standardizeOp) Arity() int            { return 1 }
func (op *standardizeOp) Type() hm.Type         { return matFn(1) }
func (op *standardizeOp) DiffWRT(int) []bool    { return []bool{true} }
func (op *standardizeOp) Hashcode() uint32      { return hash32(op.WriteHash) }
func (op *standardizeOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "%s#%d", op, op.id) }
func (op *standardizeOp) String() string {
	if op.axis == 0 {
		return fmt.Sprintf("BatchStandardize(eps=%g)", op.eps)
	}
	return fmt.Sprintf("RowStandardize(eps=%g)", op.eps)
}

func (op *standardizeOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return sameShape("standardise", in)
}

// layout returns, for an n×k matrix, the number of groups, the group size
// and the strides that give the group of element (i, c) as i·ri + c·ci.
// Every loop below walks the matrix in row-major order (a column-strided
// walk for BatchNorm was a third of a wide model's training time).
func (op *standardizeOp) layout(n, k int) (groups, size, ri, ci int) {
	if op.axis == 0 {
		return k, n, 0, 1
	}
	return n, k, 1, 0
}

// stats returns the mean and 1/sqrt(var+eps) of each group, from the batch
// or, for BatchNorm in evaluation mode, from the running statistics.
// BatchNorm's are written into op.last's buffers (no allocation per pass);
// the running ones leave op.last recording no input.
func (op *standardizeOp) stats(xd []float64, n, k int, update bool) (mean, inv []float64) {
	if op.axis == 0 && !op.training && op.statsObserved {
		l := &op.last
		l.x = nil
		l.mean, l.inv = resize(l.mean, k), resize(l.inv, k)
		for g := range l.mean {
			l.mean[g] = op.runMean[g]
			l.inv[g] = 1 / math.Sqrt(op.runVar[g]+op.eps)
		}
		return l.mean, l.inv
	}
	if op.axis == 0 {
		return op.columnStats(xd, n, k, update)
	}
	groups, size, ri, ci := op.layout(n, k)
	mean = make([]float64, groups)
	inv = make([]float64, groups)
	for i := 0; i < n; i++ {
		for c, v := range xd[i*k : (i+1)*k] {
			mean[i*ri+c*ci] += v
		}
	}
	for g := range mean {
		mean[g] /= float64(size)
	}
	vr := inv // accumulate Σ(x−μ)² in place, then turn it into 1/σ
	for i := 0; i < n; i++ {
		for c, v := range xd[i*k : (i+1)*k] {
			g := i*ri + c*ci
			d := v - mean[g]
			vr[g] += d * d
		}
	}
	for g := range vr {
		v := vr[g] / float64(size)
		inv[g] = 1 / math.Sqrt(v+op.eps)
	}
	return mean, inv
}

// columnStats is stats for BatchNorm's batch statistics: the same sums in
// the same order as the generic loops, over rows of columns, into the
// buffers of op.last, which then records the input.
func (op *standardizeOp) columnStats(xd []float64, n, k int, update bool) (mean, inv []float64) {
	l := &op.last
	l.x = nil
	l.mean, l.inv = resize(l.mean, k), resize(l.inv, k)
	mean, inv = l.mean, l.inv
	clear(mean)
	clear(inv)
	vec.ColAdd(mean, xd, n, k)
	for c := range mean {
		mean[c] /= float64(n)
	}
	vec.ColSqDev(inv, xd, mean, n, k)
	for c := range inv {
		v := inv[c] / float64(n)
		inv[c] = 1 / math.Sqrt(v+op.eps)
		if update {
			op.observe(c, k, n, mean[c], v)
		}
	}
	if update {
		op.statsObserved = true
	}
	if n*k > 0 {
		l.x, l.n, l.k = &xd[0], n, k
	}
	return mean, inv
}

// observe folds column g's batch mean and (biased) variance v over size
// rows into the running statistics of the op's groups columns.
func (op *standardizeOp) observe(g, groups, size int, mean, v float64) {
	if op.runMean == nil {
		op.runMean = make([]float64, groups)
		op.runVar = make([]float64, groups)
		for i := range op.runVar {
			op.runVar[i] = 1
		}
	}
	unbiased := v
	if size > 1 {
		unbiased = v * float64(size) / float64(size-1)
	}
	op.runMean[g] = (1-op.momentum)*op.runMean[g] + op.momentum*mean
	op.runVar[g] = (1-op.momentum)*op.runVar[g] + op.momentum*unbiased
}

func (op *standardizeOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

func (op *standardizeOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	x, xd, err := denseF64(vals[0], "standardise")
	if err != nil {
		return nil, err
	}
	n, k := shape2(x)
	mean, inv := op.stats(xd, n, k, op.training)
	_, _, ri, ci := op.layout(n, k)
	t, out := output(prealloc, n, k)
	if op.axis == 0 {
		// (x − μ)·s by rows in two vector passes: x + (−μ) is x − μ exactly.
		neg := resize(op.last.neg, k)
		op.last.neg = neg
		for c, m := range mean {
			neg[c] = -m
		}
		parallel.Rows(n, n*k, func(lo, hi int) {
			vec.AddRows(out[lo*k:hi*k], xd[lo*k:hi*k], neg)
			vec.MulRows(out[lo*k:hi*k], out[lo*k:hi*k], inv)
		})
		return t, nil
	}
	for i := 0; i < n; i++ {
		o := out[i*k : (i+1)*k]
		for c, v := range xd[i*k : (i+1)*k] {
			g := i*ri + c*ci
			o[c] = (v - mean[g]) * inv[g]
		}
	}
	return t, nil
}

func (op *standardizeOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	return gradient(G.ApplyOp(&standardizeGradOp{fwd: op}, inputs[0], grad))
}

// standardizeGradOp: with y = (x−μ)·s over a group of m elements,
// dx = s·(dy − mean(dy) − y·mean(dy∘y)); with fixed (running) statistics
// dx = s·dy.
type standardizeGradOp struct {
	pure
	fwd *standardizeOp
}

func (op *standardizeGradOp) Arity() int            { return 2 }
func (op *standardizeGradOp) Type() hm.Type         { return matFn(2) }
func (op *standardizeGradOp) Hashcode() uint32      { return hash32(op.WriteHash) }
func (op *standardizeGradOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "Grad%s#%d", op.fwd, op.fwd.id) }
func (op *standardizeGradOp) String() string        { return "Grad" + op.fwd.String() }
func (op *standardizeGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}

func (op *standardizeGradOp) Do(vals ...G.Value) (G.Value, error) {
	return op.UsePreallocDo(nil, vals...)
}

func (op *standardizeGradOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	x, xd, _, dy, err := densePair(vals, "standardise grad")
	if err != nil {
		return nil, err
	}
	n, k := shape2(x)
	f := op.fwd
	t, out := output(prealloc, n, k)
	if f.axis == 0 && !f.training && f.statsObserved { // fixed statistics
		_, inv := f.stats(xd, n, k, false)
		vec.MulRows(out, dy[:n*k], inv)
		return t, nil
	}
	if f.axis == 0 {
		f.columnGrad(xd, dy, out, n, k)
		return t, nil
	}
	mean, inv := f.stats(xd, n, k, false)
	groups, size, ri, ci := f.layout(n, k)
	mdy := make([]float64, groups)  // mean(dy) per group
	mdyy := make([]float64, groups) // mean(dy∘y) per group
	for i := 0; i < n; i++ {
		r := xd[i*k : (i+1)*k]
		for c, d := range dy[i*k : (i+1)*k] {
			g := i*ri + c*ci
			mdy[g] += d
			mdyy[g] += d * (r[c] - mean[g]) * inv[g]
		}
	}
	for g := range mdy {
		mdy[g] /= float64(size)
		mdyy[g] /= float64(size)
	}
	for i := 0; i < n; i++ {
		r, o := xd[i*k:(i+1)*k], out[i*k:(i+1)*k]
		for c, d := range dy[i*k : (i+1)*k] {
			g := i*ri + c*ci
			y := (r[c] - mean[g]) * inv[g]
			o[c] = inv[g] * (d - mdy[g] - y*mdyy[g])
		}
	}
	return t, nil
}

// columnGrad is the batch-statistics gradient for BatchNorm: the generic
// loops' expressions over rows of columns, with the forward pass's
// statistics when they are of this input (computed again otherwise).
func (op *standardizeOp) columnGrad(xd, dy, out []float64, n, k int) {
	l := &op.last
	mean, inv := l.mean, l.inv
	if !l.of(xd, n, k) {
		mean, inv = op.columnStats(xd, n, k, false)
	}
	l.mdy, l.mdyy = resize(l.mdy, k), resize(l.mdyy, k)
	mdy, mdyy := l.mdy, l.mdyy // mean(dy) and mean(dy∘y) per column
	clear(mdy)
	clear(mdyy)
	vec.ColGrad(mdy, mdyy, xd, dy, mean, inv, n, k)
	for c := range mdy {
		mdy[c] /= float64(n)
		mdyy[c] /= float64(n)
	}
	// Each entry from its own row and the column means: the rows split
	// over the cores (scalar chains, which the two cores overlap).
	parallel.Rows(n, 4*n*k, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			r, dr, o := xd[i*k:(i+1)*k], dy[i*k:(i+1)*k], out[i*k:(i+1)*k]
			a, b, m, s := mdy[:len(r)], mdyy[:len(r)], mean[:len(r)], inv[:len(r)]
			for c, d := range dr[:len(r)] {
				y := (r[c] - m[c]) * s[c]
				o[c] = s[c] * (d - a[c] - y*b[c])
			}
		}
	})
}

var _ G.SDOp = (*standardizeOp)(nil)

// saveStats copies the running statistics (into reuse's buffers when they
// are large enough); both nil before any were observed.
func (op *standardizeOp) saveStats(reuse [2][]float64) [2][]float64 {
	if !op.statsObserved {
		return [2][]float64{}
	}
	return [2][]float64{append(reuse[0][:0], op.runMean...), append(reuse[1][:0], op.runVar...)}
}

func (op *standardizeOp) loadStats(s [2][]float64) {
	if s[0] == nil {
		op.statsObserved = false
		return
	}
	op.runMean = append(op.runMean[:0], s[0]...)
	op.runVar = append(op.runVar[:0], s[1]...)
	op.statsObserved = true
}

// affineEvalOp is an evaluation-only BatchNorm with its affine part in one
// pass: γ∘((x − μ)·(1/σ)) + β from the statistics of bn (a frozen path's
// twin: the copied running statistics, or the batch's before any were
// observed, as bn's own pass takes them), computed as the four row passes
// of standardise, MulRow and AddRow compute it (vec.AffineRows), so with
// the same bits. Frozen paths are never differentiated, so it has no
// gradient (it says it has one: gorgonia's differentiation analysis walks
// every node downstream of the parameters, a frozen path's included, and
// refuses an op without one; SymDiff is only called on the way from a
// loss, which no frozen path is on).
type affineEvalOp struct {
	pure
	bn *standardizeOp
}

func (o affineEvalOp) Arity() int { return 3 }
func (o affineEvalOp) Type() hm.Type {
	return hm.NewFnType(matType(), vecType(), vecType(), matType())
}
func (o affineEvalOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	s, ok := in[0].(tensor.Shape)
	if !ok || len(s) != 2 {
		return nil, fmt.Errorf("nn: %s wants a matrix, got %v", o, in[0])
	}
	for _, p := range in[1:] {
		if q, ok := p.(tensor.Shape); !ok || q.TotalSize() != s[1] {
			return nil, fmt.Errorf("nn: %s of %v wants vectors of %d, got %v", o, s, s[1], p)
		}
	}
	return s.Clone(), nil
}
func (o affineEvalOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "AffineEval%s#%d", o.bn, o.bn.id) }
func (o affineEvalOp) Hashcode() uint32      { return hash32(o.WriteHash) }
func (o affineEvalOp) String() string        { return "AffineEval" + o.bn.String() }
func (affineEvalOp) DiffWRT(int) []bool      { return []bool{true, true, true} }

func (o affineEvalOp) SymDiff(G.Nodes, *G.Node, *G.Node) (G.Nodes, error) {
	return nil, fmt.Errorf("nn: %s is evaluation-only (a frozen path's) and has no gradient", o)
}

func (o affineEvalOp) Do(vals ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, vals...) }

func (o affineEvalOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	return runRows(o.prepare(prealloc, vals, true))
}

func (affineEvalOp) rowInputs() []bool { return []bool{true, false, false} }

// rows is row-wise only with the running statistics: before any were
// observed the twin takes its batch's, which reads every row.
func (o affineEvalOp) rows(prealloc G.Value, vals []G.Value) (*tensor.Dense, int, func(lo, hi int), error) {
	return o.prepare(prealloc, vals, false)
}

// prepare checks the inputs, takes the statistics and returns the output
// and the pass over its rows; with batch false it returns no pass when
// the statistics would be the batch's.
func (o affineEvalOp) prepare(prealloc G.Value, vals []G.Value, batch bool) (*tensor.Dense, int, func(lo, hi int), error) {
	x, xd, err := denseF64(vals[0], o.String())
	if err != nil {
		return nil, 0, nil, err
	}
	_, gamma, err := denseF64(vals[1], o.String())
	if err != nil {
		return nil, 0, nil, err
	}
	_, beta, err := denseF64(vals[2], o.String())
	if err != nil {
		return nil, 0, nil, err
	}
	n, k := shape2(x)
	if len(gamma) != k || len(beta) != k {
		return nil, 0, nil, fmt.Errorf("nn: %s of (%d, %d) got γ of %d and β of %d", o, n, k, len(gamma), len(beta))
	}
	if !batch && !(o.bn.axis == 0 && !o.bn.training && o.bn.statsObserved) {
		return nil, 0, nil, nil
	}
	mean, inv := o.bn.stats(xd, n, k, false)
	neg := resize(o.bn.last.neg, k)
	o.bn.last.neg = neg
	for c, m := range mean {
		neg[c] = -m
	}
	t, out := output(prealloc, n, k)
	return t, 4 * n * k, func(lo, hi int) {
		vec.AffineRows(out[lo*k:hi*k], xd[lo*k:hi*k], neg, inv, gamma, beta)
	}, nil
}
