package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/dpgnn/dpgnn/graphs"
	graphio "github.com/dpgnn/dpgnn/graphs/io"
	"github.com/dpgnn/dpgnn/methods"
	mrun "github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/trainers"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// dataFlags are the options of every command that builds a method's model
// on a dataset: `train METHOD` and `inspect METHOD`.
type dataFlags struct {
	dataset, dataDir, split, features, privacy, epsilon, delta string
	selection                                                  string
	selectionEpsilon                                           float64
	maxMemory                                                  string
	seed                                                       uint64
}

func (c *dataFlags) bind(f *pflag.FlagSet) {
	f.StringVar(&c.dataset, "dataset", "", "dataset name or path (default: the embedded synthetic csbm graph)\nnames: "+strings.Join(graphio.DatasetNames(), ", "))
	f.StringVar(&c.dataDir, "data-dir", graphio.DefaultDataDir(), "directory where dataset names resolve ($DPGNN_DATA, else ./data)")
	f.StringVar(&c.split, "split", "", "per-class:P:V:T (P training nodes per class, V validation, T test nodes) | ratio:A:B (a fraction A of the nodes\nfor training, B for test, the rest validation) | inductive:A:B (A on the training side, B test, the rest validation,\nevery edge between the training side and the rest removed; inductive:A: the rest test, no validation) | masks:K (the dataset's K-th\nstored mask) | masks (run r: mask r) | fixed (the dataset's own split)\n(default: the method's paper protocol for the dataset)")
	f.StringVar(&c.features, "features", "raw", "feature preprocessing: raw (as stored) or l1 (rows scaled to sum 1, PyG's NormalizeFeatures)")
	f.StringVar(&c.privacy, "privacy", "none", "none, edge or node")
	f.StringVar(&c.epsilon, "epsilon", "inf", "privacy budget ε (> 0, or inf)")
	f.StringVar(&c.delta, "delta", "auto", "privacy parameter δ in (0,1); auto: from public quantities only (edge level: below one over the\nnumber of possible edges among the N nodes; refused at node level, where no count is public); paper: the\nmethod's paper convention on the private unit count (reported as not covered)")
	f.StringVar(&c.selection, "selection", "auto", "which epoch a training loop keeps: best (validation accuracy; free when labels are public), last (reads\nno label), private (exponential mechanism, --selection-epsilon per trained module, accounted); auto: best,\nor last at node level")
	f.Float64Var(&c.selectionEpsilon, "selection-epsilon", 0, "ε of each private model selection (--selection private)")
	f.StringVar(&c.maxMemory, "max-memory", "", maxMemoryHelp)
	f.Uint64Var(&c.seed, "seed", 1, "random seed")
}

// options parses the flags into the options run.Train and
// run.NewContext take.
func (c *dataFlags) options() (mrun.TrainOptions, error) {
	level, err := methods.ParseLevel(c.privacy)
	if err != nil {
		return mrun.TrainOptions{}, err
	}
	eps, err := parseEpsilon(c.epsilon)
	if err != nil {
		return mrun.TrainOptions{}, err
	}
	if level == methods.None && !math.IsInf(eps, 1) {
		return mrun.TrainOptions{}, fmt.Errorf("--epsilon %s with --privacy none: a budget needs --privacy edge or node", c.epsilon)
	}
	delta, rule, err := parseDelta(c.delta)
	if err != nil {
		return mrun.TrainOptions{}, err
	}
	// One rule for the whole budget: without privacy no δ is spent, so a
	// given one is refused like a finite ε (auto, the default, resolves to
	// nothing there).
	if level == methods.None && rule != methods.DeltaAuto {
		return mrun.TrainOptions{}, fmt.Errorf("--delta %s with --privacy none: δ is part of a budget, which needs --privacy edge or node", c.delta)
	}
	maxMem, err := setMaxMemory(c.maxMemory)
	if err != nil {
		return mrun.TrainOptions{}, err
	}
	return mrun.TrainOptions{Dataset: c.dataset, DataDir: c.dataDir, Split: c.split, Features: c.features, Level: level,
		Epsilon: eps, Delta: delta, DeltaRule: rule, Selection: c.selection, SelectionEpsilon: c.selectionEpsilon, Seed: c.seed,
		MaxMemory: maxMem}, nil
}

// maxMemoryHelp is the help of every --max-memory flag.
const maxMemoryHelp = "refuse a load or a run whose memory estimate exceeds this size (e.g. 16GB, 512MiB),\nbefore it allocates (default: $DPGNN_MAX_MEMORY, else 16GB)"

// setMaxMemory applies a --max-memory value: "" leaves the limit as it is
// ($DPGNN_MAX_MEMORY, else 16 GB) and returns 0; a size is parsed and set
// in the environment, where the loaders and generators read it
// (graphs.MemoryLimit), and returned in bytes.
func setMaxMemory(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	n, err := graphs.ParseBytes(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("--max-memory %q: want a size such as 16GB or 512MiB", s)
	}
	if err := os.Setenv(graphs.MemoryLimitEnv, s); err != nil {
		return 0, fmt.Errorf("--max-memory %s: %w", s, err)
	}
	return n, nil
}

