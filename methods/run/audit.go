package run

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/methods"
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
	// Width > 0 means the output is an N×Width matrix in node order: values
	// i·Width … (i+1)·Width−1 are node i's (N the graph's node count, the
	// same on G and G′: a removed node keeps its id, isolated). 0: the
	// output is not node-major; Nodes says which values belong to a node.
	Width int
	// Nodes, for an output that is not N×Width node-major (Width 0), is the
	// node id of every output value, −1 where a value belongs to no node
	// (a bias, a weight); its length is the output's. nil with Width 0: no
	// value belongs to a node (parameters, gradients). Setting both Width
	// and Nodes is an error.
	Nodes []int
	// OwnRow, when non-empty, is the one exception to comparing every
	// value: the claim is a node-level claim that does not cover the
	// removed node's own values (those whose node, by Width or Nodes, is
	// the removed node), and OwnRow says why it does not need to — which
	// other released object reads them and why that is already counted. A
	// node-level audit then leaves exactly those values out of its test and
	// says so in its record (--samples still writes them). Empty (the
	// default): every value is compared, the removed node's included; on
	// G′ the node is an isolated id with no features, label or split, and
	// its values are whatever the release gives such a node (for a sum
	// over in-neighbours, 0 plus noise). A release indexed by node ids
	// whose claim covers the removed node's own values (its proof bounds
	// them, or something released reads them) must leave OwnRow empty:
	// dropping them hides exactly the leak of a node that can be named on
	// G and never on G′. Ignored at edge level, where every value is
	// compared.
	OwnRow string
	// Examples, when set, returns a digest of every example the release
	// draws from on g, equal digests for equal data (called after
	// Prepare(g), whose build it may reuse): the audit then reports how
	// many of G's examples have no equal on G′ — deleted or modified by
	// the neighbour — beside Covered, the number the claim covers (R).
	// An audit whose neighbour changes far fewer than R examples tests
	// the claim well below its bound. The count is of data, not of nodes:
	// two equal examples are interchangeable in the released sum, so a
	// node whose example merely takes another's data is not counted (the
	// thirteenth outside audit: 2 counted where 11 nodes' examples
	// differed, on a graph of identical features); it is not a check of
	// R's proof.
	Examples func(g *graphs.Graph) ([]uint64, error)
	Covered  int
	// Prepare builds the release on the raw graph g — every data-dependent
	// step of the method (degree bounds, calibration, propagation) runs on
	// g — and returns a function that performs one release per call, all
	// its randomness (noise, sampling, keys) drawn from the given source.
	Prepare func(g *graphs.Graph) (Release1, error)
}

// CoordinateNodes is the node id of every value of a release over n nodes
// (−1: none): from Width (N×Width node-major) or Nodes. It is nil when
// neither is set (no value belongs to a node; the length is known only
// from a release). It fails for a negative Width, both set, or a Nodes
// entry outside [−1, n).
func (t *AuditTarget) CoordinateNodes(n int) ([]int, error) {
	switch {
	case t.Width < 0:
		return nil, fmt.Errorf("audit target: width %d: want ≥ 0", t.Width)
	case t.Width > 0 && t.Nodes != nil:
		return nil, fmt.Errorf("audit target: both Width %d and Nodes (%d values) are set: give one", t.Width, len(t.Nodes))
	case t.Width > 0:
		nodes := make([]int, n*t.Width)
		for i := range nodes {
			nodes[i] = i / t.Width
		}
		return nodes, nil
	case t.Nodes != nil:
		for j, v := range t.Nodes {
			if v < -1 || v >= n {
				return nil, fmt.Errorf("audit target: value %d belongs to node %d: want a node id in [0, %d) or −1", j, v, n)
			}
		}
		return slices.Clone(t.Nodes), nil
	}
	return nil, nil
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
	AuditTarget(ctx *methods.Context, opts AuditOptions) (*AuditTarget, error)
}

// Releaser is an Auditor that makes more than one kind of release and
// audits the one AuditOptions.Release names: Releases lists them, the
// default first. `dpgnn audit` refuses --release for a method that is not
// a Releaser, and a name not in its list (before, a method without kinds
// ignored the flag: `audit gap --release sgd` audited NAP, as if it had
// audited the DP-SGD step).
type Releaser interface {
	Releases() []string
}

// CheckRelease refuses a release name m does not make (none for a method
// that is not a Releaser).
func CheckRelease(name string, m any, release string) error {
	if release == "" {
		return nil
	}
	r, ok := m.(Releaser)
	if !ok {
		return fmt.Errorf("--release %q: %s audits one kind of release; drop --release", release, name)
	}
	if !slices.Contains(r.Releases(), release) {
		return fmt.Errorf("--release %q: %s audits %s", release, name, strings.Join(r.Releases(), " or "))
	}
	return nil
}

// ClaimedEpsilon is the ε of one event alone at delta under the exact
// Gaussian accountant when it supports the event, else RDP.
func ClaimedEpsilon(e dp.Event, delta float64) (float64, error) {
	if eps, err := dp.EpsilonOf("gdp", []dp.Event{e}, delta); err == nil {
		return eps, nil
	}
	return dp.EpsilonOf("rdp", []dp.Event{e}, delta)
}

