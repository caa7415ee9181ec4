package methods

import (
	"fmt"
	"math"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/spf13/pflag"
)

// AggregationPerturbation holds the hyperparameters GAP and ProGAP share
// and the privacy set-up of aggregation perturbation: which adjacency NAP
// reads (out-degree bounded at node level), the privacy unit count for δ,
// and the DP-SGD parameters at node level.
type AggregationPerturbation struct {
	Hops        int
	BaseLayers  int
	HeadLayers  int
	Hidden      int
	Epochs_     int
	LR          float64
	Dropout     float64
	InDropout   float64
	MaxDegree   int
	BatchSize   int
	Clip        float64
	Accountant  string
	EdgeUnit    string
	Norm        string
	WeightDecay float64
}

// BindAPFlags registers the shared flags with the given defaults.
func (a *AggregationPerturbation) BindAPFlags(fs *pflag.FlagSet, hops, epochs int, lr float64) {
	fs.IntVar(&a.Hops, "hops", hops, "K: number of aggregation (NAP) steps")
	fs.IntVar(&a.Hidden, "hidden", 16, "hidden width")
	fs.IntVar(&a.BaseLayers, "base-layers", 1, "layers of each base MLP (GAP: one per hop; ProGAP: one per input of a stage)")
	fs.IntVar(&a.HeadLayers, "head-layers", 1, "layers of the head MLP over the concatenated hops")
	fs.IntVar(&a.Epochs_, "epochs", epochs, "training epochs of each module / stage")
	fs.Float64Var(&a.LR, "lr", lr, "Adam learning rate")
	fs.Float64Var(&a.Dropout, "dropout", 0, "dropout probability (between layers, as in GAP's code)")
	fs.Float64Var(&a.InDropout, "input-dropout", 0, "dropout probability on the raw node features entering the first MLP (not in the papers' code; no privacy effect)")
	fs.IntVar(&a.MaxDegree, "max-degree", 100, "node level: D, the out-degree bound applied before anything else")
	fs.IntVar(&a.BatchSize, "batch-size", 256, "node level: expected Poisson batch size B (q = B/N_train)")
	fs.Float64Var(&a.Clip, "clip", 1, "node level: per-sample gradient clipping bound C")
	fs.StringVar(&a.Norm, "norm", "auto", "norm layer: auto (batchnorm at edge level and without privacy, the methods' default at node level), none, batchnorm or groupnorm")
	fs.Float64Var(&a.WeightDecay, "weight-decay", 0, "Adam L2 weight decay")
	fs.StringVar(&a.EdgeUnit, "edge-unit", EdgeDirected, "edge level: the privacy unit — directed (one adjacency entry j→i, NAP sensitivity 1: the papers' convention)\nor undirected (an edge {i,j} with both its entries, sensitivity √2; δ auto counts undirected edges)")
	fs.StringVar(&a.Accountant, "accountant", "gdp", "edge level: gdp (exact Gaussian composition) or rdp-standard (Theorem 4.1's RDP route) or rdp; node level always uses rdp (improved conversion) unless rdp-standard is given")
}

// Levels: aggregation perturbation runs without privacy, at edge level and
// at node level.
func (*AggregationPerturbation) Levels() []Level { return []Level{None, Edge, Node} }

// DefaultSplit is the default protocol for a dataset.
func (*AggregationPerturbation) DefaultSplit(dataset string) string { return DefaultSplitFor(dataset) }

// CalibrateAP finds the one noise multiplier z of an aggregation-perturbation
// run whose releases are events(z) (Gaussian events in multiples of the
// sensitivity): at edge level (and without privacy) with --accountant, at
// node level with RDP. The noise record holds the NAP std z·sensitivity and
// K; at node level nodeNoise adds the DP-SGD entries. At edge level the
// report names the privacy unit and, for directed units, also states the ε
// of an undirected edge (two directed entries, sensitivity √2, so the same
// events at multiplier z/√2) — what a reader of an undirected graph would
// otherwise under-estimate.
func (a *AggregationPerturbation) CalibrateAP(ctx *Context, setup *APSetup, events func(z float64) []dp.Event, nodeNoise func(z float64, rec map[string]float64)) (*Calibrated, error) {
	acct := a.NodeAccountant()
	if ctx.Level != Node {
		var err error
		if acct, err = a.EdgeAccountant(); err != nil {
			return nil, err
		}
	}
	c, err := Calibrate(ctx, setup.Units, acct, events, func(z float64) map[string]float64 {
		rec := map[string]float64{"nap_std": z * setup.Sensitivity, "hops": float64(a.Hops)}
		if ctx.Level == Node && nodeNoise != nil {
			nodeNoise(z, rec)
		}
		return rec
	})
	if err != nil || ctx.Level != Edge || !ctx.Private() {
		return c, err
	}
	if a.EdgeUnit == EdgeUndirected {
		c.Report.Notes = fmt.Sprintf("privacy unit: one undirected edge {i,j} with both its adjacency entries (NAP sensitivity √2, std %.6g)", c.Multiplier*setup.Sensitivity)
		return c, nil
	}
	epsU, err := dp.EpsilonOf(acct, events(c.Multiplier/math.Sqrt2), c.Report.Delta)
	if err != nil {
		return nil, err
	}
	c.Report.Notes = fmt.Sprintf("privacy unit: one directed edge j→i (NAP sensitivity 1). An undirected edge {i,j} is two such entries: "+
		"for it ε = %.6g at the same δ (sensitivity √2); --edge-unit undirected calibrates for it", epsU)
	return c, nil
}

