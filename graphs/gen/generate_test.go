package gen_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/gen"
	"github.com/dpgnn/dpgnn/graphs/graphstest"
)

// tcNCMAccuracy is the accuracy on test of the nearest-class-mean
// classifier whose means are estimated on train (x is row-major n×f).
func tcNCMAccuracy(x []float64, f int, labels []int, classes int, train, test []int) float64 {
	means := make([]float64, classes*f)
	cnt := make([]float64, classes)
	for _, i := range train {
		y := labels[i]
		cnt[y]++
		for j := 0; j < f; j++ {
			means[y*f+j] += x[i*f+j]
		}
	}
	for y := 0; y < classes; y++ {
		for j := 0; j < f; j++ {
			means[y*f+j] /= max(cnt[y], 1)
		}
	}
	ok := 0
	for _, i := range test {
		best, bd := -1, math.Inf(1)
		for y := 0; y < classes; y++ {
			d := 0.0
			for j := 0; j < f; j++ {
				e := x[i*f+j] - means[y*f+j]
				d += e * e
			}
			if d < bd {
				best, bd = y, d
			}
		}
		if best == labels[i] {
			ok++
		}
	}
	return float64(ok) / float64(len(test))
}

// ---- gen.CSBM

func TestCSBMValidate(t *testing.T) {
	if err := gen.DefaultCSBM().Validate(); err != nil {
		t.Fatalf("default config invalid: %v", err)
	}
	mod := func(f func(*gen.CSBMConfig)) gen.CSBMConfig { c := gen.DefaultCSBM(); f(&c); return c }
	bad := []struct {
		name string
		cfg  gen.CSBMConfig
		want string
	}{
		{"one node", mod(func(c *gen.CSBMConfig) { c.Nodes = 1 }), "nodes"},
		{"no classes", mod(func(c *gen.CSBMConfig) { c.Classes = 0 }), "classes"},
		{"too many classes", mod(func(c *gen.CSBMConfig) { c.Nodes = 10; c.Classes = 11 }), "classes"},
		{"no features", mod(func(c *gen.CSBMConfig) { c.Features = 0 }), "features"},
		{"negative degree", mod(func(c *gen.CSBMConfig) { c.AvgDegree = -1 }), "avg degree"},
		{"nan degree", mod(func(c *gen.CSBMConfig) { c.AvgDegree = math.NaN() }), "avg degree"},
		{"homophily > 1", mod(func(c *gen.CSBMConfig) { c.Homophily = 1.5 }), "homophily"},
		{"nan homophily", mod(func(c *gen.CSBMConfig) { c.Homophily = math.NaN() }), "homophily"},
		{"negative signal", mod(func(c *gen.CSBMConfig) { c.Signal = -1 }), "signal"},
		{"inf signal", mod(func(c *gen.CSBMConfig) { c.Signal = math.Inf(1) }), "signal"},
		{"too dense", mod(func(c *gen.CSBMConfig) { c.Nodes = 20; c.AvgDegree = 10 }), "intra-class"},
		{"one class heterophilous", mod(func(c *gen.CSBMConfig) { c.Classes = 1; c.Homophily = 0.5 }), "inter-class"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			graphstest.WantErr(t, tc.cfg.Validate(), "csbm", tc.want)
		})
	}
}

func TestCSBMPanicsOnInvalidConfig(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("gen.CSBM with an invalid config did not panic")
		}
	}()
	gen.CSBM(gen.CSBMConfig{Nodes: 1}, 1)
}

