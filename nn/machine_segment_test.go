package nn_test

// The fourteenth outside audit of issue 38: nn's machine runs a chain of row-wise steps (a segment) block of
// rows by block. A row-wise op may read a WHOLE input computed before the
// chain (matMulOp's B). If that whole input's last reader is the chain's
// op A, its slot is freed at A and a later op B of the SAME chain, with an
// output of the same size, reuses it. Block 1 then runs A (reading V whole)
// and B (writing block 1's rows of B's output into V's buffer); block 2's A
// reads V already overwritten by block 1's rows of B: rows of block 2 read
// data of the rows (examples) in block 1 (192 of 256 outputs were wrong).
// Now no step writes into a slot its chain reads whole.

import (
	"math"
	"testing"

	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func segslotConst(m *nn.Model, name string, r, c int, f func(i, j int) float64) *G.Node {
	v := make([]float64, r*c)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			v[i*c+j] = f(i, j)
		}
	}
	return G.NewConstant(tensor.New(tensor.WithShape(r, c), tensor.WithBacking(v)), G.WithName(name), G.In(m.G))
}

// segslotLeaf is a leaf (an input node without op) holding f.
func segslotLeaf(m *nn.Model, name string, r, c int, f func(i, j int) float64) *G.Node {
	v := make([]float64, r*c)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			v[i*c+j] = f(i, j)
		}
	}
	return m.Input(name, v, r, c)
}

// matmul is a plain reference product.
func segslotMul(a []float64, ar, ac int, b []float64, bc int) []float64 {
	out := make([]float64, ar*bc)
	for i := 0; i < ar; i++ {
		for j := 0; j < bc; j++ {
			s := 0.0
			for k := 0; k < ac; k++ {
				s += a[i*ac+k] * b[k*bc+j]
			}
			out[i*bc+j] = s
		}
	}
	return out
}

func TestSegmentKeepsWholeInputs(t *testing.T) {
	const rows, d, wide, mid, outc = 64, 8, 512, 64, 4
	m := nn.NewModel(1)
	x := m.Input("X", make([]float64, rows*d), rows, d)
	fW := func(i, j int) float64 { return math.Sin(float64(3*i + j + 1)) }
	fK1 := func(i, j int) float64 { return math.Cos(float64(i + 2*j)) }
	fK2 := func(i, j int) float64 { return math.Sin(float64(i*j + 1)) }
	fU := func(i, j int) float64 { return math.Cos(float64(i + j + 3)) }
	fU2 := func(i, j int) float64 { return math.Sin(float64(2*i + j)) }
	var out *G.Node
	err := nn.Build(func() error {
		W := segslotConst(m, "W", d, wide, fW)
		h := nn.MatMul(x, W)                                                                    // rows×512
		V := nn.MatMul(segslotConst(m, "K1", wide, 4, fK1), segslotConst(m, "K2", 4, mid, fK2)) // 512×64: whole, same size as rows×512
		a := nn.MatMul(nn.ReLU(h), V)                                                           // rows×64, reads V whole (its last reader)
		b := nn.MatMul(a, segslotLeaf(m, "U", mid, wide, fU))                                   // rows×512: same size as V
		out = nn.MatMul(b, segslotLeaf(m, "U2", wide, outc, fU2))                               // rows×4, kept
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := m.NewRunner(out)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(r, c int, f func(i, j int) float64) []float64 {
		v := make([]float64, r*c)
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				v[i*c+j] = f(i, j)
			}
		}
		return v
	}
	W, K1, K2, U, U2 := mk(d, wide, fW), mk(wide, 4, fK1), mk(4, mid, fK2), mk(mid, wide, fU), mk(wide, outc, fU2)
	V := segslotMul(K1, wide, 4, K2, mid)
	var last40 []float64
	for trial, row0 := range []float64{1, 1000} {
		xv := make([]float64, rows*d)
		for i := range xv {
			xv[i] = math.Sin(float64(i) * 0.37)
		}
		for j := 0; j < d; j++ {
			xv[j] = row0 // only row 0 changes between the trials
		}
		copy(nn.Values(x), xv)
		if err := r.Run(); err != nil {
			t.Fatal(err)
		}
		got := append([]float64(nil), nn.Values(out)...)
		h := segslotMul(xv, rows, d, W, wide)
		for i := range h {
			h[i] = math.Max(h[i], 0)
		}
		want := segslotMul(segslotMul(segslotMul(h, rows, wide, V, mid), rows, mid, U, wide), rows, wide, U2, outc)
		bad := 0
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-6*(1+math.Abs(want[i])) {
				bad++
			}
		}
		for r := 0; r < rows; r += 8 {
			t.Logf("row %2d: got %.6g want %.6g", r, got[r*outc], want[r*outc])
		}
		t.Logf("trial %d (row 0 = %v): %d of %d entries differ from the reference; row 40 got %v want %v", trial, row0, bad, len(want), got[40*outc:41*outc], want[40*outc:41*outc])
		if bad > 0 {
			t.Errorf("machine result differs from the plain product in %d entries", bad)
		}
		if trial == 1 {
			same := true
			for j := range last40 {
				if last40[j] != got[40*outc+j] {
					same = false
				}
			}
			if !same {
				t.Errorf("row 40's output changed when only row 0's input changed: %v -> %v", last40, got[40*outc:41*outc])
			}
		}
		last40 = append([]float64(nil), got[40*outc:41*outc]...)
	}
}
