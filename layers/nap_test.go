package layers

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/degree"
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

// TestNAPNodeSensitivityPublicBound: on raw graphs whose out-degrees are
// within a public bound D, removing one node (with all its edges, from the
// raw graph: nothing is bounded afterwards) changes the other rows by at
// most √D, and a hub with D out-neighbours and aligned embeddings attains
// it.
func TestNAPNodeSensitivityPublicBound(t *testing.T) {
	const n, h = 30, 4
	for seed := uint64(3); seed < 6; seed++ {
		a := randGraph(n, 0.4, seed)
		_, d := degree.Excess(a, 0)
		if err := degree.CheckRows(a, d); err != nil {
			t.Fatal(err)
		}
		for _, z := range [][]float64{randZ(n, h, -1), alignedZ(n, h)} {
			base, _ := napOut(t, a, z, h, 0, 1)
			worst := 0.0
			for v := 0; v < n; v++ {
				b, _ := napOut(t, graphs.RemoveNode(a, v), z, h, 0, 1)
				worst = math.Max(worst, otherRowsDiff(base, b, v, n, h))
			}
			if worst > math.Sqrt(float64(d))+1e-12 {
				t.Fatalf("seed %d: removing a node changed the other rows by %v > √D = %v", seed, worst, math.Sqrt(float64(d)))
			}
		}
	}
	// A hub 0 → 1..D with aligned embeddings is the worst case: exactly √D.
	const d = 7
	var src, dst []int
	for j := 1; j <= d; j++ {
		src, dst = append(src, 0), append(dst, j)
	}
	hub := graphs.FromCOO(n, n, src, dst, nil)
	z := alignedZ(n, h)
	base, _ := napOut(t, hub, z, h, 0, 1)
	b, _ := napOut(t, graphs.RemoveNode(hub, 0), z, h, 0, 1)
	if got := otherRowsDiff(base, b, 0, n, h); math.Abs(got-math.Sqrt(d)) > 1e-12 {
		t.Fatalf("hub removal changed the other rows by %v, want √%d", got, d)
	}
}

// alignedZ has every row equal to the first unit vector.
func alignedZ(n, h int) []float64 {
	z := make([]float64, n*h)
	for i := 0; i < n; i++ {
		z[i*h] = 1
	}
	return z
}

// otherRowsDiff is the Frobenius norm of a − b over the rows other than v.
func otherRowsDiff(a, b []float64, v, n, h int) float64 {
	diff := 0.0
	for i := 0; i < n; i++ {
		if i == v {
			continue
		}
		for c := 0; c < h; c++ {
			diff += (b[i*h+c] - a[i*h+c]) * (b[i*h+c] - a[i*h+c])
		}
	}
	return math.Sqrt(diff)
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
