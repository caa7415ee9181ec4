package cli

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	graphio "github.com/dpgnn/dpgnn/graphs/io"
	"github.com/dpgnn/dpgnn/methods"
	mrun "github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/trainers"
	"github.com/sbinet/npyio/npy"
	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/mat"
)

// auditFlags are the options of `dpgnn audit`: the statistics of every
// audit, the neighbour and release of a method's, and --json. A method
// audit's record states the first two with the method's hyperparameters.
type auditFlags struct {
	stats  auditStats
	target auditTarget
	json   bool
	quiet  bool // --quiet: no progress on stderr
	// samples is the --samples file (empty: none).
	samples string
}

// auditStats are the statistical options of every audit.
type auditStats struct {
	Trials           int     `flag:"trials" help:"releases on G and as many on G′"`
	FailAbove        bool    `flag:"fail-above" help:"exit with an error when the ε lower bound exceeds the claimed ε"`
	Confidence       float64 `flag:"confidence" help:"confidence of the Clopper–Pearson lower bound"`
	EstimateFraction float64 `flag:"estimate-fraction" help:"fraction of the releases that choose the test (0: a fifth for 1-D outputs or runs ≥ 1000 × the output size, else half)"`
}

// auditTarget says what a method audit releases and on which neighbour.
type auditTarget struct {
	RemoveNode int     `flag:"remove-node" help:"node-level claims: G′ is G without node V — its edges (in every edge set), features, label and split membership;\nits id stays, isolated, and its output values are compared like every other (unless the release states why its claim\ndoes not cover them; the record says which values were compared)"`
	RemoveEdge string  `flag:"remove-edge" help:"edge-level claims: G′ is G without the edge U,V (one directed entry, or both entries when the method's unit\nis an undirected edge)"`
	Neighbor   string  `flag:"neighbor" help:"edge-level claims: G′ is the graph in FILE, which must differ from G by exactly one unit of the claim (one\ndirected entry, or one undirected edge with all its entries, added or removed) and in nothing else (nodes,\nfeatures, labels); refused at node level (use --remove-node)"`
	Release    string  `flag:"release" help:"which release of a method that makes several kinds (dpar: appr — one DP-APPR row — or sgd — one DP-SGD step, default appr; asgl: disc); refused for a method of one kind"`
	Embedding  string  `flag:"embedding" help:"aggregation releases: what is aggregated — aligned (every row the same unit vector: the worst case of a sum over in-neighbours such as NAP; not of CARIBOU's normalised hops, where features or your own --neighbor can show more) or features"`
	Width      int     `flag:"width" help:"width of the aligned embedding (default --hidden; 1 concentrates the signal and gives the test more power)"`
	Multiplier float64 `flag:"multiplier" help:"aggregation releases: audit at this noise multiplier instead of the run's calibration (the claim is then its ε)"`
}

func (a *auditFlags) bindStats(cmd *cobra.Command) {
	f := cmd.Flags()
	a.stats = auditStats{Trials: 1000, Confidence: dp.DefaultConfidence}
	methods.BindConfig(f, &a.stats)
	f.BoolVar(&a.json, "json", false, "print one JSON object on stdout and nothing else")
	f.BoolVar(&a.quiet, "quiet", false, "no progress on stderr (a bar on a terminal, a line every 10 s otherwise)")
}

