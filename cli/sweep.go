package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/dpgnn/dpgnn/methods"
	mrun "github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/trainers"
	"github.com/spf13/cobra"
)

// sweepFlags are the flags of `dpgnn sweep`.
type sweepFlags struct {
	d                                        dataFlags
	methodList, epsList, out, plotFile, from string
	shard, emit, emitOut, dpgnn              string
	sets, sbatch                             []string
	runs, workers, shards                    int
	metric                                   string
	quiet                                    bool
}

// sweepRunOptions are how a sweep trains its grid: its shard, its workers,
// the extra plot file and whether it shows progress.
type sweepRunOptions struct {
	shard    sweepShard
	workers  int
	plotFile string // --plot ("" : none)
	quiet    bool   // no progress on stderr
}

// newSweepCmd builds `dpgnn sweep`: methods × budgets × seeded runs on one
// dataset and split, every run's result as a JSON record, and a markdown
// table.
func newSweepCmd(stdout, stderr io.Writer) *cobra.Command {
	var f sweepFlags
	cmd := &cobra.Command{
		Use:   "sweep --methods A,B --epsilons 1,8,inf [flags]",
		Short: "Run methods × privacy budgets × seeds and tabulate test accuracy",
		Long: `Run every method at every ε on the same dataset, split, privacy level and
seeds (--runs N: seeds --seed, --seed+1, ...), and print a markdown table of
mean test accuracy ± 95% bootstrap half-width per (method, ε) cell (a cell of
one run has no half-width). The columns are the budgets in ascending order, ∞
last. A method that does not support the privacy level runs, non-private,
only in the ∞ column (e.g. gcn as the upper baseline); a run that reads no
private data (the feature-only mlp at edge level, ε = 0) runs once per seed
and fills every finite ε.

The whole grid is checked before anything trains: every method, ε and --set
string, the privacy level against each method's, the dataset and the split
(all methods must use the same one).

Records and resuming. --out DIR appends one JSON record per finished run
(the record of 'train --json' for that run, with its method, ε, seed, split,
metrics, privacy report and provenance, plus "run", "sweep_seed",
"delta_setting" and "selection") to DIR/results.jsonl, synced to disk, and
when the grid is complete writes the table to DIR/table.md and the plot to
DIR/accuracy_vs_epsilon.png. Running the same command again trains only the
runs not recorded yet: a run is recorded when a record has its method, ε and
seed; records of this dataset, split and level that the grid does not ask
for are kept and left out of the table. A record of another dataset, data,
split or level, or of a method of this sweep with other hyperparameters,
--delta or --selection, is refused before anything trains. A last line cut
short (a sweep killed while writing) is dropped with a warning and its run
trains again. --out FILE.jsonl is the results file alone, resumed the same
way; the table then goes only to stdout (and to --plot).

An existing --out directory must be a sweep's (it holds results.jsonl or
sweep.json) or hold none of table.md, accuracy_vs_epsilon.png and
sweep.json: a sweep never replaces files it did not write.

Workers and shards. --workers W trains W runs at once (each run is seeded
on its own: the records are those of W = 1, only their order in the file
differs). --shard I/N trains only the runs k (in the order method, ε, seed)
with k mod N = I; shards on one machine or on several (a shared file
system with locks) append to the same --out safely, each record one whole
line under a lock. Whichever shard finds the grid complete writes the
table; so do 'sweep --from DIR' and a rerun without --shard (which trains
nothing then).

Concurrent sweeps. Every run is claimed before it trains (a lock file per
run in DIR/.results.jsonl.claims/, held until its record is written and
released by the system if the sweep dies), so sweeps started at once on
the same --out share the grid instead of training it twice: each trains
the runs nobody else holds, then waits for the others' records (and trains
a run itself if the sweep that held it stopped without recording it).

Slurm. --emit slurm prints an sbatch job-array script (or writes it to
--emit-out FILE): one array task per shard (--shards N, default one per run
of the grid), each running this command with --shard $SLURM_ARRAY_TASK_ID/N,
the dpgnn binary (this one, or --dpgnn PATH), --out and --data-dir given as
absolute paths; --sbatch 'OPTION' adds '#SBATCH OPTION' lines (partition,
time, memory). Submitting the script again resumes.

With --from DIR|FILE[,FILE...] it trains nothing and tabulates the records
(and with --plot draws them): every record found, per-run records averaged
per cell, records of 'train --json' as they are; for a directory it writes
DIR/table.md and DIR/accuracy_vs_epsilon.png too. Records of different
datasets, splits or privacy levels are refused, and so are two records for
one run or one cell — unless they are byte-identical copies, which count
once (with a warning).

The table shows test accuracy; --metric NAME shows another metric of the
records (e.g. ssi for edge-sign prediction), a run without it counting as
not recorded.

Labels: --methods may name a method twice under labels METHOD@TAG (e.g.
dpar@paper), each a row of its own with its own --set settings; a label's
records carry it as their method.

Method hyperparameters: --set METHOD:KEY=VALUE,..., the keys being the method's
flag names, e.g. --set progap:hops=1,lr=0.05 (a value may hold commas:
--set gcon:steps=0,2,lambda=1), or --set 'METHOD:FLAGS' as on the command line,
e.g. --set 'progap:--hops 1 --lr 0.05' (repeatable).

Progress on stderr names the runs in flight (method, ε, seed) and counts the
runs done (--quiet: none). Ctrl-C or SIGTERM (a batch system's time limit)
stops the sweep: it prints the table of the runs that finished (their
records are in --out), names the runs it stopped (not recorded), and exits
with status 130 (143 for SIGTERM); the same command resumes.`,
		Example: `  dpgnn sweep --methods mlp,gap,progap,gcn --epsilons 1,8,inf --privacy edge \
      --dataset cora --data-dir ../shared/datasets --split ratio:0.1:0.2 --runs 5 --out cora-sweep --workers 2
  dpgnn sweep --from cora-sweep --plot cora.svg
  dpgnn sweep --methods gap,progap --epsilons 1,8,inf --privacy edge --dataset cora \
      --data-dir ../shared/datasets --runs 5 --out cora-sweep --emit slurm --sbatch '--time=1:00:00' > sweep.sbatch
  sbatch sweep.sbatch`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSweepCmd(cmd, args, &f, stdout, stderr)
		},
	}
	f.d.bind(cmd.Flags())
	fl := cmd.Flags()
	fl.StringVar(&f.methodList, "methods", "mlp,gap,progap", "comma-separated methods")
	fl.StringVar(&f.epsList, "epsilons", "1,8,inf", "comma-separated budgets (inf allowed)")
	fl.IntVar(&f.runs, "runs", 5, "runs per (method, ε) with seeds seed, seed+1, ...")
	fl.StringVar(&f.out, "out", "", "keep one JSON record per run in DIR/results.jsonl (and the table and plot in DIR when the grid is complete);\nrerunning trains only the runs not recorded; a path ending in .jsonl is the results file alone")
	fl.IntVar(&f.workers, "workers", 1, "train W runs at once")
	fl.StringVar(&f.shard, "shard", "", "train only shard I of N: the runs k (method, ε, seed order) with k mod N = I (needs --out)")
	fl.StringVar(&f.from, "from", "", "train nothing: tabulate (and with --plot draw) the records of earlier sweeps or 'train --json' runs, DIR|FILE[,FILE...]")
	fl.StringVar(&f.plotFile, "plot", "", "also draw test accuracy against ε (log scale, ∞ at the right), one line per method with 95% error bars, to FILE (.png, .svg or .pdf)")
	fl.StringVar(&f.metric, "metric", "test_acc", "the metric the table and plot show (a key of the records' metrics, e.g. ssi)")
	fl.StringArrayVar(&f.sets, "set", nil, "method hyperparameters, METHOD:KEY=VALUE,... or 'METHOD:--FLAG VALUE ...' (repeatable)")
	fl.StringVar(&f.emit, "emit", "", "train nothing: print a job script that runs the sweep, sharded (slurm: an sbatch job array)")
	fl.StringVar(&f.emitOut, "emit-out", "", "write the --emit script to FILE instead of stdout")
	fl.IntVar(&f.shards, "shards", 0, "array tasks of --emit slurm (default: one per run of the grid)")
	fl.StringVar(&f.dpgnn, "dpgnn", "", "the dpgnn binary --emit slurm runs (default: this one, by its absolute path)")
	fl.StringArrayVar(&f.sbatch, "sbatch", nil, "an '#SBATCH OPTION' line for --emit slurm, e.g. --sbatch '--partition=gpu' (repeatable)")
	fl.BoolVar(&f.quiet, "quiet", false, "no progress on stderr (a bar on a terminal, a line per run and every 10 s otherwise); warnings and errors still print")
	// The budgets are --epsilons; --epsilon (of the shared data flags) is
	// refused rather than ignored, and not offered in the help.
	_ = fl.MarkHidden("epsilon")
	return cmd
}