func TestCSBMStructure(t *testing.T) {
	cases := []struct {
		name string
		cfg  gen.CSBMConfig
	}{
		{"default", gen.DefaultCSBM()},
		{"two classes", gen.CSBMConfig{Nodes: 301, Classes: 2, Features: 3, AvgDegree: 6, Homophily: 0.9, Signal: 1}},
		{"pure homophily", gen.CSBMConfig{Nodes: 200, Classes: 4, Features: 2, AvgDegree: 5, Homophily: 1, Signal: 0}},
		{"pure heterophily", gen.CSBMConfig{Nodes: 200, Classes: 4, Features: 2, AvgDegree: 5, Homophily: 0, Signal: 2}},
		{"single class", gen.CSBMConfig{Nodes: 50, Classes: 1, Features: 1, AvgDegree: 3, Homophily: 1, Signal: 1}},
		{"no edges", gen.CSBMConfig{Nodes: 10, Classes: 2, Features: 4, AvgDegree: 0, Homophily: 0.5, Signal: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			g := gen.CSBM(cfg, 7)
			if g.Name != "csbm" || g.N != cfg.Nodes || g.NumClasses != cfg.Classes || g.Directed || g.Neg != nil {
				t.Fatalf("header: name %q N %d classes %d", g.Name, g.N, g.NumClasses)
			}
			if len(g.Split.Train)+len(g.Split.Val)+len(g.Split.Test) != 0 {
				t.Fatal("gen.CSBM must leave the split empty")
			}
			graphstest.CheckSymmetricSimple(t, "csbm adj", g.Adj)
			if g.Adj.Data != nil {
				t.Fatal("adjacency should be unweighted")
			}
			m := int(math.Round(float64(cfg.Nodes) * cfg.AvgDegree / 2))
			if got := g.Adj.NNZ(); got != 2*m {
				t.Fatalf("stored entries = %d, want %d", got, 2*m)
			}
			intra := int(math.Round(cfg.Homophily * float64(m)))
			st := graphs.ComputeStats(g)
			if m > 0 && math.Abs(st.Homophily-float64(intra)/float64(m)) > 1e-12 {
				t.Fatalf("homophily %v, want %d/%d", st.Homophily, intra, m)
			}
			counts := make([]int, cfg.Classes)
			for _, y := range g.Labels {
				counts[y]++
			}
			for c, n := range counts {
				if n != cfg.Nodes/cfg.Classes+min(1, max(0, cfg.Nodes%cfg.Classes-c)) {
					t.Fatalf("class %d has %d nodes, want balanced %v", c, n, counts)
				}
			}
			if g.X == nil || g.X.IsSparse() || g.X.N != cfg.Nodes || g.X.F != cfg.Features || len(g.X.Dense) != cfg.Nodes*cfg.Features {
				t.Fatalf("features malformed: %+v", g.X)
			}
			for _, v := range g.X.Dense {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatal("non-finite feature")
				}
			}
		})
	}
}

func TestCSBMDeterminism(t *testing.T) {
	cfg := gen.CSBMConfig{Nodes: 500, Classes: 3, Features: 8, AvgDegree: 6, Homophily: 0.7, Signal: 1}
	a, b, c := gen.CSBM(cfg, 42), gen.CSBM(cfg, 42), gen.CSBM(cfg, 43)
	if !graphstest.Equal(a.Adj, b.Adj) || !slices.Equal(a.Labels, b.Labels) || !slices.Equal(a.X.Dense, b.X.Dense) {
		t.Fatal("same seed gave different graphs")
	}
	if graphstest.Equal(a.Adj, c.Adj) || slices.Equal(a.Labels, c.Labels) || slices.Equal(a.X.Dense, c.X.Dense) {
		t.Fatal("different seeds gave identical parts")
	}
	// Features are drawn from their own stream: changing only the edge
	// count leaves labels and features unchanged.
	cfg2 := cfg
	cfg2.AvgDegree = 4
	d := gen.CSBM(cfg2, 42)
	if !slices.Equal(a.Labels, d.Labels) || !slices.Equal(a.X.Dense, d.X.Dense) {
		t.Fatal("labels/features depend on the edge count")
	}
}

// TestCSBMFloat32: Float32 changes only the features, each to the nearest
// float32 of the value drawn without it.
func TestCSBMFloat32(t *testing.T) {
	cfg := gen.CSBMConfig{Nodes: 500, Classes: 3, Features: 8, AvgDegree: 6, Homophily: 0.7, Signal: 1}
	a := gen.CSBM(cfg, 42)
	cfg.Float32 = true
	b := gen.CSBM(cfg, 42)
	if !graphstest.Equal(a.Adj, b.Adj) || !slices.Equal(a.Labels, b.Labels) {
		t.Fatal("Float32 changed the edges or the labels")
	}
	changed := 0
	for i, v := range a.X.Dense {
		if b.X.Dense[i] != float64(float32(v)) {
			t.Fatalf("feature %d: %v, want float32(%v)", i, b.X.Dense[i], v)
		}
		if b.X.Dense[i] != v {
			changed++
		}
	}
	if changed == 0 {
		t.Fatal("no feature was rounded")
	}
}

