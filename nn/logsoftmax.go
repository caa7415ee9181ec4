package nn

import (
	"math"

	"github.com/dpgnn/dpgnn/internal/vec"
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
	// The shifted values z − max per row (in out), all their exponentials
	// at once (vec.Exp: math.Exp's bits), then each row's sum in order.
	sp := getScratch(n*k + n)
	defer putScratch(sp)
	e, mxs := (*sp)[:n*k], (*sp)[n*k:]
	for i := 0; i < n; i++ {
		r, o := xd[i*k:(i+1)*k], out[i*k:(i+1)*k]
		// The largest entry by plain comparison: where it differs from
		// math.Max (a NaN in the row, the sign of a zero maximum) the
		// outputs do not: a NaN makes the row's sum and every output NaN
		// either way, and ±0 shifts and adds as 0.
		mx := math.Inf(-1)
		for _, v := range r {
			if v > mx {
				mx = v
			}
		}
		for c, v := range r {
			o[c] = v - mx
		}
		mxs[i] = mx
	}
	vec.Exp(e, out[:n*k])
	for i := 0; i < n; i++ {
		s := 0.0
		for _, v := range e[i*k : (i+1)*k] {
			s += v
		}
		lse := mxs[i] + math.Log(s)
		o := out[i*k : (i+1)*k]
		for c, v := range xd[i*k : (i+1)*k] {
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
	vec.Exp(out[:n*k], yd[:n*k]) // softmax(z), math.Exp's bits
	for i := 0; i < n; i++ {
		s := 0.0
		for _, v := range dy[i*k : (i+1)*k] {
			s += v
		}
		for c := 0; c < k; c++ {
			p := i*k + c
			out[p] = dy[p] - out[p]*s
		}
	}
	return t, nil
}

var _ G.SDOp = logSoftmax