func newAuditCmd(stdout, stderr io.Writer) *cobra.Command {
	audit := &cobra.Command{
		Use:   "audit METHOD|gaussian [flags]",
		Short: "Empirical privacy audit: an ε lower bound for one release, from runs on G and a neighbour G′",
		Long: `Replay one private release of a method many times on a graph G and on a
neighbour G′ (--remove-node V, --remove-edge U,V or --neighbor FILE), every
data-dependent step of the method (degree bounds, calibration) included, and
measure how well the outputs tell G from G′: the first releases choose a test
(projection on the difference of the mean outputs, and a threshold), the rest
evaluate it, and the false-positive and false-negative counts give an ε lower
bound with Clopper–Pearson intervals (Jagielski et al. 2020, Nasr et al. 2021).
For a release claimed as a Gaussian mechanism (NAP, the bare Gaussian) they
also bound μ of μ-GDP from below, which refutes the claim with far fewer
releases (Nasr et al. 2023). A lower bound above the claimed ε is a privacy bug.

The neighbour must be one unit of the claim: --remove-edge U,V or --neighbor
FILE (one edge, added or removed, and nothing else) at edge level,
--remove-node V at node level (G′ keeps V's id as an isolated node with no
features, label or split). Every value of the release is compared, the
removed node's own included (an absent node's value is whatever the release
gives it, e.g. 0 plus noise); the one exception is a node-level release
whose claim states why it does not cover the removed node's own row (NAP:
the row sums v's in-neighbours and only v's own example reads it). The
record's "compared" says which values were. --samples FILE writes every raw
release of both sides (npz: g, g_prime, node) for your own statistic.

Releases: gap, progap — one NAP aggregation; mlp — one DP-SGD step (node
level); gcon — the perturbed minimiser. 'dpgnn audit gaussian' audits a bare
Gaussian mechanism (the audit's own calibration check).

Attacks (--attack, any method that outputs posteriors): train the model and
attack it through queries — linkteller (LinkTeller, Wu et al. 2022: a query
scales one node's features by 1+Δ, and the change of another node's
posterior scores the pair as an edge) or mia (G-MIA, Olatunji et al. 2021,
TSTF: target and shadow models trained on the subgraphs of their training
nodes, queried on the full graph, a classifier on the shadow's sorted
posteriors). Both report the AUC, an ε lower bound from the scores and what
the queries cost: a method that re-runs a private mechanism at inference
(GAP, ProGAP, CARIBOU) makes a new release with every query.

Adversarial graphs (remove node 0): --dataset spread and spread-1000 (node 0
linked to 200 or 1,000 nodes u that all link to the same 100 nodes: sampling
degrees down to D=100 and charging √D is wrong there; spread-1000 with
--degree-bound sample --max-degree 100 --width 1 --multiplier 1.0424 shows it
with 2,000 trials) and --dataset star (a hub with 100 leaves: the tight case
of a public bound).`,
		RunE: func(cmd *cobra.Command, args []string) error { return nil },
	}
	names := []string{"gaussian"}
	audit.AddCommand(newAuditGaussianCmd(stdout))
	for _, name := range methods.Names() {
		audit.AddCommand(newAuditMethodCmd(name, stdout, stderr))
		names = append(names, name)
	}
	audit.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return fmt.Errorf("audit needs a release: one of %s", strings.Join(names, ", "))
		}
		return fmt.Errorf("%q has no audit: audit one of %s", args[0], strings.Join(names, ", "))
	}
	return audit
}

func newAuditGaussianCmd(stdout io.Writer) *cobra.Command {
	var a auditFlags
	var eps, delta float64
	var seed uint64
	cmd := &cobra.Command{
		Use:   "gaussian --epsilon E --delta D [flags]",
		Short: "Audit a bare Gaussian mechanism calibrated to (ε, δ) (the audit's power check)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			start := time.Now()
			res, sigma, err := dp.AuditGaussian(eps, delta, a.stats.Trials, seed, dp.AuditConfig{Confidence: a.stats.Confidence, EstimateFraction: a.stats.EstimateFraction})
			if err != nil {
				return err
			}
			out := auditRecord{Method: "gaussian", Release: fmt.Sprintf("Gaussian mechanism, sensitivity 1, σ=%.6g (exact calibration)", sigma),
				Claimed: eps, GaussianClaim: true, AuditResult: res, Seconds: time.Since(start).Seconds()}
			return a.report(stdout, out)
		},
	}
	f := cmd.Flags()
	f.Float64Var(&eps, "epsilon", 1, "ε the mechanism is calibrated to")
	f.Float64Var(&delta, "delta", 1e-5, "δ the mechanism is calibrated to")
	f.Uint64Var(&seed, "seed", 1, "random seed")
	a.bindStats(cmd)
	return cmd
}

// auditRecord is the JSON of `dpgnn audit`.
type auditRecord struct {
	Method   string `json:"method"`
	Dataset  string `json:"dataset,omitempty"`
	Privacy  string `json:"privacy,omitempty"`
	Neighbor string `json:"neighbor,omitempty"`
	Release  string `json:"release"`
	// Compared says which values of each release the test compared (a
	// method audit): all of them, the removed node's included, or all but
	// the removed node's own row and why its claim does not need them.
	// ComparedValues is their count and Values the release's length.
	Compared       string `json:"compared,omitempty"`
	ComparedValues int    `json:"compared_values,omitempty"`
	Values         int    `json:"values,omitempty"`
	// Examples, for a release over declared examples (a DP-SGD step), is
	// G's example count; ChangedExamples how many of them have no equal on
	// G′ (deleted or modified by the neighbour), NewExamples how many of
	// G′'s have none on G, and CoveredExamples the R the claim covers.
	Examples        int `json:"examples,omitempty"`
	ChangedExamples int `json:"changed_examples,omitempty"`
	NewExamples     int `json:"new_examples,omitempty"`
	CoveredExamples int `json:"covered_examples,omitempty"`
	// Samples is the file the raw releases of both sides were written to
	// (--samples).
	Samples string `json:"samples,omitempty"`
	// Claimed is the ε the method's accounting gives the audited release;
	// GaussianClaim says it is a Gaussian mechanism's (μ-GDP) claim, which
	// the GDP bound epsilon_lb_gdp refutes directly.
	Claimed       float64 `json:"claimed_epsilon"`
	GaussianClaim bool    `json:"gaussian_claim"`
	dp.AuditResult
	ExceedsClaim    bool           `json:"exceeds_claim"`
	Hyperparameters map[string]any `json:"hyperparameters,omitempty"`
	Seconds         float64        `json:"seconds"`
}