// NormFor returns the norm layer for a level: --norm, or with "auto" the
// given default.
func (a *AggregationPerturbation) NormFor(level Level, auto layers.NormKind) (layers.NormKind, error) {
	if a.Norm == "auto" || a.Norm == "" {
		return auto, nil
	}
	k, err := layers.ParseNorm(a.Norm)
	if err != nil {
		return k, err
	}
	if level == Node && k == layers.NormBatch {
		return k, fmt.Errorf("--norm batchnorm mixes samples and cannot be trained with DP-SGD; use groupnorm or none")
	}
	return k, nil
}

// ValidateAP checks the shared hyperparameters.
func (a *AggregationPerturbation) ValidateAP() error {
	return CheckAll(Positive("hops", a.Hops), Positive("hidden", a.Hidden),
		Positive("base-layers", a.BaseLayers), Positive("head-layers", a.HeadLayers), Positive("epochs", a.Epochs_),
		PositiveF("lr", a.LR), Prob("dropout", a.Dropout), Prob("input-dropout", a.InDropout), Positive("max-degree", a.MaxDegree),
		Positive("batch-size", a.BatchSize), PositiveF("clip", a.Clip), a.validateEdgeUnit())
}

// Edge-level privacy units of aggregation perturbation.
const (
	EdgeDirected   = "directed"
	EdgeUndirected = "undirected"
)

func (a *AggregationPerturbation) validateEdgeUnit() error {
	if a.EdgeUnit != EdgeDirected && a.EdgeUnit != EdgeUndirected {
		return fmt.Errorf("--edge-unit %q: want directed or undirected", a.EdgeUnit)
	}
	return nil
}

// APSetup is the privacy set-up of one aggregation-perturbation run.
type APSetup struct {
	// Adj is what NAP aggregates over: the graph's adjacency, with
	// out-degrees bounded by MaxDegree at node level (done once, first).
	Adj *graphs.CSR
	// Sensitivity of one NAP call: 1 at edge level with directed units,
	// √2 with undirected ones (removing {i,j} changes rows i and j by a unit
	// vector each), √D at node level.
	Sensitivity float64
	// Units is the privacy unit count for δ auto: directed or undirected
	// edges (edge level) or training nodes (node level).
	Units int
	// Rate is the DP-SGD Poisson rate at node level.
	Rate float64
}

// SetupAP prepares the adjacency and unit counts for a level.
func (a *AggregationPerturbation) SetupAP(ctx *Context) (*APSetup, error) {
	g := ctx.Graph
	s := &APSetup{Adj: g.Adj, Sensitivity: 1, Units: g.Adj.NNZ()}
	if ctx.Level == Node && a.EdgeUnit == EdgeUndirected {
		return nil, fmt.Errorf("--edge-unit is for edge level: node level already protects a node with all its edges")
	}
	if ctx.Level != Node && a.EdgeUnit == EdgeUndirected {
		s.Sensitivity, s.Units = math.Sqrt2, g.Adj.UndirectedEdges()
	}
	if ctx.Level == Node {
		n := len(g.Split.Train)
		if n == 0 {
			return nil, fmt.Errorf("the split has no training nodes")
		}
		s.Adj = graphs.BoundOutDegree(g.Adj, a.MaxDegree, ctx.Seed)
		s.Sensitivity = math.Sqrt(float64(a.MaxDegree))
		s.Units = n
		s.Rate = NodeRate(a.BatchSize, n)
	}
	return s, nil
}

// NodeAccountant is the accountant name used at node level.
func (a *AggregationPerturbation) NodeAccountant() string {
	if a.Accountant == "rdp-standard" {
		return a.Accountant
	}
	return "rdp"
}

// EdgeAccountant is the accountant name used at edge level.
func (a *AggregationPerturbation) EdgeAccountant() (string, error) {
	for _, n := range dp.AccountantNames() {
		if n == a.Accountant {
			return n, nil
		}
	}
	return "", fmt.Errorf("--accountant %q: want one of gdp, rdp, rdp-standard", a.Accountant)
}
