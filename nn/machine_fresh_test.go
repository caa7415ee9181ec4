package nn_test

// The thirteenth outside audit of issue 38: nn's machine gave every op
// implementing gorgonia's UsePreallocDoer a reused buffer, and gorgonia's
// BatchNorm scales that buffer in place as if it held its input: BatchNorm
// of a constant Q returned what the buffer last held (here the product
// X·X of this run), and on a DP-SGD path one example's data reached every
// other's gradient (6.58·C for a declared C). The machine now preallocates
// only for ops that write their whole output (isPrealloc); X·BN(Q) must be
// X·Q for every X.

import (
	"testing"

	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func TestMachineRunsBufferReadingOpsFresh(t *testing.T) {
	c := func(m *nn.Model, name string, data ...float64) *G.Node {
		return G.NewConstant(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking(data)), G.WithName(name), G.In(m.G))
	}
	m := nn.NewModel(1)
	x := m.Input("X", []float64{3, 5, 7, 11}, 2, 2)
	var out *G.Node
	err := nn.Build(func() error {
		a := nn.MatMul(x, c(m, "I", 1, 0, 0, 1)) // a = X (2×2), freed after its reader b
		b := nn.MatMul(a, c(m, "I2", 1, 0, 0, 1))
		q := c(m, "Q", 1, 1, -1, -1) // columns of mean 0, variance 1: BN(Q) = Q exactly
		bn, _, _, _, err := G.BatchNorm(q, c(m, "ones", 1, 1, 1, 1), c(m, "zeros", 0, 0, 0, 0), 0.9, 1e-300)
		if err != nil {
			return err
		}
		out = nn.MatMul(b, bn) // X·BN(Q): should be X·Q
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := m.NewRunner(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, xv := range [][]float64{{3, 5, 7, 11}, {1, 2, 3, 4}} {
		copy(nn.Values(x), xv)
		if err := r.Run(); err != nil {
			t.Fatal(err)
		}
		got := nn.Values(out)
		want := []float64{xv[0] - xv[1], xv[0] - xv[1], xv[2] - xv[3], xv[2] - xv[3]} // X·Q
		t.Logf("X = %v: X·BN(Q) = %v, want X·Q = %v", xv, got, want)
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("BN of a constant read a stale buffer: X·BN(Q) = %v, want %v", got, want)
				break
			}
		}
	}
}
