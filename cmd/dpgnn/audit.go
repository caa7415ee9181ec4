package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/trainers"
	"github.com/spf13/cobra"
)

// auditFlags are the options of `dpgnn audit`: the statistics of every
// audit, the neighbour and release of a method's, and --json. A method
// audit's record states the first two with the method's hyperparameters.
type auditFlags struct {
	stats  auditStats
	target auditTarget
	json   bool
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
	RemoveNode int     `flag:"remove-node" help:"G′ is G without node V: its edges, features and label (its id stays, isolated; its output row is not compared)"`
	RemoveEdge string  `flag:"remove-edge" help:"G′ is G without the edge U,V (one directed entry, or both entries when the method's unit is an undirected edge)"`
	Neighbor   string  `flag:"neighbor" help:"G′ is the graph in FILE (same nodes as G)"`
	Release    string  `flag:"release" help:"which release of a method that makes several kinds (dpar: appr — one DP-APPR row — or sgd — one DP-SGD step; default appr)"`
	Embedding  string  `flag:"embedding" help:"aggregation releases: what is aggregated — aligned (every row the same unit vector: the worst case) or features"`
	Width      int     `flag:"width" help:"width of the aligned embedding (default --hidden; 1 concentrates the signal and gives the test more power)"`
	Multiplier float64 `flag:"multiplier" help:"aggregation releases: audit at this noise multiplier instead of the run's calibration (the claim is then its ε)"`
}

func (a *auditFlags) bindStats(cmd *cobra.Command) {
	f := cmd.Flags()
	a.stats = auditStats{Trials: 1000, Confidence: dp.DefaultConfidence}
	methods.BindConfig(f, &a.stats)
	f.BoolVar(&a.json, "json", false, "print one JSON object on stdout and nothing else")
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
	auditor, isAuditor := m.(methods.Auditor)
	short := "Audit one private release of " + name + ", or attack the trained model (--attack)"
	if !isAuditor {
		short = "Attack the trained " + name + " (--attack linkteller|mia)"
	}
	cmd := &cobra.Command{
		Use:   name + " (--privacy edge|node --epsilon E (--remove-node V | --remove-edge U,V | --neighbor FILE) | --attack linkteller|mia) [flags]",
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if atk.Attack != "" || cmd.Flags().Changed("attack") {
				return runAttack(cmd, stdout, stderr, m, &c, &a, &atk)
			}
			for _, f := range []string{"runs", "nodes", "influence-delta", "mia-per-class", "mia-features"} {
				if cmd.Flags().Changed(f) {
					return fmt.Errorf("--%s is for an attack: give --attack linkteller or mia", f)
				}
			}
			if !isAuditor {
				return fmt.Errorf("%s has no audit of a release (it makes no private release to replay): attack it with --attack linkteller or --attack mia", name)
			}
			start := time.Now()
			opts, err := c.options()
			if err != nil {
				return err
			}
			set := 0
			for _, on := range []bool{cmd.Flags().Changed("remove-node"), a.target.RemoveEdge != "", a.target.Neighbor != ""} {
				if on {
					set++
				}
			}
			if set != 1 {
				return fmt.Errorf("give exactly one neighbour: --remove-node V, --remove-edge U,V or --neighbor FILE")
			}
			if a.stats.Trials < 2*dp.MinAuditRuns {
				return fmt.Errorf("--trials %d: need at least %d", a.stats.Trials, 2*dp.MinAuditRuns)
			}
			ctx, err := methods.NewContext(m, opts)
			if err != nil {
				return err
			}
			target, err := auditor.AuditTarget(ctx, methods.AuditOptions{Embedding: a.target.Embedding, Width: a.target.Width, Multiplier: a.target.Multiplier, Release: a.target.Release})
			if err != nil {
				return err
			}
			g := ctx.Graph
			gp, drop, what, err := a.neighbour(g, opts, target)
			if err != nil {
				return err
			}
			dim := g.N * target.Width
			if target.Width == 0 {
				dim = 0 // known after the first release
			}
			if float64(a.stats.Trials)*float64(max(dim, 1)) > 5e10 {
				return fmt.Errorf("--trials %d × %d output values is too much work", a.stats.Trials, dim)
			}
			relG, err := target.Prepare(g)
			if err != nil {
				return fmt.Errorf("release on G: %w", err)
			}
			relGp, err := target.Prepare(gp)
			if err != nil {
				return fmt.Errorf("release on G′: %w", err)
			}
			var bar trainers.Recorder = trainers.Nop{}
			if !a.json {
				if f, ok := stderr.(*os.File); ok {
					bar = trainers.NewBar(f)
				}
			}
			frac := a.stats.EstimateFraction
			bar.Plan(a.stats.Trials * 2)
			sampler := func(rel methods.Release1, side string) dp.AuditSampler {
				return func(i int, first bool) ([]float64, error) {
					if first {
						bar.Epoch(trainers.EpochStats{})
					}
					out, err := rel(dp.NewSource(c.seed).Split(fmt.Sprintf("audit %s %d", side, i)))
					if err != nil {
						return nil, err
					}
					if target.Width > 0 && drop >= 0 {
						if len(out) != g.N*target.Width {
							return nil, fmt.Errorf("release on %s has %d values, want %d×%d", side, len(out), g.N, target.Width)
						}
						out = slices.Delete(out, drop*target.Width, (drop+1)*target.Width)
					}
					return out, nil
				}
			}
			res, err := dp.AuditStream(sampler(relG, "G"), sampler(relGp, "G′"), a.stats.Trials,
				dp.AuditConfig{Confidence: a.stats.Confidence, EstimateFraction: frac, Delta: target.Delta})
			bar.Done()
			if err != nil {
				return err
			}
			return a.report(stdout, auditRecord{Method: name, Dataset: g.Name, Privacy: string(ctx.Level), Neighbor: what,
				Release: target.What, Claimed: target.Claimed, GaussianClaim: target.Gaussian, AuditResult: res,
				Hyperparameters: a.hyperparameters(m, c.features), Seconds: time.Since(start).Seconds()})
		},
	}
	c.bind(cmd.Flags())
	f := cmd.Flags()
	a.target = auditTarget{RemoveNode: -1, Embedding: "aligned"}
	methods.BindConfig(f, &a.target)
	a.bindStats(cmd)
	atk.defaults()
	methods.BindConfig(f, &atk)
	methods.BindConfig(f, m.Config())
	return cmd
}

