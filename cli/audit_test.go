package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/gen"
	graphio "github.com/dpgnn/dpgnn/graphs/io"
	"github.com/dpgnn/dpgnn/methods"
	mrun "github.com/dpgnn/dpgnn/methods/run"
	"github.com/sbinet/npyio/npz"
	"gonum.org/v1/gonum/mat"
)

type auditJSON struct {
	Claimed   float64 `json:"claimed_epsilon"`
	EpsLB     float64 `json:"epsilon_lb"`
	EpsLBGDP  float64 `json:"epsilon_lb_gdp"`
	Gaussian  bool    `json:"gaussian_claim"`
	Trials    int     `json:"trials"`
	Statistic string  `json:"statistic"`
	Exceeds   bool    `json:"exceeds_claim"`
	Release   string  `json:"release"`
	Neighbor  string  `json:"neighbor"`
	Compared  string  `json:"compared"`
	// ComparedValues of Values were compared.
	ComparedValues int    `json:"compared_values"`
	Values         int    `json:"values"`
	Samples        string `json:"samples"`
}

func runAudit(t *testing.T, args ...string) auditJSON {
	t.Helper()
	out, err := runCLI(t, append(append([]string{"audit"}, args...), "--json")...)
	if err != nil {
		t.Fatalf("audit %v: %v", args, err)
	}
	var r auditJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("audit --json output is not one JSON object: %v\n%s", err, out)
	}
	if r.Trials == 0 || r.Statistic == "" || r.Release == "" || !(r.Claimed > 0) {
		t.Fatalf("audit record lacks fields: %+v", r)
	}
	return r
}

// firstEdge is an edge of the embedded csbm graph.
func firstEdge(t *testing.T) string {
	g, err := graphio.Load("csbm", "", 1)
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := g.Adj.Row(0)
	return fmt.Sprintf("0,%d", cols[0])
}

// TestAuditGaussianPower: the bare Gaussian at ε = 2, δ = 1e-5 with 10,000
// releases per side: the GDP bound (its claim is a Gaussian mechanism's)
// certifies ε ≥ 1, the general (ε, δ) bound well above 0 (with 95%
// Clopper–Pearson bounds no test can certify more than about 0.93 from
// 10,000 runs per side), and neither exceeds 2.
func TestAuditGaussianPower(t *testing.T) {
	r := runAudit(t, "gaussian", "--epsilon", "2", "--delta", "1e-5", "--trials", "10000")
	if !r.Gaussian || r.EpsLBGDP < 1 || r.EpsLBGDP > 2 || r.EpsLB < 0.5 || r.EpsLB > 2 || r.Exceeds {
		t.Fatalf("ε_lb = %v, GDP ε_lb = %v, want in [0.5, 2] and [1, 2]", r.EpsLB, r.EpsLBGDP)
	}
}

