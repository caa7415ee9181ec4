package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/methods"
	mrun "github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/trainers"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// tuneFlags are the flags of `dpgnn tune METHOD`.
type tuneFlags struct {
	commonFlags
	grid                   []string
	random                 int
	candidates, selPrivacy string
	scoreNoise             float64
	showTrials             bool
}

// defaultScoreNoise is the default --score-noise: the noise std of a
// candidate's score, in units of its sensitivity (one correct validation
// prediction per run at node level). At 10, a candidate's score alone costs
// ε = 0.375 at δ = 1e-5 (RDP, improved conversion) and its noise, std 10
// correct predictions per run, is 2 % of cora_ml's 500 validation nodes:
// enough to tell candidates apart by a few points of accuracy.
const defaultScoreNoise = 10

// Limits on tune's work, checked before anything is built or trained: a
// grid of a million points (1000 × 1000) or --candidates poisson:1e9 is a
// mistyped flag, not a plan, and would allocate, check and train for
// days before saying so.
const (
	// maxTuneGrid is the largest grid (its number of points): every point
	// is validated and checked against the data, and at a covered level
	// its privacy plan is computed for every run.
	maxTuneGrid = 10_000
	// maxTuneRuns is the largest expected number of trained runs:
	// candidates (the grid, --random N, or E[K] of --candidates) times
	// --runs.
	maxTuneRuns = 10_000
)

// checkTuneGrid refuses a grid of more than maxTuneGrid points, before
// any of them is built (the product is computed without overflow).
func checkTuneGrid(keys []gridKey) error {
	points := 1.0
	sizes := make([]string, len(keys))
	for i, k := range keys {
		points *= float64(len(k.values))
		sizes[i] = strconv.Itoa(len(k.values))
	}
	if points > maxTuneGrid {
		return fmt.Errorf("--grid: %s = %.0f points, above tune's limit of %d: give fewer values, or tune in stages (one hyperparameter, then the next)",
			strings.Join(sizes, " × "), points, maxTuneGrid)
	}
	return nil
}

// checkTuneRuns refuses a tune whose expected number of trained runs,
// candidates × runs, exceeds maxTuneRuns; what says where the candidates
// come from.
func checkTuneRuns(candidates float64, runs int, what, fix string) error {
	if total := candidates * float64(runs); total > maxTuneRuns {
		return fmt.Errorf("%s with --runs %d: about %.4g runs to train, above tune's limit of %d: %s", what, runs, total, maxTuneRuns, fix)
	}
	return nil
}

// gridKey is one --grid flag: a hyperparameter and its values.
type gridKey struct {
	key    string
	values []string
}

// tuneTrial is one trained candidate: its grid point, the seed of its first
// run (run r has seed Seed + r), the score the selection compared (with
// --selection-privacy rdp: the noisy count of correct validation
// predictions summed over the runs, privacy.score), the mean validation and
// test accuracy over its runs as measured on the split's labels, and the
// largest ε one of its runs reported (privacy.run_epsilon composes the runs).
type tuneTrial struct {
	Setting string   `json:"setting"`
	Seed    uint64   `json:"seed"`
	Score   *float64 `json:"score,omitempty"`
	ValAcc  float64  `json:"val_acc"`
	TestAcc float64  `json:"test_acc"`
	Epsilon *float64 `json:"epsilon"`
}

// tuneScore is the privacy of the candidates' scores with
// --selection-privacy rdp (privacy.score in the JSON): the mechanism
// (gaussian, or none when the score is post-processing of the candidate's
// release and public data), what it counts, its sensitivity per run between
// neighbouring raw inputs given the candidate's release and why that holds,
// the noise, the ε of one candidate's score alone at the run's δ, and a
// lower bound on what the selection alone leaks whatever the runs release
// (dp.SelectionLowerBound).
type tuneScore struct {
	Mechanism   string   `json:"mechanism"`
	What        string   `json:"what"`
	Sensitivity float64  `json:"sensitivity"`
	Proof       string   `json:"sensitivity_proof"`
	Multiplier  *float64 `json:"noise_multiplier"`
	Std         float64  `json:"noise_std"`
	Runs        int      `json:"runs"`
	Epsilon     *float64 `json:"epsilon"`
	SelectionLB *float64 `json:"selection_epsilon_lb"`
}

// tunePrivacy is the privacy part of the tuning report. CandidateEpsilon is
// one candidate's ε (its runs and, with rdp, its score), RunEpsilon its
// runs' alone. CandidateNotes are the notes and assumptions of the
// candidates' own privacy reports (e.g. a degree bound the guarantee
// assumes, a paper mode): the tuned ε inherits every grid point's. With a
// covered selection they are the selected candidate's only (the drawn
// ones' would tell which were drawn and lost); otherwise the trained
// candidates'.
type tunePrivacy struct {
	Level            string     `json:"level"`
	Delta            *float64   `json:"delta"`
	CandidateEpsilon *float64   `json:"candidate_epsilon"`
	RunEpsilon       *float64   `json:"run_epsilon,omitempty"`
	TunedEpsilon     *float64   `json:"tuned_epsilon"`
	Candidates       string     `json:"candidates,omitempty"`
	Covered          bool       `json:"selection_covered"`
	Score            *tuneScore `json:"score,omitempty"`
	CandidateNotes   []string   `json:"candidate_notes,omitempty"`
	Note             string     `json:"note"`
}