// runSweepCmd runs `dpgnn sweep`.
func runSweepCmd(cmd *cobra.Command, args []string, f *sweepFlags, stdout, stderr io.Writer) error {
	if cmd.Flags().Changed("epsilon") {
		return fmt.Errorf("--epsilon %s: a sweep takes its budgets from --epsilons (e.g. --epsilons %s)", f.d.epsilon, f.d.epsilon)
	}
	if f.plotFile != "" {
		if err := checkPlotFile(f.plotFile); err != nil {
			return err
		}
	}
	if f.from != "" {
		return sweepFromRecords(stdout, stderr, f.from, f.plotFile, f.metric)
	}
	if f.workers < 1 {
		return fmt.Errorf("--workers must be at least 1, got %d", f.workers)
	}
	shard, err := parseShard(f.shard)
	if err != nil {
		return err
	}
	switch f.emit {
	case "":
		for _, name := range []string{"emit-out", "shards", "dpgnn", "sbatch"} {
			if cmd.Flags().Changed(name) {
				return fmt.Errorf("--%s is for --emit slurm", name)
			}
		}
	case "slurm":
		if f.shard != "" {
			return fmt.Errorf("--shard %s with --emit slurm: each array task sets its own --shard; give the number of tasks with --shards N", f.shard)
		}
	default:
		return fmt.Errorf("--emit %q: the one script it writes is slurm", f.emit)
	}
	if !shard.whole() && f.out == "" {
		return fmt.Errorf("--shard %s needs --out: the shards merge their runs there", shard)
	}
	var out *sweepOut
	if f.out != "" {
		if out, err = parseSweepOut(f.out); err != nil {
			return err
		}
	}
	opts, err := f.d.options()
	if err != nil {
		return err
	}
	if opts.Level == methods.None {
		return fmt.Errorf("sweep needs --privacy edge or node (the budgets are the columns)")
	}
	opts.Runs, opts.Command = f.runs, commandLine(cmd, args)
	plan, err := planSweep(opts, f.methodList, f.epsList, f.sets)
	if err != nil {
		return err
	}
	plan.metric = f.metric
	if f.emit != "" {
		return emitSlurm(stdout, stderr, cmd, f, plan, out)
	}
	return runSweep(cmd.Context(), stdout, stderr, plan, out, sweepRunOptions{shard: shard, workers: f.workers, plotFile: f.plotFile, quiet: f.quiet})
}