// TestAuditReleasesWithinClaims: one NAP release at edge level (directed and
// undirected units) and at node level, one DP-SGD step of DP-MLP at node
// level, GCON's perturbed minimiser, one CARIBOU PCMP release (edge level
// at a fixed multiplier, node level) and DPAR's two releases all stay
// within their claims, and each record says which values it compared:
// every value of a node-indexed release, the removed node's included,
// except NAP's own row at node level, whose reason is stated.
func TestAuditReleasesWithinClaims(t *testing.T) {
	edge := firstEdge(t)
	n := csbmNodes(t)
	every := func(values int) string {
		return fmt.Sprintf("all %d node-indexed values, every node's included", values)
	}
	withNode0 := fmt.Sprintf("all %d node-indexed values, node 0's 1 included", n)
	for _, tc := range []struct {
		args     []string
		compared string // a part of the record's compared field
	}{
		{[]string{"gap", "--privacy", "edge", "--epsilon", "4", "--remove-edge", edge, "--trials", "400", "--width", "1", "--hops", "1"}, every(n)},
		{[]string{"gap", "--privacy", "node", "--epsilon", "4", "--delta", "1e-5", "--remove-node", "0", "--trials", "300", "--width", "1", "--split", "ratio:0.5:0.25"},
			fmt.Sprintf("all %d values except node 0's own 1 (its row): NAP's row at v sums v's in-neighbours", n-1)},
		{[]string{"progap", "--privacy", "edge", "--epsilon", "4", "--remove-edge", edge, "--trials", "400", "--edge-unit", "undirected", "--hops", "1"}, every(32 * n)},
		{[]string{"mlp", "--privacy", "node", "--epsilon", "4", "--delta", "1e-5", "--remove-node", "0", "--trials", "200", "--epochs", "1", "--batch-size", "400", "--split", "ratio:0.5:0.25"}, "(none indexed by node)"},
		{[]string{"gcon", "--privacy", "edge", "--epsilon", "4", "--remove-edge", edge, "--trials", "100", "--encoder-epochs", "20"}, "(none indexed by node)"},
		{[]string{"caribou", "--privacy", "edge", "--epsilon", "4", "--remove-edge", edge, "--trials", "300", "--width", "1", "--hops", "3", "--beta", "0", "--multiplier", "0.3"}, every(n)},
		{[]string{"caribou", "--privacy", "node", "--epsilon", "4", "--delta", "1e-5", "--remove-node", "0", "--trials", "300", "--width", "1", "--hops", "3", "--split", "ratio:0.5:0.25"}, withNode0},
		{[]string{"dpar", "--privacy", "node", "--epsilon", "4", "--delta", "1e-3", "--remove-node", "0", "--trials", "300", "--rows", "10"}, withNode0},
		{[]string{"dpar", "--privacy", "node", "--epsilon", "4", "--delta", "1e-3", "--remove-node", "0", "--trials", "200", "--rows", "30", "--release", "sgd", "--epochs", "1", "--hidden", "4"}, "(none indexed by node)"},
	} {
		r := runAudit(t, tc.args...)
		t.Logf("%s: claimed %.3f, ε_lb %.3f; compared %s", tc.args[0], r.Claimed, r.EpsLB, r.Compared)
		if r.Exceeds || r.EpsLB > r.Claimed || (r.Gaussian && r.EpsLBGDP > r.Claimed) {
			t.Errorf("%v: ε_lb %v above the claim %v", tc.args, r.EpsLB, r.Claimed)
		}
		if !strings.Contains(r.Compared, tc.compared) {
			t.Errorf("%v: compared %q, want %q", tc.args, r.Compared, tc.compared)
		}
		if r.ComparedValues <= 0 || r.ComparedValues > r.Values {
			t.Errorf("%v: compared %d of %d values", tc.args, r.ComparedValues, r.Values)
		}
	}
}

// TestAuditFailAbove: --fail-above turns a release less private than its
// claim into an error: the papers' degree sampling on a graph above its
// bound (node 0 linked to 400 nodes that all link to the same 20).
func TestAuditFailAbove(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spread.npz")
	if err := graphio.SaveNPZ(path, gen.SpreadGraph(400, 20, 1)); err != nil {
		t.Fatal(err)
	}
	base := []string{"audit", "gap", "--privacy", "node", "--epsilon", "8", "--delta", "1e-5", "--dataset", path, "--split", "ratio:0.5:0.25",
		"--remove-node", "0", "--width", "1", "--multiplier", "2", "--trials", "300", "--fail-above"}
	_, err := runCLI(t, append(base, "--max-degree", "20", "--degree-bound", "sample")...)
	if err == nil || !strings.Contains(err.Error(), "exceeds the claimed") {
		t.Fatalf("sampling above the bound: err = %v, want the claim exceeded", err)
	}
	if _, err := runCLI(t, append(base, "--max-degree", "400")...); err != nil {
		t.Fatalf("public bound: %v", err)
	}
	_, err = runCLI(t, append(base, "--max-degree", "20")...)
	if err == nil || !strings.Contains(err.Error(), "outside the public bound (at most 20 out-neighbours per node)") {
		t.Fatalf("public bound below the input's degrees: err = %v, want a refusal", err)
	}
}

