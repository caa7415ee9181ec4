package dpar

import (
	"fmt"
	"slices"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/run"
)

// Releases are the kinds of release `dpgnn audit --release` chooses
// from: one DP-APPR row (appr, the default) or one DP-SGD step (sgd).
func (m *DPAR) Releases() []string { return []string{"appr", "sgd"} }

// AuditTarget is one of DPAR's releases for `dpgnn audit`, on the raw
// training side of the graph (no node subsample: the claim is the
// mechanism's own ε, before amplification):
//
//   - appr (default): one DP-APPR row of the run's calibrated mechanism for
//     a fixed source, the training node of largest degree in G (on a graph
//     where that node is removed, its row is pure noise, as in a run);
//     released: the row as a dense vector over all N node ids, every id a
//     candidate, the removed node's coordinate compared like any other.
//     Claimed: the ε of one row's events.
//   - sgd: one DP-SGD step from the model's initial parameters with Π held
//     fixed (DP-SGD runs conditioned on the released Π). Π is built on the
//     first graph prepared (G) without noise from the M training nodes of
//     largest degree, its columns capped as in a run; on each graph the
//     examples are its training nodes, reading Π's columns of training
//     nodes only, and the samples are the N ids at the run's rate, as in a
//     run. Released: the privatised gradient. Claimed: one step of the
//     dp.Occurrences{R, 2, Poisson{q, Gaussian{z}}} event (the plan's step).
func (m *DPAR) AuditTarget(ctx *methods.Context, opts run.AuditOptions) (*run.AuditTarget, error) {
	if !ctx.Private() || ctx.Level != methods.Node {
		return nil, fmt.Errorf("dpar is audited at node level with a finite --epsilon")
	}
	if opts.Multiplier > 0 {
		return nil, fmt.Errorf("--multiplier is not supported by dpar: it calibrates two mechanisms from --epsilon")
	}
	p, err := m.calibrate(ctx, len(ctx.Graph.Split.Train))
	if err != nil {
		return nil, err
	}
	switch opts.Release {
	case "", "appr":
		return m.apprAudit(ctx, p)
	case "sgd":
		return m.sgdAudit(ctx, p)
	}
	return nil, fmt.Errorf("--release %q: dpar releases appr (one DP-APPR row) or sgd (one DP-SGD step)", opts.Release)
}

// hubSource is the training node of largest degree in g (lowest id on
// ties).
func hubSource(g *graphs.Graph) (int, error) {
	best, deg := -1, -1
	for _, i := range g.Split.Train {
		if d := g.Adj.Indptr[i+1] - g.Adj.Indptr[i]; d > deg || (d == deg && i < best) {
			best, deg = i, d
		}
	}
	if best < 0 {
		return 0, fmt.Errorf("the split has no training nodes")
	}
	return best, nil
}

func (m *DPAR) apprAudit(ctx *methods.Context, p *privacy) (*run.AuditTarget, error) {
	events, err := p.appr.Events(1)
	if err != nil {
		return nil, err
	}
	claimed, err := run.ClaimedEpsilon(dp.ComposedEvent{Events: events}, p.Plan.Delta)
	if err != nil {
		return nil, err
	}
	s, err := hubSource(ctx.Graph)
	if err != nil {
		return nil, err
	}
	if p.appr.K > ctx.Graph.N {
		return nil, fmt.Errorf("--topk %d exceeds the %d node ids", p.appr.K, ctx.Graph.N)
	}
	t := &run.AuditTarget{Claimed: claimed, Delta: p.Plan.Delta, Width: 1, Gaussian: p.appr.Kind == APPRGM,
		What: fmt.Sprintf("one DP-APPR row (%s) for source node %d on the training side's graph; released: the row's kept values as a dense vector over all %d node ids (every id a candidate, an absent node's value 0 plus noise)",
			m.apprWhat(p.appr), s, ctx.Graph.N)}
	params := m.istaParams()
	t.Prepare = func(g *graphs.Graph) (run.Release1, error) {
		// The APPR vector is data-dependent but noise-free: computed once
		// per graph; each release adds noise and selects (Release).
		gs := splitGraphs(g, 1, nil)
		var solver *ISTA
		if gs.trainAdj != nil {
			var err error
			if solver, err = NewISTA(gs.trainAdj, params); err != nil {
				return nil, err
			}
		}
		vec, err := apprVector(solver, gs.members, g.N, s)
		if err != nil {
			return nil, err
		}
		return func(src *dp.Source) ([]float64, error) {
			// the first of the source's row children, as APPRMatrix draws
			row, err := p.appr.Release(vec, src.Split("dpar/appr row"))
			if err != nil {
				return nil, err
			}
			out := make([]float64, g.N)
			for k, j := range row.Indices {
				out[j] = row.Values[k]
			}
			return out, nil
		}, nil
	}
	return t, nil
}