func (a *auditFlags) report(w io.Writer, r auditRecord) error {
	r.ExceedsClaim = r.EpsilonLB > r.Claimed || (r.GaussianClaim && r.EpsilonLBGDP > r.Claimed)
	if a.json {
		if err := json.NewEncoder(w).Encode(r); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(w, "audit of %s", r.Method)
		if r.Dataset != "" {
			fmt.Fprintf(w, " on %s (%s level, neighbour: %s)", r.Dataset, r.Privacy, r.Neighbor)
		}
		fmt.Fprintf(w, ", %d + %d releases, %.1fs\n", r.Trials, r.TrialsNeighbour, r.Seconds)
		fmt.Fprintf(w, "release: %s\n", r.Release)
		if r.Compared != "" {
			fmt.Fprintf(w, "compared: %s\n", r.Compared)
		}
		if r.Examples > 0 {
			fmt.Fprintf(w, "examples: the neighbour changed %d of G's %d (G's examples with no equal on G′, as a multiset: deleted or modified; %d of G′'s have no equal on G); the claim covers R = %d\n", r.ChangedExamples, r.Examples, r.NewExamples, r.CoveredExamples)
		}
		if r.Samples != "" {
			fmt.Fprintf(w, "raw releases of both sides: %s (arrays g, g_prime: releases × %d values; node: each value's node id, −1 for none)\n", r.Samples, r.Values)
		}
		fmt.Fprintf(w, "claimed ε = %.4g at δ = %.3g; empirical lower bound ε_lb = %.4g (%.0f%% confidence)\n", r.Claimed, r.Delta, r.EpsilonLB, 100*r.Confidence)
		if r.GaussianClaim {
			fmt.Fprintf(w, "as a Gaussian mechanism (μ-GDP claim): μ_lb = %.4g, ε_lb = %.4g at δ (%.0f%% confidence; FPR %d/%d, FNR %d/%d)\n",
				r.MuLB, r.EpsilonLBGDP, 100*r.Confidence, r.FPGDP, r.Negatives, r.FNGDP, r.Positives)
		}
		fmt.Fprintf(w, "test: %s; evaluation FPR %d/%d, FNR %d/%d\n", r.Statistic, r.FP, r.Negatives, r.FN, r.Positives)
		if r.ExceedsClaim {
			fmt.Fprintln(w, "ε_lb EXCEEDS the claim: the release is less private than its accounting says")
		}
	}
	if a.stats.FailAbove && r.ExceedsClaim {
		return fmt.Errorf("ε lower bound %.4g exceeds the claimed ε %.4g", max(r.EpsilonLB, r.EpsilonLBGDP), r.Claimed)
	}
	return nil
}

