package dpar

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/gen"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/trainers"
)

// adversarial are the graph families DPAR's privacy tests remove nodes
// from, each with the nodes worth removing: hubs, leaves, a cut vertex,
// the largest hub of a power-law graph and some others.
func adversarial() []struct {
	g      *graphs.Graph
	remove []int
} {
	return []struct {
		g      *graphs.Graph
		remove []int
	}{
		{gen.SmallStar(9, 1), []int{0, 3}},
		{gen.Star(1), []int{0, 1}},
		{gen.DoubleStar(1), []int{0, 1, 2}},
		{gen.Path(1), []int{0, 1, 20}},
		{gen.PowerLaw(1), []int{0, 1, 2, 150, 299}},
	}
}

// removeNode is the raw node-level neighbour: v's edges gone, v out of every
// split set, its id kept (absent).
func removeNode(g *graphs.Graph, v int) *graphs.Graph {
	gp := g.WithAdj(graphs.RemoveNode(g.Adj, v))
	drop := func(ids []int) []int { return slices.DeleteFunc(slices.Clone(ids), func(i int) bool { return i == v }) }
	gp.Split = graphs.Split{Train: drop(g.Split.Train), Val: drop(g.Split.Val), Test: drop(g.Split.Test)}
	return gp
}

// withTrainSplit gives g a split with every node but the last two training
// nodes (those two are the inference side).
func withTrainSplit(g *graphs.Graph) *graphs.Graph {
	h := *g
	h.Split = graphs.Split{Train: allIDs(g.N - 2), Test: []int{g.N - 2, g.N - 1}}
	return &h
}