// hyperparameters are what a method audit's record states: the method's
// (methods.Hyperparameters) and the audit's own options.
func (a *auditFlags) hyperparameters(m methods.Method, features string) map[string]any {
	hp := methods.Hyperparameters(m, features)
	maps.Copy(hp, methods.ConfigValues(&a.stats))
	maps.Copy(hp, methods.ConfigValues(&a.target))
	return hp
}

// neighbour builds G′ from the flags, the rows to drop before comparing (−1
// for none) and a description.
func (a *auditFlags) neighbour(g *graphs.Graph, opts methods.TrainOptions, t *methods.AuditTarget) (*graphs.Graph, int, string, error) {
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
		both := t.EdgeUnit == methods.EdgeUndirected
		gp := g.WithAdj(graphs.RemoveEntry(g.Adj, u, v, both && g.Adj.HasEntry(v, u)))
		what := fmt.Sprintf("remove the directed edge %d→%d", u, v)
		if both {
			what = fmt.Sprintf("remove the undirected edge {%d,%d}", u, v)
		}
		return gp, -1, what, nil
	case a.target.Neighbor != "":
		h, err := graphs.Load(a.target.Neighbor, opts.DataDir, opts.Seed)
		if err != nil {
			return nil, 0, "", err
		}
		if h.N != g.N {
			return nil, 0, "", fmt.Errorf("--neighbor %s has %d nodes, G has %d: give a graph on the same nodes (for a removed node use --remove-node)", a.target.Neighbor, h.N, g.N)
		}
		gp := g.WithAdj(h.Adj)
		return gp, -1, "the graph in " + a.target.Neighbor, nil
	}
	v := a.target.RemoveNode
	if v < 0 || v >= g.N {
		return nil, 0, "", fmt.Errorf("--remove-node %d: want a node id in [0, %d)", v, g.N)
	}
	gp := g.WithAdj(graphs.RemoveNode(g.Adj, v))
	// Every private edge set loses v's edges: a signed graph's negative
	// edges and the train/test edge lists of link tasks.
	for _, a := range []**graphs.CSR{&gp.Neg, &gp.EdgeTrain, &gp.EdgeTest} {
		if *a != nil && (*a).Rows == g.N && (*a).Cols == g.N {
			*a = graphs.RemoveNode(*a, v)
		}
	}
	drop := func(ids []int) []int { return slices.DeleteFunc(slices.Clone(ids), func(i int) bool { return i == v }) }
	gp.Split = graphs.Split{Train: drop(g.Split.Train), Val: drop(g.Split.Val), Test: drop(g.Split.Test)}
	return gp, v, fmt.Sprintf("remove node %d with its %d out-edge(s) and its features and label", v, g.Adj.Indptr[v+1]-g.Adj.Indptr[v]), nil
}
