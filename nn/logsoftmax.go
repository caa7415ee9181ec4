package nn

import (
	"math"

	"github.com/dpgnn/dpgnn/internal/parallel"
	"github.com/dpgnn/dpgnn/internal/vec"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// logSoftmaxOp is a row-wise log-softmax, z_ij − log Σ_k exp(z_ik), computed
// with the max shift. Its gradient is dx = dy − softmax(z)·Σ_j dy_j per row.
// Both are row kernels (rowKernel).
// (gorgonia's LogSoftMax starts a goroutine per row, which dominated the
// cost of a full-batch epoch on small graphs.)
type logSoftmaxOp struct{ labelled }

var logSoftmax = logSoftmaxOp{labelled{label: "LogSoftmaxRows", arity: 1}}

// LogSoftmax returns the row-wise log-softmax of a (N, C) matrix.
func LogSoftmax(x *G.Node) (*G.Node, error) { return G.ApplyOp(logSoftmax, x) }

func (logSoftmaxOp) DiffWRT(int) []bool { return []bool{true} }

func (op logSoftmaxOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

func (op logSoftmaxOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	x, xd, err := denseF64(vals[0], "LogSoftmax")
	if err != nil {
		return nil, err
	}
	if n, k := shape2(x); parallel.Serial(n, 8*n*k) {
		// A small batch (a DP-SGD step's) without the closure.
		t, out := output(prealloc, n, k)
		logSoftmaxRows(xd, out, k, 0, n)
		return t, nil
	}
	return runRows(logSoftmaxKernel(prealloc, x, xd))
}

func (logSoftmaxOp) rowInputs() []bool { return []bool{true} }

func (logSoftmaxOp) rows(prealloc G.Value, vals []G.Value) (*tensor.Dense, int, func(lo, hi int), error) {
	x, xd, err := denseF64(vals[0], "LogSoftmax")
	if err != nil {
		return nil, 0, nil, err
	}
	return logSoftmaxKernel(prealloc, x, xd)
}

// logSoftmaxKernel is the row kernel over a validated input x (data xd).
func logSoftmaxKernel(prealloc G.Value, x *tensor.Dense, xd []float64) (*tensor.Dense, int, func(lo, hi int), error) {
	n, k := shape2(x)
	t, out := output(prealloc, n, k)
	return t, 8 * n * k, func(lo, hi int) { logSoftmaxRows(xd, out, k, lo, hi) }, nil
}

// logSoftmaxRows writes rows [lo, hi) of the log-softmax of x (rows of k)
// into out, a block of rows at a time: the shifted values z − max per row
// (in out), all their exponentials at once (vec.Exp: math.Exp's bits),
// then each row's sum in order.
func logSoftmaxRows(xd, out []float64, k, lo, hi int) {
	rb := rowBlock(k)
	sp := getScratch(rb*k + rb)
	defer putScratch(sp)
	for b0 := lo; b0 < hi; b0 += rb {
		b1 := min(b0+rb, hi)
		e, mxs := (*sp)[:(b1-b0)*k], (*sp)[rb*k:rb*k+b1-b0]
		for i := b0; i < b1; i++ {
			r, o := xd[i*k:(i+1)*k], out[i*k:(i+1)*k]
			// The largest entry by plain comparison: where it differs from
			// math.Max (a NaN in the row, the sign of a zero maximum) the
			// outputs do not: a NaN makes the row's sum and every output
			// NaN either way, and ±0 shifts and adds as 0.
			mx := math.Inf(-1)
			for _, v := range r {
				if v > mx {
					mx = v
				}
			}
			for c, v := range r {
				o[c] = v - mx
			}
			mxs[i-b0] = mx
		}
		vec.Exp(e, out[b0*k:b1*k])
		for i := b0; i < b1; i++ {
			s := 0.0
			for _, v := range e[(i-b0)*k : (i-b0+1)*k] {
				s += v
			}
			lse := mxs[i-b0] + math.Log(s)
			o := out[i*k : (i+1)*k]
			for c, v := range xd[i*k : (i+1)*k] {
				o[c] = v - lse
			}
		}
	}
}

func (logSoftmaxOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	return gradient(G.ApplyOp(logSoftmaxGradOp{labelled{label: "LogSoftmaxRowsGrad", arity: 2}}, output, grad))
}

// logSoftmaxGradOp takes (y = log-softmax output, dy).
type logSoftmaxGradOp struct{ labelled }

func (op logSoftmaxGradOp) Do(vals ...G.Value) (G.Value, error) {
	return op.UsePreallocDo(nil, vals...)
}

func (op logSoftmaxGradOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	y, yd, _, dy, err := densePair(vals, "LogSoftmaxGrad")
	if err != nil {
		return nil, err
	}
	if n, k := shape2(y); parallel.Serial(n, 6*n*k) {
		t, out := output(prealloc, n, k)
		logSoftmaxGradRows(yd, dy, out, k, 0, n)
		return t, nil
	}
	return runRows(logSoftmaxGradKernel(prealloc, y, yd, dy))
}

func (logSoftmaxGradOp) rowInputs() []bool { return []bool{true, true} }

func (logSoftmaxGradOp) rows(prealloc G.Value, vals []G.Value) (*tensor.Dense, int, func(lo, hi int), error) {
	y, yd, _, dy, err := densePair(vals, "LogSoftmaxGrad")
	if err != nil {
		return nil, 0, nil, err
	}
	return logSoftmaxGradKernel(prealloc, y, yd, dy)
}

// logSoftmaxGradKernel is the row kernel over validated inputs.
func logSoftmaxGradKernel(prealloc G.Value, y *tensor.Dense, yd, dy []float64) (*tensor.Dense, int, func(lo, hi int), error) {
	n, k := shape2(y)
	t, out := output(prealloc, n, k)
	return t, 6 * n * k, func(lo, hi int) { logSoftmaxGradRows(yd, dy, out, k, lo, hi) }, nil
}

// logSoftmaxGradRows writes rows [lo, hi) of dy − softmax·Σdy, from the
// log-softmax y, into out.
func logSoftmaxGradRows(yd, dy, out []float64, k, lo, hi int) {
	vec.Exp(out[lo*k:hi*k], yd[lo*k:hi*k]) // softmax(z), math.Exp's bits
	for i := lo; i < hi; i++ {
		s := 0.0
		for _, v := range dy[i*k : (i+1)*k] {
			s += v
		}
		for c := 0; c < k; c++ {
			p := i*k + c
			out[p] = dy[p] - out[p]*s
		}
	}
}

var _ G.SDOp = logSoftmax