// commonFlags are the options every `train METHOD` accepts.
type commonFlags struct {
	dataFlags
	trace       string
	runs        int
	json        bool
	quiet       bool
	secureNoise bool
}

func (c *commonFlags) bind(cmd *cobra.Command) {
	f := cmd.Flags()
	c.dataFlags.bind(f)
	f.IntVar(&c.runs, "runs", 1, "number of runs with seeds seed, seed+1, ...")
	f.BoolVar(&c.json, "json", false, "print one JSON object on stdout and nothing else")
	f.BoolVar(&c.quiet, "quiet", false, "no progress on stderr (a bar on a terminal, a line every 10 s otherwise)")
	f.BoolVar(&c.secureNoise, "secure-noise", false, "draw the mechanisms' randomness (noise, sampling, DP-SGD's dropout masks) from crypto/rand, not from --seed (for real releases: a known seed lets anyone regenerate the noise; runs no longer repeat)")
	f.StringVar(&c.trace, "trace", "", "write per-epoch/step JSON lines (loss, accuracy, DP-SGD diagnostics) to FILE: a regular file is\nreplaced when the command ends (a failed run or write leaves it as it was; results are printed either way); a device\nor pipe gets the lines as they come; checked before training, and refused with --json when it is standard output")
}

// methodArg checks that the first argument of `verb METHOD` names a
// registered method.
func methodArg(verb string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return fmt.Errorf("%s needs a method: one of %s", verb, strings.Join(methods.Names(), ", "))
		}
		_, err := methods.New(args[0])
		return err
	}
}

// parseEpsilon parses --epsilon (or one of sweep's --epsilons): a budget
// run.CheckEpsilon accepts (at least run.MinEpsilon), or inf.
func parseEpsilon(s string) (float64, error) {
	e, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, fmt.Errorf("--epsilon %q is not a number (use e.g. 1, 8 or inf)", s)
	}
	if err := mrun.CheckEpsilon("--epsilon", e, s); err != nil {
		return 0, err
	}
	return e, nil
}

// parseDelta parses --delta: auto, paper, or a number run.CheckDelta
// accepts (in (0, run.MaxDelta]).
func parseDelta(s string) (float64, methods.DeltaRule, error) {
	switch s {
	case "auto":
		return 0, methods.DeltaAuto, nil
	case "paper":
		return 0, methods.DeltaPaper, nil
	}
	d, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, "", fmt.Errorf("--delta must be a number in (0, %g], auto or paper, got %q", mrun.MaxDelta, s)
	}
	if err := mrun.CheckDelta("--delta", d, s); err != nil {
		return 0, "", err
	}
	return d, methods.DeltaGiven, nil
}

func newTrainCmd(stdout, stderr io.Writer) *cobra.Command {
	train := &cobra.Command{
		Use:   "train METHOD [flags]",
		Short: "Train and evaluate a method; prints a summary table (or JSON with --json)",
		Long: `Train a method on a dataset, evaluate it on the split's test nodes, and print
test accuracy with its mean, standard deviation and 95% bootstrap interval over
--runs seeded runs. Private runs also print the privacy report (accountant, ε, δ,
noise). Methods: ` + strings.Join(methods.Names(), ", ") + `.

Ctrl-C or SIGTERM (a batch system's time limit) stops the run in progress:
the summary (or JSON record) of the runs that finished is printed, stderr
says how many of --runs finished, and the exit status is 130 (143 for
SIGTERM).

Run 'dpgnn train METHOD --help' for a method's hyperparameters.`,
		Args: methodArg("train"),
		RunE: func(cmd *cobra.Command, args []string) error { return nil },
	}
	for _, name := range methods.Names() {
		train.AddCommand(newMethodCmd(name, stdout, stderr))
	}
	return train
}

