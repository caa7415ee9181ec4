package nn

import (
	"fmt"

	G "gorgonia.org/gorgonia"
)

// zeroRowsOp is ZeroRowsWhereZero: x with every row r for which row r of
// cd is entirely zero replaced by zeros (selected, not multiplied).
type zeroRowsOp struct{ labelled }

// ZeroRowsWhereZero returns x (N, d) with row r set to exactly 0 wherever
// row r of cd (N, k) is entirely 0, and unchanged elsewhere. The per-sample
// rules apply it to their inputs before a clipped sum Σ_r x_rᵀ·cd_r: a row
// of a clipped-out example (clip factor 0, ScaleRows' zero row) then adds
// exactly 0 even when x_r is infinite or NaN (0·Inf is NaN), and for a
// finite x_r it changes nothing (x_rᵀ·0 = 0). It has no gradient: it is
// used only in DP-SGD's clipped sums, which are not differentiated.
func ZeroRowsWhereZero(x, cd *G.Node) (*G.Node, error) {
	if xs, cs := x.Shape(), cd.Shape(); len(xs) != 2 || len(cs) != 2 || xs[0] != cs[0] {
		return nil, fmt.Errorf("nn: ZeroRowsWhereZero of shapes %v and %v", xs, cs)
	}
	return G.ApplyOp(zeroRowsOp{labelled{label: "ZeroRowsWhereZero", arity: 2}}, x, cd)
}

func (zeroRowsOp) DiffWRT(int) []bool { return []bool{false, false} }

func (op zeroRowsOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

func (zeroRowsOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	x, xd, c, cd, err := densePair(vals, "ZeroRowsWhereZero")
	if err != nil {
		return nil, err
	}
	n, d := shape2(x)
	cn, k := shape2(c)
	if cn != n {
		return nil, fmt.Errorf("nn: ZeroRowsWhereZero of (%d, %d) and (%d, %d)", n, d, cn, k)
	}
	t, out := output(prealloc, n, d)
	for r := 0; r < n; r++ {
		zero := true
		for _, v := range cd[r*k : (r+1)*k] {
			if v != 0 {
				zero = false
				break
			}
		}
		if zero {
			clear(out[r*d : (r+1)*d])
		} else {
			copy(out[r*d:(r+1)*d], xd[r*d:(r+1)*d])
		}
	}
	return t, nil
}
