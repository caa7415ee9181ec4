package run

import (
	"fmt"
	"math"
	"slices"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// Inference is a method's query machinery over one graph: the query
// function and its privacy cost.
type Inference struct {
	Query methods.QueryFunc
	Cost  *methods.QueryCost
}

// SetInference fills out's query fields from on, which builds the
// inference over a graph: Query and QueryCost over the run's graph g (the
// query function built on its first call, so a run that is never queried
// builds nothing), and QueryOn over any other graph.
func SetInference(out *methods.Outcome, g *graphs.Graph, on func(g *graphs.Graph) (*Inference, error)) error {
	inf, err := on(g)
	if err != nil {
		return err
	}
	out.Query, out.QueryCost = inf.Query, inf.Cost
	out.QueryOn = func(h *graphs.Graph) (methods.QueryFunc, *methods.QueryCost, error) {
		inf, err := on(h)
		if err != nil {
			return nil, nil, err
		}
		return inf.Query, inf.Cost, nil
	}
	return nil
}

// Finish completes the outcome of a run whose private releases all took
// place, the epilogue every method shares: out.Privacy is plan's report
// (Report: the ledger checked against the plan; nil plan: no
// privacy claim, no report) and its queries are those on builds
// (SetInference).
func Finish(ctx *methods.Context, out *methods.Outcome, plan *dp.Plan, on func(*graphs.Graph) (*Inference, error)) error {
	if plan != nil {
		rep, err := Report(ctx, plan)
		if err != nil {
			return err
		}
		out.Privacy = rep
	}
	return SetInference(out, ctx.Graph, on)
}

// FinishModel is Finish for a model with final logits over every node: the
// scores are their softmax, and infer builds the inference with its query
// noise from the source labelled "METHOD.queries".
func FinishModel(ctx *methods.Context, out *methods.Outcome, method string, plan *dp.Plan, logits *G.Node, infer func(qsrc *dp.Source) func(*graphs.Graph) (*Inference, error)) error {
	g := ctx.Graph
	out.Scores = Softmax(nn.Values(logits), g.N, g.NumClasses)
	qsrc, err := ctx.NoiseSource(method + ".queries")
	if err != nil {
		return err
	}
	return Finish(ctx, out, plan, infer(qsrc))
}

// Lazy returns a QueryFunc that builds the real one with build on its first
// call (a failed build is retried on the next).
func Lazy(build func() (methods.QueryFunc, error)) methods.QueryFunc {
	var q methods.QueryFunc
	return func(x *graphs.Features) ([]float64, error) {
		if q == nil {
			var err error
			if q, err = build(); err != nil {
				return nil, err
			}
		}
		return q(x)
	}
}

// NewQuery is the query function of a trained model over an n-node graph
// whose features are f wide, written once for every method: the inference
// is built by build on the first call (a failed build is retried on the
// next); then every call checks the query features (CheckQuery), counts one
// query against cost (Charge, before the inference records any release;
// nil cost: none stated) and runs the inference.
func NewQuery(n, f int, cost *methods.QueryCost, build func() (methods.QueryFunc, error)) methods.QueryFunc {
	return Lazy(func() (methods.QueryFunc, error) {
		q, err := build()
		if err != nil {
			return nil, err
		}
		return func(x *graphs.Features) ([]float64, error) {
			if err := CheckQuery(x, n, f); err != nil {
				return nil, err
			}
			cost.Charge()
			return q(x)
		}, nil
	})
}

// CheckQuery checks that query features x fit n rows of width f and lie
// within the public feature range (graphs.CheckFeatureRange).
func CheckQuery(x *graphs.Features, n, f int) error {
	if x == nil {
		return fmt.Errorf("query: no features")
	}
	if x.N != n || x.F != f {
		return fmt.Errorf("query: features are %d×%d, the model reads %d×%d", x.N, x.F, n, f)
	}
	if (x.Dense == nil) == (x.Sparse == nil) {
		return fmt.Errorf("query: features must be dense or sparse")
	}
	// A query's features are an input like the dataset's: within the
	// public range, or a value that overflows could turn a release into
	// NaN on one side of a neighbouring pair.
	if err := graphs.CheckFeatureRange(x); err != nil {
		return fmt.Errorf("query: %w", err)
	}
	return nil
}

// Softmax returns the row-wise softmax of an n×c matrix of logits.
func Softmax(logits []float64, n, c int) []float64 {
	out := make([]float64, n*c)
	for i := 0; i < n; i++ {
		row := logits[i*c : (i+1)*c]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = math.Max(mx, v)
		}
		s := 0.0
		for j, v := range row {
			e := math.Exp(v - mx)
			out[i*c+j] = e
			s += e
		}
		for j := range row {
			out[i*c+j] /= s
		}
	}
	return out
}

// Evaluator is an evaluation path of a trained Module over n rows, added to
// the module's model after training: it shares the module's parameters (and
// BatchNorm's running statistics) and runs in evaluation mode, with inputs
// set before every run. Adding it changes nothing the module computed.
type Evaluator struct {
	in     []*layers.Features
	logits *G.Node
	outs   []*G.Node
	m      *nn.Model
	// One machine per kind of output: gorgonia may compute an operation
	// in place over an input that no later operation of the same machine
	// reads, so an intermediate output is only read from a machine that
	// ends there.
	runLogits, runOuts *nn.Runner
}