func newAuditMethodCmd(name string, stdout, stderr io.Writer) *cobra.Command {
	m, _ := methods.New(name)
	var c dataFlags
	var a auditFlags
	var atk attackFlags
	auditor, isAuditor := m.(mrun.Auditor)
	short := "Audit one private release of " + name + ", or attack the trained model (--attack)"
	if !isAuditor {
		short = "Attack the trained " + name + " (--attack linkteller|mia)"
	}
	cmd := &cobra.Command{
		Use:   name + " (--privacy edge --epsilon E (--remove-edge U,V | --neighbor FILE) | --privacy node --epsilon E --remove-node V | --attack linkteller|mia) [flags]",
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if atk.Attack != "" || cmd.Flags().Changed("attack") {
				if cmd.Flags().Changed("samples") {
					return fmt.Errorf("--samples is for a release audit; --attack %s trains and queries the model", atk.Attack)
				}
				return runAttack(cmd, stdout, stderr, m, &c, &a, &atk)
			}
			for _, f := range []string{"runs", "nodes", "influence-delta", "mia-per-class", "mia-features"} {
				if cmd.Flags().Changed(f) {
					return fmt.Errorf("--%s is for an attack: give --attack linkteller or mia", f)
				}
			}
			if !isAuditor {
				return fmt.Errorf("%s has no audit of a release (it implements no run.Auditor, so there is no release to replay on G and G′): attack it with --attack linkteller or --attack mia", name)
			}
			start := time.Now()
			opts, err := c.options()
			if err != nil {
				return err
			}
			removeNode := cmd.Flags().Changed("remove-node")
			set := 0
			for _, on := range []bool{removeNode, a.target.RemoveEdge != "", a.target.Neighbor != ""} {
				if on {
					set++
				}
			}
			if set != 1 {
				return fmt.Errorf("give exactly one neighbour: --remove-node V (node level), --remove-edge U,V or --neighbor FILE (edge level)")
			}
			if a.stats.Trials < 2*dp.MinAuditRuns {
				return fmt.Errorf("--trials %d: need at least %d", a.stats.Trials, 2*dp.MinAuditRuns)
			}
			if err := a.checkNeighbourLevel(opts.Level, removeNode); err != nil {
				return err
			}
			// An unwritable --samples is refused now, not after the audit.
			if err := checkSamplesPath(a.samples); err != nil {
				return err
			}
			if err := mrun.CheckRelease(name, m, a.target.Release); err != nil {
				return err
			}
			ctx, err := mrun.NewContext(m, opts)
			if err != nil {
				return err
			}
			target, err := auditor.AuditTarget(ctx, mrun.AuditOptions{Embedding: a.target.Embedding, Width: a.target.Width, Multiplier: a.target.Multiplier, Release: a.target.Release})
			if err != nil {
				return err
			}
			bar := progressRecorder(stderr, a.quiet || a.json)
			rec, err := a.auditRelease(ctx, opts, target, c.seed, bar)
			if err != nil {
				return err
			}
			rec.Method = name
			rec.Hyperparameters = a.hyperparameters(m, c.features)
			rec.Seconds = time.Since(start).Seconds()
			return a.report(stdout, rec)
		},
	}
	c.bind(cmd.Flags())
	f := cmd.Flags()
	a.target = auditTarget{RemoveNode: -1, Embedding: "aligned"}
	methods.BindConfig(f, &a.target)
	f.StringVar(&a.samples, "samples", "", "write every raw release of both sides to this npz file: arrays g and g_prime (float64, releases × values, the\n"+
		"removed node's values included) and node (int64, each value's node id, −1 for none), for your own statistic")
	a.bindStats(cmd)
	atk.defaults()
	methods.BindConfig(f, &atk)
	methods.BindConfig(f, m.Config())
	return cmd
}

// hyperparameters are what a method audit's record states: the method's
// (run.Hyperparameters) and the audit's own options.
func (a *auditFlags) hyperparameters(m methods.Method, features string) map[string]any {
	hp := mrun.Hyperparameters(m, features)
	maps.Copy(hp, methods.ConfigValues(&a.stats))
	maps.Copy(hp, methods.ConfigValues(&a.target))
	return hp
}

// maxAuditWork bounds trials × values of a method audit (each value is
// produced, read up to twice and projected).
const maxAuditWork = 5e10

