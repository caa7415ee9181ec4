// Package sage is GraphSAGE-mean (Hamilton et al. 2017; layers.SAGEConv)
// trained with node-level DP-SGD as Daigavane et al. (2021, Node-Level
// Differentially Private Graph Neural Networks) do it: every training
// node's example is its K-hop rooted subgraph of a degree-bounded graph
// (degree.RootedSubgraphs), one node's removal changes at most
// R = degree.OccurrenceBound(K, D) examples, each by at most 2C, and one
// step is Occurrences{R, 2, Poisson{q, Gaussian{z}}}. Sage writes its plan
// and network; run.SGDMethod trains, reports, inspects, accounts and audits.
// Levels: node and none. Edge level is not offered yet (an edge's removal
// changes the examples of the roots within K−1 hops of either endpoint,
// 2·R(K−1, D) of them; not yet wired and tested).
package sage

import (
	"errors"
	"fmt"

	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/degree"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

func init() { methods.Register(func() methods.Method { return New(DefaultConfig()) }) }

// New returns sage with cfg: Sage's plan and network, trained, inspected,
// accounted and audited by run.SGDMethod.
func New(cfg Config) methods.Method { return run.SGDMethod(&Sage{cfg: cfg}) }

// Config is sage's hyperparameters (flags of every command).
type Config struct {
	Hops         int     `flag:"hops" help:"K: SAGE layers, and the hops of every training node's rooted subgraph (R grows as D^K)"`
	Hidden       int     `flag:"hidden" help:"hidden width"`
	Epochs       int     `flag:"epochs" help:"training epochs (⌈epochs/q⌉ DP-SGD steps)"`
	LR           float64 `flag:"lr" help:"Adam learning rate"`
	BatchSize    int     `flag:"batch-size" help:"expected Poisson batch size B (rate q = B/N_train)"`
	Clip         float64 `flag:"clip" help:"per-example gradient L2 bound C"`
	degree.Flags         // --max-degree D, --degree-bound public|sample|none
}

// DefaultConfig is sage's default configuration, selected on cora's
// validation nodes at node level, ε = 8, under the proven public bound
// (D = 168; docs/results.md): K = 1; width 16 (64 and 32 lost 0.13–0.15);
// the whole training set in every step (B = 2048 ≥ N_train on cora, q ≈ 0.85
// on cora_ml inductive) for 15 epochs at learning rate 0.02 and clip 1.
// Under R = 1 + D every candidate stayed near the majority class.
func DefaultConfig() Config {
	return Config{Hops: 1, Hidden: 16, Epochs: 15, LR: 0.02, BatchSize: 2048, Clip: 1, Flags: degree.DefaultFlags(170)}
}

// Sage is the method as written: its Spec, Plan and Build.
type Sage struct{ cfg Config }

func (*Sage) Name() string { return "sage" }
func (*Sage) Short() string {
	return "GraphSAGE-mean, node-level DP-SGD over rooted subgraphs (Daigavane et al. 2021)"
}
func (*Sage) Levels() []methods.Level      { return []methods.Level{methods.None, methods.Node} }
func (*Sage) DefaultSplit(d string) string { return methods.DefaultSplitFor(d) }
func (s *Sage) Config() any                { return &s.cfg }
func (s *Sage) Epochs() int                { return s.cfg.Epochs }
func (s *Sage) Validate() error {
	c := &s.cfg
	_, err := s.bound()
	return methods.CheckAll(err, methods.CheckFields(c, methods.Depth(&c.Hops), methods.Width(&c.Hidden), methods.Epochs(&c.Epochs),
		methods.PositiveF(&c.LR), methods.Positive(&c.BatchSize), methods.PositiveF(&c.Clip)))
}

func (s *Sage) bound() (degree.Bound, error) { return s.cfg.Bound() }

// Bound is the node-level degree bound the flags set: D on every node's
// degree in the symmetrised graph.
func (c *Config) Bound() (degree.Bound, error) {
	return c.Flags.Bound(degree.Undirected, "every node's degree (edges in either direction)")
}

// Plan is the DP-SGD plan over n training nodes: R = OccurrenceBound(K, D)
// from public numbers only.
//
// Proof (node level; raw neighbours G and G − v). The examples are read
// from H, the symmetrised raw adjacency (--degree-bound public: H is it,
// checked to be within D, and G − v is then within D too; sample: H is
// its keyed SampleSymmetric, see below). Example u (a training node) is
// degree.RootedSubgraphs' E(u) on H with the features of its rows and u's
// label; the model's output at u's root row is a function of E(u) only
// (exactness; the framework refuses any product joining two examples'
// rows), the loss reads only the root row. RootedSubgraphs proves that
// between H and H − v at most R(K, D) examples differ (v's own deleted,
// the others modified); each moves the clipped sum by at most 2C. So one
// step is Occurrences{R, 2, Poisson{q, Gaussian{z}}}, composed over the
// steps. With --degree-bound sample the examples are those of
// SampleSymmetric(H), whose degrees are ≤ D, so the count holds for
// SampleSymmetric(G) − v; but SampleSymmetric(G − v) may differ from it
// by more than v's edges when G is above D (a freed slot cascades): the
// report states that the guarantee assumes G is within D. N_train is
// treated as public (the report says so); the last epoch is kept.
func (s *Sage) Plan(ctx *methods.Context, n int) (run.SGDPlan, error) {
	b, err := s.bound()
	if err != nil {
		return run.SGDPlan{}, err
	}
	r, change := 1, 1
	if ctx.Private() {
		if b.Mode == degree.None {
			return run.SGDPlan{}, errors.New("node level needs a degree bound: --degree-bound public or sample (none bounds nothing)")
		}
		if r, err = degree.OccurrenceBound(s.cfg.Hops, b.D, true); err != nil {
			return run.SGDPlan{}, err
		}
		change = 2
	}
	p := run.SGDPlan{PrivateConfig: dpnn.PrivateConfig{N: n, R: r, Change: change, BatchSize: s.cfg.BatchSize, Epochs: s.cfg.Epochs, Clip: s.cfg.Clip,
		What: fmt.Sprintf("a training node's %d-hop rooted subgraph of the degree-bounded graph", s.cfg.Hops)}}
	if ctx.Private() {
		p.Bound = &b
	}
	return p, nil
}

// examples builds the rooted subgraphs of the training nodes: the
// examples, the node of every universe row and the graph H they were read
// from (the evaluation path's too).
func (s *Sage) examples(ctx *methods.Context, p run.SGDPlan) (*dpnn.Examples, []int, *graphs.CSR, error) {
	g := ctx.Graph
	adj := graphs.Symmetrize(g.Adj)
	b, err := s.bound()
	if err != nil {
		return nil, nil, nil, err
	}
	if !ctx.Private() {
		b = degree.Bound{Mode: degree.None}
	} else if b.Mode == degree.Sample {
		src, err := ctx.NoiseSource("sage.degree")
		if err != nil {
			return nil, nil, nil, err
		}
		adj = degree.SampleSymmetric(adj, b.D, degree.NewKey(src))
		b.Mode = degree.Public // within D by construction
	}
	rs, err := degree.RootedSubgraphs(adj, b, g.Split.Train, s.cfg.Hops, 0)
	var be *degree.BoundError
	if errors.As(err, &be) {
		return nil, nil, nil, b.Refusal(ctx.Dataset, err)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	if ctx.Private() && rs.Occurrences != p.R {
		return nil, nil, nil, fmt.Errorf("sage: rooted subgraphs with R=%d, the plan's is %d", rs.Occurrences, p.R)
	}
	x, err := dpnn.NewExamples(len(rs.Roots), rs.Start, rs.Adj, p.R, p.Change, p.What)
	if err != nil {
		return nil, nil, nil, err
	}
	return x, rs.Node, adj, err
}

// net is the model: a training path over a batch of capacity rows (sparse
// features Xb, adjacency nb, set per batch) and an evaluation path over H.
type net struct {
	m             *nn.Model
	xb            *nn.Sparse
	nb            *layers.Neighbours
	train, logits *G.Node
	ce            *nn.CrossEntropy
}

// forward is K SAGE-mean layers and a linear head. The first layer is
// mean_{j∈N(i)} (X·W_l)_j + X·W_r + b, the SAGEConv of a sparse X (the mean
// is linear, so it equals SAGEConv's (mean X)·W_l): W_l's per-sample rule
// is read at X·W_l, exact because the adjacency keeps examples apart
// (layers.GCNConv's proof; checked at every step).
func (s *Sage) forward(m *nn.Model, lin []*layers.Linear, convs []*layers.SAGEConv, x *nn.Sparse, nb *layers.Neighbours) (*G.Node, error) {
	agg, err := layers.Aggregate(m, nb, lin[0].ForwardSparse(x), layers.Mean)
	if err != nil {
		return nil, err
	}
	h, err := nn.Add(agg, lin[1].ForwardSparse(x))
	if err != nil {
		return nil, err
	}
	h = G.Must(G.Rectify(h))
	for _, c := range convs {
		if h, err = c.Forward(nb, h); err != nil {
			return nil, err
		}
		h = G.Must(G.Rectify(h))
	}
	return lin[2].Forward(h), nil
}

func (s *Sage) net(ctx *methods.Context, capacity int, h *graphs.CSR, xall *graphs.CSR) (*net, error) {
	g, hid := ctx.Graph, s.cfg.Hidden
	n := &net{m: nn.NewModel(ctx.Seed)}
	err := nn.Build(func() error {
		m := n.m
		lin := []*layers.Linear{layers.NewLinear(m, "sage.0.l", g.X.F, hid, false, layers.InitPyG),
			layers.NewLinear(m, "sage.0.r", g.X.F, hid, true, layers.InitPyG), nil}
		var convs []*layers.SAGEConv
		for k := 1; k < s.cfg.Hops; k++ {
			convs = append(convs, layers.NewSAGEConv(m, fmt.Sprintf("sage.%d", k), hid, hid, layers.Mean, layers.SAGEOptions{}))
		}
		lin[2] = layers.NewLinear(m, "out", hid, g.NumClasses, true, layers.InitPyG)
		n.xb = nn.NewSparse("Xb", &graphs.CSR{Rows: capacity, Cols: g.X.F, Indptr: make([]int, capacity+1)})
		var err error
		if n.nb, err = layers.NewNeighbours("batch", &graphs.CSR{Rows: capacity, Cols: capacity, Indptr: make([]int, capacity+1)}); err != nil {
			return err
		}
		all, err := layers.NewNeighbours("H", h)
		if err != nil {
			return err
		}
		m.StartRecording()
		n.train, err = s.forward(m, lin, convs, n.xb, n.nb)
		m.StopRecording()
		if err != nil {
			return err
		}
		if n.logits, err = s.forward(m, lin, convs, nn.NewSparse("X", xall).Fixed(), all); err != nil {
			return err
		}
		n.ce, err = nn.NewCrossEntropy(m, n.train, "loss")
		return err
	})
	return n, err
}

// sparseX returns the features as CSR.
func sparseX(x *graphs.Features) *graphs.CSR {
	if x.Sparse != nil {
		return x.Sparse
	}
	var src, dst []int
	var val []float64
	for i := 0; i < x.N; i++ {
		for j, v := range x.Dense[i*x.F : (i+1)*x.F] {
			if v != 0 {
				src, dst, val = append(src, i), append(dst, j), append(val, v)
			}
		}
	}
	return graphs.FromCOO(x.N, x.F, src, dst, val)
}

// gather returns the rows nodes of x as a capacity-row CSR (the rest
// empty).
func gather(x *graphs.CSR, nodes []int, capacity int) *graphs.CSR {
	out := &graphs.CSR{Rows: capacity, Cols: x.Cols, Indptr: make([]int, capacity+1)}
	for r, u := range nodes {
		out.Indices = append(out.Indices, x.Indices[x.Indptr[u]:x.Indptr[u+1]]...)
		if x.Data != nil {
			out.Data = append(out.Data, x.Data[x.Indptr[u]:x.Indptr[u+1]]...)
		}
		out.Indptr[r+1] = len(out.Indices)
	}
	for r := len(nodes) + 1; r <= capacity; r++ {
		out.Indptr[r] = len(out.Indices)
	}
	return out
}

// Build builds the examples and the network over them.
func (s *Sage) Build(ctx *methods.Context, p run.SGDPlan) (*run.Net, error) {
	g, train := ctx.Graph, ctx.Graph.Split.Train
	if err := run.Begin(ctx, "sage", s.cfg.Hidden, s.cfg.Hops+1); err != nil {
		return nil, err
	}
	// The public feature range (graphs.CheckFeatureRange) on the library
	// path too (the CLI's loader checks it): beyond it the forward pass
	// overflows; the refusal names only the public bound, and removing a
	// node never takes an input outside it, so every neighbour of an
	// accepted input is accepted.
	if err := graphs.CheckFeatureRange(g.X); err != nil {
		return nil, fmt.Errorf("sage: %w", err)
	}
	x, node, h, err := s.examples(ctx, p)
	if err != nil {
		return nil, err
	}
	capacity := dpnn.RowCapacity(x, p.Rate())
	xall := sparseX(g.X)
	nt, err := s.net(ctx, capacity, h, xall)
	if err != nil {
		return nil, err
	}
	labels, nodes := make([]int, capacity), make([]int, 0, capacity)
	fill := func(b *dpnn.Batch) error {
		nodes = nodes[:0]
		for _, r := range b.Rows {
			nodes = append(nodes, node[r])
		}
		for k, e := range b.Examples {
			labels[b.First[k]] = g.Labels[train[e]]
		}
		return errors.Join(nt.xb.Set(gather(xall, nodes, capacity)), nt.nb.Set(b.Adj), nt.ce.SetRows(b.First[:len(b.Examples)], labels))
	}
	return &run.Net{Model: nt.m, Loss: nt.ce.PerRow, Logits: nt.logits, Examples: x, Fill: fill, Opt: nn.NewAdam(s.cfg.LR, 0)}, nil
}
