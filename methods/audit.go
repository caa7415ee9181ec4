package methods

import (
	"fmt"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/trainers"
)

// AuditTarget is one private release of a method, replayable on any raw
// graph for `dpgnn audit`: the audit runs it many times on a graph G and
// on a neighbour G′ and measures how well the outputs can be told apart.
type AuditTarget struct {
	// What describes the release.
	What string
	// Claimed is the ε the run's accounting gives this one release at
	// Delta (the tightest the method claims for it).
	Claimed, Delta float64
	// Gaussian says the claim is that of a Gaussian mechanism (μ-GDP with
	// μ = 1/multiplier): the audit's GDP bound then refutes it directly.
	Gaussian bool
	// EdgeUnit is the edge-level unit the claim is for (EdgeDirected or
	// EdgeUndirected): what --remove-edge removes.
	EdgeUnit string
	// Width > 0 means the output is an N×Width matrix in node order: a
	// removed node's row is dropped before comparing. 0: not node-indexed
	// (parameters, gradients).
	Width int
	// Prepare builds the release on the raw graph g — every data-dependent
	// step of the method (degree bounds, calibration, propagation) runs on
	// g — and returns a function that performs one release per call, all
	// its randomness (noise, sampling, keys) drawn from the given source.
	Prepare func(g *graphs.Graph) (Release1, error)
}

// AuditOptions choose what the audited release is fed.
type AuditOptions struct {
	// Embedding is the input of an aggregation release: "aligned" (every
	// row the same unit vector, the worst case for a sum: every changed
	// entry moves the output the same way) or "features" (the graph's
	// features).
	Embedding string
	// Width of the aligned embedding.
	Width int
	// Multiplier, when positive, replaces the run's calibrated noise
	// multiplier of a Gaussian release (to audit the release at a chosen
	// per-release ε); the claim is then that multiplier's ε.
	Multiplier float64
	// Release names which of a method's releases to audit when it makes
	// more than one kind (dpar: appr or sgd); empty: the method's default.
	Release string
}

// Edge-level privacy units: one directed adjacency entry j→i, or one
// undirected edge {i, j} with both its entries.
const (
	EdgeDirected   = "directed"
	EdgeUndirected = "undirected"
)

// Release1 performs one release with randomness from src.
type Release1 func(src *dp.Source) ([]float64, error)

// Auditor is a method whose releases `dpgnn audit` can replay.
type Auditor interface {
	AuditTarget(ctx *Context, opts AuditOptions) (*AuditTarget, error)
}

// ClaimedEpsilon is the ε of one event alone at delta under the exact
// Gaussian accountant when it supports the event, else RDP.
func ClaimedEpsilon(e dp.Event, delta float64) (float64, error) {
	if eps, err := dp.EpsilonOf("gdp", []dp.Event{e}, delta); err == nil {
		return eps, nil
	}
	return dp.EpsilonOf("rdp", []dp.Event{e}, delta)
}

// SGDAudit is the audit target of one DP-SGD step of a module: from the
// module's initial parameters, one Poisson-sampled step on the graph's
// training nodes, releasing the privatised gradient of every parameter
// (what the optimiser receives). build returns the module, its training
// configuration (calibrated for the graph) and the calibration.
func SGDAudit(ctx *Context, opts AuditOptions, build func(*Context) (*Module, ModuleTraining, *Calibrated, error)) (*AuditTarget, error) {
	if opts.Multiplier > 0 {
		return nil, fmt.Errorf("--multiplier is for aggregation releases (gap, progap)")
	}
	if !ctx.Private() || ctx.Level != Node {
		return nil, fmt.Errorf("a DP-SGD step is audited at node level with a finite --epsilon")
	}
	_, tr, cal, err := build(ctx)
	if err != nil {
		return nil, err
	}
	claimed, err := ClaimedEpsilon(dp.PoissonGaussianEvent{Rate: tr.Rate, Multiplier: tr.Multiplier, Steps: 1}, cal.Plan.Delta)
	if err != nil {
		return nil, err
	}
	t := &AuditTarget{Claimed: claimed, Delta: cal.Plan.Delta,
		What: fmt.Sprintf("one DP-SGD step: Poisson rate %.4g, clip %g, noise multiplier %.4g; released: the privatised gradient of every parameter", tr.Rate, tr.Clip, tr.Multiplier)}
	t.Prepare = func(g *graphs.Graph) (Release1, error) {
		gc := *ctx
		gc.Graph = g
		mod, tr, _, err := build(&gc)
		if err != nil {
			return nil, err
		}
		task, err := mod.Prepare(&gc, tr, dp.NewSource(0))
		if err != nil {
			return nil, err
		}
		st, ok := task.(*trainers.SGDTask)
		if !ok {
			return nil, fmt.Errorf("module is not trained with DP-SGD")
		}
		return func(src *dp.Source) ([]float64, error) {
			st.SGD.SetSource(src)
			return st.SGD.Release(st.Fill)
		}, nil
	}
	return t, nil
}