// TestCSBMSeparability checks the purpose of the default dataset: features
// alone separate the classes moderately, one GCN aggregation much better.
func TestCSBMSeparability(t *testing.T) {
	spec, err := graphs.ParseSplit("per-class:20:500:1000")
	if err != nil {
		t.Fatal(err)
	}
	cfg := gen.DefaultCSBM()
	for seed := uint64(1); seed <= 3; seed++ {
		g := gen.CSBM(cfg, seed)
		gs, err := graphs.ApplySplit(g, spec, seed)
		if err != nil {
			t.Fatal(err)
		}
		f := g.X.F
		ax := make([]float64, len(g.X.Dense))
		graphs.GCNNorm(g.Adj).MulDense(g.X.Dense, f, ax)
		tr, te := gs.Split.Train, gs.Split.Test
		accX := tcNCMAccuracy(g.X.Dense, f, g.Labels, cfg.Classes, tr, te)
		accAX := tcNCMAccuracy(ax, f, g.Labels, cfg.Classes, tr, te)
		all := graphstest.Range(g.N)
		oracleX := tcNCMAccuracy(g.X.Dense, f, g.Labels, cfg.Classes, all, all)
		oracleAX := tcNCMAccuracy(ax, f, g.Labels, cfg.Classes, all, all)
		t.Logf("seed %d: NCM accuracy X %.3f ÂX %.3f (means from 20/class); all-node means X %.3f ÂX %.3f",
			seed, accX, accAX, oracleX, oracleAX)
		if accX < 0.4 || accX > 0.75 || oracleX < 0.5 || oracleX > 0.75 {
			t.Errorf("seed %d: feature-only accuracy %.3f / %.3f outside the intended 0.5–0.7 band", seed, accX, oracleX)
		}
		if accAX < 0.85 || accAX-accX < 0.1 {
			t.Errorf("seed %d: aggregation gives %.3f vs %.3f, want ≥ 0.85 and +0.1", seed, accAX, accX)
		}
	}
}

// ---- Chains

func TestChain(t *testing.T) {
	cases := []struct {
		size                                      string
		nodes, chains, length, train, test, heads int
	}{
		{"s", 48, 6, 8, 8, 32, 6},
		{"m", 60, 6, 10, 10, 40, 6},
		{"l", 90, 6, 15, 15, 60, 6},
		{"x", 150, 10, 15, 25, 100, 10},
		{"S", 48, 6, 8, 8, 32, 6},
	}
	for _, tc := range cases {
		t.Run(tc.size, func(t *testing.T) {
			g, err := gen.Chain(tc.size, 3)
			if err != nil {
				t.Fatal(err)
			}
			if g.Name != "chain-"+strings.ToLower(tc.size) || g.N != tc.nodes || g.NumClasses != 2 || g.X.F != 5 || g.X.IsSparse() {
				t.Fatalf("header: %q N=%d C=%d F=%d", g.Name, g.N, g.NumClasses, g.X.F)
			}
			graphstest.CheckSymmetricSimple(t, "chain adj", g.Adj)
			if g.Adj.NNZ() != 2*tc.chains*(tc.length-1) {
				t.Fatalf("entries %d, want %d", g.Adj.NNZ(), 2*tc.chains*(tc.length-1))
			}
			J, L := tc.chains/2, tc.length
			for c := 0; c < 2; c++ {
				for j := 0; j < J; j++ {
					for i := 0; i < L; i++ {
						v := c*J*L + j*L + i
						if g.Labels[v] != c {
							t.Fatalf("node %d label %d, want %d", v, g.Labels[v], c)
						}
						var want []int
						if i > 0 {
							want = append(want, v-1)
						}
						if i+1 < L {
							want = append(want, v+1)
						}
						if got, _ := g.Adj.Row(v); !slices.Equal(got, want) {
							t.Fatalf("node %d neighbours %v, want %v", v, got, want)
						}
						row := g.X.Dense[v*5 : v*5+5]
						for d, x := range row {
							w := 0.0
							if i == 0 && d == c {
								w = 1
							}
							if x != w {
								t.Fatalf("node %d feature %v, want head=%v one-hot(%d)", v, row, i == 0, c)
							}
						}
					}
				}
			}
			sp := g.Split
			if len(sp.Train) != tc.train || len(sp.Test) != tc.test || len(sp.Val) != tc.nodes-tc.train-tc.test {
				t.Fatalf("split sizes %d/%d/%d", len(sp.Train), len(sp.Val), len(sp.Test))
			}
			if !graphstest.Disjoint(sp.Train, sp.Val, sp.Test) {
				t.Fatal("split sets overlap")
			}
			// MLP-is-chance: the Bayes-optimal feature-only classifier is
			// right on the heads and at chance on the rest.
			groups := map[[5]float64][2]int{}
			for v := 0; v < g.N; v++ {
				var key [5]float64
				copy(key[:], g.X.Dense[v*5:v*5+5])
				cnt := groups[key]
				cnt[g.Labels[v]]++
				groups[key] = cnt
			}
			best := 0
			for _, cnt := range groups {
				best += max(cnt[0], cnt[1])
			}
			want := tc.heads + (tc.nodes-tc.heads)/2
			if best != want {
				t.Fatalf("best feature-only classifier gets %d/%d, want %d", best, tc.nodes, want)
			}
			if zero := groups[[5]float64{}]; zero[0] != zero[1] {
				t.Fatalf("featureless nodes not balanced: %v", zero)
			}
		})
	}
}

