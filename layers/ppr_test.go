package layers

import (
	"math"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
)

// pprGraph is a weighted 6-node graph: a path 0-1-2-3 with a heavy edge
// (0,1), a chord 1-3, node 4 linked to 2, node 5 isolated.
func pprGraph() *graphs.CSR {
	edges := map[[2]int]float64{{0, 1}: 3, {1, 2}: 1, {2, 3}: 1, {1, 3}: 1, {2, 4}: 1}
	a := &graphs.CSR{Rows: 6, Cols: 6, Indptr: []int{0}}
	for i := range 6 {
		for j := range 6 {
			v, ok := edges[[2]int{i, j}]
			if !ok {
				v, ok = edges[[2]int{j, i}]
			}
			if ok {
				a.Indices = append(a.Indices, j)
				a.Data = append(a.Data, v)
			}
		}
		a.Indptr = append(a.Indptr, len(a.Indices))
	}
	return a
}

// TestPPRClosedForm checks Z_m against Σ_{p<m} α((1−α)W)^p X + ((1−α)W)^m X
// with dense products, for m = 0..4, and the converged propagation against
// the fixed point α(I − (1−α)W)^{-1} X, which it satisfies to PPRTol.
func TestPPRClosedForm(t *testing.T) {
	w := graphs.RowNorm(pprGraph())
	n, k, alpha := 6, 3, 0.25
	dense := make([]float64, n*n)
	for i := range n {
		for p := w.Indptr[i]; p < w.Indptr[i+1]; p++ {
			dense[i*n+w.Indices[p]] = (1 - alpha) * w.Data[p]
		}
	}
	mul := func(x []float64) []float64 {
		y := make([]float64, n*k)
		for i := range n {
			for j := range n {
				for c := range k {
					y[i*k+c] += dense[i*n+j] * x[j*k+c]
				}
			}
		}
		return y
	}
	x := make([]float64, n*k)
	for i := range x {
		x[i] = math.Sin(float64(i)) + 0.1*float64(i%5)
	}
	for m := 0; m <= 4; m++ {
		want := make([]float64, n*k)
		pow := append([]float64(nil), x...)
		for range m {
			for i := range want {
				want[i] += alpha * pow[i]
			}
			pow = mul(pow)
		}
		for i := range want {
			want[i] += pow[i]
		}
		got, err := PPR(w, x, k, alpha, m)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-13 {
				t.Fatalf("m=%d: Z[%d] = %v, closed form %v", m, i, got[i], want[i])
			}
		}
	}
	z, err := PPR(w, x, k, alpha, PPRConverge)
	if err != nil {
		t.Fatal(err)
	}
	fz := mul(z) // z = (1−α)Wz + αx at the fixed point
	for i := range z {
		if r := math.Abs(fz[i] + alpha*x[i] - z[i]); r > 1e-11 {
			t.Fatalf("converged Z[%d] = %v has fixed-point residual %v", i, z[i], r)
		}
	}
	for _, tc := range []struct {
		name  string
		x     []float64
		k     int
		alpha float64
		steps int
	}{
		{"shape", x[:5], k, alpha, 2},
		{"k 0", nil, 0, alpha, 2},
		{"alpha", x, k, 1.5, 2},
		{"steps", x, k, alpha, -2},
	} {
		if _, err := PPR(w, tc.x, tc.k, tc.alpha, tc.steps); err == nil {
			t.Errorf("%s: want an error", tc.name)
		}
	}
	if _, err := PPR(&graphs.CSR{Rows: 1, Cols: 2, Indptr: []int{0, 0}}, []float64{1}, 1, alpha, 1); err == nil {
		t.Error("non-square: want an error")
	}
}