func TestAuditBadInput(t *testing.T) {
	edge := firstEdge(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"audit", "gap", "--privacy", "edge", "--epsilon", "1"}, "exactly one neighbour"},
		{[]string{"audit", "gap", "--privacy", "edge", "--epsilon", "1", "--remove-node", "1", "--remove-edge", edge}, "exactly one neighbour"},
		{[]string{"audit", "gap", "--privacy", "edge", "--epsilon", "1", "--remove-edge", "0,0"}, "has no edge"},
		{[]string{"audit", "gap", "--privacy", "edge", "--epsilon", "1", "--remove-edge", "a,b"}, "node ids"},
		{[]string{"audit", "gap", "--privacy", "node", "--epsilon", "1", "--delta", "1e-5", "--remove-node", "99999"}, "node id"},
		{[]string{"audit", "gap", "--privacy", "edge", "--epsilon", "1", "--remove-edge", edge, "--trials", "5"}, "--trials"},
		{[]string{"audit", "gap", "--privacy", "none", "--remove-edge", edge}, "private level"},
		{[]string{"audit", "mlp", "--privacy", "node", "--epsilon", "1", "--delta", "1e-5", "--remove-node", "0", "--multiplier", "2"}, "--multiplier"},
		{[]string{"audit", "gcn"}, "has no audit"},
		// a method of one release kind refuses --release (it used to audit
		// NAP under --release sgd); a named kind must be the method's
		{[]string{"audit", "gap", "--privacy", "node", "--epsilon", "1", "--delta", "1e-5", "--remove-node", "0", "--release", "sgd"}, "gap audits one kind of release"},
		{[]string{"audit", "dpar", "--privacy", "node", "--epsilon", "1", "--delta", "1e-5", "--remove-node", "0", "--release", "foo"}, "dpar audits appr or sgd"},
		{[]string{"audit"}, "needs a release"},
	} {
		_, err := runCLI(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestRemoveNodeFromEveryEdgeSet: --remove-node takes the node's edges out
// of every private edge set — the adjacency, a signed graph's negative
// edges, and the train/test edge lists — and its features (dense or
// sparse), label and split membership out of G′, leaving the other nodes'
// data and the input graph as they were.
func TestRemoveNodeFromEveryEdgeSet(t *testing.T) {
	for _, sparse := range []bool{false, true} {
		x := &graphs.Features{N: 3, F: 2, Dense: []float64{1, 2, 3, 4, 5, 6}}
		if sparse {
			x = &graphs.Features{N: 3, F: 2, Sparse: &graphs.CSR{Rows: 3, Cols: 2, Indptr: []int{0, 2, 4, 6}, Indices: []int{0, 1, 0, 1, 0, 1}, Data: []float64{1, 2, 3, 4, 5, 6}}}
		}
		adj := &graphs.CSR{Rows: 3, Cols: 3, Indptr: []int{0, 2, 4, 6}, Indices: []int{1, 2, 0, 2, 0, 1}}
		g := &graphs.Graph{Name: "t", N: 3, Adj: adj, X: x, Labels: []int{1, 1, 1}, NumClasses: 2,
			Split:      graphs.Split{Train: []int{0, 1}, Val: []int{2}, Test: []int{1}},
			MaskSplits: []graphs.Split{{Train: []int{1}}}}
		gp := withoutNode(g, 1)
		if got := gp.X.ToDense(); !slices.Equal(got, []float64{1, 2, 0, 0, 5, 6}) {
			t.Errorf("sparse %v: G′ features %v, want node 1's row zero", sparse, got)
		}
		if got := g.X.ToDense(); !slices.Equal(got, []float64{1, 2, 3, 4, 5, 6}) {
			t.Errorf("sparse %v: G's features changed to %v", sparse, got)
		}
		if !slices.Equal(gp.Labels, []int{1, 0, 1}) || !slices.Equal(g.Labels, []int{1, 1, 1}) {
			t.Errorf("labels: G′ %v, G %v; want node 1's label 0 on G′ only", gp.Labels, g.Labels)
		}
		if !slices.Equal(gp.Split.Train, []int{0}) || !slices.Equal(gp.Split.Val, []int{2}) || len(gp.Split.Test) != 0 ||
			len(gp.MaskSplits[0].Train) != 0 || !slices.Equal(g.Split.Train, []int{0, 1}) {
			t.Errorf("splits: G′ %+v %+v, G %+v", gp.Split, gp.MaskSplits, g.Split)
		}
	}

	full := func() *graphs.CSR {
		a := &graphs.CSR{Rows: 3, Cols: 3, Indptr: []int{0, 2, 4, 6}, Indices: []int{1, 2, 0, 2, 0, 1}}
		return a
	}
	g := &graphs.Graph{Name: "t", N: 3, Adj: full(), Neg: full(), EdgeTrain: full(), EdgeTest: full()}
	a := &auditFlags{}
	a.target.RemoveNode = 1
	gp, drop, _, err := a.neighbour(g, mrun.TrainOptions{}, &mrun.AuditTarget{})
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]*graphs.CSR{"adjacency": gp.Adj, "negative edges": gp.Neg, "train edges": gp.EdgeTrain, "test edges": gp.EdgeTest} {
		for i := 0; i < m.Rows; i++ {
			cols, _ := m.Row(i)
			if (i == 1 && len(cols) > 0) || slices.Contains(cols, 1) {
				t.Errorf("%s: row %d = %v still holds node 1", name, i, cols)
			}
		}
	}
	if drop != 1 || g.Neg.NNZ() != 6 {
		t.Fatalf("drop %d; the input's negative edges changed to %d entries", drop, g.Neg.NNZ())
	}
}

// auditToy is the mlp method under another name with a toy release to
// audit (run.Auditor), whose Prepare calls are counted: "named" (the
// default) releases, for every node i, 5·[i has an edge] + N(0, 1) — a
// release that names the nodes present, so removing a node changes its
// own value and nothing else when its neighbours keep other edges;
// "ownrow" is the same release with OwnRow set (what the audit did to
// every node-indexed release before: drop the removed node's value).
type auditToy struct{ methods.Method }

var auditToyPrepared atomic.Int64

func (auditToy) Name() string { return "audittoy" }

func (auditToy) Releases() []string { return []string{"named", "ownrow"} }

func (auditToy) AuditTarget(ctx *methods.Context, opts mrun.AuditOptions) (*mrun.AuditTarget, error) {
	t := &mrun.AuditTarget{What: "toy: 5 + N(0,1) for every node with an edge, N(0,1) for the others", Claimed: 1, Delta: 1e-5,
		Gaussian: true, EdgeUnit: mrun.EdgeUndirected, Width: 1}
	switch opts.Release {
	case "", "named":
	case "ownrow":
		t.OwnRow = "toy: the removed node's own value is not compared"
	default:
		return nil, fmt.Errorf("--release %q: want named or ownrow", opts.Release)
	}
	t.Prepare = func(g *graphs.Graph) (mrun.Release1, error) {
		auditToyPrepared.Add(1)
		return func(src *dp.Source) ([]float64, error) {
			out := make([]float64, g.N)
			src.FillNormal(out)
			for i := range out {
				if g.Adj.Indptr[i+1] > g.Adj.Indptr[i] {
					out[i] += 5
				}
			}
			return out, nil
		}, nil
	}
	return t, nil
}

func init() {
	methods.Register(func() methods.Method {
		m, err := methods.New("mlp")
		if err != nil {
			panic(err)
		}
		return auditToy{m}
	})
}

// toyNode is a node of the embedded csbm graph all of whose neighbours
// have another neighbour: removing it changes the toy release in its own
// value only.
func toyNode(t *testing.T) int {
	g, err := graphio.Load("csbm", "", 1)
	if err != nil {
		t.Fatal(err)
	}
	deg := g.Adj.Degrees()
	for v := range g.N {
		cols, _ := g.Adj.Row(v)
		if len(cols) > 0 && !slices.ContainsFunc(cols, func(u int) bool { return deg[u] < 2 }) {
			return v
		}
	}
	t.Fatal("csbm has no such node")
	return -1
}

// TestAuditComparesRemovedNode: a node-indexed release where only the
// removed node's own value tells G from G′ (the toy names every node with
// an edge). Comparing every value — the audit's default — finds it far
// above the claim ε = 1 (μ = 5 separates the sides; with 200 evaluation
// runs per side no test certifies more than about 2.9); leaving the removed node's
// value out, as the audit did for every node-indexed release and now does
// only for a target that states why (OwnRow), finds nothing. The record
// says which values were compared.
func TestAuditComparesRemovedNode(t *testing.T) {
	v := toyNode(t)
	base := []string{"audittoy", "--privacy", "node", "--epsilon", "1", "--delta", "1e-5", "--remove-node", strconv.Itoa(v), "--trials", "400"}
	all := runAudit(t, base...)
	t.Logf("every value: ε_lb %.3f, GDP ε_lb %.3f; compared: %s", all.EpsLB, all.EpsLBGDP, all.Compared)
	if !all.Exceeds || all.EpsLB < 2 || all.EpsLBGDP < 10 {
		t.Errorf("comparing every value: ε_lb %.3f (GDP %.3f), want ≥ 2 (≥ 10) and the claim exceeded", all.EpsLB, all.EpsLBGDP)
	}
	n := csbmNodes(t)
	if want := fmt.Sprintf("all %d node-indexed values, node %d's 1 included", n, v); all.Compared != want || all.ComparedValues != n || all.Values != n {
		t.Errorf("compared %q (%d of %d values), want %q", all.Compared, all.ComparedValues, all.Values, want)
	}
	own := runAudit(t, append(base, "--release", "ownrow")...)
	t.Logf("own value left out: ε_lb %.3f, GDP ε_lb %.3f; compared: %s", own.EpsLB, own.EpsLBGDP, own.Compared)
	if own.Exceeds || own.EpsLB > 0.5 || own.EpsLBGDP > 1 {
		t.Errorf("leaving node %d's value out: ε_lb %.3f (GDP %.3f), want the sides indistinguishable", v, own.EpsLB, own.EpsLBGDP)
	}
	if want := fmt.Sprintf("all %d values except node %d's own 1 (its row): toy: the removed node's own value is not compared", n-1, v); own.Compared != want || own.ComparedValues != n-1 {
		t.Errorf("compared %q (%d values), want %q", own.Compared, own.ComparedValues, want)
	}
	text, err := runCLI(t, append([]string{"audit"}, base...)...)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("compared: all %d node-indexed values, node %d's 1 included\n", n, v); !strings.Contains(text, want) {
		t.Errorf("text output lacks %q:\n%s", want, text)
	}
}

func csbmNodes(t *testing.T) int {
	g, err := graphio.Load("csbm", "", 1)
	if err != nil {
		t.Fatal(err)
	}
	return g.N
}

// TestAuditSamples: --samples writes every raw release of both sides:
// g and g_prime (trials × values, float64) and node (int64), loadable with
// npz; the removed node's column is there on both sides and differs in
// distribution (mean 5 on G, 0 on G′), another node's does not. A second
// audit over the file replaces it.
func TestAuditSamples(t *testing.T) {
	v := toyNode(t)
	n := csbmNodes(t)
	path := filepath.Join(t.TempDir(), "samples.npz")
	const trials = 200
	args := []string{"audittoy", "--privacy", "node", "--epsilon", "1", "--delta", "1e-5", "--remove-node", strconv.Itoa(v),
		"--release", "ownrow", "--samples", path}
	r := runAudit(t, append(args, "--trials", strconv.Itoa(trials))...)
	if r.Samples != path {
		t.Errorf("record names samples %q, want %q", r.Samples, path)
	}
	g, gp, node := readSamples(t, path)
	for _, m := range []*mat.Dense{g, gp} {
		if r, c := m.Dims(); r != trials || c != n {
			t.Fatalf("array of %d×%d, want %d×%d", r, c, trials, n)
		}
	}
	if len(node) != n || node[0] != 0 || node[v] != int64(v) || node[n-1] != int64(n-1) {
		t.Fatalf("node ids %v…, want 0..%d", node[:min(5, len(node))], n-1)
	}
	colMean := func(m *mat.Dense, j int) float64 { return mat.Sum(m.ColView(j)) / trials }
	other := (v + 1) % n
	t.Logf("node %d: mean %.3f on G, %.3f on G′; node %d: %.3f, %.3f", v, colMean(g, v), colMean(gp, v), other, colMean(g, other), colMean(gp, other))
	if d := colMean(g, v) - colMean(gp, v); d < 4.5 || d > 5.5 {
		t.Errorf("removed node's column: mean difference %.3f, want about 5 (its value is written on both sides although the test left it out)", d)
	}
	if d := colMean(g, other) - colMean(gp, other); math.Abs(d) > 0.5 {
		t.Errorf("node %d's column: mean difference %.3f, want about 0", other, d)
	}
	// Every raw value is a release: the same seed gives the same draws.
	if g.At(0, v) == gp.At(0, v) || g.At(3, other) == g.At(4, other) {
		t.Error("samples repeat values across sides or runs")
	}
	if py := numpyPython(); py == "" {
		t.Log("no python3 with numpy: the samples were checked in Go only")
	} else {
		script := fmt.Sprintf("import numpy as np; z = np.load(%q); g, gp, node = z['g'], z['g_prime'], z['node']; "+
			"assert g.shape == gp.shape == (%d, %d) and g.dtype == np.float64 and node.dtype == np.int64 and (node == np.arange(%d)).all(); "+
			"print(g[:, %d].mean() - gp[:, %d].mean())", path, trials, n, n, v, v)
		out, err := exec.Command(py, "-c", script).CombinedOutput()
		if err != nil {
			t.Fatalf("numpy cannot read the samples: %v\n%s", err, out)
		}
		t.Logf("numpy: removed node's mean difference %s", strings.TrimSpace(string(out)))
	}
	runAudit(t, append(args, "--trials", "40")...)
	zr2, err := npz.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr2.Close()
	if h := zr2.Header("g.npy"); h == nil || !slices.Equal(h.Descr.Shape, []int{40, n}) {
		t.Errorf("second audit: header %v, want shape [40 %d]", h, n)
	}
}

// numpyPython is a python3 that imports numpy ("" if none).
func numpyPython() string {
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(py, "-c", "import numpy").Run() == nil {
			return py
		}
	}
	return ""
}

