package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/trainers"
	"github.com/spf13/cobra"
)

// tuneFlags are the flags of `dpgnn tune METHOD`.
type tuneFlags struct {
	commonFlags
	grid                   []string
	random                 int
	candidates, selPrivacy string
}

// gridKey is one --grid flag: a hyperparameter and its values.
type gridKey struct {
	key    string
	values []string
}

// tuneTrial is one trained candidate.
type tuneTrial struct {
	Setting string   `json:"setting"`
	ValAcc  float64  `json:"val_acc"`
	TestAcc float64  `json:"test_acc"`
	Epsilon *float64 `json:"epsilon"`
}

// tunePrivacy is the privacy part of the tuning report.
type tunePrivacy struct {
	Level            string   `json:"level"`
	Delta            *float64 `json:"delta"`
	CandidateEpsilon *float64 `json:"candidate_epsilon"`
	TunedEpsilon     *float64 `json:"tuned_epsilon"`
	Candidates       string   `json:"candidates,omitempty"`
	Covered          bool     `json:"selection_covered"`
	Note             string   `json:"note"`
}

// tuneReport is what `dpgnn tune` prints.
type tuneReport struct {
	Method    string      `json:"method"`
	GridSize  int         `json:"grid_size"`
	Drawn     int         `json:"candidates_drawn"`
	Trials    []tuneTrial `json:"trials"`
	Best      *tuneTrial  `json:"best"`
	Privacy   tunePrivacy `json:"privacy"`
	Selection string      `json:"selection_privacy"`
}

func newTuneCmd(stdout, stderr io.Writer) *cobra.Command {
	tune := &cobra.Command{
		Use:   "tune METHOD --grid KEY=V1,V2 ... [flags]",
		Short: "Select a method's hyperparameters on validation accuracy, with the selection's privacy accounted",
		Long: `Train candidates from a grid of hyperparameters (the Cartesian product of the
--grid flags, each KEY=V1,V2,... with KEY one of the method's flags), score each
on validation accuracy and report the best with its test accuracy.

Each candidate is a private release at the given --privacy and --epsilon. At a
private level the validation data the selection reads is private, so releasing
the best candidate is not covered by one candidate's ε. With
--selection-privacy rdp (the default at a private level) the number K of
candidates is random, K ~ --candidates (poisson:MU, default MU = grid size, or
negbin:ETA,GAMMA, the truncated negative binomial), drawn from the mechanism
source, each candidate drawn uniformly with replacement from the grid; the
report gives the tuned ε of Papernot & Steinke (ICLR 2022, Theorem 6 for
Poisson, Theorem 2 for the truncated negative binomial), from the worst RDP
curve over the grid of one candidate's plan, at the run's δ. With
--selection-privacy none the whole grid (or --random N seeded draws from it)
is trained and no ε is claimed for the selection.`,
		Args: methodArg("tune"),
		RunE: func(cmd *cobra.Command, args []string) error { return nil },
	}
	for _, name := range methods.Names() {
		tune.AddCommand(newTuneMethodCmd(name, stdout, stderr))
	}
	return tune
}

func newTuneMethodCmd(name string, stdout, _ io.Writer) *cobra.Command {
	m, _ := methods.New(name)
	var f tuneFlags
	cmd := &cobra.Command{
		Use:   name + " --grid KEY=V1,V2 ... [flags]",
		Short: m.Short(),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := runTune(cmd, m, &f)
			if err != nil {
				return err
			}
			if f.json {
				return json.NewEncoder(stdout).Encode(rep)
			}
			printTune(stdout, rep)
			return nil
		},
	}
	f.commonFlags.bind(cmd)
	fl := cmd.Flags()
	fl.StringArrayVar(&f.grid, "grid", nil, "KEY=V1,V2,...: values of one of the method's flags (repeatable; the grid is their product)")
	fl.IntVar(&f.random, "random", 0, "train N seeded uniform draws from the grid instead of all of it (--selection-privacy none)")
	fl.StringVar(&f.candidates, "candidates", "", "distribution of the number of candidates: poisson:MU (default MU = grid size) or negbin:ETA,GAMMA")
	fl.StringVar(&f.selPrivacy, "selection-privacy", "auto", "rdp (random number of candidates, tuned ε accounted), none (no ε claimed for the selection); auto: rdp at a private level")
	methods.BindConfig(fl, m.Config())
	return cmd
}