// NewEvaluator adds an evaluation path over n rows to the module: one input
// per module input, of that input's width (sparse where the training input
// is sparse).
func (mod *Module) NewEvaluator(n int) (*Evaluator, error) {
	e := &Evaluator{m: mod.Model}
	m := mod.Model
	err := nn.Build(func() error {
		for i, x := range mod.features {
			f, err := NewQueryInput(m, x, n, fmt.Sprintf("%s.query%d", mod.names[i], n))
			if err != nil {
				return err
			}
			e.in = append(e.in, f)
		}
		var err error
		e.logits, e.outs, err = mod.build(m, e.in, false)
		return err
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// Logits sets the inputs (one per module input, n rows each) and returns
// a copy of the path's logits (n×C).
func (e *Evaluator) Logits(x ...*graphs.Features) ([]float64, error) {
	if err := e.set(x); err != nil {
		return nil, err
	}
	if e.runLogits == nil {
		var err error
		if e.runLogits, err = e.m.NewRunner(e.logits); err != nil {
			return nil, err
		}
	}
	if err := e.runLogits.Run(); err != nil {
		return nil, err
	}
	return slices.Clone(nn.Values(e.logits)), nil
}

// Outputs sets the inputs and returns copies of the path's extra outputs
// (the module's Outputs: embeddings).
func (e *Evaluator) Outputs(x ...*graphs.Features) ([][]float64, error) {
	if err := e.set(x); err != nil {
		return nil, err
	}
	if len(e.outs) == 0 {
		return nil, fmt.Errorf("evaluator: the module has no extra outputs")
	}
	if e.runOuts == nil {
		var err error
		if e.runOuts, err = e.m.NewRunner(e.outs...); err != nil {
			return nil, err
		}
	}
	if err := e.runOuts.Run(); err != nil {
		return nil, err
	}
	outs := make([][]float64, len(e.outs))
	for i, o := range e.outs {
		outs[i] = slices.Clone(nn.Values(o))
	}
	return outs, nil
}

func (e *Evaluator) set(x []*graphs.Features) error {
	if len(x) != len(e.in) {
		return fmt.Errorf("evaluator: %d inputs, want %d", len(x), len(e.in))
	}
	for i, f := range e.in {
		if err := SetQueryInput(f, x[i]); err != nil {
			return err
		}
	}
	return nil
}

// NewQueryInput adds to m a model input of n rows shaped like the features
// like (their width; sparse when they are sparse), zero until set with
// SetQueryInput.
func NewQueryInput(m *nn.Model, like *graphs.Features, n int, name string) (*layers.Features, error) {
	if like == nil {
		return nil, fmt.Errorf("query: the model has no feature input")
	}
	if like.Sparse != nil {
		return layers.NewFeatures(m, &graphs.Features{N: n, F: like.F, Sparse: &graphs.CSR{Rows: n, Cols: like.F, Indptr: make([]int, n+1)}}, name)
	}
	return layers.NewFeatures(m, &graphs.Features{N: n, F: like.F, Dense: make([]float64, n*like.F)}, name)
}

// QueryRunner is the query function of a graph built on the query input x
// (NewQueryInput): it sets x to the query's features, runs m up to out and
// returns post of out's values (the method's scores). Wrap it in NewQuery,
// which checks the features and charges the query's cost first.
func QueryRunner(m *nn.Model, x *layers.Features, out *G.Node, post func(v []float64) ([]float64, error)) (methods.QueryFunc, error) {
	runner, err := m.NewRunner(out)
	if err != nil {
		return nil, err
	}
	return func(f *graphs.Features) ([]float64, error) {
		if err := SetQueryInput(x, f); err != nil {
			return nil, err
		}
		if err := runner.Run(); err != nil {
			return nil, err
		}
		return post(nn.Values(out))
	}, nil
}

// SetQueryInput sets a query input to the features x (same shape; dense
// and sparse convert into the input's kind).
func SetQueryInput(f *layers.Features, x *graphs.Features) error {
	if err := CheckQuery(x, f.N, f.F); err != nil {
		return err
	}
	if f.Sparse != nil {
		s := x.Sparse
		if s == nil {
			s = denseToCSR(x.Dense, x.N, x.F)
		}
		return f.Sparse.Set(s)
	}
	d := x.Dense
	if d == nil {
		d = x.ToDense()
	}
	return nn.SetValue(f.Dense, d)
}

// denseToCSR stores the non-zero entries of a dense n×f matrix as CSR.
func denseToCSR(x []float64, n, f int) *graphs.CSR {
	c := &graphs.CSR{Rows: n, Cols: f, Indptr: make([]int, n+1), Data: []float64{}}
	for i := 0; i < n; i++ {
		for j, v := range x[i*f : (i+1)*f] {
			if v != 0 {
				c.Indices = append(c.Indices, j)
				c.Data = append(c.Data, v)
			}
		}
		c.Indptr[i+1] = len(c.Indices)
	}
	return c
}

// FeatureInference is the inference of a trained module whose only input
// is the node features (an MLP): over a graph h, an evaluation path of h.N
// rows. cost is the queries' cost over h (nil: none stated).
func FeatureInference(mod *Module, classes int, cost func(h *graphs.Graph) *methods.QueryCost) func(h *graphs.Graph) (*Inference, error) {
	return func(h *graphs.Graph) (*Inference, error) {
		c := cost(h)
		q := NewQuery(h.N, mod.features[0].F, c, func() (methods.QueryFunc, error) {
			ev, err := mod.NewEvaluator(h.N)
			if err != nil {
				return nil, err
			}
			return func(x *graphs.Features) ([]float64, error) {
				logits, err := ev.Logits(x)
				if err != nil {
					return nil, err
				}
				return Softmax(logits, h.N, classes), nil
			}, nil
		})
		return &Inference{Query: q, Cost: c}, nil
	}
}