// auditRelease audits target on the context's graph G and the neighbour
// the flags give: trials releases on each side, every value compared but
// the removed node's own ones when the target states why (OwnRow), and
// with --samples every raw release written. The record's method,
// hyperparameters and time are the caller's.
func (a *auditFlags) auditRelease(ctx *methods.Context, opts mrun.TrainOptions, target *mrun.AuditTarget, seed uint64, bar trainers.Recorder) (auditRecord, error) {
	g := ctx.Graph
	trials := a.stats.Trials
	gp, removed, what, err := a.neighbour(g, opts, target)
	if err != nil {
		return auditRecord{}, err
	}
	nodes, err := target.CoordinateNodes(g.N)
	if err != nil {
		return auditRecord{}, err
	}
	own := ctx.Level == methods.Node && removed >= 0 && target.OwnRow != ""
	if own && nodes == nil {
		return auditRecord{}, fmt.Errorf("audit target states why the removed node's own values are not compared, but indexes no value by node (set Width or Nodes)")
	}
	var keep []int // the values compared; nil: all
	if own {
		for j, v := range nodes {
			if v != removed {
				keep = append(keep, j)
			}
		}
	}
	var samples *auditSamples
	if a.samples != "" {
		samples = &auditSamples{path: a.samples, trials: trials}
	}
	// sized checks the work and the samples' size for releases of dim
	// values, before anything of that size is allocated.
	sized := func(dim int) error {
		if float64(trials)*float64(dim) > maxAuditWork {
			return fmt.Errorf("--trials %d × %d output values is too much work", trials, dim)
		}
		if samples != nil {
			return samples.alloc(dim, nodes)
		}
		return nil
	}
	dim := len(nodes) // 0: known from the first release, checked then
	if dim > 0 {
		if err := sized(dim); err != nil {
			return auditRecord{}, err
		}
	}
	relG, err := target.Prepare(g)
	if err != nil {
		return auditRecord{}, fmt.Errorf("release on G: %w", err)
	}
	relGp, err := target.Prepare(gp)
	if err != nil {
		return auditRecord{}, fmt.Errorf("release on G′: %w", err)
	}
	bar.Plan(trials * 2)
	sampler := func(rel mrun.Release1, side int) dp.AuditSampler {
		name := [2]string{"G", "G′"}[side]
		var buf []float64
		return func(i int, first bool) ([]float64, error) {
			if first {
				bar.Epoch(trainers.EpochStats{})
			}
			out, err := rel(dp.NewSource(seed).Split(fmt.Sprintf("audit %s %d", name, i)))
			if err != nil {
				return nil, err
			}
			if dim == 0 { // the first release (run 0 on G) fixes the length
				if len(out) == 0 {
					return nil, fmt.Errorf("release on %s has no values", name)
				}
				dim = len(out)
				if err := sized(dim); err != nil {
					return nil, err
				}
			}
			if len(out) != dim {
				if target.Width > 0 {
					return nil, fmt.Errorf("release on %s has %d values, want %d×%d", name, len(out), g.N, target.Width)
				}
				return nil, fmt.Errorf("release on %s has %d values, want %d", name, len(out), dim)
			}
			if samples != nil && first {
				samples.record(side, i, out)
			}
			if keep == nil {
				return out, nil
			}
			buf = buf[:0]
			for _, j := range keep {
				buf = append(buf, out[j])
			}
			return buf, nil
		}
	}
	res, err := dp.AuditStream(sampler(relG, 0), sampler(relGp, 1), trials,
		dp.AuditConfig{Confidence: a.stats.Confidence, EstimateFraction: a.stats.EstimateFraction, Delta: target.Delta})
	bar.Done()
	if err != nil {
		return auditRecord{}, err
	}
	rec := auditRecord{Dataset: g.Name, Privacy: string(ctx.Level), Neighbor: what,
		Release: target.What, Claimed: target.Claimed, GaussianClaim: target.Gaussian, AuditResult: res,
		Compared: comparedText(nodes, dim, removed, own, target.OwnRow), ComparedValues: res.Dimension, Values: dim}
	if target.Examples != nil {
		a, err := target.Examples(g)
		if err != nil {
			return auditRecord{}, err
		}
		b, err := target.Examples(gp)
		if err != nil {
			return auditRecord{}, err
		}
		rec.ChangedExamples, rec.NewExamples = mrun.ChangedExamples(a, b)
		rec.Examples, rec.CoveredExamples = len(a), target.Covered
	}
	if samples != nil {
		if err := samples.write(); err != nil {
			return auditRecord{}, fmt.Errorf("--samples %s: %w", a.samples, err)
		}
		rec.Samples = a.samples
	}
	return rec, nil
}

// comparedText says which of a release's dim values an audit compared:
// nodes gives each value's node (nil: none belongs to a node), removed is
// the removed node (−1: an edge-level neighbour) and own whether its own
// values were left out, for the reason ownRow.
func comparedText(nodes []int, dim, removed int, own bool, ownRow string) string {
	indexed, mine := 0, 0
	for _, v := range nodes {
		if v >= 0 {
			indexed++
		}
		if v == removed && removed >= 0 {
			mine++
		}
	}
	if own {
		return fmt.Sprintf("all %d values except node %d's own %d (its row): %s", dim-mine, removed, mine, ownRow)
	}
	var s string
	switch indexed {
	case 0:
		return fmt.Sprintf("all %d values (none indexed by node)", dim)
	case dim:
		s = fmt.Sprintf("all %d node-indexed values", dim)
	default:
		s = fmt.Sprintf("all %d values (%d of them indexed by node)", dim, indexed)
	}
	if removed >= 0 {
		return fmt.Sprintf("%s, node %d's %d included", s, removed, mine)
	}
	return s + ", every node's included"
}

// checkNeighbourLevel refuses a neighbour that is not one unit of the
// claimed level: a node removal for an edge-level claim (it removes all of
// the node's edges), an edge removal or a graph file for a node-level
// claim. Levels without a claim are left to the target, which refuses
// them.
func (a *auditFlags) checkNeighbourLevel(level methods.Level, removeNode bool) error {
	switch level {
	case methods.Edge:
		if removeNode {
			return fmt.Errorf("--remove-node %d removes a node with all its edges, which an edge-level claim does not cover: give --remove-edge U,V (or audit --privacy node)", a.target.RemoveNode)
		}
	case methods.Node:
		if a.target.RemoveEdge != "" {
			return fmt.Errorf("--remove-edge %s is an edge-level neighbour and this is a node-level claim: give --remove-node V (or audit --privacy edge)", a.target.RemoveEdge)
		}
		if a.target.Neighbor != "" {
			return fmt.Errorf("--neighbor is for edge-level claims: a node-level neighbour is G minus one node with all its edges, features, label and split membership, which --remove-node V builds (a graph file cannot say which node it removed)")
		}
	}
	return nil
}

