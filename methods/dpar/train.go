package dpar

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/nn"
	"github.com/dpgnn/dpgnn/trainers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// graphsOf are a run's graphs over the public id universe [0, n) (every
// node id of the input; a removed node keeps its id, absent): G, the node
// subsample of the training side, whose nodes are the examples, and the
// inference graph on every non-training node. Both are induced subgraphs
// of the input, so every edge between the two sides is gone.
type graphsOf struct {
	n        int         // the universe size, the input's node count
	members  []int       // universe ids of G's nodes, sorted
	trainAdj *graphs.CSR // G's symmetric unweighted adjacency (local id k is members[k]); nil when G is empty
	infer    []int       // universe ids of the non-training nodes, sorted
	inferAdj *graphs.CSR
}

// unweighted returns the symmetric 0/1 pattern of a (what ISTA needs).
func unweighted(a *graphs.CSR) *graphs.CSR {
	s := graphs.Symmetrize(a).Clone()
	s.Data = nil
	return s
}

// splitGraphs draws G: every universe id gets an independent keep bit with
// probability q′ (Poisson node subsampling over [0, n), drawn from the
// mechanism source whatever the data, so the draw for an id does not
// depend on which other nodes are present), and G's nodes are the training
// nodes whose bit is set. G may be empty (a run then releases noise only);
// nothing here refuses on a private count. nodeRate ≥ 1 keeps every
// training node.
func splitGraphs(g *graphs.Graph, nodeRate float64, src *dp.Source) *graphsOf {
	in := make([]bool, g.N)
	for _, i := range g.Split.Train {
		in[i] = true
	}
	keep := in
	if nodeRate < 1 {
		keep = make([]bool, g.N)
		for _, i := range dp.PoissonSample(src, g.N, nodeRate) {
			keep[i] = in[i]
		}
	}
	out := &graphsOf{n: g.N}
	for i := range g.N {
		switch {
		case keep[i]:
			out.members = append(out.members, i)
		case !in[i]:
			out.infer = append(out.infer, i)
		}
	}
	if len(out.members) > 0 {
		sub, _ := graphs.InducedSubgraph(g.WithAdj(g.Adj), out.members)
		out.trainAdj = unweighted(sub.Adj)
	}
	if len(out.infer) > 0 {
		is, _ := graphs.InducedSubgraph(g.WithAdj(g.Adj), out.infer)
		out.inferAdj = unweighted(is.Adj)
	}
	return out
}

// drawSources draws the M DP-APPR sources. Private: a uniform M-subset of
// the whole universe [0, n), from the mechanism source and without looking
// at the data, so whether an id is a source is public; a source that is
// not a node of G (absent, outside the node subsample, on the inference
// side) gets a row of pure noise and has no example. Without privacy: M of
// G's nodes (a fixed draw), as the paper picks them.
func drawSources(gs *graphsOf, m int, src *dp.Source) []int {
	var out []int
	if src != nil {
		out = rand.New(src).Perm(gs.n)[:min(m, gs.n)]
	} else {
		r := rand.New(rand.NewPCG(1, 2))
		for _, k := range r.Perm(len(gs.members))[:min(m, len(gs.members))] {
			out = append(out, gs.members[k])
		}
	}
	slices.Sort(out)
	return out
}

// istaParams are ISTA's parameters in a run: at the iteration cap the last
// iterate is kept (the rows' guarantee rests on the clipping, not on
// convergence), so no source's vector can make a run fail on G and not on
// G − v.
func (m *DPAR) istaParams() ISTAParams {
	return ISTAParams{Alpha: m.cfg.ISTAAlpha, Rho: m.cfg.ISTARho, Tol: m.cfg.ISTATol, MaxIter: 100000, KeepLast: true}
}

// buildPi releases the DP-APPR rows of the sources on G (mechanism mech,
// APPRNone without privacy; APPRMatrix) and assembles Π from them (piFrom).
func (m *DPAR) buildPi(gs *graphsOf, sources []int, mech APPRMechanism, maxRefs int, src *dp.Source) (*graphs.CSR, error) {
	params := m.istaParams()
	rows, err := APPRMatrix(gs.trainAdj, gs.members, gs.n, sources, params, mech, src)
	if err != nil {
		return nil, fmt.Errorf("DP-APPR: %w", err)
	}
	return m.piFrom(rows, sources, gs.n, maxRefs)
}