// TestOccurrenceBound is the proof of exampleRows' occurrence bound as a
// property test, on the run's own functions under the coupling of a run on
// G and on G − v with the same seed: the node subsample (keep bits per
// id), the sources and the released rows are held identical (DP-SGD is
// accounted conditionally on the release), and at most R = 1 + max-refs
// examples may differ (1 + M without the cap) — v's own and those whose Π
// row references v. Stars, double stars, a path and a power-law graph, with
// and without node subsampling; many sources and a large top-K, so that
// columns are referenced far beyond the cap before it.
func TestOccurrenceBound(t *testing.T) {
	for _, tc := range adversarial() {
		g := withTrainSplit(tc.g)
		for _, q := range []float64{1, 0.6} {
			m := newDPAR(t, "--rows", fmt.Sprint(g.N/2), "--topk", "6")
			mech := APPRMechanism{Kind: APPRGM, K: 6, Clip: m.cfg.C1, GaussianStd: 1e-3}
			gs := splitGraphs(g, q, dp.NewSource(5))
			sources := drawSources(gs, m.cfg.Rows, dp.NewSource(6))
			// The release on G, held fixed on both sides.
			params := ISTAParams{Alpha: m.cfg.ISTAAlpha, Rho: m.cfg.ISTARho, Tol: m.cfg.ISTATol, MaxIter: 100000}
			rows, err := APPRMatrix(gs.trainAdj, gs.members, gs.n, sources, params, mech, dp.NewSource(7))
			if err != nil {
				t.Fatal(err)
			}
			for _, maxRefs := range []int{2, 0} {
				pi, err := m.piFrom(rows, sources, gs.n, maxRefs)
				if err != nil {
					t.Fatal(err)
				}
				ex := exampleRows(pi, gs.members)
				for _, v := range tc.remove {
					name := fmt.Sprintf("%s q′=%g cap=%d remove %d", g.Name, q, maxRefs, v)
					gsp := splitGraphs(removeNode(g, v), q, dp.NewSource(5))
					if !slices.Equal(sources, drawSources(gsp, m.cfg.Rows, dp.NewSource(6))) {
						t.Fatalf("%s: the sources depend on the data", name)
					}
					d := differingExamples(ex, gs.members, exampleRows(pi, gsp.members), gsp.members)
					diff, refs := d.total(), d.refs
					bound := 1 + maxRefs
					if maxRefs == 0 {
						bound = 1 + m.cfg.Rows
					}
					if diff > bound {
						t.Errorf("%s: %d examples differ, the accounting assumes at most R = %d", name, diff, bound)
					}
					// The exact group pair's split (dp.Occurrences Deleted
					// = R, Inserted = R − 1): only v's own example is
					// present on one side, G's, none only on G′'s.
					if d.deleted() > bound || d.inserted() > bound-1 || d.onlyB > 0 || d.onlyA > 1 {
						t.Errorf("%s: %d examples only on G, %d only on G − v, %d modified: the accounting assumes at most %d deletions and %d insertions, one example only on G",
							name, d.onlyA, d.onlyB, d.modified, bound, bound-1)
					}
					if maxRefs > 0 && refs > maxRefs {
						t.Errorf("%s: %d other rows of Π reference node %d after the cap %d", name, refs, v, maxRefs)
					}
				}
			}
		}
	}
	// The bound is attained: on the 100-leaf star with every leaf a source
	// and K large, the hub's column is capped at max-refs other rows, all
	// of them examples, so removing the hub changes exactly 1 + max-refs.
	g := withTrainSplit(gen.Star(1))
	m := newDPAR(t, "--topk", "4", "--max-refs", "2")
	gs := splitGraphs(g, 1, nil)
	rows, err := APPRMatrix(gs.trainAdj, gs.members, gs.n, allIDs(g.N)[1:g.N-2], DPARISTAParams(), APPRMechanism{Kind: APPRNone, K: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pi, err := m.piFrom(rows, allIDs(g.N)[1:g.N-2], gs.n, 2)
	if err != nil {
		t.Fatal(err)
	}
	gsp := splitGraphs(removeNode(g, 0), 1, nil)
	if d := differingExamples(exampleRows(pi, gs.members), gs.members, exampleRows(pi, gsp.members), gsp.members); d.total() != 3 || d.deleted() != 3 || d.inserted() != 2 {
		t.Errorf("star, hub removed: %d examples only on G, %d only on G − v, %d modified; want exactly 1 + max-refs = 3 differing, 3 deletions and 2 insertions", d.onlyA, d.onlyB, d.modified)
	}
}

// exampleDiff is how the examples of G and G − v differ: present on G only
// (onlyA), on G − v only (onlyB), present on both with different rows
// (modified), and refs as differingExamples states.
type exampleDiff struct{ onlyA, onlyB, modified, refs int }

func (d exampleDiff) total() int { return d.onlyA + d.onlyB + d.modified }

// deleted and inserted are the group pair's counts: a modified example is
// one deletion (its version on G) and one insertion (on G − v).
func (d exampleDiff) deleted() int  { return d.onlyA + d.modified }
func (d exampleDiff) inserted() int { return d.onlyB + d.modified }

// differingExamples counts the universe ids whose example differs between
// two example sets (present on one side only, or with a different row),
// and how many examples other than a removed one reference a node absent
// from the second set.
func differingExamples(a *graphs.CSR, am []int, b *graphs.CSR, bm []int) exampleDiff {
	row := func(ex *graphs.CSR, members []int) map[int]string {
		out := map[int]string{}
		for k, u := range members {
			s := ""
			for t := ex.Indptr[k]; t < ex.Indptr[k+1]; t++ {
				s += fmt.Sprintf("%d:%x ", ex.Indices[t], math.Float64bits(ex.Value(t)))
			}
			out[u] = s
		}
		return out
	}
	ra, rb := row(a, am), row(b, bm)
	var d exampleDiff
	for u, s := range ra {
		if t, ok := rb[u]; !ok {
			d.onlyA++
		} else if s != t {
			d.modified++
		}
	}
	for u := range rb {
		if _, ok := ra[u]; !ok {
			d.onlyB++
		}
	}
	refs := 0
	inB := map[int]bool{}
	for _, u := range bm {
		inB[u] = true
	}
	for k, u := range am {
		if !inB[u] {
			continue
		}
		for t := a.Indptr[k]; t < a.Indptr[k+1]; t++ {
			if !inB[a.Indices[t]] {
				refs++
			}
		}
	}
	d.refs = refs
	return d
}

// TestAPPRVectorsWithinSensitivity: under the coupling (same keep bits,
// same sources), the clipped APPR vector of every source on G and on G − v
// — over all N ids, v's coordinate included, a source outside G or equal
// to v giving the zero vector — differ by at most √2·C1 in ℓ2 (GM) and C2
// per entry (EM), which is what Events charges per row.
func TestAPPRVectorsWithinSensitivity(t *testing.T) {
	const c1, c2 = 0.01, 0.001
	params := DPARISTAParams()
	largest := 0.0
	for _, tc := range adversarial() {
		g := withTrainSplit(tc.g)
		for _, q := range []float64{1, 0.6} {
			for _, v := range tc.remove {
				gs := splitGraphs(g, q, dp.NewSource(5))
				gsp := splitGraphs(removeNode(g, v), q, dp.NewSource(5))
				solver := func(gs *graphsOf) *ISTA {
					if gs.trainAdj == nil {
						return nil
					}
					s, err := NewISTA(gs.trainAdj, params)
					if err != nil {
						t.Fatal(err)
					}
					return s
				}
				sa, sb := solver(gs), solver(gsp)
				worstL2, worstEl := 0.0, 0.0
				// every source on the small graphs; on the large ones the
				// removed nodes, their neighbours and a spread of others
				check := allIDs(g.N)
				if g.N > 60 {
					check = slices.Clone(tc.remove)
					for _, v := range tc.remove {
						check = append(check, g.Adj.Indices[g.Adj.Indptr[v]:min(g.Adj.Indptr[v+1], g.Adj.Indptr[v]+5)]...)
					}
					for s := 0; s < g.N; s += 23 {
						check = append(check, s)
					}
				}
				for _, s := range check {
					pa, err := apprVector(sa, gs.members, g.N, s)
					if err != nil {
						t.Fatal(err)
					}
					pb, err := apprVector(sb, gsp.members, g.N, s)
					if err != nil {
						t.Fatal(err)
					}
					xa, xb := clipL2(pa, c1), clipL2(pb, c1)
					ua, ub := clipElements(pa, c2), clipElements(pb, c2)
					d := 0.0
					for j := range xa {
						d += (xa[j] - xb[j]) * (xa[j] - xb[j])
						worstEl = max(worstEl, math.Abs(ua[j]-ub[j]))
					}
					worstL2 = max(worstL2, math.Sqrt(d))
				}
				largest = max(largest, worstL2)
				if worstL2 > math.Sqrt2*c1*(1+1e-12) || worstEl > c2*(1+1e-12) {
					t.Errorf("%s q′=%g remove %d: ℓ2 change %.4g (bound %.4g), element change %.4g (bound %g)", g.Name, q, v, worstL2, math.Sqrt2*c1, worstEl, c2)
				}
			}
		}
	}
	// A removed source goes from its clipped vector (norm C1) to 0.
	if largest < c1*(1-1e-9) {
		t.Errorf("largest ℓ2 change %.4g below C1 = %g: the test never removes a source", largest, c1)
	}
}

// TestAPPRAuditSeesRemovedNode is the outside audit's counterexample: a
// star of 9 leaves, split ratio:0.9:0.05, leaf 3 removed, ε = 4, one
// DP-APPR row of the hub, every coordinate compared (leaf 3's included).
// The release over all node ids stays within the per-row claim (GM and
// EM0), and the construction DPAR had before — candidates restricted to
// G's nodes, so the removed leaf is never named on G′ — is caught by the
// same audit: the audit has the power to see the leak.
func TestAPPRAuditSeesRemovedNode(t *testing.T) {
	if testing.Short() {
		t.Skip("audit: 2×2000 releases")
	}
	g := gen.SmallStar(9, 1)
	spec, err := graphs.ParseSplit("ratio:0.9:0.05")
	if err != nil {
		t.Fatal(err)
	}
	if g, err = graphs.ApplySplit(g, spec, 1); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(g.Split.Train, 3) || !slices.Contains(g.Split.Train, 0) {
		t.Fatalf("test set-up: the hub and leaf 3 must be training nodes, split %v", g.Split)
	}
	gp := removeNode(g, 3)
	const trials = 2000
	for _, variant := range []string{"gm", "em0"} {
		m := newDPAR(t, "--variant", variant)
		ctx := &methods.Context{Graph: g, Level: methods.Node, Epsilon: 4, Delta: 1e-5, DeltaRule: methods.DeltaGiven, Seed: 1, Selection: trainers.SelectLast}
		p, err := m.calibrate(ctx, len(g.Split.Train))
		if err != nil {
			t.Fatal(err)
		}
		target, err := m.apprAudit(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		audit := func(relG, relGp run.Release1) dp.AuditResult {
			sampler := func(rel run.Release1, side string) dp.AuditSampler {
				return func(i int, _ bool) ([]float64, error) {
					return rel(dp.NewSource(1).Split(fmt.Sprintf("audit %s %d", side, i)))
				}
			}
			res, err := dp.AuditStream(sampler(relG, "G"), sampler(relGp, "G′"), trials, dp.AuditConfig{Delta: target.Delta})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		relG, err := target.Prepare(g)
		if err != nil {
			t.Fatal(err)
		}
		relGp, err := target.Prepare(gp)
		if err != nil {
			t.Fatal(err)
		}
		res := audit(relG, relGp)
		t.Logf("%s: claimed ε %.4g per row; ε_lb %.4g (GDP %.4g)", variant, target.Claimed, res.EpsilonLB, res.EpsilonLBGDP)
		if res.EpsilonLB > target.Claimed || (target.Gaussian && res.EpsilonLBGDP > target.Claimed) {
			t.Errorf("%s: ε_lb %.4g (GDP %.4g) above the claimed %.4g", variant, res.EpsilonLB, res.EpsilonLBGDP, target.Claimed)
		}
		// The old construction: the row's candidates are G's nodes only.
		old := func(h *graphs.Graph) run.Release1 {
			gs := splitGraphs(h, 1, nil)
			return func(src *dp.Source) ([]float64, error) {
				local, _ := slices.BinarySearch(gs.members, 0)
				rows, err := APPRMatrix(gs.trainAdj, allIDs(len(gs.members)), len(gs.members), []int{local}, DPARISTAParams(), p.appr, src)
				if err != nil {
					return nil, err
				}
				out := make([]float64, h.N)
				for k := rows.Indptr[0]; k < rows.Indptr[1]; k++ {
					out[gs.members[rows.Indices[k]]] = rows.Value(k)
				}
				return out, nil
			}
		}
		leak := audit(old(g), old(gp))
		t.Logf("%s, candidates restricted to G's nodes: ε_lb %.4g", variant, leak.EpsilonLB)
		if leak.EpsilonLB <= target.Claimed {
			t.Errorf("%s: the audit does not see the old construction's leak (ε_lb %.4g ≤ claimed %.4g)", variant, leak.EpsilonLB, target.Claimed)
		}
	}
}

// TestNoRefusalOnPrivateData: the outside review's refusals on G and not on
// G − v (or the reverse) are gone: a batch capacity of one example with
// two-row examples (star-9, --rows 10 --epochs 2, seed 56); a split whose
// only training node is the removed one; ISTA that does not converge
// (--ista-tol 0) for a present source. Each pair now runs on both sides.
func TestNoRefusalOnPrivateData(t *testing.T) {
	star := gen.SmallStar(9, 1)
	run := func(g *graphs.Graph, seed uint64, args ...string) error {
		m := newDPAR(t, args...)
		ctx := &methods.Context{Graph: g, Level: methods.Node, Epsilon: 4, Delta: 1e-5, DeltaRule: methods.DeltaGiven, Seed: seed, Selection: trainers.SelectLast}
		_, err := m.Run(ctx)
		return err
	}
	withTrain := func(train ...int) *graphs.Graph {
		h := *star
		h.Split = graphs.Split{Train: train, Test: []int{9}}
		return &h
	}
	for _, tc := range []struct {
		name   string
		g      *graphs.Graph
		remove int
		seed   uint64
		args   []string
	}{
		{"capacity one, two-row examples", withTrain(allIDs(9)...), 5, 56, []string{"--rows", "10", "--epochs", "2"}},
		{"the only training node removed", withTrain(3), 3, 1, []string{"--rows", "10", "--epochs", "2"}}, // --rows ≤ the 10 node ids (public)
		{"ISTA without convergence", withTrain(0, 3), 3, 1, []string{"--rows", "10", "--node-rate", "1", "--ista-tol", "0", "--epochs", "1"}},
	} {
		for side, g := range map[string]*graphs.Graph{"G": tc.g, "G − v": removeNode(tc.g, tc.remove)} {
			if err := run(g, tc.seed, tc.args...); err != nil {
				t.Errorf("%s, %s: %v", tc.name, side, err)
			}
		}
	}
}
