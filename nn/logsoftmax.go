package nn

import (
	"math"

	G "gorgonia.org/gorgonia"
)

// logSoftmaxOp is a row-wise log-softmax, z_ij − log Σ_k exp(z_ik), computed
// with the max shift. Its gradient is dx = dy − softmax(z)·Σ_j dy_j per row.
// (gorgonia's LogSoftMax starts a goroutine per row, which dominated the
// cost of a full-batch epoch on small graphs.)
type logSoftmaxOp struct{ labelled }

var logSoftmax = logSoftmaxOp{labelled{label: "LogSoftmaxRows", arity: 1}}

// LogSoftmax returns the row-wise log-softmax of a (N, C) matrix.
func LogSoftmax(x *G.Node) (*G.Node, error) { return G.ApplyOp(logSoftmax, x) }

func (logSoftmaxOp) DiffWRT(int) []bool { return []bool{true} }

func (op logSoftmaxOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

func (logSoftmaxOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	x, xd, err := denseF64(vals[0], "LogSoftmax")
	if err != nil {
		return nil, err
	}
	n, k := shape2(x)
	t, out := output(prealloc, n, k)
	for i := 0; i < n; i++ {
		r := xd[i*k : (i+1)*k]
		mx := math.Inf(-1)
		for _, v := range r {
			mx = math.Max(mx, v)
		}
		s := 0.0
		for _, v := range r {
			s += math.Exp(v - mx)
		}
		lse := mx + math.Log(s)
		o := out[i*k : (i+1)*k]
		for c, v := range r {
			o[c] = v - lse
		}
	}
	return t, nil
}

func (logSoftmaxOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	return gradient(G.ApplyOp(logSoftmaxGradOp{labelled{label: "LogSoftmaxRowsGrad", arity: 2}}, output, grad))
}

// logSoftmaxGradOp takes (y = log-softmax output, dy).
type logSoftmaxGradOp struct{ labelled }

func (op logSoftmaxGradOp) Do(vals ...G.Value) (G.Value, error) {
	return op.UsePreallocDo(nil, vals...)
}

func (logSoftmaxGradOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	y, yd, _, dy, err := densePair(vals, "LogSoftmaxGrad")
	if err != nil {
		return nil, err
	}
	n, k := shape2(y)
	t, out := output(prealloc, n, k)
	for i := 0; i < n; i++ {
		s := 0.0
		for _, v := range dy[i*k : (i+1)*k] {
			s += v
		}
		for c := 0; c < k; c++ {
			p := i*k + c
			out[p] = dy[p] - math.Exp(yd[p])*s
		}
	}
	return t, nil
}

var _ G.SDOp = logSoftmax