// runSweep trains the runs of the grid in the shard that are not recorded
// in out yet (all of them without out; with out, each claimed first so
// that a concurrent sweep on out does not train it too), then prints the
// table and, when the grid is complete, writes it (and the plot) to out's
// directory.
func runSweep(ctx context.Context, stdout, stderr io.Writer, plan *sweepPlan, out *sweepOut, o sweepRunOptions) error {
	shard, workers := o.shard, o.workers
	set, read, err := loadSweepRecords(plan, out, stderr)
	if err != nil {
		return err
	}
	grid := plan.runs()
	var todo []sweepRun
	mine := 0
	for _, r := range grid {
		if !shard.owns(r) {
			continue
		}
		mine++
		if set.covers(r.method, r.eps, r.seed) == nil {
			todo = append(todo, r)
		}
	}
	var results *resultsFile
	var claims *runClaims
	if out != nil {
		if out.dir != "" {
			if err := os.MkdirAll(out.dir, 0o755); err != nil {
				return fmt.Errorf("--out %s: %w", out.flag, err)
			}
			if err := writeManifest(out.dir, plan.manifest()); err != nil {
				return fmt.Errorf("--out %s: %w", out.flag, err)
			}
		}
		if results, err = openResults(out.results, stderr); err != nil {
			return fmt.Errorf("--out %s: %w", out.flag, err)
		}
		defer results.Close()
		results.read = read
		if claims, err = openClaims(out.results); err != nil {
			return fmt.Errorf("--out %s: %w", out.flag, err)
		}
	}
	x := &sweepExec{plan: plan, workers: workers, results: results, claims: claims, set: set}
	if f, ok := stderr.(*os.File); ok && !o.quiet {
		x.progress = newSweepProgress(f, len(todo))
		what := ""
		if !shard.whole() {
			what = fmt.Sprintf(", %d in shard %s", mine, shard)
		}
		fmt.Fprintf(f, "sweep: %d runs in the grid%s; %d to train with %d worker(s)\n", len(grid), what, len(todo), workers)
	}
	interruptible.Store(true)
	if err := x.run(ctx, todo); err != nil {
		return err
	}
	if out != nil {
		// The runs other shards recorded meanwhile.
		if set, _, err = loadSweepRecords(plan, out, io.Discard); err != nil {
			return err
		}
	}
	t, covered := plan.table(set)
	if ctx.Err() != nil {
		if err := renderTable(stdout, t); err != nil {
			return err
		}
		return &interruptedError{cause: ctx.Err(), msg: interruptedText(x, covered, len(grid), out)}
	}
	if err := renderTable(stdout, t); err != nil {
		return err
	}
	if covered < len(grid) && out != nil {
		fmt.Fprintf(stderr, "sweep: shard %s is done; %d of %d runs of the grid are recorded in %s: the table is written by the shard that completes it, or by 'dpgnn sweep --from %s'\n",
			shard, covered, len(grid), out.results, out.flag)
		return nil
	}
	return writeSweepOutputs(out, o.plotFile, plan.title(), t)
}