func TestChainSeeds(t *testing.T) {
	a, _ := gen.Chain("m", 1)
	b, _ := gen.Chain("m", 1)
	c, _ := gen.Chain("m", 2)
	if !slices.Equal(a.Split.Train, b.Split.Train) || !slices.Equal(a.Split.Test, b.Split.Test) {
		t.Fatal("same seed gave different splits")
	}
	if slices.Equal(a.Split.Train, c.Split.Train) && slices.Equal(a.Split.Test, c.Split.Test) {
		t.Fatal("different seeds gave the same split")
	}
	if !graphstest.Equal(a.Adj, c.Adj) || !slices.Equal(a.X.Dense, c.X.Dense) {
		t.Fatal("the chain structure must not depend on the seed")
	}
	for _, bad := range []string{"", "xl", "small", "s2"} {
		_, err := gen.Chain(bad, 1)
		graphstest.WantErr(t, err, "unknown size")
	}
}

// ---- Signed SBM

func TestSignedSBM(t *testing.T) {
	cases := []struct {
		name string
		cfg  gen.SignedSBMConfig
	}{
		{"clean", gen.SignedSBMConfig{Nodes: 300, Communities: 3, AvgDegree: 8, NegWithin: 0, PosAcross: 0}},
		{"noisy", gen.SignedSBMConfig{Nodes: 400, Communities: 2, AvgDegree: 10, NegWithin: 0.1, PosAcross: 0.2}},
		{"all flipped", gen.SignedSBMConfig{Nodes: 100, Communities: 4, AvgDegree: 4, NegWithin: 1, PosAcross: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			g := gen.SignedSBM(cfg, 5)
			if !g.Signed() || g.X != nil || g.NumClasses != cfg.Communities || g.N != cfg.Nodes {
				t.Fatalf("header: signed=%v classes=%d", g.Signed(), g.NumClasses)
			}
			graphstest.CheckSymmetricSimple(t, "positive", g.Adj)
			graphstest.CheckSymmetricSimple(t, "negative", g.Neg)
			m := int(math.Round(float64(cfg.Nodes) * cfg.AvgDegree / 2))
			if g.Adj.NNZ()+g.Neg.NNZ() != 2*m {
				t.Fatalf("%d+%d entries, want %d", g.Adj.NNZ(), g.Neg.NNZ(), 2*m)
			}
			var negWithin, within, posAcross, across int
			for i := 0; i < g.N; i++ {
				pc, _ := g.Adj.Row(i)
				nc, _ := g.Neg.Row(i)
				for _, j := range pc {
					if _, both := slices.BinarySearch(nc, j); both {
						t.Fatalf("pair %d,%d has both signs", i, j)
					}
					if g.Labels[i] == g.Labels[j] {
						within++
					} else {
						across++
						posAcross++
					}
				}
				for _, j := range nc {
					if g.Labels[i] == g.Labels[j] {
						within++
						negWithin++
					} else {
						across++
					}
				}
			}
			fw := float64(negWithin) / float64(max(within, 1))
			fa := float64(posAcross) / float64(max(across, 1))
			if math.Abs(fw-cfg.NegWithin) > 0.06 || math.Abs(fa-cfg.PosAcross) > 0.06 {
				t.Fatalf("flip rates %.3f/%.3f, want %.2f/%.2f", fw, fa, cfg.NegWithin, cfg.PosAcross)
			}
		})
	}
	cfg := cases[1].cfg
	a, b, c := gen.SignedSBM(cfg, 9), gen.SignedSBM(cfg, 9), gen.SignedSBM(cfg, 10)
	if !graphstest.Equal(a.Adj, b.Adj) || !graphstest.Equal(a.Neg, b.Neg) || !slices.Equal(a.Labels, b.Labels) {
		t.Fatal("same seed, different graphs")
	}
	if graphstest.Equal(a.Adj, c.Adj) {
		t.Fatal("different seeds, same graph")
	}
	for _, bad := range []gen.SignedSBMConfig{
		{Nodes: 1, Communities: 1},
		{Nodes: 10, Communities: 0},
		{Nodes: 10, Communities: 2, AvgDegree: 8},
		{Nodes: 10, Communities: 2, AvgDegree: 1, NegWithin: -0.1},
		{Nodes: 10, Communities: 2, AvgDegree: 1, PosAcross: math.NaN()},
	} {
		graphstest.WantErr(t, bad.Validate(), "signed sbm")
	}
}
