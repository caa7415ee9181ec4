package dpar

import (
	"fmt"
	"slices"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/methods"
	G "gorgonia.org/gorgonia"
)

// AuditTarget is one of DPAR's releases for `dpgnn audit`, on the raw
// training side of the graph (no node subsample: the claim is the
// mechanism's own ε, before amplification):
//
//   - appr (default): one DP-APPR row of the run's calibrated mechanism for
//     a fixed source, the training node of largest degree in G; released:
//     the row as a dense vector over the nodes (a removed node's entry is
//     not compared). Claimed: the ε of one row's events.
//   - sgd: one DP-SGD step from the model's initial parameters with Π held
//     fixed (DP-SGD runs conditioned on the released Π). Π is built on the
//     first graph prepared (G) without noise from the M training nodes of
//     largest degree, its columns capped as in a run; on G′ the removed
//     node's example and its column of Π are gone. Released: the
//     privatised gradient. Claimed: one step of the PoissonGroupGaussian.
func (m *DPAR) AuditTarget(ctx *methods.Context, opts methods.AuditOptions) (*methods.AuditTarget, error) {
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

func (m *DPAR) apprAudit(ctx *methods.Context, p *privacy) (*methods.AuditTarget, error) {
	events, err := p.appr.Events(1)
	if err != nil {
		return nil, err
	}
	claimed, err := methods.ClaimedEpsilon(dp.ComposedEvent{Events: events}, p.Plan.Delta)
	if err != nil {
		return nil, err
	}
	s, err := hubSource(ctx.Graph)
	if err != nil {
		return nil, err
	}
	t := &methods.AuditTarget{Claimed: claimed, Delta: p.Plan.Delta, Width: 1, Gaussian: p.appr.Kind == APPRGM,
		What: fmt.Sprintf("one DP-APPR row (%s) for source node %d on the training side's graph; released: the row's kept values as a dense vector", m.apprWhat(p.appr), s)}
	params := graphs.ISTAParams{Alpha: m.cfg.ISTAAlpha, Rho: m.cfg.ISTARho, Tol: m.cfg.ISTATol, MaxIter: 100000}
	t.Prepare = func(g *graphs.Graph) (methods.Release1, error) {
		train := slices.Clone(g.Split.Train)
		slices.Sort(train)
		local, ok := slices.BinarySearch(train, s)
		if !ok {
			return nil, fmt.Errorf("the audited source %d is not a training node of this graph (remove another node)", s)
		}
		sub, _ := graphs.InducedSubgraph(g.WithAdj(g.Adj), train)
		adj := unweighted(sub.Adj)
		return func(src *dp.Source) ([]float64, error) {
			row, err := APPRMatrix(adj, []int{local}, params, p.appr, src)
			if err != nil {
				return nil, err
			}
			out := make([]float64, g.N)
			for k := row.Indptr[0]; k < row.Indptr[1]; k++ {
				out[train[row.Indices[k]]] = row.Value(k)
			}
			return out, nil
		}, nil
	}
	return t, nil
}

func (m *DPAR) sgdAudit(ctx *methods.Context, p *privacy) (*methods.AuditTarget, error) {
	step, err := p.sgd.Step()
	if err != nil {
		return nil, err
	}
	claimed, err := methods.ClaimedEpsilon(step, p.Plan.Delta)
	if err != nil {
		return nil, err
	}
	t := &methods.AuditTarget{Claimed: claimed, Delta: p.Plan.Delta,
		What: fmt.Sprintf("one DP-SGD step with Π fixed: Poisson rate %.4g, clip %g, noise std %.4g (R=%d); released: the privatised gradient", p.rate, m.cfg.Clip, p.sgdStd, p.sgd.Occurrences)}
	var base []int     // the training nodes of G (Π's rows and columns)
	var pi *graphs.CSR // Π on G, local ids of base
	t.Prepare = func(g *graphs.Graph) (methods.Release1, error) {
		train := slices.Clone(g.Split.Train)
		slices.Sort(train)
		if pi == nil {
			base = train
			sub, _ := graphs.InducedSubgraph(g.WithAdj(g.Adj), train)
			adj := unweighted(sub.Adj)
			sources := largestDegree(adj, m.cfg.Rows)
			var err error
			if pi, err = m.buildPi(adj, sources, APPRMechanism{Kind: APPRNone, K: min(m.cfg.TopK, len(train))}, p.maxRefs, nil); err != nil {
				return nil, err
			}
		}
		// The examples are G's training nodes still present in g; a
		// removed node loses its example and its column.
		present := make([]bool, len(base))
		var examples []int
		for k, i := range base {
			if _, ok := slices.BinarySearch(train, i); ok {
				present[k] = true
				examples = append(examples, k)
			}
		}
		q := dropColumns(pi, present)
		labels := make([]int, len(base))
		for k, i := range base {
			labels[k] = g.Labels[i]
		}
		capEx := dpnn.DefaultCapacity(p.rate, len(examples))
		n, err := m.buildNet(ctx.Seed, g.X, g.NumClasses, capEx, capEx*maxRow(q), true)
		if err != nil {
			return nil, err
		}
		sgd, err := dpnn.BuildSGD(n.m, n.perRow, dpnn.SGDConfig{Clip: m.cfg.Clip, Multiplier: p.sgdStd / m.cfg.Clip, Rate: p.rate, Samples: len(examples), Capacity: capEx},
			dp.NewSource(0), []*G.Node{n.h})
		if err != nil {
			return nil, err
		}
		fill := n.filler(q, base, labels, sgd.Groups)
		return func(src *dp.Source) ([]float64, error) {
			sgd.SetSource(src)
			return sgd.Release(func(s []int) error {
				ids := make([]int, len(s))
				for k, e := range s {
					ids[k] = examples[e]
				}
				return fill(ids)
			})
		}, nil
	}
	return t, nil
}

// largestDegree returns the m nodes of largest degree in adj (lowest id on
// ties), sorted.
func largestDegree(adj *graphs.CSR, m int) []int {
	ids := make([]int, adj.Rows)
	for i := range ids {
		ids[i] = i
	}
	deg := func(i int) int { return adj.Indptr[i+1] - adj.Indptr[i] }
	slices.SortStableFunc(ids, func(a, b int) int { return deg(b) - deg(a) })
	out := ids[:min(m, len(ids))]
	slices.Sort(out)
	return out
}

// dropColumns returns pi without the entries in columns j with !keep[j].
func dropColumns(pi *graphs.CSR, keep []bool) *graphs.CSR {
	out := &graphs.CSR{Rows: pi.Rows, Cols: pi.Cols, Indptr: make([]int, 1, pi.Rows+1), Data: []float64{}}
	for i := 0; i < pi.Rows; i++ {
		for k := pi.Indptr[i]; k < pi.Indptr[i+1]; k++ {
			if keep[pi.Indices[k]] {
				out.Indices = append(out.Indices, pi.Indices[k])
				out.Data = append(out.Data, pi.Value(k))
			}
		}
		out.Indptr = append(out.Indptr, len(out.Indices))
	}
	return out
}

var _ methods.Auditor = (*DPAR)(nil)