// loadSweepRecords reads the records already in out (none without out) and
// checks them against the plan: the table's dataset, data, split and level,
// the configuration of every method of the sweep, and the run index of
// every run the grid shares with them. read is how far it read the
// results file.
func loadSweepRecords(plan *sweepPlan, out *sweepOut, warn io.Writer) (*recordSet, resultsPos, error) {
	set := newRecordSet(warn)
	if out == nil {
		return set, resultsPos{}, nil
	}
	recs, read, err := readResultsFrom(out.results, warn)
	if err != nil {
		return nil, read, fmt.Errorf("--out %w", err)
	}
	for _, r := range recs {
		if _, err := set.add(r); err != nil {
			return nil, read, fmt.Errorf("--out %w", err)
		}
	}
	for _, name := range plan.names {
		for col, e := range plan.eps {
			if _, ok := plan.level(name, e); !ok {
				continue
			}
			exp, err := plan.expected(name, col)
			if err != nil {
				return nil, read, err
			}
			if err := set.checkTable(exp); err != nil {
				return nil, read, fmt.Errorf("--out %s: %w", out.results, err)
			}
			if r := set.cells[cellKey{name, exp.eps()}]; r != nil {
				return nil, read, fmt.Errorf("--out %s: %s is a record of %d run(s) for the cell %s at ε=%s, which this sweep records run by run; move it to another file ('sweep --from' reads several)",
					out.results, r.where, r.Runs, name, epsLabel(e))
			}
			if o := set.configs[name]; o != nil {
				if d := configDiff(o, exp); d != "" {
					return nil, read, fmt.Errorf("--out %s: %s is a run of %s with another configuration than this sweep's (%s): one results file holds one configuration per method; use another --out",
						out.results, o.where, name, d)
				}
			}
		}
	}
	for _, run := range plan.runs() {
		if r := set.runs[run.key()]; r != nil && *r.Run != run.r {
			return nil, read, fmt.Errorf("--out %s: %s holds %s as run %d of --seed %d, but this sweep runs it as run %d of --seed %d: use --seed %d or another --out",
				out.results, r.where, run, *r.Run, *r.SweepSeed, run.r, plan.opts.Seed, *r.SweepSeed)
		}
	}
	return set, read, nil
}

// interruptedText is the message of an interrupted sweep.
func interruptedText(x *sweepExec, covered, grid int, out *sweepOut) string {
	stopped := "none was in progress"
	if len(x.stopped) > 0 {
		stopped = "stopped while training and not recorded: " + runNames(x.stopped)
	}
	if len(x.elsewhere) > 0 {
		stopped += "; left to the other sweep that was training them (not waited for): " + runNames(x.elsewhere)
	}
	if out == nil {
		return fmt.Sprintf("interrupted: %d of %d runs finished (not kept: no --out); %s", covered, grid, stopped)
	}
	return fmt.Sprintf("interrupted: %d of %d runs of the grid are recorded in %s (%d trained now); %s; the same command resumes",
		covered, grid, out.results, x.trained, stopped)
}

