package dpar

import (
	"math"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
)

// pprTestGraph is DPAR's ISTA test graph: 8 nodes, undirected edges
// (0,1),(1,2),(2,0),(2,3),(3,4),(4,5),(5,3),(1,6),(6,7), a self-loop on
// every node when loops is set.
func pprTestGraph(loops bool) *graphs.CSR {
	edges := [][2]int{{0, 1}, {1, 2}, {2, 0}, {2, 3}, {3, 4}, {4, 5}, {5, 3}, {1, 6}, {6, 7}}
	var src, dst []int
	for _, e := range edges {
		src = append(src, e[0], e[1])
		dst = append(dst, e[1], e[0])
	}
	if loops {
		for i := 0; i < 8; i++ {
			src, dst = append(src, i), append(dst, i)
		}
	}
	return graphs.FromCOO(8, 8, src, dst, nil)
}

// pprStar is the exact p* = α'(I − (1−α')AD⁻¹)⁻¹e₀ of pprTestGraph, α' = 0.4.
var pprStar = []float64{0.563671, 0.170847, 0.168733, 0.033747, 0.008437, 0.008437, 0.035878, 0.010251}

// TestISTAReproducesPPR checks ISTA on DPAR's test graph against reference
// vectors recomputed from the authors' code (source 0, α = 0.25,
// γ = 1e-4): the iterates, the iteration counts, and convergence to the
// exact PPR vector with teleport 2α/(1+α) = 0.4 as ρ → 0.
func TestISTAReproducesPPR(t *testing.T) {
	for _, tc := range []struct {
		rho   float64
		iters int
		want  []float64 // nil: compare with pprStar
		sum   float64
		tol   float64 // absolute, per entry
	}{
		{1e-2, 139, []float64{0.53438, 0.132342, 0.131024, 0.004298, 0, 0, 0.009814, 0}, 0.811858, 5e-7},
		{1e-4, 211, []float64{0.563371, 0.170447, 0.168333, 0.033347, 0.008137, 0.008137, 0.035578, 0.010051}, 0.9974, 5e-7},
		{1e-6, 274, nil, 1, 5e-6},
	} {
		p, iters, err := ISTAPPR(pprTestGraph(true), 0, ISTAParams{Alpha: 0.25, Rho: tc.rho, Tol: 1e-4, MaxIter: 10000})
		if err != nil {
			t.Fatal(err)
		}
		if iters != tc.iters {
			t.Errorf("ρ=%g: %d iterations, want %d", tc.rho, iters, tc.iters)
		}
		want := tc.want
		if want == nil {
			want = pprStar
		}
		d := p.Dense()
		sum := 0.0
		for i, v := range d {
			sum += v
			if math.Abs(v-want[i]) > tc.tol {
				t.Errorf("ρ=%g: p[%d] = %.7f, want %.6f", tc.rho, i, v, want[i])
			}
		}
		if math.Abs(sum-tc.sum) > 1e-4 {
			t.Errorf("ρ=%g: Σp = %.6f, want %.6f", tc.rho, sum, tc.sum)
		}
		for k, i := range p.Indices {
			if p.Values[k] <= 0 || (k > 0 && i <= p.Indices[k-1]) {
				t.Fatalf("ρ=%g: SparseVec not sorted and positive: %+v", tc.rho, p)
			}
		}
	}
	// A graph without self-loops gets them, as in DPAR's code.
	a, _, _ := ISTAPPR(pprTestGraph(false), 0, ISTAParams{Alpha: 0.25, Rho: 1e-4, Tol: 1e-4, MaxIter: 10000})
	b, _, _ := ISTAPPR(pprTestGraph(true), 0, ISTAParams{Alpha: 0.25, Rho: 1e-4, Tol: 1e-4, MaxIter: 10000})
	if !sameFloats(a.Dense(), b.Dense()) {
		t.Error("missing self-loops were not added")
	}
}

