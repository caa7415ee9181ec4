package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The loss ops give gorgonia's composition's bits: the per-row NLL (with
// padding rows of zero targets), its sum and mean, their gradients in the
// logits and in a probe added to them (DP-SGD's), and a sum of vectors,
// over two runs with different values (SumAll reuses its scalar).
func TestLossOpsMatchGorgonia(t *testing.T) {
	const n, c = 13, 5
	r := rand.New(rand.NewPCG(3, 4))
	values := func() (z, tg []float64) {
		z = make([]float64, n*c)
		for i := range z {
			z[i] = 4 * r.NormFloat64()
		}
		z[7] = math.Copysign(0, -1)
		tg = make([]float64, n*c)
		for i := range n - 3 { // three padding rows
			tg[i*c+r.IntN(c)] = 1
		}
		return z, tg
	}
	eval := func(ours, useMean bool, runs [][2][]float64) [][]float64 {
		g := G.NewGraph()
		z := G.NewMatrix(g, G.Float64, G.WithShape(n, c), G.WithName("z"), G.WithValue(tensor.New(tensor.WithShape(n, c), tensor.WithBacking(make([]float64, n*c)))))
		p := G.NewMatrix(g, G.Float64, G.WithShape(n, c), G.WithName("p"), G.WithValue(tensor.New(tensor.WithShape(n, c), tensor.WithBacking(make([]float64, n*c)))))
		tg := G.NewMatrix(g, G.Float64, G.WithShape(n, c), G.WithName("t"), G.WithValue(tensor.New(tensor.WithShape(n, c), tensor.WithBacking(make([]float64, n*c)))))
		cnt := G.NewScalar(g, G.Float64, G.WithName("count"), G.WithValue(float64(n-3)))
		var y, per, sum, sq *G.Node
		if ours {
			y = G.Must(Add(z, p))
			per = G.Must(NLLRows(G.Must(LogSoftmax(y)), tg))
			sum = G.Must(SumAll(per))
			sq = G.Must(Add(G.Must(Add(per, RowSums(z))), RowSums(p)))
		} else {
			y = G.Must(G.Add(z, p))
			per = G.Must(G.Neg(RowSums(G.Must(G.HadamardProd(G.Must(LogSoftmax(y)), tg)))))
			sum = G.Must(G.Sum(per))
			sq = G.Must(G.ReduceAdd(G.Nodes{per, RowSums(z), RowSums(p)}))
		}
		mean := G.Must(G.Div(sum, cnt))
		var out [][]float64
		cost := sum
		if useMean {
			cost = mean
		}
		{
			if _, err := G.Grad(cost, z, p); err != nil {
				t.Fatal(err)
			}
			vm := G.NewTapeMachine(g)
			for _, run := range runs {
				G.Let(z, tensor.New(tensor.WithShape(n, c), tensor.WithBacking(append([]float64(nil), run[0]...))))
				G.Let(tg, tensor.New(tensor.WithShape(n, c), tensor.WithBacking(append([]float64(nil), run[1]...))))
				if err := vm.RunAll(); err != nil {
					t.Fatal(err)
				}
				out = append(out, append([]float64(nil), per.Value().Data().([]float64)...),
					[]float64{ScalarValue(sum), ScalarValue(mean)},
					append([]float64(nil), sq.Value().Data().([]float64)...),
					append([]float64(nil), y.Value().Data().([]float64)...))
				for _, leaf := range []*G.Node{z, p} {
					gv, err := leaf.Grad()
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, append([]float64(nil), gv.Data().([]float64)...))
				}
				vm.Reset()
			}
			vm.Close()
		}
		return out
	}
	z1, t1 := values()
	z2, t2 := values()
	runs := [][2][]float64{{z1, t1}, {z2, t2}}
	ours := append(eval(true, false, runs), eval(true, true, runs)...)
	theirs := append(eval(false, false, runs), eval(false, true, runs)...)
	if len(ours) != len(theirs) {
		t.Fatalf("%d results against %d", len(ours), len(theirs))
	}
	for k := range ours {
		if len(ours[k]) != len(theirs[k]) {
			t.Fatalf("result %d: %d values against %d", k, len(ours[k]), len(theirs[k]))
		}
		for i := range ours[k] {
			if math.Float64bits(ours[k][i]) != math.Float64bits(theirs[k][i]) {
				t.Fatalf("result %d[%d]: ours %v, gorgonia's %v", k, i, ours[k][i], theirs[k][i])
			}
		}
	}
}