// neighbour builds G′ from the flags and returns it, the removed node (−1
// for an edge-level neighbour) and a description. The flags' level was
// checked by checkNeighbourLevel.
func (a *auditFlags) neighbour(g *graphs.Graph, opts mrun.TrainOptions, t *mrun.AuditTarget) (*graphs.Graph, int, string, error) {
	unit := t.EdgeUnit
	if unit == "" {
		unit = mrun.EdgeDirected
	}
	switch {
	case a.target.RemoveEdge != "":
		parts := strings.Split(a.target.RemoveEdge, ",")
		if len(parts) != 2 {
			return nil, 0, "", fmt.Errorf("--remove-edge %q: want U,V", a.target.RemoveEdge)
		}
		u, err1 := strconv.Atoi(strings.TrimSpace(parts[0]))
		v, err2 := strconv.Atoi(strings.TrimSpace(parts[1]))
		if err1 != nil || err2 != nil || u < 0 || v < 0 || u >= g.N || v >= g.N {
			return nil, 0, "", fmt.Errorf("--remove-edge %q: want two node ids in [0, %d)", a.target.RemoveEdge, g.N)
		}
		if !g.Adj.HasEntry(u, v) {
			return nil, 0, "", fmt.Errorf("--remove-edge %d,%d: %s has no edge %d→%d", u, v, g.Name, u, v)
		}
		both := unit == mrun.EdgeUndirected
		gp := g.WithAdj(graphs.RemoveEntry(g.Adj, u, v, both && g.Adj.HasEntry(v, u)))
		what := fmt.Sprintf("remove the directed edge %d→%d", u, v)
		if both {
			what = fmt.Sprintf("remove the undirected edge {%d,%d}", u, v)
		}
		return gp, -1, what, nil
	case a.target.Neighbor != "":
		h, err := graphio.Load(a.target.Neighbor, opts.DataDir, opts.Seed)
		if err != nil {
			return nil, 0, "", err
		}
		if opts.Features == "l1" && h.X != nil {
			h.X = graphs.L1NormalizeFeatures(h.X) // as G's were
		}
		diff, err := oneEdgeUnitApart(g, h, unit)
		if err != nil {
			return nil, 0, "", fmt.Errorf("--neighbor %s: %w", a.target.Neighbor, err)
		}
		return g.WithAdj(h.Adj), -1, fmt.Sprintf("the graph in %s: %s", a.target.Neighbor, diff), nil
	}
	v := a.target.RemoveNode
	if v < 0 || v >= g.N {
		return nil, 0, "", fmt.Errorf("--remove-node %d: want a node id in [0, %d)", v, g.N)
	}
	return withoutNode(g, v), v, fmt.Sprintf("remove node %d with its %d out-edge(s), its features, label and split membership (its id stays, isolated)",
		v, g.Adj.Indptr[v+1]-g.Adj.Indptr[v]), nil
}

// withoutNode is G − v with v's id kept: v's edges gone from every private
// edge set (the adjacency, a signed graph's negative edges, the train/test
// edge lists of link tasks), its feature row zero, its label 0 (a constant:
// nothing of v is left) and v in no split. The other nodes' data are
// shared with g, which is not modified.
func withoutNode(g *graphs.Graph, v int) *graphs.Graph {
	gp := g.WithAdj(graphs.RemoveNode(g.Adj, v))
	for _, a := range []**graphs.CSR{&gp.Neg, &gp.EdgeTrain, &gp.EdgeTest} {
		if *a != nil && (*a).Rows == g.N && (*a).Cols == g.N {
			*a = graphs.RemoveNode(*a, v)
		}
	}
	if g.X != nil && v < g.X.N {
		gp.X = withoutFeatureRow(g.X, v)
	}
	if v < len(g.Labels) {
		gp.Labels = slices.Clone(g.Labels)
		gp.Labels[v] = 0
	}
	drop := func(ids []int) []int { return slices.DeleteFunc(slices.Clone(ids), func(i int) bool { return i == v }) }
	split := func(s graphs.Split) graphs.Split {
		return graphs.Split{Train: drop(s.Train), Val: drop(s.Val), Test: drop(s.Test)}
	}
	gp.Split = split(g.Split)
	gp.MaskSplits = nil
	for _, s := range g.MaskSplits {
		gp.MaskSplits = append(gp.MaskSplits, split(s))
	}
	return gp
}