// SGDAudit is the audit target of one DP-SGD step of a module whose
// examples are one row each, one per unit (DP-MLP): from the module's
// initial parameters, one Poisson-sampled step on the graph's training
// nodes, releasing the privatised gradient of every parameter (what the
// optimiser receives). build returns the module, its training
// configuration (calibrated for the graph) and the calibration. The claim
// is one step's Poisson Gaussian; DP-SGD over declared Examples, where a
// unit changes up to R examples, is ExamplesAudit.
func SGDAudit(ctx *methods.Context, opts AuditOptions, build func(*methods.Context) (*Module, ModuleTraining, *Calibrated, error)) (*AuditTarget, error) {
	if err := checkSGDAudit(ctx, opts); err != nil {
		return nil, err
	}
	_, tr, cal, err := build(ctx)
	if err != nil {
		return nil, err
	}
	what := fmt.Sprintf("one DP-SGD step: Poisson rate %.4g, clip %g, noise multiplier %.4g; released: the privatised gradient of every parameter", tr.Rate, tr.Clip, tr.Multiplier)
	return sgdStepTarget(dp.PoissonGaussianEvent{Rate: tr.Rate, Multiplier: tr.Multiplier, Steps: 1}, cal.Plan.Delta, what, func(g *graphs.Graph) (Release1, error) {
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
	})
}

// ExamplesAudit is the audit target of one DP-SGD step over declared
// dpnn.Examples (a model made private by MakePrivate, e.g. sage's rooted
// subgraphs): from the model's initial parameters, one Poisson-sampled
// step over the examples built from the raw graph given, releasing the
// privatised gradient of every parameter. build makes the method's model
// private on a context (its graph, examples, calibration) and returns it
// with the method's batch fill; it is called once for the claim and once
// per audited graph, so on a node neighbour G − v the examples are those
// of G − v: v's own deleted (v leaves the split) and every example that
// read v modified — all of the up to R the claim covers, none of them
// dropped. The claim is the ε of one step's event at the calibrated
// multiplier, Occurrences{R, Change, Poisson{q, Gaussian{z}}} (the plain
// Poisson Gaussian when R = Change = 1), at the plan's δ. The output is the
// parameters' gradients, so no value belongs to a node and every value is
// compared. As in a run, each graph's build calibrates for its own
// training-node count (treated as public, as the run's report says), and
// randomness drawn at build time (a --degree-bound sample key) comes from
// the context's seed, the same on both graphs.
func ExamplesAudit(ctx *methods.Context, opts AuditOptions, build func(*methods.Context) (*Private, func(*dpnn.Batch) error, error)) (*AuditTarget, error) {
	if err := checkSGDAudit(ctx, opts); err != nil {
		return nil, err
	}
	p, _, err := build(ctx)
	if err != nil {
		return nil, err
	}
	c, z := p.Cfg, p.Multiplier
	what := fmt.Sprintf("one DP-SGD step over %d examples (%s): Poisson rate %.4g, clip %g, noise multiplier %.4g (std %.4g); a unit changes at most R=%d examples (its own deleted, the others modified), each by at most %d·C; released: the privatised gradient of every parameter",
		c.N, c.What, c.Rate(), c.Clip, z, c.NoiseStd(z), c.R, c.Change)
	var mu sync.Mutex
	digests := map[*graphs.Graph][]uint64{}
	t, err := sgdStepTarget(c.StepEvent(z), p.Plan.Delta, what, func(g *graphs.Graph) (Release1, error) {
		gc := *ctx
		gc.Graph = g
		p, fill, err := build(&gc)
		if err != nil {
			return nil, err
		}
		d, err := p.SGD.ExampleDigests(fill)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		digests[g] = d
		mu.Unlock()
		return func(src *dp.Source) ([]float64, error) {
			p.SGD.SetSource(src)
			return p.SGD.ReleaseExamples(fill)
		}, nil
	})
	if err != nil {
		return nil, err
	}
	t.Covered = c.R
	t.Examples = func(g *graphs.Graph) ([]uint64, error) {
		mu.Lock()
		defer mu.Unlock()
		d, ok := digests[g]
		if !ok {
			return nil, errors.New("audit target: the examples of a graph not prepared")
		}
		return d, nil
	}
	return t, nil
}

// ChangedExamples counts the examples of a that have no equal in b and
// those of b that have none in a (as multisets of digests; 0 is an absent
// id and is not counted): a neighbour's deleted and modified examples.
func ChangedExamples(a, b []uint64) (gone, new int) {
	left := map[uint64]int{}
	for _, d := range b {
		if d != 0 {
			left[d]++
		}
	}
	for _, d := range a {
		switch {
		case d == 0:
		case left[d] > 0:
			left[d]--
		default:
			gone++
		}
	}
	for _, k := range left {
		new += k
	}
	return gone, new
}

// checkSGDAudit refuses what a DP-SGD step audit cannot do.
func checkSGDAudit(ctx *methods.Context, opts AuditOptions) error {
	if opts.Multiplier > 0 {
		return fmt.Errorf("--multiplier is for aggregation releases (gap, progap)")
	}
	if !ctx.Private() || ctx.Level != methods.Node {
		return fmt.Errorf("a DP-SGD step is audited at node level with a finite --epsilon")
	}
	return nil
}

// sgdStepTarget is the target of one DP-SGD step claimed as step at delta:
// every value compared (Width 0, no Nodes, OwnRow empty).
func sgdStepTarget(step dp.Event, delta float64, what string, prepare func(*graphs.Graph) (Release1, error)) (*AuditTarget, error) {
	claimed, err := ClaimedEpsilon(step, delta)
	if err != nil {
		return nil, err
	}
	return &AuditTarget{Claimed: claimed, Delta: delta, What: what, Prepare: prepare}, nil
}