// parseGrid parses the --grid flags, checking every value against the method.
func parseGrid(m methods.Method, grid []string) ([]gridKey, error) {
	if len(grid) == 0 {
		return nil, fmt.Errorf("--grid: at least one KEY=V1,V2,... is required")
	}
	var keys []gridKey
	seen := map[string]bool{}
	for _, g := range grid {
		k, vs, ok := strings.Cut(g, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || vs == "" {
			return nil, fmt.Errorf("--grid %q: want KEY=V1,V2,...", g)
		}
		if seen[k] {
			return nil, fmt.Errorf("--grid %q: %s is already in the grid", g, k)
		}
		seen[k] = true
		gk := gridKey{key: k}
		for _, v := range strings.Split(vs, ",") {
			v = strings.TrimSpace(v)
			if err := methods.SetConfig(cloneMethod(m).Config(), k+"="+v); err != nil {
				return nil, fmt.Errorf("--grid %q: %s", g, oneLine(err))
			}
			gk.values = append(gk.values, v)
		}
		keys = append(keys, gk)
	}
	return keys, nil
}

// cloneMethod returns a new method of m's kind with m's configuration.
func cloneMethod(m methods.Method) methods.Method {
	c, _ := methods.New(m.Name())
	if src, dst := m.Config(), c.Config(); src != nil && dst != nil {
		reflect.ValueOf(dst).Elem().Set(reflect.ValueOf(src).Elem())
	}
	return c
}

// gridPoint returns the setting of grid point i (mixed radix, first key slowest).
func gridPoint(keys []gridKey, i int) []string {
	out := make([]string, len(keys))
	for j := len(keys) - 1; j >= 0; j-- {
		n := len(keys[j].values)
		out[j] = keys[j].key + "=" + keys[j].values[i%n]
		i /= n
	}
	return out
}

func gridSize(keys []gridKey) int {
	n := 1
	for _, k := range keys {
		n *= len(k.values)
	}
	return n
}

// candidateMethod is m with a grid point's setting applied and validated.
func candidateMethod(m methods.Method, setting []string) (methods.Method, error) {
	c := cloneMethod(m)
	for _, s := range setting {
		if err := methods.SetConfig(c.Config(), s); err != nil {
			return nil, fmt.Errorf("--grid %s: %s", s, oneLine(err))
		}
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("--grid %s: %s", strings.Join(setting, ","), oneLine(err))
	}
	return c, nil
}

func parseCandidates(s string, gridN int) (dp.Candidates, error) {
	var c dp.Candidates
	switch {
	case s == "":
		c = dp.Candidates{Kind: "poisson", Mu: float64(gridN)}
	case strings.HasPrefix(s, "poisson:"):
		mu, err := strconv.ParseFloat(strings.TrimPrefix(s, "poisson:"), 64)
		if err != nil {
			return c, fmt.Errorf("--candidates %q: want poisson:MU with MU a number", s)
		}
		c = dp.Candidates{Kind: "poisson", Mu: mu}
	case strings.HasPrefix(s, "negbin:"):
		a, b, ok := strings.Cut(strings.TrimPrefix(s, "negbin:"), ",")
		eta, err1 := strconv.ParseFloat(a, 64)
		gamma, err2 := strconv.ParseFloat(b, 64)
		if !ok || err1 != nil || err2 != nil {
			return c, fmt.Errorf("--candidates %q: want negbin:ETA,GAMMA with numbers", s)
		}
		c = dp.Candidates{Kind: "negbin", Eta: eta, Gamma: gamma}
	default:
		return c, fmt.Errorf("--candidates %q: want poisson:MU or negbin:ETA,GAMMA", s)
	}
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("--candidates %q: %s", s, strings.TrimPrefix(err.Error(), "dp: "))
	}
	return c, nil
}