func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestExactPPR checks the power iteration against DPAR's p* and the
// closed-form fixed point.
func TestExactPPR(t *testing.T) {
	p, _, err := ExactPPR(pprTestGraph(true), 0, 0.4, 1e-13, 1000)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for i, v := range p {
		sum += v
		if math.Abs(v-pprStar[i]) > 5e-7 {
			t.Errorf("p*[%d] = %.7f, want %.6f", i, v, pprStar[i])
		}
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Errorf("Σp* = %v, want 1", sum)
	}
	// Fixed point p = α e_s + (1−α) A D⁻¹ p, with a dense A.
	a := denseOf(pprTestGraph(true))
	for i := 0; i < 8; i++ {
		r := 0.0
		for j := 0; j < 8; j++ {
			deg := 0.0
			for k := 0; k < 8; k++ {
				deg += a[k*8+j]
			}
			r += 0.6 * a[i*8+j] * p[j] / deg
		}
		if i == 0 {
			r += 0.4
		}
		if math.Abs(r-p[i]) > 1e-12 {
			t.Errorf("fixed point row %d: %v vs %v", i, r, p[i])
		}
	}
}

// istaGradient is the closed-form gradient of DPAR §3.1:
// g(p) = ((1+α)/2) D⁻¹p − ((1−α)/2) D⁻¹AD⁻¹p − α D⁻¹e_s (A with self-loops).
func istaGradient(a *graphs.CSR, p []float64, alpha float64, s int) []float64 {
	deg := a.RowSums()
	g := make([]float64, len(p))
	for i := range p {
		acc := 0.0
		for k := a.Indptr[i]; k < a.Indptr[i+1]; k++ {
			j := a.Indices[k]
			acc += p[j] / deg[j]
		}
		g[i] = 0.5*(1+alpha)*p[i]/deg[i] - 0.5*(1-alpha)*acc/deg[i]
	}
	g[s] -= alpha / deg[s]
	return g
}