// runNames names runs in the grid's order: "gap at ε=1, seed 1; ...".
func runNames(runs []sweepRun) string {
	runs = slices.Clone(runs)
	slices.SortFunc(runs, func(a, b sweepRun) int { return a.k - b.k })
	names := make([]string, len(runs))
	for i, r := range runs {
		names[i] = r.String()
	}
	return strings.Join(names, "; ")
}

// writeSweepOutputs writes a complete table to out's directory (table.md
// and the plot) and, with plotFile, draws it there too.
func writeSweepOutputs(out *sweepOut, plotFile, title string, t *sweepTable) error {
	if out != nil && out.dir != "" {
		var b strings.Builder
		if err := renderTable(&b, t); err != nil {
			return err
		}
		if err := writeTextAtomic(filepath.Join(out.dir, sweepTableFile), b.String()); err != nil {
			return fmt.Errorf("--out %w", err)
		}
		file := filepath.Join(out.dir, sweepPlotFile)
		if err := plotSweep(file, title, t); err != nil {
			return fmt.Errorf("--out %s: %w", file, err)
		}
	}
	if plotFile != "" {
		if err := plotSweep(plotFile, title, t); err != nil {
			return fmt.Errorf("--plot %s: %w", plotFile, err)
		}
	}
	return nil
}

// sweepPlan is a sweep's grid, checked before anything trains.
type sweepPlan struct {
	opts  mrun.TrainOptions
	names []string
	eps   []float64           // ascending, +Inf last
	sets  map[string][]string // --set settings by method, in order
	// metric is the metric the table shows ("" : test_acc).
	metric string
	// dataset, split and fingerprint are what every record of the sweep
	// will say.
	dataset, split, fingerprint string
}

// planSweep parses and checks a sweep's whole grid before any training, so
// a typo fails in a second rather than after hours: every ε, every method
// name, every --set setting against its method's configuration (and the
// method's own validation), the privacy level against each method's
// levels, the dataset (loaded once), and the split of every (method, ε)
// cell, which must be the same for all (one table, one split). Errors are
// one line.
func planSweep(opts mrun.TrainOptions, methodList, epsList string, sets []string) (*sweepPlan, error) {
	if opts.Runs <= 0 {
		return nil, fmt.Errorf("--runs must be positive, got %d", opts.Runs)
	}
	p := &sweepPlan{opts: opts, sets: map[string][]string{}}
	var given []string
	for _, t := range strings.Split(epsList, ",") {
		t = strings.TrimSpace(t)
		e, err := parseEpsilon(t)
		if err != nil {
			return nil, fmt.Errorf("--epsilons %s: %w", epsList, err)
		}
		if k := slices.Index(p.eps, e); k >= 0 {
			return nil, fmt.Errorf("--epsilons %s: %s and %s are the same budget", epsList, given[k], t)
		}
		p.eps, given = append(p.eps, e), append(given, t)
	}
	slices.Sort(p.eps) // +Inf sorts last
	for _, name := range strings.Split(methodList, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			return nil, fmt.Errorf("--methods %q: empty method name", methodList)
		}
		if _, err := methods.New(methodOf(name)); err != nil {
			return nil, fmt.Errorf("--methods: %w", err)
		}
		if slices.Contains(p.names, name) {
			return nil, fmt.Errorf("--methods %s: %s is listed twice", methodList, name)
		}
		p.names = append(p.names, name)
	}
	for _, s := range sets {
		name, settings, ok := strings.Cut(s, ":")
		name = strings.TrimSpace(name)
		if !ok {
			return nil, fmt.Errorf("--set %q: want METHOD:KEY=VALUE,... or METHOD:FLAGS", s)
		}
		if _, err := methods.New(methodOf(name)); err != nil {
			return nil, fmt.Errorf("--set %q: %w", s, err)
		}
		if !slices.Contains(p.names, name) {
			return nil, fmt.Errorf("--set %q: %s is not among --methods %s", s, name, strings.Join(p.names, ","))
		}
		p.sets[name] = append(p.sets[name], settings)
	}
	for _, name := range p.names {
		if _, err := p.method(name); err != nil {
			return nil, err
		}
		m, _ := methods.New(methodOf(name))
		if !methods.Supports(m, opts.Level) {
			if !methods.Supports(m, methods.None) {
				return nil, fmt.Errorf("%s supports neither --privacy %s nor none (supported: %v)", name, opts.Level, m.Levels())
			}
			if !slices.Contains(p.eps, math.Inf(1)) {
				return nil, fmt.Errorf("%s does not support --privacy %s (supported: %v) and --epsilons %s has no inf, the one column where it would run without privacy",
					name, opts.Level, m.Levels(), epsList)
			}
		}
	}
	g, err := mrun.LoadDataset(opts)
	if err != nil {
		return nil, err
	}
	p.dataset, p.fingerprint = g.Name, mrun.DatasetFingerprint(g)
	for _, name := range p.names {
		for _, e := range p.eps {
			level, ok := p.level(name, e)
			if !ok {
				continue
			}
			m, _ := p.method(name)
			o := opts
			o.Epsilon, o.Level = e, level
			split, err := mrun.Check(m, o, g)
			if err != nil {
				return nil, fmt.Errorf("%s at ε=%s: %s", name, epsLabel(e), oneLine(err))
			}
			if p.split == "" {
				p.split = split
			}
			if split != p.split {
				return nil, fmt.Errorf("the methods' splits differ on %s (%s: %s, %s: %s): pass --split to give them one",
					p.dataset, p.names[0], p.split, name, split)
			}
		}
	}
	return p, nil
}