// TestAuditSamplesRefused: an unwritable --samples path and samples above
// the size limit are refused with one line before the release is prepared
// on any graph, and nothing is left behind.
func TestAuditSamplesRefused(t *testing.T) {
	dir := t.TempDir()
	v := strconv.Itoa(toyNode(t))
	base := []string{"audit", "audittoy", "--privacy", "node", "--epsilon", "1", "--delta", "1e-5", "--remove-node", v}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--trials", "100", "--samples", filepath.Join(dir, "missing", "s.npz")}, "does not exist"},
		{[]string{"--trials", "100", "--samples", dir}, "is a directory"},
		{[]string{"--trials", "100000", "--samples", filepath.Join(dir, "big.npz")}, "above the 2 GiB limit"},
		{[]string{"--attack", "mia", "--samples", filepath.Join(dir, "s.npz")}, "--samples is for a release audit"},
	} {
		before := auditToyPrepared.Load()
		_, err := runCLI(t, append(base, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: err = %v, want one line with %q", tc.args, err, tc.want)
		}
		if n := auditToyPrepared.Load() - before; n != 0 {
			t.Errorf("%v: the release was prepared %d times before the refusal", tc.args, n)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("files left behind: %v", left)
	}
}

// TestAuditNeighbourOfClaimedUnit: a neighbour that is not one unit of the
// claimed level is refused with one line — a node removal for an
// edge-level claim (the star's hub: 100 edges), an edge removal or a
// graph file for a node-level claim, and a graph file that differs from G
// in two edges, in half an undirected edge, in features or in labels, or
// not at all; a file that removes exactly one undirected edge is accepted
// and the record says so.
func TestAuditNeighbourOfClaimedUnit(t *testing.T) {
	g, err := graphio.Load("csbm", "", 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	save := func(name string, h *graphs.Graph) string {
		path := filepath.Join(dir, name+".npz")
		if err := graphio.SaveNPZ(path, h); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cols, _ := g.Adj.Row(0)
	c0, c1 := cols[0], cols[1]
	one := save("one", g.WithAdj(graphs.RemoveEntry(g.Adj, 0, c0, true)))
	two := save("two", g.WithAdj(graphs.RemoveEntry(graphs.RemoveEntry(g.Adj, 0, c0, true), 0, c1, true)))
	same := save("same", g)
	feat := *g
	feat.X = withoutFeatureRow(g.X, 5)
	features := save("features", feat.WithAdj(graphs.RemoveEntry(g.Adj, 0, c0, true)))
	lab := *g
	lab.Labels = slices.Clone(g.Labels)
	lab.Labels[5] = (lab.Labels[5] + 1) % g.NumClasses
	labels := save("labels", lab.WithAdj(graphs.RemoveEntry(g.Adj, 0, c0, true)))
	edge := []string{"audit", "gap", "--privacy", "edge", "--epsilon", "1", "--trials", "100", "--width", "1"}
	node := []string{"audit", "gap", "--privacy", "node", "--epsilon", "1", "--delta", "1e-5", "--trials", "100", "--width", "1"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append(slices.Clone(edge), "--dataset", "star", "--remove-node", "0"), "give --remove-edge U,V"},
		{append(slices.Clone(node), "--remove-edge", fmt.Sprintf("0,%d", c0)), "give --remove-node V"},
		{append(slices.Clone(node), "--neighbor", one), "--neighbor is for edge-level claims"},
		{append(slices.Clone(edge), "--edge-unit", "undirected", "--neighbor", two), "more than one edge"},
		{append(slices.Clone(edge), "--neighbor", two), "more than one adjacency entry"},
		{append(slices.Clone(edge), "--neighbor", one), "more than one adjacency entry"}, // directed unit: {0,c0} is two units
		{append(slices.Clone(edge), "--edge-unit", "undirected", "--neighbor", same), "same edges as G"},
		{append(slices.Clone(edge), "--edge-unit", "undirected", "--neighbor", features), "other features"},
		{append(slices.Clone(edge), "--edge-unit", "undirected", "--neighbor", labels), "other labels"},
	} {
		_, err := runCLI(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: err = %v, want one line with %q", tc.args[1:], err, tc.want)
		}
	}
	r := runAudit(t, append(slices.Clone(edge[1:]), "--edge-unit", "undirected", "--neighbor", one)...)
	if want := fmt.Sprintf("the graph in %s: G without the undirected edge {0,%d}", one, c0); r.Neighbor != want {
		t.Errorf("neighbour %q, want %q", r.Neighbor, want)
	}
	if want := fmt.Sprintf("all %d node-indexed values, every node's included", g.N); r.Compared != want {
		t.Errorf("compared %q, want %q", r.Compared, want)
	}
}

// TestAuditGaussianTrialsRefused: a bare Gaussian audit of 2·10⁹ trials
// (32 GB) is refused at once, with one line.
func TestAuditGaussianTrialsRefused(t *testing.T) {
	start := time.Now()
	_, err := runCLI(t, "audit", "gaussian", "--trials", "2000000000")
	if err == nil || !strings.Contains(err.Error(), "at most") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v, want the trial limit", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("refusal took %v", d)
	}
}

// TestOneEdgeUnitApart: a graph file is an edge-level neighbour of G only
// when it differs in exactly one unit of the claim, in either direction:
// one entry for a directed unit; for an undirected unit every stored entry
// of one pair (both of {u,v}, or the one a directed graph stores), none
// half-removed.
func TestOneEdgeUnitApart(t *testing.T) {
	graph := func(n int, edges ...[2]int) *graphs.Graph {
		var src, dst []int
		for _, e := range edges {
			src, dst = append(src, e[0]), append(dst, e[1])
		}
		return &graphs.Graph{N: n, Adj: graphs.FromCOO(n, n, src, dst, nil), Labels: make([]int, n), NumClasses: 1}
	}
	g := graph(4, [2]int{0, 1}, [2]int{1, 0}, [2]int{1, 2}, [2]int{2, 1}, [2]int{2, 3})
	for _, tc := range []struct {
		name string
		h    *graphs.Graph
		unit string
		want string // the description, or the error's text
	}{
		{"one entry, directed unit", graph(4, [2]int{0, 1}, [2]int{1, 0}, [2]int{1, 2}, [2]int{2, 1}), mrun.EdgeDirected, "G without the directed edge 2→3"},
		{"one added entry", graph(4, [2]int{0, 1}, [2]int{1, 0}, [2]int{1, 2}, [2]int{2, 1}, [2]int{2, 3}, [2]int{3, 0}), mrun.EdgeDirected, "G with the directed edge 3→0"},
		{"both entries, directed unit", graph(4, [2]int{1, 2}, [2]int{2, 1}, [2]int{2, 3}), mrun.EdgeDirected, "more than one adjacency entry"},
		{"both entries, undirected unit", graph(4, [2]int{1, 2}, [2]int{2, 1}, [2]int{2, 3}), mrun.EdgeUndirected, "G without the undirected edge {0,1}"},
		{"the one stored entry of a pair", graph(4, [2]int{0, 1}, [2]int{1, 0}, [2]int{1, 2}, [2]int{2, 1}), mrun.EdgeUndirected, "G without the undirected edge {2,3}"},
		{"half an undirected edge", graph(4, [2]int{1, 0}, [2]int{1, 2}, [2]int{2, 1}, [2]int{2, 3}), mrun.EdgeUndirected, "but not in 1→0"},
		{"two undirected edges", graph(4, [2]int{2, 3}), mrun.EdgeUndirected, "more than one edge"},
		{"one removed, one added", graph(4, [2]int{0, 1}, [2]int{1, 0}, [2]int{1, 2}, [2]int{2, 1}, [2]int{3, 2}), mrun.EdgeDirected, "adds another"},
		{"identical", graph(4, [2]int{0, 1}, [2]int{1, 0}, [2]int{1, 2}, [2]int{2, 1}, [2]int{2, 3}), mrun.EdgeDirected, "same edges"},
		{"another node count", graph(5, [2]int{0, 1}), mrun.EdgeDirected, "has 5 nodes"},
	} {
		got, err := oneEdgeUnitApart(g, tc.h, tc.unit)
		if err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	w := graph(4, [2]int{0, 1}, [2]int{1, 0}, [2]int{1, 2}, [2]int{2, 1}, [2]int{2, 3})
	w.Adj.Data = []float64{1, 1, 1, 1, 2}
	if _, err := oneEdgeUnitApart(g, w, mrun.EdgeDirected); err == nil || !strings.Contains(err.Error(), "another weight") {
		t.Errorf("a reweighted edge: %v", err)
	}
}

// TestAuditDPARAdversarial: `audit dpar` on the adversarial graph families
// (the 9-leaf star with a leaf removed, the double star, the path cut at
// node 0 and the power-law graph without its hub, which is the audited
// row's source), DP-APPR rows (GM and EM0) and a DP-SGD step, with
// --samples: every ε_lb within the claim, every node-indexed value compared,
// and the samples file holding the removed node's column on both sides.
func TestAuditDPARAdversarial(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		dataset string
		remove  int
		release []string
	}{
		{"star-9", 3, []string{"--variant", "gm"}},
		{"star-9", 3, []string{"--variant", "em0"}},
		{"double-star", 0, []string{"--variant", "gm"}},
		{"path", 0, []string{"--variant", "em0"}},
		{"powerlaw", 0, []string{"--variant", "gm"}},
		{"double-star", 0, []string{"--release", "sgd", "--epochs", "1", "--hidden", "4"}},
	} {
		path := filepath.Join(dir, fmt.Sprintf("%s-%d.npz", tc.dataset, len(tc.release)))
		args := append([]string{"dpar", "--dataset", tc.dataset, "--split", "ratio:0.9:0.05", "--privacy", "node", "--epsilon", "4", "--delta", "1e-5",
			"--remove-node", strconv.Itoa(tc.remove), "--trials", "300", "--samples", path}, tc.release...)
		r := runAudit(t, args...)
		t.Logf("%s %v: claimed %.3f, ε_lb %.3f (GDP %.3f); %s", tc.dataset, tc.release, r.Claimed, r.EpsLB, r.EpsLBGDP, r.Compared)
		if r.Exceeds || r.EpsLB > r.Claimed || (r.Gaussian && r.EpsLBGDP > r.Claimed) {
			t.Errorf("%s %v: ε_lb %v (GDP %v) above the claim %v", tc.dataset, tc.release, r.EpsLB, r.EpsLBGDP, r.Claimed)
		}
		g, _, node := readSamples(t, path)
		if r1, c1 := g.Dims(); r1 != 300 || c1 != len(node) {
			t.Fatalf("%s: g is %d×%d with %d node ids", tc.dataset, r1, c1, len(node))
		}
		if tc.release[0] == "--release" {
			if r.Compared == "" || !strings.Contains(r.Compared, "none indexed by node") {
				t.Errorf("%s sgd: compared %q", tc.dataset, r.Compared)
			}
			continue
		}
		if !strings.Contains(r.Compared, fmt.Sprintf("node %d's 1 included", tc.remove)) || !slices.Contains(node, int64(tc.remove)) {
			t.Errorf("%s: compared %q, node ids %v: the removed node's column is missing", tc.dataset, r.Compared, node)
		}
	}
}

// readSamples reads an audit's --samples file: its entries must be exactly
// g, g_prime and node.
func readSamples(t *testing.T, path string) (g, gp *mat.Dense, node []int64) {
	t.Helper()
	zr, err := npz.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	if keys := zr.Keys(); !slices.Equal(keys, []string{"g.npy", "g_prime.npy", "node.npy"}) {
		t.Fatalf("entries %v", keys)
	}
	g, gp = &mat.Dense{}, &mat.Dense{}
	for _, a := range []struct {
		name string
		ptr  any
	}{{"g.npy", g}, {"g_prime.npy", gp}, {"node.npy", &node}} {
		if err := zr.Read(a.name, a.ptr); err != nil {
			t.Fatalf("%s: %v", a.name, err)
		}
	}
	return g, gp, node
}