func newMethodCmd(name string, stdout, stderr io.Writer) *cobra.Command {
	m, _ := methods.New(name)
	var c commonFlags
	cmd := &cobra.Command{
		Use:   name + " [flags]",
		Short: m.Short(),
		Long:  m.Short() + "\nPrivacy levels: " + levelList(m) + ".",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := c.options()
			if err != nil {
				return err
			}
			var rec trainers.Multi
			if !c.quiet {
				if f, ok := stderr.(*os.File); ok {
					rec = append(rec, trainers.NewBar(f))
				}
			}
			var trace *trainers.Trace
			var traceFile *streamFile
			if c.trace != "" {
				if traceFile, err = openTrace(c.trace, c.json, stdout); err != nil {
					return err
				}
				defer traceFile.Abort() // after a Commit, nothing
				trace = trainers.NewTrace(traceFile)
				rec = append(rec, trace)
			}
			opts.Runs, opts.Recorder, opts.SecureNoise = c.runs, rec, c.secureNoise
			opts.Command = commandLine(cmd, args)
			interruptible.Store(true)
			r, err := mrun.TrainContext(cmd.Context(), m, opts)
			var stopped *mrun.InterruptedError
			if err != nil && !errors.As(err, &stopped) {
				return err
			}
			// Interrupted: the runs that finished are printed, and the
			// trace keeps what was recorded up to the interruption (the
			// abandoned run's late writes fail, unreported). A trace
			// that failed after training loses no result: they are
			// printed, then the error.
			var traceErr error
			if traceFile != nil {
				traceErr = traceFile.Finish(trace.Err)
			}
			if r != nil {
				if c.json {
					if err := json.NewEncoder(stdout).Encode(r); err != nil {
						return err
					}
				} else {
					printSummary(stdout, r)
				}
			}
			if traceErr != nil {
				msg := fmt.Sprintf("--trace %s: %s", c.trace, oneLine(traceErr))
				if r != nil {
					msg += " (the results were printed)"
				}
				if stopped != nil {
					return &interruptedError{msg: fmt.Sprintf("%v; %s", stopped, msg), cause: stopped}
				}
				return errors.New(msg)
			}
			if stopped != nil {
				return stopped
			}
			return nil
		},
	}
	c.bind(cmd)
	methods.BindConfig(cmd.Flags(), m.Config())
	if !methods.Supports(m, methods.Edge) && !methods.Supports(m, methods.Node) {
		// A non-private method: its --help does not offer privacy flags it
		// would refuse (they still parse, so --privacy none works).
		for _, f := range []string{"privacy", "epsilon", "delta", "selection", "selection-epsilon", "secure-noise"} {
			_ = cmd.Flags().MarkHidden(f)
		}
	}
	return cmd
}

func fmtEps(e *float64) string {
	if e == nil {
		return "∞"
	}
	return strconv.FormatFloat(*e, 'g', 6, 64)
}

func printSummary(w io.Writer, r *trainers.Record) {
	fmt.Fprintf(w, "%s on %s (split %s, privacy %s, ε=%s), %d run(s), %.1fs\n",
		r.Method, r.Dataset, r.Split, r.Privacy, fmtEps(r.Epsilon), r.Runs, r.Seconds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if r.Runs > 1 {
		fmt.Fprintln(tw, "metric\tmean\tstd\t95% CI\t")
	} else {
		fmt.Fprintln(tw, "metric\tvalue\t")
	}
	var keys, diag []string
	for k := range r.Metrics {
		if isQuality(k) {
			keys = append(keys, k)
		} else {
			diag = append(diag, k)
		}
	}
	sort.Strings(keys)
	sort.Strings(diag)
	for _, k := range keys {
		s := r.Metrics[k]
		switch {
		case math.IsNaN(s.Mean):
			fmt.Fprintf(tw, "%s\t-\t\n", k)
		case r.Runs > 1:
			fmt.Fprintf(tw, "%s\t%.4f\t%.4f\t±%.4f\t\n", k, s.Mean, s.Std, s.CI95)
		default:
			fmt.Fprintf(tw, "%s\t%.4f\t\n", k, s.Mean)
		}
	}
	tw.Flush()
	if len(diag) > 0 {
		var parts []string
		for _, k := range diag {
			parts = append(parts, fmt.Sprintf("%s %.4g", k, r.Metrics[k].Mean))
		}
		fmt.Fprintf(w, "diagnostics (mean over runs): %s\n", strings.Join(parts, ", "))
	}
	if p := r.PrivacyReport; p != nil {
		fmt.Fprintf(w, "privacy: %s-level, accountant %s, ε=%s at δ=%.3g", p.Level, p.Accountant, fmtEps(p.Epsilon), p.Delta)
		if p.Discretization != nil {
			fmt.Fprintf(w, " (%s)", p.Discretization)
		}
		if len(p.Noise) > 0 {
			keys := make([]string, 0, len(p.Noise))
			for k := range p.Noise {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(w, ", %s=%.4g", k, p.Noise[k])
			}
		}
		fmt.Fprintln(w)
		if p.Relation != nil {
			fmt.Fprintln(w, "neighbours:", p.Relation)
		}
		if p.DeltaSource != "" {
			fmt.Fprintln(w, "δ:", p.DeltaSource)
		}
		if len(p.Uses) > 0 {
			fmt.Fprintln(w, "uses of private data:")
			for _, u := range p.Uses {
				eps := ""
				if u.Epsilon != nil {
					eps = fmt.Sprintf(" [ε=%.4g alone]", *u.Epsilon)
				}
				fmt.Fprintf(w, "  - %s: %s%s — %s\n", u.Kind, u.What, eps, u.Covered)
			}
		}
		if p.Notes != "" {
			fmt.Fprintln(w, "note:", p.Notes)
		}
	}
}

// isQuality reports whether a metric measures prediction quality (shown
// with its interval) rather than being a solver diagnostic.
func isQuality(name string) bool {
	for _, q := range []string{"acc", "f1", "auc", "ssi"} {
		if strings.Contains(name, q) {
			return true
		}
	}
	return false
}