// piFrom assembles Π over the universe from the released rows alone: the
// row of each source, the identity row e_u for every other id u, at most
// maxRefs entries besides the diagonal per column when maxRefs > 0
// (largest |value| kept), then the column bound τ. Its inputs are the
// released rows and the public sources and universe: it is
// post-processing, and Π does not depend on which nodes are present.
func (m *DPAR) piFrom(rows *graphs.CSR, sources []int, n, maxRefs int) (*graphs.CSR, error) {
	pi, err := AssemblePi(rows, sources)
	if err != nil {
		return nil, err
	}
	if pi.Rows != n {
		return nil, fmt.Errorf("dpar: Π has %d rows, the universe %d ids", pi.Rows, n)
	}
	if maxRefs > 0 {
		pi = capColumns(pi, maxRefs)
	}
	return ClipColumns(pi, m.cfg.Tau, m.columnMode())
}

// exampleRows returns G's examples from Π: row k is Π's row of members[k]
// with only the columns of members kept (every other id has no features
// in this run: absent, outside the node subsample or on the inference
// side), in universe ids.
//
// Occurrence bound (the DP-SGD accounting's R; proof). Fix the released
// rows, so Π is fixed (piFrom reads nothing else). Let G′ be G without
// node v. The examples of G′ are those of G but v's; example e ≠ v reads
// Π[e, ·] on G's columns, so its row differs between G and G′ only if
// Π[e, v] ≠ 0. Only the rows of sources have entries off the diagonal (the
// others are identity rows), and after the cap a column holds at most
// maxRefs of them besides its own row. So at most 1 + maxRefs examples
// differ: v's own (present on one side only) and at most maxRefs that lose
// their term in x_v; every other example has the same row and features on
// both sides. Without the cap (paper accounting) only the M source rows can
// reference v: at most 1 + M. TestOccurrenceBound checks exactly this
// under the coupling on stars, double stars, paths and power-law graphs.
func exampleRows(pi *graphs.CSR, members []int) *graphs.CSR {
	in := make([]bool, pi.Cols)
	for _, u := range members {
		in[u] = true
	}
	out := &graphs.CSR{Rows: len(members), Cols: pi.Cols, Indptr: make([]int, 1, len(members)+1), Data: []float64{}}
	for _, e := range members {
		for k := pi.Indptr[e]; k < pi.Indptr[e+1]; k++ {
			if j := pi.Indices[k]; in[j] {
				out.Indices = append(out.Indices, j)
				out.Data = append(out.Data, pi.Value(k))
			}
		}
		out.Indptr = append(out.Indptr, len(out.Indices))
	}
	return out
}

// capColumns keeps, in every column j, the entry of row j and the maxRefs
// other entries of largest |value| (ties: lower row), dropping the rest.
func capColumns(pi *graphs.CSR, maxRefs int) *graphs.CSR {
	type ent struct {
		row int
		v   float64
	}
	cols := make([][]ent, pi.Cols)
	for i := 0; i < pi.Rows; i++ {
		for k := pi.Indptr[i]; k < pi.Indptr[i+1]; k++ {
			if j := pi.Indices[k]; j != i {
				cols[j] = append(cols[j], ent{i, pi.Value(k)})
			}
		}
	}
	drop := map[[2]int]bool{}
	for j, es := range cols {
		if len(es) <= maxRefs {
			continue
		}
		slices.SortStableFunc(es, func(a, b ent) int { return cmp.Compare(math.Abs(b.v), math.Abs(a.v)) })
		for _, e := range es[maxRefs:] {
			drop[[2]int{e.row, j}] = true
		}
	}
	out := &graphs.CSR{Rows: pi.Rows, Cols: pi.Cols, Indptr: make([]int, 1, pi.Rows+1), Data: []float64{}}
	for i := 0; i < pi.Rows; i++ {
		for k := pi.Indptr[i]; k < pi.Indptr[i+1]; k++ {
			if !drop[[2]int{i, pi.Indices[k]}] {
				out.Indices = append(out.Indices, pi.Indices[k])
				out.Data = append(out.Data, pi.Value(k))
			}
		}
		out.Indptr = append(out.Indptr, len(out.Indices))
	}
	return out
}