// withoutFeatureRow is f with row v zero (a copy; f is not modified).
func withoutFeatureRow(f *graphs.Features, v int) *graphs.Features {
	out := &graphs.Features{N: f.N, F: f.F}
	if f.Sparse == nil {
		out.Dense = slices.Clone(f.Dense)
		clear(out.Dense[v*f.F : (v+1)*f.F])
		return out
	}
	s := f.Sparse
	a, b := s.Indptr[v], s.Indptr[v+1]
	c := &graphs.CSR{Rows: s.Rows, Cols: s.Cols, Indptr: make([]int, len(s.Indptr)),
		Indices: slices.Concat(s.Indices[:a], s.Indices[b:])}
	if s.Data != nil {
		c.Data = slices.Concat(s.Data[:a], s.Data[b:])
	}
	for i, p := range s.Indptr {
		if i > v {
			p -= b - a
		}
		c.Indptr[i] = p
	}
	out.Sparse = c
	return out
}

// oneEdgeUnitApart checks that h is g with exactly one edge-level unit
// removed or added — one adjacency entry for the directed unit; for the
// undirected unit every stored entry of one pair {u, v}, (u,v) and (v,u),
// all on the same side — and equal in everything else an audited release
// reads: node count, direction, features, labels, classes, negative edges
// and the values of the common entries. It returns a description of the
// difference.
func oneEdgeUnitApart(g, h *graphs.Graph, unit string) (string, error) {
	switch {
	case h.N != g.N:
		return "", fmt.Errorf("has %d nodes, G has %d: an edge-level neighbour has the same nodes (a removed node is a node-level neighbour: --privacy node --remove-node V)", h.N, g.N)
	case h.Directed != g.Directed:
		return "", fmt.Errorf("is %s and G is not: not a neighbour of G", map[bool]string{true: "directed", false: "undirected"}[h.Directed])
	case h.NumClasses != g.NumClasses || !slices.Equal(h.Labels, g.Labels):
		return "", fmt.Errorf("has other labels than G: an edge-level neighbour differs in one edge and nothing else")
	case !sameFeatures(g.X, h.X):
		return "", fmt.Errorf("has other features than G: an edge-level neighbour differs in one edge and nothing else")
	case !sameCSR(g.Neg, h.Neg):
		return "", fmt.Errorf("has other negative edges than G: an edge-level neighbour differs in one edge of the adjacency and nothing else")
	}
	if h.Adj == nil || h.Adj.Rows != g.N || h.Adj.Cols != g.N {
		return "", fmt.Errorf("has no %d×%d adjacency", g.N, g.N)
	}
	var onlyG, onlyH [][2]int // entries (i, j) of one graph only
	for i := 0; i < g.N; i++ {
		gr, hr := rowEntries(g.Adj, i), rowEntries(h.Adj, i)
		for a, b := 0, 0; a < len(gr) || b < len(hr); {
			switch {
			case b == len(hr) || a < len(gr) && gr[a].j < hr[b].j:
				onlyG = append(onlyG, [2]int{i, gr[a].j})
				a++
			case a == len(gr) || hr[b].j < gr[a].j:
				onlyH = append(onlyH, [2]int{i, hr[b].j})
				b++
			default:
				if gr[a].v != hr[b].v {
					return "", fmt.Errorf("gives the edge %d→%d another weight than G: an edge-level neighbour differs in one edge and nothing else", i, gr[a].j)
				}
				a++
				b++
			}
		}
		if len(onlyG)+len(onlyH) > 2 {
			break
		}
	}
	bigger, diff, verb := g, onlyG, "G without"
	if len(onlyG) == 0 {
		bigger, diff, verb = h, onlyH, "G with"
	}
	switch {
	case len(onlyG)+len(onlyH) == 0:
		return "", fmt.Errorf("has the same edges as G: not a neighbour")
	case len(onlyG) > 0 && len(onlyH) > 0:
		return "", fmt.Errorf("removes an edge of G (%d→%d) and adds another (%d→%d): a neighbour differs in one edge-level unit", onlyG[0][0], onlyG[0][1], onlyH[0][0], onlyH[0][1])
	}
	u, v := diff[0][0], diff[0][1]
	if unit != mrun.EdgeUndirected {
		if len(diff) != 1 {
			return "", fmt.Errorf("differs from G in more than one adjacency entry: the claim's unit is one directed entry j→i (one --remove-edge U,V)")
		}
		return fmt.Sprintf("%s the directed edge %d→%d", verb, u, v), nil
	}
	for _, d := range diff {
		if d != [2]int{u, v} && d != [2]int{v, u} {
			return "", fmt.Errorf("differs from G in entries of more than one edge ({%d,%d} and {%d,%d}): the claim's unit is one undirected edge", u, v, d[0], d[1])
		}
	}
	want := 1
	if u != v && bigger.Adj.HasEntry(v, u) {
		want = 2
	}
	if len(diff) != want {
		return "", fmt.Errorf("differs from G in the entry %d→%d but not in %d→%d: the claim's unit is an undirected edge with all its entries", u, v, v, u)
	}
	return fmt.Sprintf("%s the undirected edge {%d,%d}", verb, u, v), nil
}