// TestISTAProperties checks, on DPAR's test graph and on a larger random
// graph, that every iterate is non-negative and non-decreasing, Σp ≤ 1, the
// incremental gradient equals the closed form at every iteration, and
// ‖p − p*‖∞ shrinks as ρ → 0 (p* the PPR with teleport 2α/(1+α)).
func TestISTAProperties(t *testing.T) {
	ring := ringWithChords(300)
	for _, tc := range []struct {
		name  string
		a     *graphs.CSR
		src   int
		alpha float64
	}{
		{"DPAR graph", pprTestGraph(true), 0, 0.25},
		{"DPAR graph, source 4", pprTestGraph(true), 4, 0.1},
		{"ring with chords", ring, 17, 0.25},
	} {
		pstar, _, err := ExactPPR(tc.a, tc.src, 2*tc.alpha/(1+tc.alpha), 1e-14, 100000)
		if err != nil {
			t.Fatal(err)
		}
		prevErr := math.Inf(1)
		for _, rho := range []float64{1e-2, 1e-3, 1e-4, 1e-5, 1e-6} {
			s, err := NewISTA(tc.a, ISTAParams{Alpha: tc.alpha, Rho: rho, Tol: 1e-4, MaxIter: 100000})
			if err != nil {
				t.Fatal(err)
			}
			prev := make([]float64, s.N())
			iters := 0
			s.trace = func(p, g []float64) {
				iters++
				sum := 0.0
				for i, v := range p {
					if v < 0 || v < prev[i] {
						t.Fatalf("%s ρ=%g iteration %d: p[%d] = %g (was %g)", tc.name, rho, iters, i, v, prev[i])
					}
					sum += v
				}
				if sum > 1+1e-12 {
					t.Fatalf("%s ρ=%g iteration %d: Σp = %v > 1", tc.name, rho, iters, sum)
				}
				copy(prev, p)
				want := istaGradient(s.adj, p, tc.alpha, tc.src)
				for i := range g {
					if math.Abs(g[i]-want[i]) > 1e-14 {
						t.Fatalf("%s ρ=%g iteration %d: g[%d] = %.17g, closed form %.17g", tc.name, rho, iters, i, g[i], want[i])
					}
				}
			}
			p, n, err := s.Solve(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			if n != iters {
				t.Errorf("%s: Solve reports %d iterations, traced %d", tc.name, n, iters)
			}
			d := p.Dense()
			e := 0.0
			for i := range d {
				e = math.Max(e, math.Abs(d[i]-pstar[i]))
			}
			if e > prevErr {
				t.Errorf("%s: ‖p − p*‖∞ grew from %g to %g at ρ=%g", tc.name, prevErr, e, rho)
			}
			prevErr = e
		}
		if prevErr > 1e-4 {
			t.Errorf("%s: ‖p − p*‖∞ = %g at ρ = 1e-6", tc.name, prevErr)
		}
	}
}

// ringWithChords is an n-cycle with chords i ~ i+7 every third node,
// self-loops included.
func ringWithChords(n int) *graphs.CSR {
	var src, dst []int
	add := func(i, j int) { src, dst = append(src, i, j), append(dst, j, i) }
	for i := 0; i < n; i++ {
		add(i, (i+1)%n)
		if i%3 == 0 {
			add(i, (i+7)%n)
		}
	}
	return graphs.AddSelfLoops(graphs.FromCOO(n, n, src, dst, nil), 1)
}

// TestISTASupportCost checks that the work of Solve follows the support, not
// N: on a long path with a large ρ the touched set stays tiny.
func TestISTASupportCost(t *testing.T) {
	const n = 200000
	var src, dst []int
	for i := 0; i+1 < n; i++ {
		src, dst = append(src, i, i+1), append(dst, i+1, i)
	}
	s, err := NewISTA(graphs.FromCOO(n, n, src, dst, nil), ISTAParams{Alpha: 0.25, Rho: 1e-3, Tol: 1e-4, MaxIter: 1000})
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := s.Solve(n / 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Indices) == 0 || len(p.Indices) > 40 {
		t.Errorf("support of %d nodes on a path, want a handful", len(p.Indices))
	}
}

func TestISTAErrors(t *testing.T) {
	good := pprTestGraph(true)
	ok := DPARISTAParams()
	weighted := good.Clone()
	weighted.Data = make([]float64, weighted.NNZ())
	for k := range weighted.Data {
		weighted.Data[k] = 2
	}
	directed := graphs.FromCOO(3, 3, []int{0, 1}, []int{1, 2}, nil)
	for _, tc := range []struct {
		name   string
		a      *graphs.CSR
		p      ISTAParams
		source int
		want   string
	}{
		{"alpha 0", good, ISTAParams{0, 1e-4, 1e-4, 10, false}, 0, "alpha"},
		{"alpha 1", good, ISTAParams{1, 1e-4, 1e-4, 10, false}, 0, "alpha"},
		{"negative alpha", good, ISTAParams{-0.25, 1e-4, 1e-4, 10, false}, 0, "alpha"},
		{"rho 0", good, ISTAParams{0.25, 0, 1e-4, 10, false}, 0, "rho"},
		{"NaN tol", good, ISTAParams{0.25, 1e-4, math.NaN(), 10, false}, 0, "gamma"},
		{"max iter 0", good, ISTAParams{0.25, 1e-4, 1e-4, 0, false}, 0, "iteration cap"},
		{"source", good, ok, 8, "source 8"},
		{"negative source", good, ok, -1, "source -1"},
		{"weighted", weighted, ok, 0, "unweighted"},
		{"directed", directed, ok, 0, "symmetric"},
		{"not square", &graphs.CSR{Rows: 2, Cols: 3, Indptr: []int{0, 0, 0}}, ok, 0, "square"},
		{"nil", nil, ok, 0, "nil"},
		{"no convergence", good, ISTAParams{0.25, 1e-6, 1e-4, 5, false}, 0, "did not converge"},
	} {
		_, _, err := ISTAPPR(tc.a, tc.source, tc.p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
	// KeepLast: the cap returns the last iterate, non-negative, instead of
	// an error; the same call with a larger cap goes on from it.
	last, it, err := ISTAPPR(good, 0, ISTAParams{0.25, 1e-6, 1e-4, 5, true})
	if err != nil || it != 5 || len(last.Indices) == 0 {
		t.Fatalf("KeepLast at the cap: %d iterations, %d entries, err %v", it, len(last.Indices), err)
	}
	for _, v := range last.Values {
		if !(v > 0) {
			t.Fatalf("KeepLast iterate has entry %v", v)
		}
	}
	if _, _, err := ExactPPR(good, 0, 0, 1e-9, 10); err == nil {
		t.Error("ExactPPR(alpha 0): want an error")
	}
	if _, _, err := ExactPPR(good, 0, 0.4, 1e-15, 3); err == nil {
		t.Error("ExactPPR with 3 iterations: want a convergence error")
	}
}

// denseOf returns m as a dense row-major matrix.
func denseOf(m *graphs.CSR) []float64 {
	d := make([]float64, m.Rows*m.Cols)
	for i := 0; i < m.Rows; i++ {
		for k := m.Indptr[i]; k < m.Indptr[i+1]; k++ {
			d[i*m.Cols+m.Indices[k]] += m.Value(k)
		}
	}
	return d
}
