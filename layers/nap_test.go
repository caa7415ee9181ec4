package layers

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// napOut runs NAP once on z (n×h) over adjacency a with noise std.
func napOut(t *testing.T, a *graphs.CSR, z []float64, h int, std float64, seed uint64) ([]float64, *NAP) {
	t.Helper()
	m := nn.NewModel(1)
	nap := NewNAP("nap", a, std, dp.NewSource(seed))
	var out *G.Node
	if err := nn.Build(func() error { out = nap.Forward(m.Input("Z", z, a.Rows, h)); return nil }); err != nil {
		t.Fatal(err)
	}
	r, err := m.NewRunner(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(); err != nil {
		t.Fatal(err)
	}
	return append([]float64(nil), nn.Values(out)...), nap
}

func randGraph(n int, p float64, seed uint64) *graphs.CSR {
	r := rand.New(rand.NewPCG(seed, 1))
	var src, dst []int
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i != j && r.Float64() < p {
				src, dst = append(src, i), append(dst, j)
			}
		}
	}
	return graphs.FromCOO(n, n, src, dst, nil)
}

func randZ(n, h int, zeroRow int) []float64 {
	r := rand.New(rand.NewPCG(9, 9))
	z := make([]float64, n*h)
	for i := range z {
		if i/h != zeroRow {
			z[i] = r.NormFloat64()
		}
	}
	return z
}

// TestNAPNoiselessIsNormalisedSum: NAP with σ = 0 equals Aᵀ·rownorm(Z), and
// a zero row contributes zero (no NaN).
func TestNAPNoiselessIsNormalisedSum(t *testing.T) {
	const n, h = 12, 4
	a := randGraph(n, 0.3, 1)
	z := randZ(n, h, 3)
	got, nap := napOut(t, a, z, h, 0, 1)
	if nap.Adj.Calls != 1 {
		t.Fatalf("adjacency products %d, want 1", nap.Adj.Calls)
	}
	for i := 0; i < n; i++ {
		for c := 0; c < h; c++ {
			want := 0.0
			for j := 0; j < n; j++ {
				cols, _ := a.Row(j)
				for _, k := range cols {
					if k == i {
						norm := 0.0
						for d := 0; d < h; d++ {
							norm += z[j*h+d] * z[j*h+d]
						}
						if norm > 0 {
							want += z[j*h+c] / math.Sqrt(norm)
						}
					}
				}
			}
			if v := got[i*h+c]; math.IsNaN(v) || math.Abs(v-want) > 1e-12 {
				t.Fatalf("NAP[%d,%d] = %v, want %v", i, c, v, want)
			}
		}
	}
}

// TestNAPEdgeSensitivity: adding one directed edge j→i changes only row i,
// by exactly ‖Z_j/‖Z_j‖‖ = 1 (or 0 when Z_j = 0).
func TestNAPEdgeSensitivity(t *testing.T) {
	const n, h = 10, 3
	a := randGraph(n, 0.25, 2)
	z := randZ(n, h, 5)
	base, _ := napOut(t, a, z, h, 0, 1)
	for _, e := range [][2]int{{0, 1}, {5, 2}, {7, 7}} {
		src, dst := []int{e[0]}, []int{e[1]}
		for i := 0; i < n; i++ {
			cols, _ := a.Row(i)
			for _, j := range cols {
				src, dst = append(src, i), append(dst, j)
			}
		}
		b, _ := napOut(t, graphs.FromCOO(n, n, src, dst, nil), z, h, 0, 1)
		for i := 0; i < n; i++ {
			d := 0.0
			for c := 0; c < h; c++ {
				d += (b[i*h+c] - base[i*h+c]) * (b[i*h+c] - base[i*h+c])
			}
			want := 0.0
			if i == e[1] && e[0] != 5 && !hasEdge(a, e[0], e[1]) {
				want = 1
			}
			if math.Abs(math.Sqrt(d)-want) > 1e-12 {
				t.Fatalf("edge %v: row %d changed by %v, want %v", e, i, math.Sqrt(d), want)
			}
		}
	}
}

func hasEdge(a *graphs.CSR, i, j int) bool {
	cols, _ := a.Row(i)
	for _, c := range cols {
		if c == j {
			return true
		}
	}
	return false
}

// TestNAPNodeSensitivityAfterDegreeBound: after bounding out-degrees to D,
// removing one node's edges changes the other rows by at most √D.
func TestNAPNodeSensitivityAfterDegreeBound(t *testing.T) {
	const n, h, d = 30, 4, 3
	a := graphs.BoundOutDegree(randGraph(n, 0.4, 3), d, 7)
	z := randZ(n, h, -1)
	base, _ := napOut(t, a, z, h, 0, 1)
	for v := 0; v < n; v++ {
		var src, dst []int
		for i := 0; i < n; i++ {
			cols, _ := a.Row(i)
			for _, j := range cols {
				if i != v && j != v {
					src, dst = append(src, i), append(dst, j)
				}
			}
		}
		b, _ := napOut(t, graphs.FromCOO(n, n, src, dst, nil), z, h, 0, 1)
		diff := 0.0
		for i := 0; i < n; i++ {
			if i == v {
				continue
			}
			for c := 0; c < h; c++ {
				diff += (b[i*h+c] - base[i*h+c]) * (b[i*h+c] - base[i*h+c])
			}
		}
		if math.Sqrt(diff) > math.Sqrt(d)+1e-12 {
			t.Fatalf("removing node %d changed the other rows by %v > √D = %v", v, math.Sqrt(diff), math.Sqrt(d))
		}
	}
}

// TestNAPNoiseStatistics: NAP(σ) − NAP(0) has mean ≈ 0 and std ≈ σ and
// noise in every row, including rows with no in-neighbours, both for an
// output drawn from one stream and for one long enough (> 16,384 values)
// to be drawn in parallel blocks from child streams.
func TestNAPNoiseStatistics(t *testing.T) {
	for _, n := range []int{400, 1500} {
		const h, std = 16, 2.5
		a := randGraph(n, 4/float64(n), 4)
		z := randZ(n, h, 0)
		clean, _ := napOut(t, a, z, h, 0, 1)
		noisy, nap := napOut(t, a, z, h, std, 2)
		if nap.Noise.Draws != 1 {
			t.Fatalf("n=%d: noise drawn %d times, want 1", n, nap.Noise.Draws)
		}
		sum, sq := 0.0, 0.0
		for i := 0; i < n; i++ {
			rowNoise := 0.0
			for c := 0; c < h; c++ {
				e := noisy[i*h+c] - clean[i*h+c]
				sum += e
				sq += e * e
				rowNoise += math.Abs(e)
			}
			if rowNoise == 0 {
				t.Fatalf("n=%d: row %d has no noise", n, i)
			}
		}
		cnt := float64(n * h)
		mean := sum / cnt
		sd := math.Sqrt(sq/cnt - mean*mean)
		if math.Abs(mean) > 4*std/math.Sqrt(cnt) || math.Abs(sd-std) > 4*std/math.Sqrt(2*cnt) {
			t.Fatalf("n=%d: noise mean %v std %v, want 0 and %v", n, mean, sd, std)
		}
	}
}