// methodOf is the method a --methods entry names: METHOD of a label
// METHOD@TAG, the entry itself otherwise.
func methodOf(label string) string {
	m, _, _ := strings.Cut(label, "@")
	return m
}

// method returns a fresh instance of the named method with its --set
// settings applied in order: "key=value,key=value" (keys are flag names)
// or, when a setting starts with "-", flags as on the command line.
func (p *sweepPlan) method(name string) (methods.Method, error) {
	m, err := methods.New(methodOf(name))
	if err != nil {
		return nil, err
	}
	for _, set := range p.sets[name] {
		if err := applySetting(m.Config(), set); err != nil {
			return nil, fmt.Errorf("--set %s: %s", name, oneLine(err))
		}
	}
	return m, nil
}

// applySetting sets the config cfg points to from one --set setting.
func applySetting(cfg any, set string) error {
	if !strings.HasPrefix(strings.TrimSpace(set), "-") {
		return methods.SetConfig(cfg, set)
	}
	return methods.ParseConfigFlags(cfg, strings.Fields(set))
}

// level is the privacy level a method runs at in the ε column e, and false
// when it has no cell there: a method without the sweep's level runs once,
// without privacy, in the ∞ column.
func (p *sweepPlan) level(name string, e float64) (methods.Level, bool) {
	m, _ := methods.New(methodOf(name))
	if methods.Supports(m, p.opts.Level) {
		return p.opts.Level, true
	}
	return methods.None, math.IsInf(e, 1)
}

// seeds are the seeds of the grid's runs.
func (p *sweepPlan) seeds() []uint64 {
	s := make([]uint64, p.opts.Runs)
	for r := range s {
		s[r] = p.opts.Seed + uint64(r)
	}
	return s
}

// manifest is the grid as DIR/sweep.json states it.
func (p *sweepPlan) manifest() sweepManifest {
	labels := make([]string, len(p.eps))
	for i, e := range p.eps {
		labels[i] = epsLabel(e)
	}
	return sweepManifest{Methods: p.names, Epsilons: labels, Runs: p.opts.Runs, Seed: p.opts.Seed}
}

// title is the plot's title.
func (p *sweepPlan) title() string {
	return fmt.Sprintf("%s, split %s, %s-level DP, %d runs", p.dataset, p.split, p.opts.Level, p.opts.Runs)
}

// table is the grid's table from the records of set: each cell averages
// the runs of the grid's seeds that are recorded (or filled by a run that
// read no private data). covered counts the grid's runs that have a
// result.
func (p *sweepPlan) table(set *recordSet) (t *sweepTable, covered int) {
	t = &sweepTable{names: p.names, eps: p.eps, runs: p.opts.Runs, metric: p.metric, cells: map[string][]sweepCell{}}
	for _, name := range p.names {
		row := make([]sweepCell, len(p.eps))
		for i, e := range p.eps {
			if _, ok := p.level(name, e); !ok {
				continue
			}
			var rs []*sweepRecord
			for _, s := range p.seeds() {
				if r := set.covers(name, e, s); r != nil && hasMetric(r.Record, t.metricName()) {
					rs = append(rs, r)
				}
			}
			covered += len(rs)
			row[i] = summarise(rs, t.metricName())
		}
		t.cells[name] = row
	}
	return t, covered
}

