package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/methods"
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
	g, err := graphs.Load("csbm", "", 1)
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
// undirected units), one DP-SGD step of DP-MLP at node level, GCON's
// perturbed minimiser and one CARIBOU PCMP release (edge level at a fixed
// multiplier, node level) all stay within their claims.
func TestAuditReleasesWithinClaims(t *testing.T) {
	edge := firstEdge(t)
	for _, args := range [][]string{
		{"gap", "--privacy", "edge", "--epsilon", "4", "--remove-edge", edge, "--trials", "400", "--width", "1", "--hops", "1"},
		{"progap", "--privacy", "edge", "--epsilon", "4", "--remove-edge", edge, "--trials", "400", "--edge-unit", "undirected", "--hops", "1"},
		{"mlp", "--privacy", "node", "--epsilon", "4", "--delta", "1e-5", "--remove-node", "0", "--trials", "200", "--epochs", "1", "--batch-size", "400", "--split", "ratio:0.5:0.25"},
		{"gcon", "--privacy", "edge", "--epsilon", "4", "--remove-edge", edge, "--trials", "100", "--encoder-epochs", "20"},
		{"caribou", "--privacy", "edge", "--epsilon", "4", "--remove-edge", edge, "--trials", "300", "--width", "1", "--hops", "3", "--beta", "0", "--multiplier", "0.3"},
		{"caribou", "--privacy", "node", "--epsilon", "4", "--delta", "1e-5", "--remove-node", "0", "--trials", "300", "--width", "1", "--hops", "3", "--split", "ratio:0.5:0.25"},
		{"dpar", "--privacy", "node", "--epsilon", "4", "--delta", "1e-3", "--remove-node", "0", "--trials", "300", "--rows", "10"},
		{"dpar", "--privacy", "node", "--epsilon", "4", "--delta", "1e-3", "--remove-node", "0", "--trials", "200", "--rows", "30", "--release", "sgd", "--epochs", "1", "--hidden", "4"},
	} {
		r := runAudit(t, args...)
		t.Logf("%s: claimed %.3f, ε_lb %.3f", args[0], r.Claimed, r.EpsLB)
		if r.Exceeds || r.EpsLB > r.Claimed || (r.Gaussian && r.EpsLBGDP > r.Claimed) {
			t.Errorf("%v: ε_lb %v above the claim %v", args, r.EpsLB, r.Claimed)
		}
	}
}

// TestAuditFailAbove: --fail-above turns a release less private than its
// claim into an error: the papers' degree sampling on a graph above its
// bound (node 0 linked to 400 nodes that all link to the same 20).
func TestAuditFailAbove(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spread.npz")
	if err := graphs.SaveNPZ(path, graphs.SpreadGraph(400, 20, 1)); err != nil {
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
		{[]string{"audit", "gap", "--privacy", "edge", "--epsilon", "1", "--remove-node", "99999"}, "node id"},
		{[]string{"audit", "gap", "--privacy", "edge", "--epsilon", "1", "--remove-edge", edge, "--trials", "5"}, "--trials"},
		{[]string{"audit", "gap", "--privacy", "none", "--remove-edge", edge}, "private level"},
		{[]string{"audit", "mlp", "--privacy", "node", "--epsilon", "1", "--delta", "1e-5", "--remove-node", "0", "--multiplier", "2"}, "--multiplier"},
		{[]string{"audit", "gcn"}, "has no audit"},
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
// edges, and the train/test edge lists.
func TestRemoveNodeFromEveryEdgeSet(t *testing.T) {
	full := func() *graphs.CSR {
		a := &graphs.CSR{Rows: 3, Cols: 3, Indptr: []int{0, 2, 4, 6}, Indices: []int{1, 2, 0, 2, 0, 1}}
		return a
	}
	g := &graphs.Graph{Name: "t", N: 3, Adj: full(), Neg: full(), EdgeTrain: full(), EdgeTest: full()}
	a := &auditFlags{}
	a.target.RemoveNode = 1
	gp, drop, _, err := a.neighbour(g, methods.TrainOptions{}, &methods.AuditTarget{})
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