func (m *DPAR) sgdAudit(ctx *methods.Context, p *privacy) (*run.AuditTarget, error) {
	claimed, err := run.ClaimedEpsilon(p.sgd, p.Plan.Delta)
	if err != nil {
		return nil, err
	}
	t := &run.AuditTarget{Claimed: claimed, Delta: p.Plan.Delta,
		What: fmt.Sprintf("one DP-SGD step with Π fixed: Poisson rate %.4g over the node ids, clip %g, noise std %.4g (R=%d); released: the privatised gradient", p.rate, m.cfg.Clip, p.sgdStd, p.sgd.R)}
	var pi *graphs.CSR // Π over the universe, built on the first graph
	t.Prepare = func(g *graphs.Graph) (run.Release1, error) {
		gs := splitGraphs(g, 1, nil)
		if pi == nil {
			var err error
			if pi, err = m.buildPi(gs, largestDegree(gs, m.cfg.Rows), APPRMechanism{Kind: APPRNone, K: min(m.cfg.TopK, g.N)}, p.maxRefs, nil); err != nil {
				return nil, err
			}
		}
		if pi.Rows != g.N {
			return nil, fmt.Errorf("the graphs have %d and %d nodes: a removed node keeps its id", pi.Rows, g.N)
		}
		ex := exampleRows(pi, gs.members)
		labels := make([]int, len(gs.members))
		for k, i := range gs.members {
			labels[k] = g.Labels[i]
		}
		capEx := p.capacity(g.N)
		n, err := m.buildNet(ctx.Seed, g.X, g.NumClasses, capEx, capEx*maxRow(ex), true)
		if err != nil {
			return nil, err
		}
		// The run's construction (m.private: dpnn.Private over the declared
		// examples, its step checked against the plan's), recording into a
		// ledger of its own: the audit compares releases, it accounts nothing.
		sgd, fill, err := m.private(n, gs, ex, g.Labels, p, dp.NewLedger(), dp.NewSource(0))
		if err != nil {
			return nil, err
		}
		return func(src *dp.Source) ([]float64, error) {
			sgd.SetSource(src)
			return sgd.ReleaseExamples(fill)
		}, nil
	}
	return t, nil
}

// largestDegree returns the m nodes of G of largest degree in G (lowest id
// on ties), as sorted universe ids.
func largestDegree(gs *graphsOf, m int) []int {
	if gs.trainAdj == nil {
		return nil
	}
	adj := gs.trainAdj
	ids := make([]int, adj.Rows)
	for i := range ids {
		ids[i] = i
	}
	deg := func(i int) int { return adj.Indptr[i+1] - adj.Indptr[i] }
	slices.SortStableFunc(ids, func(a, b int) int { return deg(b) - deg(a) })
	out := make([]int, 0, min(m, len(ids)))
	for _, k := range ids[:min(m, len(ids))] {
		out = append(out, gs.members[k])
	}
	slices.Sort(out)
	return out
}

var _ run.Auditor = (*DPAR)(nil)
