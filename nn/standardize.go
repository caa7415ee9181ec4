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
func (op *standardizeOp) stats(xd []float64, n, k int, update bool) (mean, inv []float64) {
	groups, size, ri, ci := op.layout(n, k)
	mean = make([]float64, groups)
	inv = make([]float64, groups)
	if op.axis == 0 && !op.training && op.statsObserved {
		for g := range mean {
			mean[g] = op.runMean[g]
			inv[g] = 1 / math.Sqrt(op.runVar[g]+op.eps)
		}
		return mean, inv
	}
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
		if update && op.axis == 0 {
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
			op.runMean[g] = (1-op.momentum)*op.runMean[g] + op.momentum*mean[g]
			op.runVar[g] = (1-op.momentum)*op.runVar[g] + op.momentum*unbiased
		}
	}
	if update && op.axis == 0 {
		op.statsObserved = true
	}
	return mean, inv
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
		for c := range mean {
			mean[c] = -mean[c]
		}
		parallel.Rows(n, n*k, func(lo, hi int) {
			vec.AddRows(out[lo*k:hi*k], xd[lo*k:hi*k], mean)
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
	mean, inv := f.stats(xd, n, k, false)
	groups, size, ri, ci := f.layout(n, k)
	t, out := output(prealloc, n, k)
	if f.axis == 0 && !f.training && f.statsObserved { // fixed statistics
		vec.MulRows(out, dy[:n*k], inv)
		return t, nil
	}
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