// oneLine joins a multi-line error (errors.Join) into one line.
func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

// epsLabel is a budget as the table's column names it: "inf" for ∞.
func epsLabel(e float64) string {
	if math.IsInf(e, 1) {
		return "inf"
	}
	return strconv.FormatFloat(e, 'g', 6, 64)
}

// sweepTable is a sweep's table: the rows (methods) and columns (budgets,
// ascending, ∞ last) and each cell's result.
type sweepTable struct {
	names []string
	eps   []float64
	// runs is the number of runs of a complete cell; a cell with fewer
	// says how many it has (0: no such note).
	runs   int
	metric string // the metric of the cells ("" : test_acc)
	cells  map[string][]sweepCell
}

// metricName is the metric of the table's cells.
func (t *sweepTable) metricName() string {
	if t.metric == "" {
		return "test_acc"
	}
	return t.metric
}

// hasMetric reports whether r holds the metric.
func hasMetric(r *trainers.Record, metric string) bool {
	_, ok := r.Metrics[metric]
	return ok
}

// summarise is the cell of per-run records: the mean of the metric and the
// 95% bootstrap half-width of the runs ordered by seed (the bootstrap
// seeded with the first seed, as 'train --runs' does), so the result does
// not depend on the order the records were written in.
func summarise(rs []*sweepRecord, metric string) sweepCell {
	if len(rs) == 0 {
		return sweepCell{}
	}
	rs = slices.Clone(rs)
	sort.Slice(rs, func(i, j int) bool { return rs[i].Seed < rs[j].Seed })
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = r.Metrics[metric].Mean
	}
	s := trainers.Summarize(v, rs[0].Seed)
	return sweepCell{mean: s.Mean, ci: s.CI95, n: len(v), ok: true}
}

// cellOf is a per-cell record's mean of the metric and its 95% half-width.
func cellOf(r *trainers.Record, metric string) sweepCell {
	s := r.Metrics[metric]
	n := r.Runs
	if n == 0 {
		n = len(s.Values)
	}
	return sweepCell{s.Mean, s.CI95, n, true}
}