func runTune(cmd *cobra.Command, m methods.Method, f *tuneFlags) (*tuneReport, error) {
	opts, err := f.options()
	if err != nil {
		return nil, err
	}
	if f.runs <= 0 {
		return nil, fmt.Errorf("--runs %d: want a positive number of runs", f.runs)
	}
	keys, err := parseGrid(m, f.grid)
	if err != nil {
		return nil, err
	}
	n := gridSize(keys)
	cands := make([]methods.Method, n)
	for i := range n {
		if cands[i], err = candidateMethod(m, gridPoint(keys, i)); err != nil {
			return nil, err
		}
	}
	private := opts.Level != methods.None && !math.IsInf(opts.Epsilon, 1)
	mode := f.selPrivacy
	switch mode {
	case "auto":
		mode = "none"
		if private {
			mode = "rdp"
		}
	case "rdp":
		if !private {
			return nil, fmt.Errorf("--selection-privacy rdp: needs a private run (--privacy edge or node and a finite --epsilon)")
		}
	case "none":
	default:
		return nil, fmt.Errorf("--selection-privacy %q: want rdp, none or auto", f.selPrivacy)
	}
	if f.random < 0 || (f.random > 0 && mode == "rdp") {
		return nil, fmt.Errorf("--random %d: want a positive count, with --selection-privacy none (rdp draws the number of candidates itself)", f.random)
	}
	if f.candidates != "" && mode != "rdp" {
		return nil, fmt.Errorf("--candidates %q: only with --selection-privacy rdp", f.candidates)
	}
	var dist dp.Candidates
	if mode == "rdp" {
		if dist, err = parseCandidates(f.candidates, n); err != nil {
			return nil, err
		}
	}
	src := dp.NewSource(opts.Seed).Split("tune")
	if f.secureNoise && mode == "rdp" {
		if src, err = dp.NewSecureSource(); err != nil {
			return nil, err
		}
	}
	var order []int
	switch {
	case mode == "rdp":
		k := dist.Draw(src)
		for range k {
			order = append(order, int(src.Uint64()%uint64(n)))
		}
	case f.random > 0:
		for range f.random {
			order = append(order, int(src.Uint64()%uint64(n)))
		}
	default:
		for i := range n {
			order = append(order, i)
		}
	}
	opts.Runs, opts.SecureNoise, opts.Recorder = f.runs, f.secureNoise, trainers.Nop{}
	opts.Command = commandLine(cmd, nil)
	rep := &tuneReport{Method: m.Name(), GridSize: n, Drawn: len(order), Selection: mode, Trials: []tuneTrial{}}
	var recDelta float64
	var candEps []float64
	base := opts.Seed
	for j, i := range order {
		setting := strings.Join(gridPoint(keys, i), ",")
		// Each trial has its own seeds (a draw repeated is a fresh run).
		opts.Seed = base + uint64(j*f.runs)
		r, err := methods.TrainContext(cmd.Context(), cloneMethod(cands[i]), opts)
		if err != nil {
			return nil, fmt.Errorf("candidate %s: %w", setting, err)
		}
		t := tuneTrial{Setting: setting, ValAcc: r.Metrics["val_acc"].Mean, TestAcc: r.Metrics["test_acc"].Mean}
		if r.PrivacyReport != nil {
			t.Epsilon = r.PrivacyReport.Epsilon
			recDelta = r.PrivacyReport.Delta
			e := math.Inf(1)
			if t.Epsilon != nil {
				e = *t.Epsilon
			}
			candEps = append(candEps, e)
		}
		rep.Trials = append(rep.Trials, t)
		if rep.Best == nil || t.ValAcc > rep.Best.ValAcc {
			b := t
			rep.Best = &b
		}
	}
	opts.Seed = base
	rep.Privacy = tunePrivacy{Level: string(opts.Level)}
	switch {
	case !private:
		rep.Privacy.Note = "no privacy claimed"
	case mode == "none":
		if recDelta > 0 {
			rep.Privacy.Delta = &recDelta
		}
		rep.Privacy.CandidateEpsilon = maxEps(candEps, opts.Epsilon)
		rep.Privacy.Note = "the selection reads private validation data at this level and is not covered: no ε is claimed for the tuned result (each candidate alone is a private release at candidate_epsilon)"
	default:
		if err := tuneAccount(opts, cands, keys, dist, f.runs, recDelta, candEps, &rep.Privacy); err != nil {
			return nil, err
		}
		if len(order) == 0 {
			rep.Privacy.Note += "; K = 0 candidates were drawn: nothing is released"
		}
	}
	return rep, nil
}

func maxEps(es []float64, target float64) *float64 {
	if len(es) == 0 {
		return dp.EpsilonJSON(target)
	}
	m := es[0]
	for _, e := range es {
		m = math.Max(m, e)
	}
	return dp.EpsilonJSON(m)
}