// csrEntry is one stored entry of a row: column and value.
type csrEntry struct {
	j int
	v float64
}

// rowEntries is row i of m as entries sorted by column.
func rowEntries(m *graphs.CSR, i int) []csrEntry {
	cols, vals := m.Row(i)
	out := make([]csrEntry, len(cols))
	for k, j := range cols {
		out[k] = csrEntry{j, 1}
		if vals != nil {
			out[k].v = vals[k]
		}
	}
	slices.SortFunc(out, func(a, b csrEntry) int { return a.j - b.j })
	return out
}

// sameCSR reports whether a and b store the same entries with the same
// values (both nil counts as the same).
func sameCSR(a, b *graphs.CSR) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if a.Rows != b.Rows || a.Cols != b.Cols || a.NNZ() != b.NNZ() {
		return false
	}
	for i := 0; i < a.Rows; i++ {
		if !slices.Equal(rowEntries(a, i), rowEntries(b, i)) {
			return false
		}
	}
	return true
}

// sameFeatures reports whether a and b hold the same values.
func sameFeatures(a, b *graphs.Features) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.N == b.N && a.F == b.F && slices.Equal(a.ToDense(), b.ToDense())
}

// maxSamplesBytes bounds what --samples holds in memory and writes: both
// sides' releases, trials × values × 8 bytes each.
const maxSamplesBytes = 2 << 30

// checkSamplesPath refuses a --samples path that cannot be written, before
// any audit work: a directory or special file, a missing directory, or a
// directory where no file can be created (probed with a temporary file,
// removed at once). Empty: no samples.
func checkSamplesPath(path string) error {
	if path == "" {
		return nil
	}
	target, err := graphio.OutputPath(path)
	if err != nil {
		return fmt.Errorf("--samples %s: %w", path, err)
	}
	f, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".probe*")
	if err != nil {
		return fmt.Errorf("--samples %s: cannot create a file in %s: %w", path, filepath.Dir(target), err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// auditSamples holds every raw release of both sides of an audit for
// --samples: run i on G (side 0) and on G′ (side 1), all values, the
// removed node's included.
type auditSamples struct {
	path        string
	trials, dim int
	g, gp       []float64 // trials × dim, row-major
	nodes       []int     // each value's node id, −1 for none
}

// alloc sizes the samples for releases of dim values whose nodes are
// nodes (nil: none belongs to a node), refusing more than maxSamplesBytes
// before allocating.
func (s *auditSamples) alloc(dim int, nodes []int) error {
	if bytes := float64(s.trials) * float64(dim) * 8 * 2; bytes > maxSamplesBytes {
		return fmt.Errorf("--samples: %d releases × %d values × 8 bytes × 2 sides is %.3g GB, above the %d GiB limit: lower --trials or the release's size",
			s.trials, dim, bytes/1e9, maxSamplesBytes>>30)
	}
	s.dim = dim
	s.g = make([]float64, s.trials*dim)
	s.gp = make([]float64, s.trials*dim)
	s.nodes = nodes
	if s.nodes == nil {
		s.nodes = make([]int, dim)
		for j := range s.nodes {
			s.nodes[j] = -1
		}
	}
	return nil
}

// record keeps run i of a side.
func (s *auditSamples) record(side, i int, out []float64) {
	dst := s.g
	if side == 1 {
		dst = s.gp
	}
	copy(dst[i*s.dim:(i+1)*s.dim], out)
}

// write writes the npz file atomically (a temporary file beside it,
// renamed over it when complete): g and g_prime as float64 trials × values
// matrices, node as int64 values. Entries are stored uncompressed, as
// numpy.savez writes them.
func (s *auditSamples) write() error {
	node := make([]int64, len(s.nodes))
	for j, v := range s.nodes {
		node[j] = int64(v)
	}
	return graphio.WriteFileAtomic(s.path, func(w io.Writer) error {
		z := zip.NewWriter(w)
		for _, a := range []struct {
			name string
			v    any
		}{
			{"g.npy", mat.NewDense(s.trials, s.dim, s.g)},
			{"g_prime.npy", mat.NewDense(s.trials, s.dim, s.gp)},
			{"node.npy", node},
		} {
			e, err := z.CreateHeader(&zip.FileHeader{Name: a.name, Method: zip.Store})
			if err != nil {
				return err
			}
			if err := npy.Write(e, a.v); err != nil {
				return fmt.Errorf("%s: %w", a.name, err)
			}
		}
		return z.Close()
	})
}
