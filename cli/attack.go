package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"strings"
	"time"

	"github.com/dpgnn/dpgnn/attacks"
	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/methods"
	mrun "github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/trainers"
	"github.com/spf13/cobra"
)

// attackFlags are the options of `dpgnn audit METHOD --attack`.
type attackFlags struct {
	Attack    string  `flag:"attack" help:"audit a trained model with an attack instead of replaying one release: linkteller (edges, LinkTeller) or mia (node membership, G-MIA's TSTF setting)"`
	Runs      int     `flag:"runs" help:"attack runs with seeds seed, seed+1, ... (each trains its own models): the AUC's mean and 95% interval"`
	Nodes     int     `flag:"nodes" help:"linkteller: |V_I|, the nodes sampled from the split's test nodes (all of them if fewer)"`
	Influence float64 `flag:"influence-delta" help:"linkteller: Δ, a query scales one node's features by 1+Δ (LinkTeller's 1e-4)"`
	PerClass  int     `flag:"mia-per-class" help:"mia: training nodes per class of the target and of the shadow model, non-members as many each\n(0: G-MIA's 90, lowered when a class or the graph is too small)"`
	Features  string  `flag:"mia-features" help:"mia: the attack classifier's input — sorted (G-MIA's sorted posteriors as they are) or standardized\n(each scaled to zero mean and unit variance over the shadow's nodes; needed when posteriors are nearly uniform)"`
}

func (a *attackFlags) defaults() {
	*a = attackFlags{Runs: 1, Nodes: attacks.DefaultNodes, Influence: attacks.DefaultInfluence, Features: "sorted"}
}

// attackRun is one run of an attack in the JSON record.
type attackRun struct {
	Seed uint64  `json:"seed"`
	AUC  float64 `json:"auc"`
	// Members and NonMembers are the scored pairs (linkteller: edges and
	// non-edges) or nodes (mia: the target's training nodes and
	// non-members).
	Members    int `json:"members"`
	NonMembers int `json:"non_members"`
	// Nodes is |V_I| (linkteller).
	Nodes int `json:"nodes,omitempty"`
	// Queries is the number of queries of the audited model.
	Queries int `json:"queries"`
	// Claimed is the ε of the audited model's run (null: no claim);
	// QueriesEpsilon the ε of the queries alone and TotalEpsilon of the
	// run with them, at the run's δ (null: not covered, or no claim).
	Claimed        *float64 `json:"claimed_epsilon"`
	Delta          float64  `json:"delta"`
	QueriesEpsilon *float64 `json:"queries_epsilon"`
	TotalEpsilon   *float64 `json:"total_epsilon"`
	// Bound is the ε lower bound from the scores (absent with too few).
	Bound *attacks.Bound `json:"bound,omitempty"`
	// mia: the shadow's AUC on its own nodes and the target's accuracy on
	// its members and non-members (queried on the full graph).
	ShadowAUC      *float64 `json:"shadow_auc,omitempty"`
	TargetTrainAcc *float64 `json:"target_member_acc,omitempty"`
	TargetOutAcc   *float64 `json:"target_non_member_acc,omitempty"`
}

// attackRecord is the JSON of `dpgnn audit METHOD --attack`.
type attackRecord struct {
	Method  string `json:"method"`
	Attack  string `json:"attack"`
	Dataset string `json:"dataset"`
	Privacy string `json:"privacy"`
	// Epsilon is the requested ε (null: ∞).
	Epsilon *float64 `json:"epsilon"`
	Split   string   `json:"split"`
	Runs    int      `json:"runs"`
	// AUC summarises the runs' AUCs.
	AUC trainers.Summary `json:"auc"`
	// QueryCost describes what one query releases; QueriesUncovered, when
	// set, says why no ε covers the queries.
	QueryCost        string      `json:"query_cost,omitempty"`
	QueriesUncovered string      `json:"queries_uncovered,omitempty"`
	PerRun           []attackRun `json:"per_run"`
	// Compared says whether the ε lower bounds are compared with the ε of
	// the run with its queries: only when the attack's unit is the claim's
	// (linkteller: an edge at edge level; mia: a node at node level).
	// Note says why not otherwise.
	Compared        bool           `json:"bound_compared"`
	Note            string         `json:"note,omitempty"`
	ExceedsClaim    bool           `json:"exceeds_claim"`
	Hyperparameters map[string]any `json:"hyperparameters"`
	Command         string         `json:"command"`
	Seconds         float64        `json:"seconds"`
}

