package graphio

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/gen"
	"github.com/dpgnn/dpgnn/internal/testutil"
)

// allocated runs load and returns the bytes it allocated on the heap (the
// runtime's cumulative count, which counts garbage too).
func allocated(load func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	load()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

// budgetCase is one input of TestLoadAllocationsWithinBudget: load runs a
// loader on the budget it is given.
type budgetCase struct {
	name string
	load func(b *loadBudget) error
}

// writeGeomDir writes g as a geom-gcn directory (header lines, one row per
// node in a shuffled order, every edge once) with the feature_amount
// header when declare.
func writeGeomDir(t *testing.T, g *graphs.Graph, declare bool) string {
	t.Helper()
	dir := t.TempDir()
	var nb strings.Builder
	if declare {
		fmt.Fprintf(&nb, "node_id\tfeature(feature_amount:%d)\tlabel\n", g.X.F-1)
	} else {
		nb.WriteString("node_id\tfeature\tlabel\n")
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, i := range r.Perm(g.N) {
		cols, _ := g.X.Sparse.Row(i)
		ids := make([]string, len(cols))
		for k, j := range cols {
			ids[k] = fmt.Sprint(j)
		}
		fmt.Fprintf(&nb, "%d\t%s\t%d\n", i, strings.Join(ids, ","), g.Labels[i])
	}
	var eb strings.Builder
	eb.WriteString("node_id\tnode_id\n")
	for i := 0; i < g.N; i++ {
		cols, _ := g.Adj.Row(i)
		for _, j := range cols {
			if i < j {
				fmt.Fprintf(&eb, "%d\t%d\n", i, j)
			}
		}
	}
	for name, s := range map[string]string{geomNodesFile: nb.String(), geomEdgesFile: eb.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// writeSignedDirRandom writes a signed directory of e random edges over
// ids spread over span, with train and test lists.
func writeSignedDirRandom(t *testing.T, e int, span int64) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "toy")
	r := rand.New(rand.NewPCG(3, 4))
	var whole, train, test strings.Builder
	for k := 0; k < e; k++ {
		u, v := r.Int64N(span)-span/2, r.Int64N(span)-span/2
		s := 1 - 2*r.IntN(2)
		line := fmt.Sprintf("%d\t%d\t%d\n", u, v, s)
		whole.WriteString(line)
		if k%5 == 0 {
			test.WriteString(line)
		} else {
			train.WriteString(line)
		}
	}
	for name, s := range map[string]string{signedWholeFile: whole.String(), "toy.train": train.String(), "toy.test": test.String()} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestLoadAllocationsWithinBudget: for every loader, on graphs of several
// shapes and sizes, the bytes the load allocates (the runtime's count,
// garbage included) never exceed what it reserved on its budget: the
// reservation is an upper bound, which is what lets `--max-memory` refuse
// a load before it allocates instead of after. And the bound is not loose:
// what is reserved beyond the fixed overhead stays within 2.5 times what
// is allocated on the larger inputs, so a limit does not refuse loads that
// would fit it several times over.
func TestLoadAllocationsWithinBudget(t *testing.T) {
	cfg := gen.DefaultCSBM()
	cfg.Nodes, cfg.Features, cfg.AvgDegree = 20000, 200, 6
	big := gen.CSBM(cfg, 1)
	sparse := *big
	sparse.X = denseToSparseFeatures(big.X, 0.9) // a bag of words: ~10 % ones
	dir := t.TempDir()
	npzSparse := filepath.Join(dir, "sparse.npz")
	npzDense := filepath.Join(dir, "dense.npz")
	for p, g := range map[string]*graphs.Graph{npzSparse: &sparse, npzDense: big} {
		if err := SaveNPZ(p, g); err != nil {
			t.Fatal(err)
		}
	}
	// Adversarial spellings: a dense adjacency, Fortran-order features,
	// rows out of order with duplicates.
	toyDir := t.TempDir()
	denseAdj := filepath.Join(toyDir, "denseadj.npz")
	n := 300
	adj := make([]float64, n*n)
	for i := 0; i < n; i++ {
		adj[i*n+(i+1)%n], adj[((i+1)%n)*n+i], adj[i*n+(i*7+3)%n] = 1, 1, 2
	}
	labels := make([]int64, n)
	for i := range labels {
		labels[i] = int64(i % 3)
	}
	writeNPZ(t, denseAdj, npzEntries{
		{"adj_matrix", npyBytes("<f8", []int{n, n}, false, leBytes(adj))},
		{"attr_matrix", npyBytes("<f4", []int{n, 5}, true, leBytes(make([]float32, n*5)))},
		{"labels", i64Arr(labels...)},
	})
	unsorted := filepath.Join(toyDir, "unsorted.npz")
	writeNPZ(t, unsorted, toyEntries().with("attr_indices", i32Arr(2, 0, 1, 2, 1, 2)).with("attr_data", f32Arr(1, 2, 1, 1, 1, 3)))
	geomDeclared := writeGeomDir(t, &sparse, true)
	geomHeaderless := writeGeomDir(t, &sparse, false)
	signedDense := writeSignedDirRandom(t, 60000, 20000)
	signedSpread := writeSignedDirRandom(t, 20000, 1<<50)

	npzLoad := func(p string) func(b *loadBudget) error {
		return func(b *loadBudget) error {
			f, size, err := openInput(p)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = readSparseGraphNPZ(f, size, p, b)
			return err
		}
	}
	cases := []budgetCase{
		{"npz sparse features", npzLoad(npzSparse)},
		{"npz dense features", npzLoad(npzDense)},
		{"npz dense adjacency, Fortran features", npzLoad(denseAdj)},
		{"npz unsorted feature rows", npzLoad(unsorted)},
		{"geom-gcn declared", func(b *loadBudget) error { _, err := loadGeomGCN(geomDeclared, b); return err }},
		{"geom-gcn headerless", func(b *loadBudget) error { _, err := loadGeomGCN(geomHeaderless, b); return err }},
		{"signed, dense ids", func(b *loadBudget) error { _, err := loadSigned(signedDense, b); return err }},
		{"signed, spread ids", func(b *loadBudget) error { _, err := loadSigned(signedSpread, b); return err }},
	}
	if data, ok := testutil.SharedDatasets(); ok {
		for _, name := range []string{"cora", "cora_ml", "citeseer"} {
			cases = append(cases, budgetCase{name, npzLoad(filepath.Join(data, name+".npz"))})
		}
		actor := filepath.Join(data, "actor")
		cases = append(cases, budgetCase{"actor", func(b *loadBudget) error { _, err := loadGeomGCN(actor, b); return err }})
		for _, name := range SignedDatasets() {
			p := filepath.Join(data, "signed", name)
			cases = append(cases, budgetCase{name, func(b *loadBudget) error { _, err := loadSigned(p, b); return err }})
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b *loadBudget
			var err error
			alloc := allocated(func() {
				b = newBudgetLimit(graphs.DefaultMemoryLimit)
				if err = b.reserve(loadOverhead, "overhead"); err == nil {
					err = c.load(b)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("reserved %s, allocated %s", graphs.FormatBytes(float64(b.reserved)), graphs.FormatBytes(float64(alloc)))
			if alloc > uint64(b.reserved) {
				t.Errorf("allocated %d bytes, reserved %d", alloc, b.reserved)
			}
			if alloc > 4*loadOverhead && float64(b.reserved-loadOverhead) > 2.5*float64(alloc) {
				t.Errorf("reserved %d bytes beyond the overhead for %d allocated: a limit would refuse loads that fit", b.reserved-loadOverhead, alloc)
			}
		})
	}
}

// denseToSparseFeatures keeps the entries of x above its q-quantile as
// ones, as a sparse bag of words.
func denseToSparseFeatures(x *graphs.Features, q float64) *graphs.Features {
	var src, dst []int
	cut := 1.2815515655446004 // the standard normal's 0.9 quantile
	if q != 0.9 {
		panic("denseToSparseFeatures: only q = 0.9")
	}
	for i := 0; i < x.N; i++ {
		for j := 0; j < x.F; j++ {
			if x.Dense[i*x.F+j] > cut {
				src, dst = append(src, i), append(dst, j)
			}
		}
	}
	return &graphs.Features{N: x.N, F: x.F, Sparse: graphs.FromCOO(x.N, x.F, src, dst, nil)}
}

// TestLoadRefusedBeforeAllocating: an archive whose headers declare more
// than the limit, and text files whose line counts do, are refused having
// allocated next to nothing (the zip bomb of issue 40: a 2 MB file whose
// header declares 3·10⁹ float64 took 4.2 GB before its refusal).
func TestLoadRefusedBeforeAllocating(t *testing.T) {
	dir := t.TempDir()
	bomb := filepath.Join(dir, "bomb.npz")
	// Headers of 3·10⁹ entries with bodies of a few bytes: the loader must
	// refuse on the headers, not find the truncation after reading.
	writeNPZ(t, bomb, toyEntries().
		with("adj_indices", npyBytes("<i8", []int{3_000_000_000}, false, make([]byte, 64))).
		with("adj_data", npyBytes("<f8", []int{3_000_000_000}, false, make([]byte, 64))))
	geom := writeGeomDir(t, func() *graphs.Graph {
		cfg := gen.DefaultCSBM()
		cfg.Nodes, cfg.Features = 3000, 50
		g := gen.CSBM(cfg, 1)
		g.X = denseToSparseFeatures(g.X, 0.9)
		return g
	}(), true)
	signed := writeSignedDirRandom(t, 30000, 5000)
	for _, c := range []struct {
		name  string
		limit int64
		load  func(b *loadBudget) error
		want  []string
	}{
		{"npz bomb", graphs.DefaultMemoryLimit, func(b *loadBudget) error {
			f, size, _ := openInput(bomb)
			defer f.Close()
			_, err := readSparseGraphNPZ(f, size, bomb, b)
			return err
		}, []string{bomb, `decoding the arrays (the largest, "adj_`, "holds 3000000000 values", "would take 75 GB, above the memory limit of 16 GB"}},
		{"geom-gcn nodes", loadOverhead + 100_000, func(b *loadBudget) error { _, err := loadGeomGCN(geom, b); return err },
			[]string{geomNodesFile, "reading 3001 lines would take", "above the memory limit of 1.1 MB"}},
		{"signed", loadOverhead + 500_000, func(b *loadBudget) error { _, err := loadSigned(signed, b); return err },
			[]string{signedWholeFile, "reading 30000 lines would take 634 kB", "above the memory limit of 1.5 MB"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var err error
			alloc := allocated(func() {
				b := newBudgetLimit(c.limit)
				if err = b.reserve(loadOverhead, "overhead"); err == nil {
					err = c.load(b)
				}
			})
			wantErr(t, err, c.want...)
			if alloc > 1<<20 {
				t.Errorf("allocated %s before refusing", graphs.FormatBytes(float64(alloc)))
			}
		})
	}
}

// TestLoadBudgetCountsHeldMemory: the limit covers the process, not only
// the load: memory held before the load counts, and the message says so.
func TestLoadBudgetCountsHeldMemory(t *testing.T) {
	b := &loadBudget{limit: 100 << 20, held: 90 << 20}
	if err := b.reserve(5<<20, "x"); err != nil {
		t.Fatal(err)
	}
	err := b.reserve(6<<20, "decoding y")
	wantErr(t, err, "decoding y would take 6.3 MB; with the 99.6 MB in use before it, that is above the memory limit of 105 MB")
	if b.reserved != 5<<20 {
		t.Errorf("a refused reservation was kept: %d", b.reserved)
	}
	wantErr(t, b.reserve(200<<20, "z"), "z would take 210 MB, above the memory limit of 105 MB (raise it with --max-memory or $DPGNN_MAX_MEMORY)")
	wantErr(t, b.reserve(1e300, "a hostile header"), "a hostile header would take")
}