// tuneReport is what `dpgnn tune` prints. At a private level Trials is
// empty unless --show-trials, and TrialsCovered is false: the trials not
// selected are not part of the release any ε covers. BestNote says what of
// Best is covered.
type tuneReport struct {
	Method   string `json:"method"`
	GridSize int    `json:"grid_size"`
	// Drawn is K, the number of candidates trained: printed without a
	// selection claim, or with --show-trials; at a private level with an
	// RDP-covered selection it is not released (Papernot & Steinke's bound
	// holds with K hidden).
	Drawn         *int        `json:"candidates_drawn,omitempty"`
	Trials        []tuneTrial `json:"trials"`
	TrialsCovered *bool       `json:"trials_covered,omitempty"`
	TrialsNote    string      `json:"trials_note,omitempty"`
	Best          *tuneTrial  `json:"best"`
	BestNote      string      `json:"best_note,omitempty"`
	Privacy       tunePrivacy `json:"privacy"`
	Selection     string      `json:"selection_privacy"`
}

func newTuneCmd(stdout, stderr io.Writer) *cobra.Command {
	tune := &cobra.Command{
		Use:   "tune METHOD --grid KEY=V1,V2 ... [flags]",
		Short: "Select a method's hyperparameters on validation accuracy, with the selection's privacy accounted",
		Long: `Train candidates from a grid of hyperparameters (the Cartesian product of the
--grid flags, each KEY=V1,V2,... with KEY one of the method's flags), score each
on the split's validation nodes and report the best with its test accuracy.

Each candidate is a private release at the given --privacy and --epsilon. At a
private level the validation data the selection reads is private, so releasing
the best candidate is not covered by one candidate's ε. With
--selection-privacy rdp (the default at a private level) the number K of
candidates is random, K ~ --candidates (poisson:MU, default MU = grid size, or
negbin:ETA,GAMMA, the truncated negative binomial), drawn from the mechanism
source, each candidate drawn uniformly with replacement from the grid with a
seed drawn from the same source; the report gives the tuned ε of Papernot &
Steinke (ICLR 2022, Theorem 6 for Poisson, Theorem 2 for the truncated
negative binomial) at the run's δ. Their bound needs each candidate's score
inside its private output: the score is the number of correct validation
predictions of each run, with Gaussian noise of std --score-noise times its
sensitivity where it reads private data (node level: the labels), and its
RDP is added to the candidate's (the worst run plan over the grid). A method
whose validation predictions read private data without noise beyond what
one unit can change (DPAR at node level) is refused. With
--selection-privacy none the whole grid (or --random N seeded draws from it)
is trained on exact validation accuracy and no ε is claimed for the
selection.

At a private level the trials that were not selected are not printed
(--show-trials prints them, marked as not covered by any ε).

The work is checked before anything is trained: at most ` + strconv.Itoa(maxTuneGrid) + ` grid points,
and at most ` + strconv.Itoa(maxTuneRuns) + ` runs expected (candidates × --runs: the grid, --random N,
or the mean of --candidates).

Progress goes to stderr (--quiet silences it). Where the number K of
candidates is not released (--selection-privacy rdp without --show-trials)
it shows nothing that depends on K: one line when training starts and, on a
terminal, a spinner without counts or times (a count, a time or a line every
few seconds in a log would tell K, which the tuned ε's bound keeps hidden).
Otherwise it names each candidate's run ("candidate 3 of 12: ..., run 1 of
2") with the epochs of the run in progress.`,
		Args: methodArg("tune"),
		RunE: func(cmd *cobra.Command, args []string) error { return nil },
	}
	for _, name := range methods.Names() {
		tune.AddCommand(newTuneMethodCmd(name, stdout, stderr))
	}
	return tune
}