// renderTable prints the markdown table: "mean ± half-width" per cell,
// the mean alone for a cell of one run, "–" for an empty cell, and
// "(n of R runs)" after a cell with fewer runs than the table's.
func renderTable(w io.Writer, t *sweepTable) error {
	labels := make([]string, len(t.eps))
	for i, e := range t.eps {
		labels[i] = "ε=" + epsLabel(e)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| method | %s |\n|---|%s\n", strings.Join(labels, " | "), strings.Repeat("---|", len(t.eps)))
	for _, name := range t.names {
		row := make([]string, len(t.eps))
		for i := range row {
			row[i] = "–"
			if i >= len(t.cells[name]) || !t.cells[name][i].ok {
				continue
			}
			c := t.cells[name][i]
			row[i] = fmt.Sprintf("%.3f ± %.3f", c.mean, c.ci)
			if c.n == 1 {
				row[i] = fmt.Sprintf("%.3f", c.mean)
			}
			if t.runs > 0 && c.n < t.runs {
				row[i] += fmt.Sprintf(" (%d of %d runs)", c.n, t.runs)
			}
		}
		fmt.Fprintf(&b, "| %s | %s |\n", name, strings.Join(row, " | "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// sweepFromRecords rebuilds a sweep's table from JSON records, read from
// files or from sweep directories (DIR/results.jsonl): columns are the
// budgets found (ascending, ∞ last), rows the methods in the order of the
// directory's sweep.json, then in order of first appearance. A cell
// averages its per-run records (see summarise), or shows a per-cell
// record as it is; a run that read no private data fills every finite
// column of its method and seed that has no record of its own, as in a
// live sweep. Records that do not belong in one table are refused
// (recordSet). With one directory, the table and the plot are written into
// it as well.
func sweepFromRecords(w, stderr io.Writer, from, plotFile, metric string) error {
	set := newRecordSet(stderr)
	var order []string
	runs, dir := 0, ""
	entries := strings.Split(from, ",")
	for _, e := range entries {
		e = strings.TrimSpace(e)
		file := e
		if st, err := os.Stat(e); err == nil && st.IsDir() {
			file = filepath.Join(e, sweepResultsFile)
			if _, err := os.Stat(file); err != nil {
				return fmt.Errorf("--from %s: a directory without %s", e, sweepResultsFile)
			}
			m, ok, err := readManifest(e)
			if err != nil {
				return fmt.Errorf("--from %w", err)
			}
			if ok {
				order, runs = append(order, m.Methods...), max(runs, m.Runs)
			}
			if len(entries) == 1 {
				dir = e
			}
		}
		recs, err := readResults(file, stderr)
		if err == nil && recs == nil {
			if _, serr := os.Stat(file); serr != nil {
				err = serr
			}
		}
		if err != nil {
			return fmt.Errorf("--from %w", err)
		}
		for _, r := range recs {
			if _, err := set.add(r); err != nil {
				return fmt.Errorf("--from %w", err)
			}
		}
	}
	if len(set.list) == 0 {
		return fmt.Errorf("--from %s: no records", from)
	}
	if metric != "" && !slices.ContainsFunc(set.list, func(r *sweepRecord) bool { return hasMetric(r.Record, metric) }) {
		return fmt.Errorf("--metric %s: no record of --from %s has it", metric, from)
	}
	t := recordsTable(set, order, runs, metric)
	if err := renderTable(w, t); err != nil {
		return err
	}
	level := set.first.Privacy
	if set.private != nil {
		level = set.private.Privacy
	}
	title := fmt.Sprintf("%s, split %s, %s-level DP", set.first.Dataset, set.first.Split, level)
	var out *sweepOut
	if dir != "" {
		out = &sweepOut{flag: dir, dir: dir, results: filepath.Join(dir, sweepResultsFile)}
	}
	return writeSweepOutputs(out, plotFile, title, t)
}

// recordsTable is the table of every record in set (see sweepFromRecords);
// order lists methods to put first, runs is the run count of a complete
// cell (0: the most any cell has).
func recordsTable(set *recordSet, order []string, runs int, metric string) *sweepTable {
	var names []string
	for _, n := range order {
		if !slices.Contains(names, n) && slices.ContainsFunc(set.list, func(r *sweepRecord) bool { return r.Method == n }) {
			names = append(names, n)
		}
	}
	seenEps := map[float64]bool{}
	free := map[string]*trainers.Record{} // per-cell records that read no private data
	for _, r := range set.list {
		if !slices.Contains(names, r.Method) {
			names = append(names, r.Method)
		}
		seenEps[r.eps()] = true
		if !r.isRun() && isFree(r.Record) {
			free[r.Method] = r.Record
		}
	}
	t := &sweepTable{names: names, eps: slices.Sorted(maps.Keys(seenEps)), metric: metric, cells: map[string][]sweepCell{}}
	metric = t.metricName()
	for _, name := range names {
		row := make([]sweepCell, len(t.eps))
		for i, e := range t.eps {
			if r, ok := set.cells[cellKey{name, e}]; ok {
				if hasMetric(r.Record, metric) {
					row[i] = cellOf(r.Record, metric)
				}
				continue
			}
			bySeed := map[uint64]*sweepRecord{}
			for _, r := range set.list {
				if r.isRun() && r.Method == name && r.eps() == e && hasMetric(r.Record, metric) {
					bySeed[r.Seed] = r
				}
			}
			if !math.IsInf(e, 1) {
				for s, r := range set.free[name] {
					if _, ok := bySeed[s]; !ok && hasMetric(r.Record, metric) {
						bySeed[s] = r
					}
				}
			}
			if len(bySeed) > 0 {
				row[i] = summarise(slices.Collect(maps.Values(bySeed)), metric)
			} else if f, ok := free[name]; ok && !math.IsInf(e, 1) && hasMetric(f, metric) {
				row[i] = cellOf(f, metric)
			}
		}
		t.cells[name] = row
	}
	if runs == 0 {
		for _, row := range t.cells {
			for _, c := range row {
				runs = max(runs, c.n)
			}
		}
	}
	t.runs = runs
	return t
}