// runAttack runs `dpgnn audit METHOD --attack` and prints its record.
func runAttack(cmd *cobra.Command, stdout, stderr io.Writer, m methods.Method, c *dataFlags, a *auditFlags, atk *attackFlags) error {
	start := time.Now()
	f := cmd.Flags()
	for _, name := range []string{"remove-node", "remove-edge", "neighbor", "release", "embedding", "width", "multiplier", "trials", "estimate-fraction"} {
		if f.Changed(name) {
			return fmt.Errorf("--%s is for a release audit; --attack %s trains and queries the model", name, atk.Attack)
		}
	}
	switch atk.Attack {
	case "linkteller", "mia":
	default:
		return fmt.Errorf("--attack %q: want linkteller or mia", atk.Attack)
	}
	if atk.Runs <= 0 {
		return fmt.Errorf("--runs must be positive, got %d", atk.Runs)
	}
	if atk.Nodes < 2 {
		return fmt.Errorf("--nodes must be at least 2, got %d", atk.Nodes)
	}
	if !(atk.Influence > 0) || math.IsInf(atk.Influence, 0) {
		return fmt.Errorf("--influence-delta must be positive and finite, got %v", atk.Influence)
	}
	if atk.PerClass < 0 {
		return fmt.Errorf("--mia-per-class must be non-negative, got %d", atk.PerClass)
	}
	if atk.Features != "sorted" && atk.Features != "standardized" {
		return fmt.Errorf("--mia-features must be sorted or standardized, got %q", atk.Features)
	}
	opts, err := c.options()
	if err != nil {
		return err
	}
	opts.Runs = atk.Runs // checked against the split as train's (masks: one per run)
	runs, err := mrun.PrepareAttack(m, opts)
	if err != nil {
		return err
	}
	g := runs.Graph
	bar := progressRecorder(stderr, a.quiet || a.json)
	defer bar.Done()
	rec := attackRecord{Method: m.Name(), Attack: atk.Attack, Dataset: g.Name, Privacy: string(opts.Level),
		Epsilon: dp.EpsilonJSON(opts.Epsilon), Split: runs.Split.String(), Runs: atk.Runs, Command: commandLine(cmd, nil)}
	if opts.Level == methods.None {
		rec.Epsilon = nil
	}
	if atk.Attack == "mia" {
		if f.Changed("split") {
			fmt.Fprintf(stderr, "note: --split %s is not used: --attack mia draws G-MIA's four-way split (--mia-per-class)\n", c.split)
		}
		rec.Split = "G-MIA TSTF"
	}
	switch {
	case opts.Level == methods.None || math.IsInf(opts.Epsilon, 1):
	case atk.Attack == "linkteller" && opts.Level == methods.Edge, atk.Attack == "mia" && opts.Level == methods.Node:
		rec.Compared = true
	case atk.Attack == "mia":
		rec.Note = "edge-level DP protects edges, not node membership (features and labels are public at this level): the ε lower bounds are not compared with the claim"
	default:
		rec.Note = "node-level DP covers an edge only as part of its endpoints' data (a group of two nodes): the ε lower bounds are not compared with the claim"
	}
	var aucs []float64
	for r := 0; r < atk.Runs; r++ {
		seed := opts.Seed + uint64(r)
		var run attackRun
		var cost *methods.QueryCost
		var members, nonMembers []float64
		var claim *dp.Report
		switch atk.Attack {
		case "linkteller":
			gr, err := runs.RunGraph(r)
			if err != nil {
				return err
			}
			if len(gr.Split.Test) == 0 {
				return fmt.Errorf("--attack linkteller samples V_I from the split's test nodes: split %s has none", runs.Split)
			}
			bar.Plan(m.Epochs())
			out, err := runs.Run(gr, seed, bar)
			if err != nil {
				return fmt.Errorf("%s run %d: %w", m.Name(), r+1, err)
			}
			res, err := attacks.LinkTeller(gr, out.Query, attacks.LinkTellerConfig{Nodes: atk.Nodes, Candidates: gr.Split.Test,
				Influence: atk.Influence, Seed: seed, Recorder: bar})
			if err != nil {
				return fmt.Errorf("run %d: %w", r+1, err)
			}
			run = attackRun{AUC: res.AUC, Members: res.Edges, NonMembers: res.NonEdges, Nodes: res.Nodes, Queries: res.Queries}
			cost, members, nonMembers, claim = out.QueryCost, res.EdgeScores, res.NonEdgeScores, out.Privacy
		case "mia":
			roleSeed := map[string]uint64{"target": seed, "shadow": seed + 1<<32}
			trainer := func(sub *graphs.Graph, role string) (*methods.Outcome, error) {
				bar.Plan(m.Epochs())
				return runs.Run(sub, roleSeed[role], bar)
			}
			res, err := attacks.MIA(g, trainer, attacks.MIAConfig{PerClass: atk.PerClass, Seed: seed, Standardize: atk.Features == "standardized"})
			if err != nil {
				return fmt.Errorf("run %d: %w", r+1, err)
			}
			s := res.Split
			rec.Split = fmt.Sprintf("G-MIA TSTF: %d per class for the target and the shadow model (%d training nodes each), %d non-members each",
				s.PerClass, len(s.TargetTrain), len(s.TargetOut))
			run = attackRun{AUC: res.AUC, Members: len(s.TargetTrain), NonMembers: len(s.TargetOut), Queries: res.Cost.Queries(),
				ShadowAUC: &res.ShadowAUC, TargetTrainAcc: &res.TargetTrainAcc, TargetOutAcc: &res.TargetOutAcc}
			if res.Cost == nil {
				run.Queries = 1
			}
			cost, members, nonMembers, claim = res.Cost, res.MemberScores, res.NonMemberScores, res.Target.Privacy
		}
		run.Seed = seed
		if claim != nil && claim.Epsilon != nil && opts.Level != methods.None {
			run.Claimed, run.Delta = claim.Epsilon, claim.Delta
		}
		if cost != nil {
			total, alone, err := cost.Epsilon()
			if err != nil {
				return fmt.Errorf("run %d: %w", r+1, err)
			}
			run.QueriesEpsilon, run.TotalEpsilon = dp.EpsilonJSON(alone), dp.EpsilonJSON(total)
			rec.QueryCost, rec.QueriesUncovered = cost.What, cost.Uncovered
		}
		if b, err := attacks.EpsilonBound(members, nonMembers, run.Delta, a.stats.Confidence, seed); err == nil {
			run.Bound = b
			if rec.Compared && run.TotalEpsilon != nil && b.EpsilonLB > *run.TotalEpsilon {
				rec.ExceedsClaim = true
			}
		}
		rec.PerRun = append(rec.PerRun, run)
		aucs = append(aucs, run.AUC)
	}
	rec.AUC = trainers.Summarize(aucs, opts.Seed)
	rec.Hyperparameters = mrun.Hyperparameters(m, c.features)
	maps.Copy(rec.Hyperparameters, methods.ConfigValues(atk))
	rec.Hyperparameters["confidence"] = a.stats.Confidence
	rec.Seconds = time.Since(start).Seconds()
	bar.Done()
	if err := printAttack(stdout, a.json, rec); err != nil {
		return err
	}
	if a.stats.FailAbove && rec.ExceedsClaim {
		return fmt.Errorf("an ε lower bound from the attack exceeds the ε that covers the run and its queries")
	}
	return nil
}