// net is DPAR's model: a bias-free 2-layer MLP f_θ, a training path over
// capRows (example, Π-neighbour) rows aggregated into capEx example logits
// z_v = Σ_u Π[v,u]·f_θ(x_u), and an evaluation path f_θ(X) over all nodes.
// It is not a run.Module: a Module trains on node rows, one sample per
// row, and DPAR's sample is an example — a row of Π aggregated over the
// rows of its Π-neighbours, with an occurrence bound R — so its training
// path (the Π aggregation, the example groups DP-SGD clips) is its own.
type net struct {
	m      *nn.Model
	batch  *layers.FeatureBatch
	agg    *nn.Sparse
	ce     *nn.CrossEntropy
	perRow *G.Node // per-row loss over the capRows rows (example losses, then zeros)
	h      *G.Node // f_θ(X) over every node
	capEx  int
	rows   int
	// forward is f_θ over a features input (a new path on m).
	forward func(*layers.Features) *G.Node
}

func (m *DPAR) buildNet(seed uint64, x *graphs.Features, classes, capEx, capRows int, record bool) (*net, error) {
	n := &net{m: nn.NewModel(seed), capEx: capEx, rows: capRows}
	mm := n.m
	err := nn.Build(func() error {
		l1 := layers.NewLinear(mm, "dpar.0", x.F, m.cfg.Hidden, false, layers.InitGlorot)
		l2 := layers.NewLinear(mm, "dpar.1", m.cfg.Hidden, classes, false, layers.InitGlorot)
		forward := func(in *layers.Features) *G.Node {
			var h *G.Node
			if in.Sparse != nil {
				mm.SparseDropout(in.Sparse, m.cfg.Dropout)
				h = l1.ForwardSparse(in.Sparse)
			} else {
				h = l1.Forward(mm.Dropout(in.Dense, m.cfg.Dropout))
			}
			return l2.Forward(mm.Dropout(nn.ReLU(h), m.cfg.Dropout))
		}
		n.forward = forward
		var err error
		if n.batch, err = layers.NewFeatureBatch(mm, x, capRows, "X.rows"); err != nil {
			return err
		}
		all, err := layers.NewFeatures(mm, x, "X")
		if err != nil {
			return err
		}
		if record {
			mm.StartRecording()
		}
		hb := forward(&n.batch.Features)
		mm.StopRecording()
		n.agg = nn.NewSparse("Pi.batch", &graphs.CSR{Rows: capEx, Cols: capRows, Indptr: make([]int, capEx+1), Data: []float64{}})
		logits := G.Must(nn.SpMM(n.agg, hb))
		n.h = forward(all)
		if n.ce, err = nn.NewCrossEntropy(mm, logits, "loss"); err != nil {
			return err
		}
		n.perRow = n.ce.PerRow
		if capRows > capEx {
			zeros := G.NewConstant(tensor.New(tensor.WithShape(capRows-capEx), tensor.WithBacking(make([]float64, capRows-capEx))), G.WithName("loss.pad"))
			n.perRow = G.Must(G.Concat(0, n.ce.PerRow, zeros))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return n, nil
}

// filler loads examples into the training path. ex holds the examples'
// rows of Π (universe column ids, which are the feature rows) and labels[k]
// example k's label. Without exOf a sample is an example index; with it a
// sample is a universe id u and exOf[u] its example, −1 when u is not a
// node of G: an empty example (no rows, no loss term, a zero gradient).
func (n *net) filler(ex *graphs.CSR, labels []int, exOf []int, groups *nn.RowGroups) func([]int) error {
	pos := make([]int, 0, n.capEx)
	y := make([]int, n.capEx)
	rows := make([]int, 0, n.rows)
	// one aggregation matrix, refilled in place for every batch (at most
	// n.rows entries: one per loaded row)
	a := &graphs.CSR{Rows: n.capEx, Cols: n.rows, Indptr: make([]int, n.capEx+1),
		Indices: make([]int, 0, n.rows), Data: make([]float64, 0, n.rows)}
	return func(samples []int) error {
		rows, pos = rows[:0], pos[:0]
		a.Indices, a.Data = a.Indices[:0], a.Data[:0]
		for k, s := range samples {
			e := s
			if exOf != nil {
				e = exOf[s]
			}
			if e >= 0 {
				for t := ex.Indptr[e]; t < ex.Indptr[e+1]; t++ {
					r := len(rows)
					if r >= n.rows {
						return fmt.Errorf("dpar: batch needs more than %d rows", n.rows)
					}
					rows = append(rows, ex.Indices[t])
					a.Indices = append(a.Indices, r)
					a.Data = append(a.Data, ex.Value(t))
					if groups != nil {
						groups.Of[r] = k
					}
				}
				pos = append(pos, k)
				y[k] = labels[e]
			}
			a.Indptr[k+1] = len(a.Indices)
		}
		for k := len(samples); k < n.capEx; k++ {
			a.Indptr[k+1] = len(a.Indices)
		}
		if groups != nil {
			for r := len(rows); r < n.rows; r++ {
				groups.Of[r] = -1
			}
			groups.Samples = len(samples)
		}
		if err := n.batch.Fill(rows); err != nil {
			return err
		}
		if err := n.agg.Set(a); err != nil {
			return err
		}
		return n.ce.SetRows(pos, y)
	}
}

// privateSGD is DPAR's DP-SGD construction with its step count.
type privateSGD struct {
	*dpnn.SGD
	Steps int // the noisy steps the plan accounts (⌈epochs/q⌉)
}

// examplesOf declares G's examples for DP-SGD over the public universe of
// node ids: id u's example is u's row of Π restricted to G's nodes
// (exampleRows), pooled with Π's values, z_u = Σ_t Π[u,t]·f_θ(x_t); an
// id that is not a node of G (absent, outside the node subsample, on the
// inference side) holds no example (Examples.Present): it is drawn like
// every other id and then dropped. A node of G whose row has no entry on
// G's nodes keeps an example with no rows (logits 0, a zero gradient). Universe row t of the examples is entry t of ex (ids in
// order), so feat[t] = ex.Indices[t] is the feature row it loads.
//
// What the framework checks, and what it cannot. An example's rows are
// copies: two examples that both reference node t each load x_t into rows
// of their own, so the only product on DPAR's training path that joins
// rows is Π's batch (nn.SpMM of the pooling matrix, capEx output rows ×
// the batch rows), non-square. dpnn checks it at every step as a pooling
// product: an entry (k, i) must read a row of batch example k
// (nn.CheckPools), so z_k and example k's loss are functions of example
// k's rows only and the clipped gradient of example k carries no other
// example's. The row groups come from the blocks (a fill cannot re-tag a
// row). What no check can see is whether an example's rows are the right
// ones: that example u reads Π[u, ·] on G's nodes and nothing else is
// exampleRows' claim, and R (with the Deleted/Inserted split) is proven
// there and in calibrate, property-tested by TestOccurrenceBound.
func examplesOf(gs *graphsOf, ex *graphs.CSR, r, change, deleted, inserted int) (*dpnn.Examples, []int, error) {
	exOf := exampleIndex(gs.n, gs.members)
	start := make([]int, gs.n+1)
	for u := range gs.n {
		start[u+1] = start[u]
		if k := exOf[u]; k >= 0 {
			start[u+1] += ex.Indptr[k+1] - ex.Indptr[k]
		}
	}
	weights := make([]float64, ex.NNZ())
	for t := range weights {
		weights[t] = ex.Value(t)
	}
	x, err := dpnn.PooledExamples(gs.n, start, weights, gs.present(), r, change,
		fmt.Sprintf("a node id's row of Π over G's nodes, its own and at most %d other rows referencing a node (empty for an id outside G)", r-1))
	if err != nil {
		return nil, nil, err
	}
	return x, ex.Indices, nil
}

// private builds DP-SGD over G's examples on n's recorded training path
// with the plan's noise (dpnn.Private): Poisson sampling over the node ids
// at p.rate, the noise std and the step event of the plan's group pair
// (Occurrences{R, 2, Deleted R, Inserted R−1, Poisson{q, Gaussian{z}}}),
// each noisy step recorded by the construction in ledger through the
// recorder of the plan's DP-SGD release (refused, before anything is
// drawn, when the plan declares no such step). It refuses a
// construction whose step event is not the plan's, so the run cannot
// record what the plan did not account. The fill loads a laid-out batch:
// the rows' features, Π's pooling matrix, the examples' labels.
func (m *DPAR) private(n *net, gs *graphsOf, ex *graphs.CSR, labels []int, p *privacy, ledger *dp.Ledger, src *dp.Source) (*privateSGD, func(*dpnn.Batch) error, error) {
	pg, ok := p.sgd.Event.(dp.Poisson)
	if !ok {
		return nil, nil, fmt.Errorf("dpar: the plan's DP-SGD step %v is not Poisson sampled", p.sgd)
	}
	gauss, ok := pg.Event.(dp.GaussianEvent)
	if !ok || p.sgd.Change != math.Trunc(p.sgd.Change) {
		return nil, nil, fmt.Errorf("dpar: the plan's DP-SGD step %v is not a Gaussian with an integer change", p.sgd)
	}
	x, feat, err := examplesOf(gs, ex, p.sgd.R, int(p.sgd.Change), p.sgd.Deleted, p.sgd.Inserted)
	if err != nil {
		return nil, nil, err
	}
	cfg := dpnn.PrivateConfig{Name: ledgerSGD, N: x.N, R: x.R, Change: x.Change, What: x.What, SampleRate: pg.Rate,
		Epochs: m.cfg.TrainEpochs, Clip: m.cfg.Clip, Deleted: p.sgd.Deleted, Inserted: p.sgd.Inserted, PoolRows: n.capEx}
	z := gauss.Multiplier
	if got, want := cfg.StepEvent(z).String(), p.sgd.String(); got != want || cfg.Steps() != p.steps {
		return nil, nil, fmt.Errorf("dpar: the DP-SGD construction's step %s × %d is not the plan's %s × %d", got, cfg.Steps(), want, p.steps)
	}
	rec, err := p.Plan.Recorder(ledger, cfg.LedgerName(), cfg.StepEvent(z))
	if err != nil {
		return nil, nil, err
	}
	sgd, err := dpnn.Private(n.m, n.perRow, []*G.Node{n.h}, x, cfg, z, rec, src)
	if err != nil {
		return nil, nil, err
	}
	rows := make([]int, 0, n.rows)
	pos := make([]int, 0, n.capEx)
	y := make([]int, n.capEx)
	fill := func(b *dpnn.Batch) error {
		rows, pos = rows[:0], pos[:0]
		for _, r := range b.Rows {
			rows = append(rows, feat[r])
		}
		for k, u := range b.Examples {
			pos = append(pos, k)
			y[k] = labels[u]
		}
		if err := n.batch.Fill(rows); err != nil {
			return err
		}
		if err := n.agg.Set(b.Pool); err != nil {
			return err
		}
		return n.ce.SetRows(pos, y)
	}
	return &privateSGD{SGD: sgd, Steps: cfg.Steps()}, fill, nil
}

// present flags G's nodes among the universe ids.
func (gs *graphsOf) present() []bool {
	out := make([]bool, gs.n)
	for _, u := range gs.members {
		out[u] = true
	}
	return out
}

// exampleIndex maps every universe id to its example (its position in
// members), −1 for the ids that are not nodes of G.
func exampleIndex(n int, members []int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = -1
	}
	for k, u := range members {
		out[u] = k
	}
	return out
}

// maxRow is the largest number of entries in a row of pi.
func maxRow(pi *graphs.CSR) int {
	w := 1
	for i := 0; i < pi.Rows; i++ {
		w = max(w, pi.Indptr[i+1]-pi.Indptr[i])
	}
	return w
}

// Run trains and evaluates DPAR once.
func (m *DPAR) Run(ctx *methods.Context) (*methods.Outcome, error) {
	g := ctx.Graph
	if err := run.Begin(ctx, "dpar", m.cfg.Hidden, 2); err != nil {
		return nil, err
	}
	p, err := m.calibrate(ctx, len(g.Split.Train))
	if err != nil {
		return nil, err
	}
	res, err := m.train(ctx, p)
	if err != nil {
		return nil, err
	}
	out := &methods.Outcome{Pred: res.pred, ValAcc: res.valAcc}
	if out.Scores, err = m.scores(g, res.gs, nn.Values(res.net.h)); err != nil {
		return nil, err
	}
	return out, run.Finish(ctx, out, p.Plan, m.inference(ctx, p, res))
}

type result struct {
	pred   []int
	valAcc float64
	net    *net
	gs     *graphsOf
}

// inference is the trained DPAR's query over a graph h: f_θ over the query
// features, then, as in a run, PPR propagation over the graph of the
// non-training nodes (on the run's graph) or over all of h's nodes and
// edges (on another graph). It draws no noise. On the run's graph a query
// reads θ and the inference graph, which DPAR treats as an inference input
// its guarantee does not cover (§4): it costs nothing beyond the run. On
// another graph it reads the edges of every node without noise, the
// training nodes' included: no ε covers that.
func (m *DPAR) inference(ctx *methods.Context, p *privacy, res *result) func(h *graphs.Graph) (*run.Inference, error) {
	return func(h *graphs.Graph) (*run.Inference, error) {
		gs := res.gs
		if h != ctx.Graph {
			all := make([]int, h.N)
			for i := range all {
				all[i] = i
			}
			gs = &graphsOf{n: h.N, infer: all, inferAdj: unweighted(h.Adj)}
		}
		var cost *methods.QueryCost
		if ctx.Private() {
			what := "f_θ over the query features and PPR over the inference graph, no noise"
			if h == ctx.Graph {
				cost = methods.NewQueryCost(ctx, p.Plan, what+" (the non-training nodes' graph, an inference input DPAR does not protect)", nil)
			} else {
				cost = methods.UncoveredQueries(ctx, p.Plan, what, "the query propagates over all of the query graph's edges without noise, the protected nodes' included")
			}
		}
		q := run.NewQuery(h.N, ctx.Graph.X.F, cost, func() (methods.QueryFunc, error) {
			var x *layers.Features
			var out *G.Node
			err := nn.Build(func() error {
				var err error
				if x, err = run.NewQueryInput(res.net.m, ctx.Graph.X, h.N, fmt.Sprintf("X.query%d", h.N)); err != nil {
					return err
				}
				out = res.net.forward(x)
				return nil
			})
			if err != nil {
				return nil, err
			}
			return run.QueryRunner(res.net.m, x, out, func(v []float64) ([]float64, error) { return m.scores(h, gs, v) })
		})
		return &run.Inference{Query: q, Cost: cost}, nil
	}
}

// scores is infer's posteriors: softmax of f_θ(x) for the nodes outside
// gs.infer, of the PPR-propagated logits for those in it.
func (m *DPAR) scores(g *graphs.Graph, gs *graphsOf, h []float64) ([]float64, error) {
	c := g.NumClasses
	logits := append([]float64(nil), h...)
	if len(gs.infer) > 0 {
		hi := make([]float64, len(gs.infer)*c)
		for k, i := range gs.infer {
			copy(hi[k*c:(k+1)*c], h[i*c:(i+1)*c])
		}
		q, err := layers.PPR(graphs.RowNorm(gs.inferAdj), hi, c, m.cfg.PropAlpha, m.cfg.PropSteps)
		if err != nil {
			return nil, err
		}
		for k, i := range gs.infer {
			copy(logits[i*c:(i+1)*c], q[k*c:(k+1)*c])
		}
	}
	return run.Softmax(logits, g.N, c), nil
}

// apprRecorders are the recorders of one DP-APPR row's releases (one per
// event of p.appr.Events(1): the Gaussian row, or the exponential
// mechanism's K rounds and the Laplace values), built from the run's plan
// before any row is drawn, which refuses them unless it declares those
// releases under ledgerAPPR; none without privacy.
func (m *DPAR) apprRecorders(ctx *methods.Context, p *privacy) ([]*dp.Recorder, error) {
	if !p.private {
		return nil, nil
	}
	per, err := p.appr.Events(1)
	if err != nil {
		return nil, err
	}
	out := make([]*dp.Recorder, len(per))
	for i, e := range per {
		if out[i], err = ctx.Mechanism(p.Plan, ledgerAPPR, e); err != nil {
			return nil, fmt.Errorf("DP-APPR: %w", err)
		}
	}
	return out, nil
}

// train runs the pipeline: G, the sources, the DP-APPR rows, Π, the
// examples, training, inference.
func (m *DPAR) train(ctx *methods.Context, p *privacy) (*result, error) {
	g := ctx.Graph
	src, err := ctx.NoiseSource("dpar")
	if err != nil {
		return nil, err
	}
	gs := splitGraphs(g, p.nodeRate, src.Split("dpar.nodes"))
	mech := APPRMechanism{Kind: APPRNone, K: min(m.cfg.TopK, g.N)}
	var apprSrc, sourceSrc *dp.Source
	if p.private {
		if m.cfg.TopK > g.N {
			return nil, fmt.Errorf("--topk %d exceeds the %d node ids the DP-APPR rows select from", m.cfg.TopK, g.N)
		}
		mech, apprSrc, sourceSrc = p.appr, src.Split("dpar.appr"), src.Split("dpar.sources")
	} else if len(gs.members) == 0 {
		return nil, fmt.Errorf("the split has no training nodes")
	}
	rows, err := m.apprRecorders(ctx, p)
	if err != nil {
		return nil, err
	}
	sources := drawSources(gs, m.cfg.Rows, sourceSrc)
	if p.private && len(sources) != m.cfg.Rows {
		// the plan accounts --rows rows; the run releases one per source
		return nil, fmt.Errorf("--rows %d exceeds the %d node ids the DP-APPR sources are drawn from", m.cfg.Rows, gs.n)
	}
	pi, err := m.buildPi(gs, sources, mech, p.maxRefs, apprSrc)
	if err != nil {
		return nil, err
	}
	for range sources { // every source's row was released
		for _, r := range rows {
			r.Record()
		}
	}
	ex := exampleRows(pi, gs.members)
	labels := make([]int, len(gs.members))
	for k, i := range gs.members {
		labels[k] = g.Labels[i]
	}
	var task trainers.Task
	var n *net
	if p.private {
		// DP-SGD's samples are the universe ids: Poisson sampling over
		// [0, N) at rate q keeping G's nodes (the others are empty
		// examples). Neither the draw nor the division of the noisy sum
		// (by q·N) reads G's size; the batch capacity (work per chunk, not
		// a result) is sized for the expected q′·N_train examples.
		capEx := p.capacity(gs.n)
		if n, err = m.buildNet(ctx.Seed, g.X, g.NumClasses, capEx, capEx*maxRow(ex), true); err != nil {
			return nil, err
		}
		sgd, fill, err := m.private(n, gs, ex, g.Labels, p, ctx.Ledger(), src.Split("dpar.dpsgd"))
		if err != nil {
			return nil, err
		}
		task = &trainers.SGDTask{SGD: sgd.SGD, Model: n.m, Logits: n.h, Opt: nn.NewAdam(m.cfg.LR, 0), FillBatch: fill,
			TotalSteps: sgd.Steps, Epochs: m.cfg.TrainEpochs, Recorder: ctx.Recorder, Run: ctx.Run}
	} else {
		nG := len(gs.members)
		if n, err = m.buildNet(ctx.Seed, g.X, g.NumClasses, nG, max(1, ex.NNZ()), false); err != nil {
			return nil, err
		}
		if err := n.m.Compile(n.ce.Mean, []*G.Node{n.h}); err != nil {
			return nil, err
		}
		if err := n.filler(ex, labels, nil, nil)(allIDs(nG)); err != nil {
			return nil, err
		}
		task = &trainers.ModelTask{Model: n.m, Logits: n.h, Opt: nn.NewAdam(m.cfg.LR, 0)}
	}
	for range m.cfg.TrainEpochs {
		if _, err := task.TrainEpoch(); err != nil {
			return nil, err
		}
	}
	if err := n.m.Evaluate(); err != nil {
		return nil, err
	}
	pred, err := m.infer(g, gs, nn.Values(n.h))
	if err != nil {
		return nil, err
	}
	res := &result{pred: pred, valAcc: math.NaN(), net: n, gs: gs}
	if len(g.Split.Val) > 0 {
		res.valAcc = trainers.Accuracy(pred, g.Labels, g.Split.Val)
	}
	return res, nil
}

// allIDs is 0, 1, …, n−1.
func allIDs(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// infer predicts every node: the non-training nodes by P steps of PPR
// propagation of f_θ(X) over their graph (Eq. 4), the training nodes by
// f_θ(x) alone.
func (m *DPAR) infer(g *graphs.Graph, gs *graphsOf, h []float64) ([]int, error) {
	c := g.NumClasses
	pred := trainers.Argmax(h, g.N, c)
	if len(gs.infer) == 0 {
		return pred, nil
	}
	hi := make([]float64, len(gs.infer)*c)
	for k, i := range gs.infer {
		copy(hi[k*c:(k+1)*c], h[i*c:(i+1)*c])
	}
	q, err := layers.PPR(graphs.RowNorm(gs.inferAdj), hi, c, m.cfg.PropAlpha, m.cfg.PropSteps)
	if err != nil {
		return nil, err
	}
	top := trainers.Argmax(q, len(gs.infer), c)
	for k, i := range gs.infer {
		pred[i] = top[k]
	}
	return pred, nil
}

// accountPlan: DPAR's plan (`dpgnn account dpar`) needs the split's training-node count (the expected size q′·N_train of G sets
// the DP-SGD rate).
func (m *DPAR) accountPlan() run.NodeCountPlan {
	return run.NodeCountPlan{Method: "dpar", Calibrate: func(ctx *methods.Context, n int) (*run.Calibrated, error) {
		p, err := m.calibrate(ctx, n)
		if err != nil {
			return nil, err
		}
		return p.Calibrated, nil
	}}
}

// AccountCounts names the counts of AccountPlan.
func (m *DPAR) AccountCounts(level methods.Level) []string { return m.accountPlan().Counts(level) }

// AccountPlan is the plan of a run with these counts.
func (m *DPAR) AccountPlan(ctx *methods.Context, c run.Counts) (*run.Calibrated, error) {
	return m.accountPlan().Plan(ctx, c)
}

var _ run.Accountable = (*DPAR)(nil)

// BuildModel builds the graph a run trains, for `dpgnn inspect`: the
// bias-free MLP on Π-aggregated training examples of the whole training
// side, with DP-SGD's clipping and noise nodes when private. Π is the
// noise-free top-K APPR of the M training nodes of largest degree (a run's
// Π is a DP release drawn at training time; the graph's operations do not
// depend on its values). Without privacy every example is loaded, so the
// loss and its gradients can be evaluated (--grad-check).
func (m *DPAR) BuildModel(ctx *methods.Context) (*nn.Model, error) {
	g := ctx.Graph
	p, err := m.calibrate(ctx, len(g.Split.Train))
	if err != nil {
		return nil, err
	}
	gs := splitGraphs(g, 1, nil)
	if len(gs.members) == 0 {
		return nil, fmt.Errorf("the split has no training nodes")
	}
	pi, err := m.buildPi(gs, largestDegree(gs, m.cfg.Rows), APPRMechanism{Kind: APPRNone, K: min(m.cfg.TopK, g.N)}, p.maxRefs, nil)
	if err != nil {
		return nil, err
	}
	ex := exampleRows(pi, gs.members)
	labels := make([]int, len(gs.members))
	for k, i := range gs.members {
		labels[k] = g.Labels[i]
	}
	if p.private {
		capEx := p.capacity(gs.n)
		n, err := m.buildNet(ctx.Seed, g.X, g.NumClasses, capEx, capEx*maxRow(ex), true)
		if err != nil {
			return nil, err
		}
		// inspect runs no noisy step: the ledger is the construction's own
		if _, _, err := m.private(n, gs, ex, g.Labels, p, dp.NewLedger(), dp.NewSource(ctx.Seed)); err != nil {
			return nil, err
		}
		return n.m, nil
	}
	nG := len(gs.members)
	n, err := m.buildNet(ctx.Seed, g.X, g.NumClasses, nG, max(1, ex.NNZ()), false)
	if err != nil {
		return nil, err
	}
	if err := n.m.Compile(n.ce.Mean, []*G.Node{n.h}); err != nil {
		return nil, err
	}
	return n.m, n.filler(ex, labels, nil, nil)(allIDs(nG))
}

var _ run.Builder = (*DPAR)(nil)