func newTuneMethodCmd(name string, stdout, stderr io.Writer) *cobra.Command {
	m, _ := methods.New(name)
	var f tuneFlags
	cmd := &cobra.Command{
		Use:   name + " --grid KEY=V1,V2 ... [flags]",
		Short: m.Short(),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var progress io.Writer
			if !f.quiet {
				progress = stderr
			}
			rep, err := runTune(cmd, m, &f, progress)
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
	fl.StringVar(&f.selPrivacy, "selection-privacy", "auto", "rdp (random number of candidates, noisy scores, tuned ε accounted), none (no ε claimed for the selection); auto: rdp at a private level")
	fl.Float64Var(&f.scoreNoise, "score-noise", defaultScoreNoise, "--selection-privacy rdp: noise std of each run's count of correct validation predictions, in units of its sensitivity\n(one prediction per run at node level), where the count reads private data; its ε is part of each candidate's")
	fl.BoolVar(&f.showTrials, "show-trials", false, "at a private level, also print every trial's setting, score and measured accuracies (not covered by any ε)")
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

// scoreRule is how a method's validation predictions read private data at
// a level, given everything one run of it released: one run's count of
// correct validation predictions changes by at most Sensitivity between
// neighbouring raw inputs (0: the count is post-processing of the run's
// release and public data), and Proof says why.
type scoreRule struct {
	Sensitivity float64
	Proof       string
}

// scoreRules are the methods whose validation predictions tune knows how to
// score at each private level: the sensitivity of one run's count of
// correct validation predictions, given the run's release, or an error
// saying why none can be stated. A method missing here is refused with
// --selection-privacy rdp (TestTuneScoreRulesCoverMethods keeps every
// registered method in the table).
//
// The node-level proofs share one step: v's removal takes v out of the
// validation set (v's own term, at most 1) and, given the run's release,
// changes no other validation node's prediction, because each prediction
// is a function of the release and of that node's own features only. This
// needs the split to give every other node the same role on G and G − v
// (as every node-level claim of dpgnn does: DP-SGD's training set too).
var scoreRules = map[string]func(m methods.Method, level methods.Level) (scoreRule, error){
	"mlp": func(_ methods.Method, level methods.Level) (scoreRule, error) {
		if level == methods.Edge {
			return scoreRule{0, "the MLP reads no edge: its predictions are a function of its parameters, trained on public features and labels"}, nil
		}
		return scoreRule{1, "the MLP predicts each node from its own features with the released parameters (row-wise: no edge is read, BatchNorm is refused under DP-SGD), so removing node v changes no prediction but v's own"}, nil
	},
	"gap":     apScoreRule("the NAP aggregates"),
	"progap":  apScoreRule("the NAP aggregates"),
	"caribou": apScoreRule("the PCMP release"),
	"gcon": func(m methods.Method, level methods.Level) (scoreRule, error) {
		if methods.ConfigValues(m.Config())["inference"] == "public" {
			return scoreRule{0, "--inference public: predictions propagate the released Θ over the public test graph (the edges touching validation and test nodes, public by that scenario's assumption)"}, nil
		}
		return scoreRule{2, "one-hop private inference: node w's prediction reads the released Θ, public features and w's own edges without noise (row w of D⁻¹(A+I); methods/gcon TestPrivateInferenceLocality), so removing one edge changes the predictions of its two endpoints and no other"}, nil
	},
	"dpar": func(methods.Method, methods.Level) (scoreRule, error) {
		return scoreRule{}, fmt.Errorf("dpar predicts validation nodes by PPR propagation over the edges among the non-training nodes without noise (an inference input its guarantee does not protect), so removing one node can change any number of validation predictions and no noise scale on the score covers that")
	},
	"asgl": func(methods.Method, methods.Level) (scoreRule, error) {
		return scoreRule{}, fmt.Errorf("asgl predicts edge signs: it has no validation accuracy to select on")
	},
	"gcn": func(methods.Method, methods.Level) (scoreRule, error) {
		return scoreRule{}, fmt.Errorf("gcn makes no privacy claim")
	},
	"sage": func(methods.Method, methods.Level) (scoreRule, error) {
		return scoreRule{}, fmt.Errorf("sage predicts each validation node from its K-hop neighbourhood without noise, so removing one node changes up to R = OccurrenceBound(K, D) predictions (any number with --degree-bound sample on a graph above D); no score rule is stated")
	},
}

// apScoreRule is the score rule of an aggregation-perturbation method
// (GAP, ProGAP, CARIBOU): a node's prediction reads the released
// parameters, its own features (through the released encoder) and its own
// rows of the aggregates released with noise for every node (released).
func apScoreRule(release string) func(methods.Method, methods.Level) (scoreRule, error) {
	return func(_ methods.Method, level methods.Level) (scoreRule, error) {
		if level == methods.Edge {
			return scoreRule{0, "predictions are a function of the released parameters and " + release + " and of public features"}, nil
		}
		return scoreRule{1, "each node's prediction reads the released parameters, its own features and its own rows of " + release +
			" (released with noise for every node); the modules are row-wise (no BatchNorm at node level), so removing node v changes no prediction but v's own"}, nil
	}
}

// builtinPackage is the package of the built-in method of that name,
// whose code scoreRules was written from.
func builtinPackage(name string) string { return "github.com/dpgnn/dpgnn/methods/" + name }

// methodPackage is the package that defines m's type.
func methodPackage(m methods.Method) string {
	t := reflect.TypeOf(m)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.PkgPath()
}

// validationScore is the score rule of method c at a private level: the
// rule of the built-in method of c's name, when c is that method (an
// out-of-tree method of the same name is not).
func validationScore(c methods.Method, level methods.Level) (scoreRule, error) {
	rule, ok := scoreRules[c.Name()]
	if !ok || methodPackage(c) != builtinPackage(c.Name()) {
		return scoreRule{}, fmt.Errorf("tune does not know how %s's validation predictions read private data at %s level, so no sensitivity bounds their score", c.Name(), level)
	}
	return rule(c, level)
}

// tuneDraw is one candidate to train: a grid point and the seed of its
// first run.
type tuneDraw struct {
	point int
	seed  uint64
}

func runTune(cmd *cobra.Command, m methods.Method, f *tuneFlags, progress io.Writer) (*tuneReport, error) {
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
	if err := checkTuneGrid(keys); err != nil {
		return nil, err
	}
	n := gridSize(keys)
	cands := make([]methods.Method, n)
	for i := range n {
		if cands[i], err = candidateMethod(m, gridPoint(keys, i)); err != nil {
			return nil, err
		}
	}
	if _, ok := mrun.TaskOf(m).(mrun.NodeClassification); !ok {
		return nil, fmt.Errorf("tune selects on validation accuracy: %s's task (%s) has none", m.Name(), mrun.TaskOf(m).Name())
	}
	// The shared run flags tune does not carry into its candidates' runs
	// are refused, not ignored.
	for _, name := range []string{"trace", "cpuprofile", "op-times"} {
		if fl := cmd.Flags().Lookup(name); fl != nil && fl.Changed {
			return nil, fmt.Errorf("--%s is for train: tune does not trace or profile its candidates' runs", name)
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
	if !(f.scoreNoise > 0) || math.IsInf(f.scoreNoise, 1) {
		return nil, fmt.Errorf("--score-noise %g: want a positive, finite noise multiplier", f.scoreNoise)
	}
	if cmd.Flags().Changed("score-noise") && mode != "rdp" {
		return nil, fmt.Errorf("--score-noise: only with --selection-privacy rdp (no score is released otherwise)")
	}
	var dist dp.Candidates
	var score dp.TuningScore
	var rule scoreRule
	switch {
	case mode == "rdp":
		if dist, err = parseCandidates(f.candidates, n); err != nil {
			return nil, err
		}
		what := fmt.Sprintf("--candidates %s (E[K] = %.4g candidates)", dist, dist.Mean())
		if f.candidates == "" {
			what = fmt.Sprintf("the default --candidates %s (E[K] = the grid's %d points)", dist, n)
		}
		if err := checkTuneRuns(dist.Mean(), f.runs, what, "lower the mean of --candidates (poisson:MU, negbin:ETA,GAMMA), the grid or --runs"); err != nil {
			return nil, err
		}
	case f.random > 0:
		if err := checkTuneRuns(float64(f.random), f.runs, fmt.Sprintf("--random %d", f.random), "lower --random or --runs"); err != nil {
			return nil, err
		}
	default:
		if err := checkTuneRuns(float64(n), f.runs, fmt.Sprintf("a grid of %d points", n), "give fewer grid values, use --random N, or lower --runs"); err != nil {
			return nil, err
		}
	}
	if mode == "rdp" {
		// One noise scale for every candidate: the largest sensitivity
		// over the grid (a grid flag may change how a method predicts).
		for i, c := range cands {
			r, err := validationScore(c, opts.Level)
			if err != nil {
				return nil, fmt.Errorf("--selection-privacy rdp at %s level: %s (use --selection-privacy none: no ε is claimed for the selection)", opts.Level, oneLine(err))
			}
			if err := planCounts(c, opts.Level); err != nil {
				return nil, fmt.Errorf("--selection-privacy rdp: candidate %s: %s (use --selection-privacy none)", strings.Join(gridPoint(keys, i), ","), oneLine(err))
			}
			if i == 0 || r.Sensitivity > rule.Sensitivity {
				rule = r
			}
		}
		score = dp.TuningScore{Sensitivity: rule.Sensitivity, Multiplier: f.scoreNoise, Runs: f.runs}
	}
	opts.Runs, opts.SecureNoise, opts.Recorder = f.runs, f.secureNoise, trainers.Nop{}
	opts.Command = commandLine(cmd, nil)
	// Every check a run makes before it trains, for every grid point,
	// before anything is trained.
	g0, err := mrun.LoadDataset(opts)
	if err != nil {
		return nil, err
	}
	for i, c := range cands {
		split, err := mrun.Check(c, opts, g0)
		if err != nil {
			return nil, fmt.Errorf("candidate %s: %w", strings.Join(gridPoint(keys, i), ","), err)
		}
		if err := checkValidation(g0, split, opts.Seed, f.runs, private); err != nil {
			return nil, err
		}
	}
	src := dp.NewSource(opts.Seed).Split("tune")
	if f.secureNoise && mode == "rdp" {
		if src, err = dp.NewSecureSource(); err != nil {
			return nil, err
		}
	}
	base := opts.Seed
	var draws []tuneDraw
	switch {
	case mode == "rdp":
		// K, each grid point and each candidate's seeds come from the
		// mechanism source, so the K candidates are independent draws of
		// one randomised base algorithm (Papernot & Steinke's setting):
		// with --secure-noise the splits and initialisations too.
		k := dist.Draw(src)
		for range k {
			point := int(src.Uint64() % uint64(n))
			// 53 bits: a seed JSON carries exactly.
			draws = append(draws, tuneDraw{point: point, seed: src.Uint64() >> 11})
		}
	case f.random > 0:
		for j := range f.random {
			draws = append(draws, tuneDraw{point: int(src.Uint64() % uint64(n)), seed: base + uint64(j*f.runs)})
		}
	default:
		for i := range n {
			draws = append(draws, tuneDraw{point: i, seed: base + uint64(i*f.runs)})
		}
	}
	drawn := len(draws)
	// K is released (printed) unless the selection is covered and the
	// trials are hidden: only then must the progress not depend on it.
	prog := newTuneProgress(progress, mode != "rdp" || f.showTrials)
	defer prog.done()
	rep := &tuneReport{Method: m.Name(), GridSize: n, Drawn: &drawn, Selection: mode, Trials: []tuneTrial{}}
	var recDelta float64
	var candEps []float64
	var notes, bestNotes []string
	prepared := make([]*mrun.AttackRuns, n)
	var bestScore float64
	for i, d := range draws {
		setting := strings.Join(gridPoint(keys, d.point), ",")
		if prepared[d.point] == nil {
			// The dataset is loaded with --seed for every candidate (a
			// generated graph is the same data for all of them).
			if prepared[d.point], err = mrun.PrepareAttack(cands[d.point], opts); err != nil {
				return nil, fmt.Errorf("candidate %s: %w", setting, err)
			}
		}
		tr, err := trainTrial(cmd.Context(), prepared[d.point], d.seed, f.runs, func(r int) trainers.Recorder {
			return prog.run(i, len(draws), setting, r, f.runs, cands[d.point].Epochs())
		})
		if err != nil {
			return nil, fmt.Errorf("candidate %s: %w", setting, err)
		}
		t := tuneTrial{Setting: setting, Seed: d.seed, ValAcc: tr.valAcc, TestAcc: tr.testAcc, Epsilon: tr.epsilon}
		for _, s := range tr.notes {
			if !slices.Contains(notes, s) {
				notes = append(notes, s)
			}
		}
		trialNotes := tr.notes
		if tr.reported {
			if recDelta > 0 && tr.delta != recDelta {
				return nil, fmt.Errorf("the candidates resolved different δ (%g and %g): the grid varies what δ is computed from (a privacy unit or a count); give --delta, and tune one privacy unit at a time", recDelta, tr.delta)
			}
			recDelta = tr.delta
			e := math.Inf(1)
			if t.Epsilon != nil {
				e = *t.Epsilon
			}
			candEps = append(candEps, e)
		}
		s := t.ValAcc
		if mode == "rdp" {
			if s, err = score.Release(tr.counts, src); err != nil {
				return nil, err
			}
			t.Score = &s
		}
		rep.Trials = append(rep.Trials, t)
		if rep.Best == nil || s > bestScore {
			b := t
			rep.Best, bestScore, bestNotes = &b, s, trialNotes
		}
	}
	rep.Privacy = tunePrivacy{Level: string(opts.Level), CandidateNotes: notes}
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
		if err := tuneAccount(opts, g0, cands, keys, dist, score, rule, f.runs, recDelta, candEps, &rep.Privacy); err != nil {
			return nil, err
		}
		if !f.showTrials {
			// The bound covers the best candidate with K hidden; the
			// wall time grows with K and is not covered either. The
			// drawn candidates' notes would tell which were drawn and
			// lost (outside review: up to 0.67 against a reported
			// 0.60): only the best's are listed.
			rep.Drawn = nil
			rep.Privacy.CandidateNotes = bestNotes
			rep.Privacy.Note += "; the tuned ε also rests on what every grid point's own runs assume (candidate_notes lists the selected candidate's; `dpgnn train` with a grid point's settings shows its report)"
			rep.Privacy.Note += "; K, the number of candidates drawn, is not printed (releasing it is not covered: --show-trials prints it), nor is the wall time, which grows with it"
		}
	}
	if private {
		if !f.secureNoise {
			rep.Privacy.Note += "; without --secure-noise every draw (K, the grid points, the seeds, the scores' and the runs' noise) follows from --seed, and the best candidate's printed seed regenerates its runs exactly: nothing is covered against whoever holds the output"
		}
		uncovered := false
		rep.TrialsCovered = &uncovered
		what, why := "every trial's setting, seed and measured accuracies", "no ε is claimed for the selection"
		if mode == "rdp" {
			what, why = "every trial's setting, seed, score and measured accuracies", "tuned_epsilon covers the best candidate's release only"
		}
		if f.showTrials {
			rep.TrialsNote = "NOT covered by any ε: " + what + " (" + why + ")"
		} else {
			rep.Trials = []tuneTrial{}
			rep.TrialsNote = "not shown: " + what + " are not covered by any ε (" + why + "; --show-trials prints them)"
		}
		if rep.Best != nil {
			rep.BestNote = bestNote(mode, opts.Level, score)
		}
	}
	return rep, nil
}

// bestNote says what of the best candidate's report is covered.
func bestNote(mode string, level methods.Level, score dp.TuningScore) string {
	measured := "val_acc and test_acc are the experimenter's measurements on the split's labels, not part of the release"
	if level == methods.Node {
		measured += " (the labels are private at node level: publishing them is not covered)"
	}
	if mode != "rdp" {
		return "not covered: the selection read the exact validation accuracy of every candidate; " + measured
	}
	what := "its exact count of correct validation predictions (post-processing of its release and public labels)"
	if !score.Exact() {
		what = "its noisy score (privacy.score)"
	}
	return "covered by tuned_epsilon: the setting, the trained candidate (its runs' release) and " + what + "; " + measured
}

// checkValidation refuses a split that leaves a run without validation
// nodes (tune selects on them), before anything is trained. At a private
// level only a split whose specification has no validation part is refused
// (inductive:a, per-class with no validation nodes): that reads no data. A split whose validation
// set comes out empty on this graph (published masks whose validation
// nodes are all removed, say) is accepted there, its runs' scores are then
// their noise alone: refusing G − v and not G would be a release. A
// split's sizes do not depend on its seed (masks: on the run), so run r's
// split drawn from seed + r stands for every candidate's.
func checkValidation(g *graphs.Graph, split string, seed uint64, runs int, private bool) error {
	spec, err := graphs.ParseSplit(split)
	if err != nil {
		return err
	}
	refuse := fmt.Errorf("split %s has no validation nodes, and tune selects on validation accuracy: choose a split with validation nodes (per-class, ratio, inductive:A:B, or masks that have them)", split)
	switch {
	case !spec.HasValidationPart():
		return refuse
	case private:
		return nil
	}
	for r := range runs {
		gs, err := graphs.ApplySplit(g, spec.ForRun(r, len(g.MaskSplits)), seed+uint64(r))
		if err != nil {
			return err
		}
		if len(gs.Split.Val) == 0 {
			return refuse
		}
	}
	return nil
}

// trialResult is what tune keeps of one candidate's runs.
type trialResult struct {
	counts          []float64 // correct validation predictions, per run
	valAcc, testAcc float64   // means over the runs
	epsilon         *float64  // the largest ε a run reported (nil: ∞)
	delta           float64
	reported        bool     // a run reported privacy
	notes           []string // its reports' notes and assumed uses
}

// trainTrial trains the candidate a holds once per run (run r: seed
// seed + r, its split drawn as train's run r draws it from that seed) and
// counts each run's correct validation predictions from its predictions.
// rec gives run r's progress recorder (nil: none).
func trainTrial(ctx context.Context, a *mrun.AttackRuns, seed uint64, runs int, rec func(r int) trainers.Recorder) (trialResult, error) {
	var res trialResult
	eps := 0.0
	for r := range runs {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		s := seed + uint64(r)
		gs, err := graphs.ApplySplit(a.Graph, a.Split.ForRun(r, len(a.Graph.MaskSplits)), s)
		if err != nil {
			return res, err
		}
		// An empty validation set (accepted at a private level: see
		// checkValidation) counts 0 correct predictions.
		var recorder trainers.Recorder = trainers.Nop{}
		if rec != nil {
			recorder = rec(r)
		}
		out, err := a.Run(gs, s, recorder)
		recorder.Done()
		if err != nil {
			return res, fmt.Errorf("run %d: %w", r+1, err)
		}
		mt, err := mrun.NodeClassification{}.Metrics(gs, out)
		if err != nil {
			return res, fmt.Errorf("run %d: %w", r+1, err)
		}
		correct := 0
		for _, v := range gs.Split.Val {
			if out.Pred[v] == gs.Labels[v] {
				correct++
			}
		}
		res.counts = append(res.counts, float64(correct))
		if va := mt["val_acc"]; !math.IsNaN(va) { // NaN: no validation nodes, counted as 0
			res.valAcc += va / float64(runs)
		}
		res.testAcc += mt["test_acc"] / float64(runs)
		if out.Privacy != nil {
			if out.Privacy.Notes != "" && !slices.Contains(res.notes, out.Privacy.Notes) {
				res.notes = append(res.notes, out.Privacy.Notes)
			}
			for _, u := range out.Privacy.Uses {
				if a := u.What + ": " + u.Covered; strings.HasPrefix(u.Covered, "assum") && !slices.Contains(res.notes, a) {
					res.notes = append(res.notes, a)
				}
			}
			res.reported, res.delta = true, out.Privacy.Delta
			e := math.Inf(1)
			if out.Privacy.Epsilon != nil {
				e = *out.Privacy.Epsilon
			}
			eps = math.Max(eps, e)
		}
	}
	if res.reported {
		res.epsilon = dp.EpsilonJSON(eps)
	}
	return res, nil
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

// tuneAccount fills p with one candidate's ε and the tuned ε. One
// candidate is --runs runs of a grid point and its score: its RDP curve is
// the sum over the runs of each run's plan (computed from run r's split
// counts as `dpgnn account` does, and checked against the ε the trained
// candidates reported) plus the score's RDP (dp.TuningScore), and the base
// curve of Papernot & Steinke's bound is the largest candidate curve over
// the grid (the base algorithm draws its grid point uniformly: a mixture,
// whose Rényi divergence is at most the largest of its components').
func tuneAccount(opts mrun.TrainOptions, g *graphs.Graph, cands []methods.Method, keys []gridKey, dist dp.Candidates, score dp.TuningScore, rule scoreRule, runs int, delta float64, trained []float64, p *tunePrivacy) error {
	if delta <= 0 {
		delta = opts.Delta
	}
	if !(delta > 0 && delta < 1) {
		if len(trained) == 0 {
			return fmt.Errorf("--candidates %s: K = 0 candidates were drawn and --delta %g is not a number in (0, 1): give --delta to account for it", dist, opts.Delta)
		}
		return fmt.Errorf("--selection-privacy rdp: the candidates reported no δ (they release nothing private at %s level): give --delta to account for the tuning", opts.Level)
	}
	var curves []func(float64) float64
	conv := dp.ConversionImproved
	// One privacy unit for the whole grid.
	unit := ""
	for i, c := range cands {
		setting := strings.Join(gridPoint(keys, i), ",")
		var perRun []func(float64) float64
		for r := range runs {
			curve, cc, plan, err := candidateCurve(opts, c, g, delta, r)
			if err != nil {
				return fmt.Errorf("--selection-privacy rdp: candidate %s: %s (use --selection-privacy none)", setting, oneLine(err))
			}
			if cc == dp.ConversionStandard {
				conv = cc
			}
			perRun = append(perRun, curve)
			if plan == nil {
				continue
			}
			if unit != "" && plan.Unit != unit {
				return fmt.Errorf("--selection-privacy rdp: the grid's candidates protect different units (%s and %s): tune one privacy unit at a time", unit, plan.Unit)
			}
			unit = plan.Unit
		}
		curves = append(curves, func(a float64) float64 {
			v := 0.0
			for _, f := range perRun {
				v += f(a)
			}
			return v
		})
	}
	runCurve := func(a float64) float64 {
		v := 0.0
		for _, c := range curves {
			v = math.Max(v, c(a))
		}
		return v
	}
	base := func(a float64) float64 { return runCurve(a) + score.RDP(a) }
	runEps, err := dp.CurveEpsilon(runCurve, delta, conv)
	if err != nil {
		return err
	}
	for _, e := range trained {
		if e > runEps*(1+1e-6)+1e-9 {
			return fmt.Errorf("--selection-privacy rdp: a candidate reported ε = %g above its plan's %g; its run releases more than the plan from counts (use --selection-privacy none)", e, runEps)
		}
	}
	one, err := dp.CurveEpsilon(base, delta, conv)
	if err != nil {
		return err
	}
	tuned, _, err := dp.TunedEpsilon(base, dist, delta, conv)
	if err != nil {
		return err
	}
	scoreEps, err := score.Epsilon(delta, conv)
	if err != nil {
		return err
	}
	lb, err := dp.SelectionLowerBound(dist, len(cands), score, delta)
	if err != nil {
		return err
	}
	if lb > tuned*(1+1e-9) {
		// Papernot & Steinke's bound covers these instances: a claim below
		// is an accounting bug, not a result.
		return fmt.Errorf("--selection-privacy rdp: the tuned ε %g is below %g, what the selection alone leaks on a known instance; refusing to report it", tuned, lb)
	}
	theorem := "Theorem 6 (Poisson)"
	if dist.Kind == "negbin" {
		theorem = "Theorem 2 (truncated negative binomial)"
	}
	p.Delta, p.CandidateEpsilon, p.RunEpsilon, p.TunedEpsilon = &delta, dp.EpsilonJSON(one), dp.EpsilonJSON(runEps), dp.EpsilonJSON(tuned)
	p.Candidates, p.Covered = dist.String(), true
	p.Score = &tuneScore{Mechanism: "none", Sensitivity: score.Sensitivity, Proof: rule.Proof, Runs: score.Runs,
		Epsilon: dp.EpsilonJSON(scoreEps), SelectionLB: dp.EpsilonJSON(lb),
		What: "the number of correct validation predictions of each run, summed over the runs, exact: post-processing of the run's release and public data"}
	if !score.Exact() {
		z := score.Multiplier
		p.Score.Mechanism, p.Score.Multiplier, p.Score.Std = "gaussian", &z, score.Std()
		p.Score.What = fmt.Sprintf("the number of correct validation predictions of each run plus Gaussian noise of std %g (sensitivity %g per run), drawn from the mechanism source, summed over the %d run(s)", score.Std(), score.Sensitivity, score.Runs)
	}
	scorePart := "its exact score (post-processing)"
	if !score.Exact() {
		scorePart = fmt.Sprintf("its noisy score (Gaussian, std %g per run, ε %.4g alone)", score.Std(), scoreEps)
	}
	p.Note = fmt.Sprintf("K ~ %s candidates drawn uniformly with replacement from the grid, the best by score released: RDP bound of Papernot & Steinke (ICLR 2022), %s, on the largest one-candidate RDP curve over the grid (its runs and %s); even with runs that release nothing, selecting by this score leaks ε ≥ %.4g on a worst-case input (privacy.score.selection_epsilon_lb)", dist, theorem, scorePart, lb)
	if opts.Level == methods.Node {
		p.Note += "; the score's sensitivity assumes the split gives every other node the same role without the removed node, as the runs' own plans do"
	}
	return nil
}

// planCounts checks that tune can compute c's privacy plan at level from
// counts: c is Accountable and its plan needs only the counts tune derives
// from the split (training nodes, classes). tune checks it before anything
// is trained.
func planCounts(c methods.Method, level methods.Level) error {
	am, ok := c.(mrun.Accountable)
	if !ok {
		return fmt.Errorf("%s has no privacy plan from counts", c.Name())
	}
	for _, n := range am.AccountCounts(level) {
		if n != mrun.CountTrainNodes && n != mrun.CountClasses {
			return fmt.Errorf("its plan needs --%s, which tune does not derive", n)
		}
	}
	return nil
}

// candidateCurve is the RDP curve of run r of candidate c at the run's δ:
// its plan from run r's split counts (zero when the method reads nothing
// private at the level), with its conversion.
func candidateCurve(opts mrun.TrainOptions, c methods.Method, g *graphs.Graph, delta float64, r int) (func(float64) float64, dp.Conversion, *dp.Plan, error) {
	if err := planCounts(c, opts.Level); err != nil {
		return nil, 0, nil, err
	}
	am := c.(mrun.Accountable)
	need := am.AccountCounts(opts.Level)
	split := opts.Split
	if split == "" {
		split = c.DefaultSplit(g.Name)
	}
	spec, err := graphs.ParseSplit(split)
	if err != nil {
		return nil, 0, nil, err
	}
	gs, err := graphs.ApplySplit(g, spec.ForRun(r, len(g.MaskSplits)), opts.Seed+uint64(r))
	if err != nil {
		return nil, 0, nil, err
	}
	ctx := methods.NewContext(methods.Context{Level: opts.Level, Epsilon: opts.Epsilon, Delta: delta, DeltaRule: methods.DeltaGiven, Selection: opts.Selection, Seed: opts.Seed})
	cal, err := am.AccountPlan(ctx, mrun.Counts{TrainNodes: len(gs.Split.Train), Classes: g.NumClasses})
	if err != nil {
		if len(need) == 0 {
			// Nothing private is read at this level.
			return func(float64) float64 { return 0 }, dp.ConversionImproved, nil, nil
		}
		return nil, 0, nil, err
	}
	curve, err := dp.PlanCurve(cal.Plan)
	if err != nil {
		return nil, 0, nil, err
	}
	conv := dp.ConversionImproved
	if cal.Plan.Accountant == "rdp-standard" {
		conv = dp.ConversionStandard
	}
	return curve, conv, cal.Plan, nil
}

func printTune(w io.Writer, r *tuneReport) {
	fmt.Fprintf(w, "tune %s: grid of %d", r.Method, r.GridSize)
	if r.Drawn != nil {
		fmt.Fprintf(w, ", %d candidate(s) trained", *r.Drawn)
	}
	fmt.Fprintf(w, " (selection privacy: %s)\n", r.Selection)
	if r.TrialsNote != "" {
		fmt.Fprintf(w, "trials: %s\n", r.TrialsNote)
	}
	for _, t := range r.Trials {
		fmt.Fprintf(w, "  %-40s %sval %.4f  test %.4f\n", t.Setting, scoreText(t.Score), t.ValAcc, t.TestAcc)
	}
	if r.Best != nil {
		fmt.Fprintf(w, "best: %s  %sval %.4f  test %.4f\n", r.Best.Setting, scoreText(r.Best.Score), r.Best.ValAcc, r.Best.TestAcc)
		if r.BestNote != "" {
			fmt.Fprintf(w, "  %s\n", r.BestNote)
		}
	} else {
		fmt.Fprintln(w, "best: none (no candidate drawn)")
	}
	p := r.Privacy
	switch {
	case p.TunedEpsilon != nil:
		fmt.Fprintf(w, "privacy (%s): one candidate ε = %s (its runs %s and its score), tuned ε = %s at δ = %g\n", p.Level, fmtEps(p.CandidateEpsilon), fmtEps(p.RunEpsilon), fmtEps(p.TunedEpsilon), *p.Delta)
	case p.CandidateEpsilon != nil:
		fmt.Fprintf(w, "privacy (%s): one candidate ε = %s; tuning NOT covered\n", p.Level, fmtEps(p.CandidateEpsilon))
	}
	for _, n := range p.CandidateNotes {
		fmt.Fprintf(w, "candidates' report: %s\n", n)
	}
	if s := p.Score; s != nil {
		fmt.Fprintf(w, "score (%s): %s; ε %s alone; selecting by it leaks ε ≥ %s on a worst-case input\n", s.Mechanism, s.What, fmtEps(s.Epsilon), fmtEps(s.SelectionLB))
		fmt.Fprintf(w, "  sensitivity %g per run: %s\n", s.Sensitivity, s.Proof)
	}
	fmt.Fprintf(w, "note: %s\n", p.Note)
}

// scoreText is a trial's released score for the text output ("" without
// one).
func scoreText(s *float64) string {
	if s == nil {
		return ""
	}
	return fmt.Sprintf("score %.1f  ", *s)
}

// tuneProgress is tune's progress on stderr (w nil: none).
//
// Counted (the report prints K): a line as each candidate's run starts,
// "tune: candidate 3 of 12 (lr=0.01,hidden=16), run 1 of 2", and the
// epochs of the run in progress (a bar on a terminal, a line every 10 s
// otherwise).
//
// Not counted (--selection-privacy rdp without --show-trials: K is not
// released, Papernot & Steinke's bound keeps it hidden): one line when
// training starts, the same for every K, and on a terminal a spinner
// without counts, settings or times, erased at the end. Nothing else: the
// number of lines a log would hold, a count, an elapsed time or an
// estimate of the time left all grow with K. (The operator at the
// terminal sees the wall time anyway; a log kept with the results must
// not hold it.)
type tuneProgress struct {
	w       io.Writer
	counted bool
	file    *os.File // w as a file, when it is one (bars and spinner need a terminal)
	stop    chan struct{}
	stopped chan struct{}
}

// newTuneProgress starts tune's progress on w (nil: none); counted says
// whether it may show the number of candidates.
func newTuneProgress(w io.Writer, counted bool) *tuneProgress {
	p := &tuneProgress{w: w, counted: counted}
	if w == nil {
		return p
	}
	if f, ok := w.(*os.File); ok {
		p.file = f
	}
	if counted {
		return p
	}
	fmt.Fprintln(w, "tune: training the candidates (their number is part of the private selection: no count, setting or time is shown)")
	if p.file != nil && term.IsTerminal(int(p.file.Fd())) {
		p.stop, p.stopped = make(chan struct{}), make(chan struct{})
		go p.spin()
	}
	return p
}

// spin draws the spinner until done.
func (p *tuneProgress) spin() {
	defer close(p.stopped)
	frames := `|/-\`
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for i := 0; ; i++ {
		fmt.Fprintf(p.w, "\rtune: training %c", frames[i%len(frames)])
		select {
		case <-p.stop:
			fmt.Fprint(p.w, "\r\033[K")
			return
		case <-t.C:
		}
	}
}

// run returns the recorder of run r (of runs) of candidate i (of k),
// trained for epochs epochs (its Plan is made here: a run outside Train
// plans nothing).
func (p *tuneProgress) run(i, k int, setting string, r, runs, epochs int) trainers.Recorder {
	if p.w == nil || !p.counted {
		return trainers.Nop{}
	}
	fmt.Fprintf(p.w, "tune: candidate %d of %d (%s), run %d of %d\n", i+1, k, setting, r+1, runs)
	var rec trainers.Recorder
	if p.file != nil {
		rec = trainers.NewBar(p.file)
	} else {
		rec = trainers.NewLines(p.w, 10*time.Second)
	}
	rec.Plan(epochs)
	return rec
}

// done ends the progress (the spinner is erased).
func (p *tuneProgress) done() {
	if p.stop != nil {
		close(p.stop)
		<-p.stopped
		p.stop = nil
	}
}