func printAttack(w io.Writer, asJSON bool, r attackRecord) error {
	if asJSON {
		return json.NewEncoder(w).Encode(r)
	}
	level := r.Privacy + " level"
	if r.Epsilon != nil {
		level += fmt.Sprintf(", ε = %g", *r.Epsilon)
	}
	fmt.Fprintf(w, "attack %s on %s, %s (%s), %d run(s), %.1fs\n", r.Attack, r.Method, r.Dataset, level, r.Runs, r.Seconds)
	fmt.Fprintf(w, "split: %s\n", r.Split)
	vals := make([]string, len(r.AUC.Values))
	for i, v := range r.AUC.Values {
		vals[i] = fmt.Sprintf("%.3f", v)
	}
	if r.Runs > 1 {
		fmt.Fprintf(w, "AUC %.3f ± %.3f (95%% interval; runs %s)\n", r.AUC.Mean, r.AUC.CI95, strings.Join(vals, ", "))
	} else {
		fmt.Fprintf(w, "AUC %.3f\n", r.AUC.Mean)
	}
	for i, run := range r.PerRun {
		pos, neg := "edges", "non-edges"
		if r.Attack == "mia" {
			pos, neg = "members", "non-members"
		}
		fmt.Fprintf(w, "run %d (seed %d): AUC %.3f over %d %s and %d %s", i+1, run.Seed, run.AUC, run.Members, pos, run.NonMembers, neg)
		if run.Nodes > 0 {
			fmt.Fprintf(w, " among %d nodes", run.Nodes)
		}
		fmt.Fprintf(w, "; %s\n", queries(run.Queries))
		if run.ShadowAUC != nil {
			fmt.Fprintf(w, "  target accuracy %.3f on members, %.3f on non-members; the attack's AUC on the shadow's own nodes %.3f\n",
				*run.TargetTrainAcc, *run.TargetOutAcc, *run.ShadowAUC)
		}
		claimed := "no privacy claimed"
		if run.Claimed != nil {
			claimed = fmt.Sprintf("claimed ε = %.4g at δ = %.3g", *run.Claimed, run.Delta)
		}
		if run.Bound != nil {
			fmt.Fprintf(w, "  ε_lb = %.3g from the scores (%.0f%% confidence; FPR %d/%d, FNR %d/%d); %s\n", run.Bound.EpsilonLB, 100*run.Bound.Confidence,
				run.Bound.FP, run.Bound.Negatives, run.Bound.FN, run.Bound.Positives, claimed)
		} else {
			fmt.Fprintf(w, "  too few scores for an ε lower bound (%d of each needed); %s\n", attacks.MinBoundScores, claimed)
		}
		switch {
		case r.QueriesUncovered != "" && run.Claimed != nil:
			fmt.Fprintf(w, "  the attack's %s not covered by any ε: %s\n", queries(run.Queries)+map[bool]string{true: " is", false: " are"}[run.Queries == 1], r.QueriesUncovered)
		case run.QueriesEpsilon != nil && *run.QueriesEpsilon > 0:
			fmt.Fprintf(w, "  the attack's %s cost ε = %.4g, beyond the run's claim; the run with them: ε = %.4g\n", queries(run.Queries), *run.QueriesEpsilon, *run.TotalEpsilon)
		case run.Claimed != nil:
			fmt.Fprintf(w, "  the attack's queries release nothing beyond the run\n")
		}
	}
	if r.QueryCost != "" {
		fmt.Fprintf(w, "one query: %s\n", r.QueryCost)
	}
	if r.Note != "" {
		fmt.Fprintf(w, "note: %s\n", r.Note)
	}
	if r.ExceedsClaim {
		fmt.Fprintln(w, "an ε_lb EXCEEDS the ε of the run with its queries (the attack game assumes members and non-members differ only in membership: examine before concluding)")
	}
	return nil
}

// queries is "1 query" or "n queries".
func queries(n int) string {
	if n == 1 {
		return "1 query"
	}
	return fmt.Sprintf("%d queries", n)
}
