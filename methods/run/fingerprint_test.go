package run_test

import (
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/internal/testutil"
	"github.com/dpgnn/dpgnn/methods/run"
)

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// TestDatasetFingerprintStable: two loads of the same dataset give the
// same fingerprint (generated, npz, geom-gcn and signed loaders), and a
// dataset generated from another seed gives another.
func TestDatasetFingerprintStable(t *testing.T) {
	root, ok := testutil.RepoRoot()
	if !ok {
		t.Fatal("no go.mod above the test directory")
	}
	for _, tc := range []struct {
		name, dataset string
		real          bool // needs the shared datasets
	}{
		{"generated csbm", "csbm", false},
		{"generated chain", "chain-s", false},
		{"npz file", filepath.Join(root, "graphs", "io", "testdata", "chain-s-seed1.npz"), false},
		{"cora npz", "cora", true},
		{"actor geom-gcn", "actor", true},
		{"signed bitcoin_alpha", "bitcoin_alpha", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := run.TrainOptions{Dataset: tc.dataset, Seed: 1}
			if tc.real {
				opts.DataDir = testutil.DataDir(t)
			}
			var prints []string
			for range 2 {
				g, err := run.LoadDataset(opts)
				if err != nil {
					t.Fatal(err)
				}
				prints = append(prints, run.DatasetFingerprint(g))
			}
			if !hex64.MatchString(prints[0]) || prints[0] != prints[1] {
				t.Fatalf("two loads: fingerprints %q and %q, want one SHA-256", prints[0], prints[1])
			}
		})
	}
	a, _ := run.LoadDataset(run.TrainOptions{Dataset: "csbm", Seed: 1})
	b, _ := run.LoadDataset(run.TrainOptions{Dataset: "csbm", Seed: 2})
	if run.DatasetFingerprint(a) == run.DatasetFingerprint(b) {
		t.Error("csbm generated from seeds 1 and 2: same fingerprint")
	}
}

// fullGraph is a small graph with every part the fingerprint covers:
// weighted adjacency, negative edges, dense features, labels, a split,
// published masks and an edge split.
func fullGraph() *graphs.Graph {
	csr := func(data []float64) *graphs.CSR {
		return &graphs.CSR{Rows: 3, Cols: 3, Indptr: []int{0, 1, 3, 4}, Indices: []int{1, 0, 2, 1}, Data: data}
	}
	split := graphs.Split{Train: []int{0}, Val: []int{1}, Test: []int{2}}
	return &graphs.Graph{
		Name: "tiny", N: 3, Adj: csr([]float64{1, 1, 2, 2}), Neg: csr(nil),
		X:      &graphs.Features{N: 3, F: 2, Dense: []float64{1, 0, 0.5, 0.5, 0, 1}},
		Labels: []int{0, 1, 1}, NumClasses: 2, Split: split,
		MaskSplits: []graphs.Split{split, {Train: []int{1}, Val: []int{2}, Test: []int{0}}},
		EdgeTrain:  csr([]float64{1, 1, -1, -1}), EdgeTest: csr([]float64{-1, -1, 1, 1}),
	}
}

// copyGraph is a deep copy of g (every array the fingerprint reads).
func copyGraph(g *graphs.Graph) *graphs.Graph {
	cp := func(m *graphs.CSR) *graphs.CSR {
		if m == nil {
			return nil
		}
		return &graphs.CSR{Rows: m.Rows, Cols: m.Cols, Indptr: slices.Clone(m.Indptr), Indices: slices.Clone(m.Indices), Data: slices.Clone(m.Data)}
	}
	sp := func(s graphs.Split) graphs.Split {
		return graphs.Split{Train: slices.Clone(s.Train), Val: slices.Clone(s.Val), Test: slices.Clone(s.Test)}
	}
	out := *g
	out.Adj, out.Neg, out.EdgeTrain, out.EdgeTest = cp(g.Adj), cp(g.Neg), cp(g.EdgeTrain), cp(g.EdgeTest)
	out.X = &graphs.Features{N: g.X.N, F: g.X.F, Dense: slices.Clone(g.X.Dense), Sparse: cp(g.X.Sparse)}
	out.Labels, out.Split = slices.Clone(g.Labels), sp(g.Split)
	out.MaskSplits = nil
	for _, s := range g.MaskSplits {
		out.MaskSplits = append(out.MaskSplits, sp(s))
	}
	return &out
}

// TestDatasetFingerprintChanges: changing any one entry of any array, or
// the shape, changes the fingerprint; the name does not enter it; and the
// byte layout is pinned (a golden value), so a fingerprint means the same
// on every machine and in every version.
func TestDatasetFingerprintChanges(t *testing.T) {
	base := run.DatasetFingerprint(fullGraph())
	const golden = "3aaaa6cd586a203c60bc8e1f74bd92dcbee6a3863ecb467fbe1296106477b1a5"
	if base != golden {
		t.Errorf("fingerprint of the tiny graph %s, want %s: the byte layout changed, and with it every recorded fingerprint", base, golden)
	}
	for _, tc := range []struct {
		name   string
		change func(g *graphs.Graph)
		same   bool
	}{
		{"nothing", func(g *graphs.Graph) {}, true},
		{"name", func(g *graphs.Graph) { g.Name = "other" }, true},
		{"adjacency value", func(g *graphs.Graph) { g.Adj.Data[2] = 3 }, false},
		{"adjacency index", func(g *graphs.Graph) { g.Adj.Indices[0] = 2 }, false},
		{"adjacency indptr", func(g *graphs.Graph) { g.Adj.Indptr[1] = 2 }, false},
		{"adjacency unweighted", func(g *graphs.Graph) { g.Adj.Data = nil }, false},
		{"negative edge", func(g *graphs.Graph) { g.Neg.Indices[3] = 0 }, false},
		{"unsigned", func(g *graphs.Graph) { g.Neg = nil }, false},
		{"feature", func(g *graphs.Graph) { g.X.Dense[4] = 0.25 }, false},
		{"label", func(g *graphs.Graph) { g.Labels[2] = 0 }, false},
		{"classes", func(g *graphs.Graph) { g.NumClasses = 3 }, false},
		{"directed", func(g *graphs.Graph) { g.Directed = true }, false},
		{"loader split", func(g *graphs.Graph) { g.Split.Train[0] = 2 }, false},
		{"published mask", func(g *graphs.Graph) { g.MaskSplits[1].Val[0] = 1 }, false},
		{"edge split train", func(g *graphs.Graph) { g.EdgeTrain.Data[0] = -1 }, false},
		{"edge split test", func(g *graphs.Graph) { g.EdgeTest = nil }, false},
		{"split moved between train and val", func(g *graphs.Graph) {
			g.Split.Train, g.Split.Val = []int{}, []int{0, 1}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := copyGraph(fullGraph())
			tc.change(g)
			got := run.DatasetFingerprint(g)
			if (got == base) != tc.same {
				t.Errorf("fingerprint %s, base %s: want same = %v", got, base, tc.same)
			}
		})
	}
	if run.DatasetFingerprint(fullGraph()) != base {
		t.Error("the fingerprint of an unchanged graph changed (a mutation reached the base graph)")
	}
}