// tuneAccount fills p with the one-candidate ε and the tuned ε: the base
// curve is the largest RDP over the grid of one candidate's plan (--runs
// composed), each plan computed from the split's counts as `dpgnn account`
// does and checked against the ε a trained candidate reported.
func tuneAccount(opts methods.TrainOptions, cands []methods.Method, keys []gridKey, dist dp.Candidates, runs int, delta float64, trained []float64, p *tunePrivacy) error {
	if delta <= 0 {
		delta = opts.Delta
	}
	if !(delta > 0 && delta < 1) {
		if len(trained) == 0 {
			return fmt.Errorf("--candidates %s: K = 0 candidates were drawn and --delta %g is not a number in (0, 1): give --delta to account for it", dist, opts.Delta)
		}
		return fmt.Errorf("--selection-privacy rdp: the candidates reported no δ")
	}
	g, err := methods.LoadDataset(opts)
	if err != nil {
		return err
	}
	var curves []func(float64) float64
	conv := dp.ConversionImproved
	for i, c := range cands {
		setting := strings.Join(gridPoint(keys, i), ",")
		curve, cc, err := candidateCurve(opts, c, g, delta)
		if err != nil {
			return fmt.Errorf("--selection-privacy rdp: candidate %s: %s (use --selection-privacy none)", setting, oneLine(err))
		}
		if cc == dp.ConversionStandard {
			conv = cc
		}
		curves = append(curves, curve)
	}
	base := func(a float64) float64 {
		v := 0.0
		for _, c := range curves {
			v = math.Max(v, c(a))
		}
		return float64(runs) * v
	}
	one, err := dp.CurveEpsilon(base, delta, conv)
	if err != nil {
		return err
	}
	for _, e := range trained {
		if e > one*(1+1e-6)+1e-9 {
			return fmt.Errorf("--selection-privacy rdp: a candidate reported ε = %g above its plan's %g; its run releases more than the plan from counts (use --selection-privacy none)", e, one)
		}
	}
	tuned, _, err := dp.TunedEpsilon(base, dist, delta, conv)
	if err != nil {
		return err
	}
	theorem := "Theorem 6 (Poisson)"
	if dist.Kind == "negbin" {
		theorem = "Theorem 2 (truncated negative binomial)"
	}
	p.Delta, p.CandidateEpsilon, p.TunedEpsilon = &delta, dp.EpsilonJSON(one), dp.EpsilonJSON(tuned)
	p.Candidates, p.Covered = dist.String(), true
	p.Note = fmt.Sprintf("K ~ %s candidates drawn uniformly with replacement from the grid, the best by validation accuracy released: RDP bound of Papernot & Steinke (ICLR 2022), %s, on the largest one-candidate RDP curve over the grid", dist, theorem)
	return nil
}

// candidateCurve is the RDP curve of one run of candidate c at the run's
// δ: its plan from the split's counts (zero when the method reads nothing
// private at the level), with its conversion.
func candidateCurve(opts methods.TrainOptions, c methods.Method, g *graphs.Graph, delta float64) (func(float64) float64, dp.Conversion, error) {
	am, ok := c.(methods.Accountable)
	if !ok {
		return nil, 0, fmt.Errorf("%s has no privacy plan from counts", c.Name())
	}
	need := am.AccountCounts(opts.Level)
	for _, n := range need {
		if n != methods.CountTrainNodes && n != methods.CountClasses {
			return nil, 0, fmt.Errorf("its plan needs --%s, which tune does not derive", n)
		}
	}
	split := opts.Split
	if split == "" {
		split = c.DefaultSplit(g.Name)
	}
	spec, err := graphs.ParseSplit(split)
	if err != nil {
		return nil, 0, err
	}
	gs, err := graphs.ApplySplit(g, spec.ForRun(0, len(g.MaskSplits)), opts.Seed)
	if err != nil {
		return nil, 0, err
	}
	ctx := &methods.Context{Level: opts.Level, Epsilon: opts.Epsilon, Delta: delta, DeltaRule: methods.DeltaGiven, Selection: opts.Selection, Seed: opts.Seed}
	cal, err := am.AccountPlan(ctx, methods.Counts{TrainNodes: len(gs.Split.Train), Classes: g.NumClasses})
	if err != nil {
		if len(need) == 0 {
			// Nothing private is read at this level.
			return func(float64) float64 { return 0 }, dp.ConversionImproved, nil
		}
		return nil, 0, err
	}
	curve, err := dp.PlanCurve(cal.Plan)
	if err != nil {
		return nil, 0, err
	}
	conv := dp.ConversionImproved
	if cal.Plan.Accountant == "rdp-standard" {
		conv = dp.ConversionStandard
	}
	return curve, conv, nil
}

func printTune(w io.Writer, r *tuneReport) {
	fmt.Fprintf(w, "tune %s: grid of %d, %d candidate(s) trained (selection privacy: %s)\n", r.Method, r.GridSize, r.Drawn, r.Selection)
	for _, t := range r.Trials {
		fmt.Fprintf(w, "  %-40s val %.4f  test %.4f\n", t.Setting, t.ValAcc, t.TestAcc)
	}
	if r.Best != nil {
		fmt.Fprintf(w, "best: %s  val %.4f  test %.4f\n", r.Best.Setting, r.Best.ValAcc, r.Best.TestAcc)
	} else {
		fmt.Fprintln(w, "best: none (no candidate drawn)")
	}
	p := r.Privacy
	switch {
	case p.TunedEpsilon != nil:
		fmt.Fprintf(w, "privacy (%s): one candidate ε = %s, tuned ε = %s at δ = %g\n", p.Level, fmtEps(p.CandidateEpsilon), fmtEps(p.TunedEpsilon), *p.Delta)
	case p.CandidateEpsilon != nil:
		fmt.Fprintf(w, "privacy (%s): one candidate ε = %s; tuning NOT covered\n", p.Level, fmtEps(p.CandidateEpsilon))
	}
	fmt.Fprintf(w, "note: %s\n", p.Note)
}
