package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/trainers"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// newSweepCmd builds `dpgnn sweep`: methods × budgets × seeded runs on one
// dataset and split, every result as a JSON record, and a markdown table.
func newSweepCmd(stdout, stderr io.Writer) *cobra.Command {
	var d dataFlags
	var methodList, epsList, out, plotFile, from string
	var sets []string
	var runs int
	cmd := &cobra.Command{
		Use:   "sweep --methods A,B --epsilons 1,8,inf [flags]",
		Short: "Run methods × privacy budgets × seeds and tabulate test accuracy",
		Long: `Run every method at every ε on the same dataset, split, privacy level and
seeds, append one JSON record per (method, ε) (the record of 'train --json') to
--out, and print a markdown table of mean test accuracy ± 95% bootstrap
half-width (and with --plot, draw it). A method that does not support the privacy level runs once,
non-private, in the ∞ column (e.g. gcn as the upper baseline); at edge level
the feature-only mlp costs ε = 0: it runs once and fills every finite ε.

The whole grid is checked before anything trains: every method, ε and --set
string, the privacy level against each method's, the dataset and the split
(all methods must use the same one). Records already in --out must be of the
same dataset and split, and none may be one this sweep would write again.

With --from FILE[,FILE...] it trains nothing and redraws the table (and the
plot) from records written earlier with --out or 'train --json'. Records of
different datasets, splits or privacy levels are refused, and so are two
records for one (method, ε) cell — unless they are byte-identical copies,
which count once (with a warning).

Method hyperparameters: --set METHOD:KEY=VALUE,..., the keys being the method's
flag names, e.g. --set progap:hops=1,lr=0.05 (a value may hold commas:
--set gcon:steps=0,2,lambda=1), or --set 'METHOD:FLAGS' as on the command line,
e.g. --set 'progap:--hops 1 --lr 0.05' (repeatable).

Progress on stderr names the cell training (method, ε, cell k of N, run r of R).
Ctrl-C stops the sweep: it prints the table of the cells that finished (their
records are already in --out; the cell in progress is not recorded), says how
many finished, and exits with status 130.`,
		Example: `  dpgnn sweep --methods mlp,gap,progap,gcn --epsilons 1,8,inf --privacy edge \
      --dataset cora --data-dir ../shared/datasets --split ratio:0.1:0.2 --runs 5 --out cora.jsonl --plot cora.png`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if plotFile != "" {
				if err := checkPlotFile(plotFile); err != nil {
					return err
				}
			}
			if from != "" {
				return sweepFromRecords(stdout, stderr, strings.Split(from, ","), plotFile)
			}
			opts, err := d.options()
			if err != nil {
				return err
			}
			if opts.Level == methods.None {
				return fmt.Errorf("sweep needs --privacy edge or node (the budgets are the columns)")
			}
			opts.Runs, opts.Command = runs, commandLine(cmd, args)
			plan, err := planSweep(opts, methodList, epsList, sets)
			if err != nil {
				return err
			}
			set := newRecordSet(stderr)
			var w io.Writer = io.Discard
			if out != "" {
				if err := set.readFile(out, true); err != nil {
					return fmt.Errorf("--out %w", err)
				}
				for _, p := range plan.cells() {
					if err := set.check(p); err != nil {
						return fmt.Errorf("--out %s: %w", out, err)
					}
				}
				f, err := os.OpenFile(out, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
				if err != nil {
					return fmt.Errorf("--out: %w", err)
				}
				defer f.Close()
				w = f
			}
			grid := len(plan.cells())
			var progress *sweepProgress
			var rec trainers.Recorder = trainers.Nop{}
			if f, ok := stderr.(*os.File); ok {
				progress = newSweepProgress(f, grid)
				rec = progress
			}
			interruptible.Store(true)
			ctx := cmd.Context()
			cells := map[string][]sweepCell{}
			k, finished := 0, 0 // the cell in the grid's order (plan.cells), the cells filled
			for _, name := range plan.names {
				cell := make([]sweepCell, len(plan.eps))
				cells[name] = cell
				var free *trainers.Record // a run that read no private data (ε = 0)
				for i, e := range plan.eps {
					if free != nil && !math.IsInf(e, 1) {
						// Same seeds, same model: the result does not depend on ε.
						k++
						cell[i] = cellOf(free)
						finished++
						continue
					}
					level, ok := plan.level(name, e)
					if !ok {
						continue
					}
					k++
					m, err := plan.method(name)
					if err != nil {
						return err
					}
					o := opts
					o.Epsilon, o.Level, o.Recorder = e, level, rec
					if progress != nil {
						progress.startCell(k, name, plan.epsText[i], runs)
					}
					r, err := methods.TrainContext(ctx, m, o)
					var stopped *methods.InterruptedError
					if errors.As(err, &stopped) {
						// The table of the cells that finished; no plot.
						if err := reportSweep(stdout, "", "", plan.epsText, plan.names, cells); err != nil {
							return err
						}
						kept := ""
						if out != "" && finished > 0 {
							kept = fmt.Sprintf(" (their records are in %s)", out)
						}
						return &interruptedError{cause: stopped, msg: fmt.Sprintf(
							"interrupted: %d of %d cells finished%s; cell %d of %d, %s at ε=%s, was stopped after %d of %d runs and is not recorded",
							finished, grid, kept, k, grid, name, plan.epsText[i], stopped.Finished, stopped.Runs)}
					}
					if err != nil {
						return fmt.Errorf("%s at ε=%s: %w", name, plan.epsText[i], err)
					}
					b, err := json.Marshal(r)
					if err != nil {
						return err
					}
					if _, err := set.add(&sweepRecord{Record: r, raw: b, where: fmt.Sprintf("this sweep's %s at ε=%s", name, plan.epsText[i])}); err != nil {
						return fmt.Errorf("sweep: %w", err)
					}
					if _, err := w.Write(append(b, '\n')); err != nil {
						return fmt.Errorf("--out: %w", err)
					}
					cell[i] = cellOf(r)
					finished++
					if isFree(r) && !math.IsInf(e, 1) {
						free = r
					}
				}
			}
			title := fmt.Sprintf("%s, %s-level DP, %d runs", plan.dataset, opts.Level, runs)
			return reportSweep(stdout, plotFile, title, plan.epsText, plan.names, cells)
		},
	}
	d.bind(cmd.Flags())
	f := cmd.Flags()
	f.StringVar(&methodList, "methods", "mlp,gap,progap", "comma-separated methods")
	f.StringVar(&epsList, "epsilons", "1,8,inf", "comma-separated budgets (inf allowed)")
	f.IntVar(&runs, "runs", 5, "runs per (method, ε) with seeds seed, seed+1, ...")
	f.StringVar(&out, "out", "", "append one JSON record per (method, ε) to FILE (JSON lines; records already there must be of the same dataset and split, none for a cell this sweep fills)")
	f.StringVar(&from, "from", "", "train nothing: tabulate (and with --plot draw) the JSON records of earlier sweeps or 'train --json' runs, FILE[,FILE...]")
	f.StringVar(&plotFile, "plot", "", "draw test accuracy against ε, one line per method with 95% error bars, to FILE (.png, .svg or .pdf)")
	f.StringArrayVar(&sets, "set", nil, "method hyperparameters, METHOD:KEY=VALUE,... or 'METHOD:--FLAG VALUE ...' (repeatable)")
	return cmd
}

// sweepPlan is a sweep's grid, checked before anything trains.
type sweepPlan struct {
	opts    methods.TrainOptions
	names   []string
	eps     []float64
	epsText []string
	sets    map[string][]string // --set settings by method, in order
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
func planSweep(opts methods.TrainOptions, methodList, epsList string, sets []string) (*sweepPlan, error) {
	if opts.Runs <= 0 {
		return nil, fmt.Errorf("--runs must be positive, got %d", opts.Runs)
	}
	p := &sweepPlan{opts: opts, sets: map[string][]string{}}
	for _, t := range strings.Split(epsList, ",") {
		t = strings.TrimSpace(t)
		e, err := parseEpsilon(t)
		if err != nil {
			return nil, fmt.Errorf("--epsilons %s: %w", epsList, err)
		}
		if k := slices.Index(p.eps, e); k >= 0 {
			return nil, fmt.Errorf("--epsilons %s: %s and %s are the same budget", epsList, p.epsText[k], t)
		}
		p.eps, p.epsText = append(p.eps, e), append(p.epsText, t)
	}
	for _, name := range strings.Split(methodList, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			return nil, fmt.Errorf("--methods %q: empty method name", methodList)
		}
		if _, err := methods.New(name); err != nil {
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
		if _, err := methods.New(name); err != nil {
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
		m, _ := methods.New(name)
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
	g, err := methods.LoadDataset(opts)
	if err != nil {
		return nil, err
	}
	p.dataset, p.fingerprint = g.Name, methods.DatasetFingerprint(g)
	for _, name := range p.names {
		for i, e := range p.eps {
			level, ok := p.level(name, e)
			if !ok {
				continue
			}
			m, _ := p.method(name)
			o := opts
			o.Epsilon, o.Level = e, level
			split, err := methods.Check(m, o, g)
			if err != nil {
				return nil, fmt.Errorf("%s at ε=%s: %s", name, p.epsText[i], oneLine(err))
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

// method returns a fresh instance of the named method with its --set
// settings applied in order: "key=value,key=value" (keys are flag names)
// or, when a setting starts with "-", flags as on the command line.
func (p *sweepPlan) method(name string) (methods.Method, error) {
	m, err := methods.New(name)
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
	flags := pflag.NewFlagSet("set", pflag.ContinueOnError)
	flags.SetOutput(io.Discard)
	methods.BindConfig(flags, cfg)
	if err := flags.Parse(strings.Fields(set)); err != nil {
		return err
	}
	if args := flags.Args(); len(args) > 0 {
		return fmt.Errorf("%q is not a flag", args[0])
	}
	return nil
}

// level is the privacy level a method runs at in the ε column e, and false
// when it has no cell there: a method without the sweep's level runs once,
// without privacy, in the ∞ column.
func (p *sweepPlan) level(name string, e float64) (methods.Level, bool) {
	m, _ := methods.New(name)
	if methods.Supports(m, p.opts.Level) {
		return p.opts.Level, true
	}
	return methods.None, math.IsInf(e, 1)
}

// cells are the records the sweep may write, as far as they are known
// before training (dataset, split, level, ε, seeds), to check against the
// records already in --out.
func (p *sweepPlan) cells() []*sweepRecord {
	seeds := make([]uint64, p.opts.Runs)
	for r := range seeds {
		seeds[r] = p.opts.Seed + uint64(r)
	}
	var out []*sweepRecord
	for _, name := range p.names {
		for i, e := range p.eps {
			level, ok := p.level(name, e)
			if !ok {
				continue
			}
			if level == methods.None {
				e = math.Inf(1)
			}
			r := &trainers.Record{Method: name, Dataset: p.dataset, Split: p.split, Privacy: string(level),
				Epsilon: dp.EpsilonJSON(e), Runs: p.opts.Runs, Seed: p.opts.Seed, Seeds: seeds, DatasetFingerprint: p.fingerprint}
			out = append(out, &sweepRecord{Record: r, where: fmt.Sprintf("this sweep's %s at ε=%s", name, p.epsText[i])})
		}
	}
	return out
}

// oneLine joins a multi-line error (errors.Join) into one line.
func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

// sweepRecord is a record with where it came from (file and line, or the
// running sweep) and its bytes as read or written.
type sweepRecord struct {
	*trainers.Record
	raw   []byte
	where string
}

// eps is the record's budget, +Inf for null.
func (r *sweepRecord) eps() float64 {
	if r.Epsilon == nil {
		return math.Inf(1)
	}
	return *r.Epsilon
}

// seeds are the record's run seeds (derived from seed and runs for records
// written before they were listed).
func (r *sweepRecord) seeds() []uint64 {
	if len(r.Seeds) > 0 {
		return r.Seeds
	}
	out := make([]uint64, r.Runs)
	for i := range out {
		out[i] = r.Seed + uint64(i)
	}
	return out
}

// cell names the record's table cell with its level and seeds.
func (r *sweepRecord) cell() string {
	return fmt.Sprintf("%s at ε=%s (%s, split %s, privacy %s, seeds %s)", r.Method, fmtEps(r.Epsilon), r.Dataset, r.Split, r.Privacy, seedText(r.seeds()))
}

// seedText is a list of seeds, a run of consecutive ones as "a–b".
func seedText(s []uint64) string {
	if len(s) == 0 {
		return "none"
	}
	consecutive := true
	for i := 1; i < len(s); i++ {
		consecutive = consecutive && s[i] == s[i-1]+1
	}
	if len(s) > 1 && consecutive {
		return fmt.Sprintf("%d–%d", s[0], s[len(s)-1])
	}
	t := make([]string, len(s))
	for i, v := range s {
		t[i] = fmt.Sprint(v)
	}
	return strings.Join(t, ",")
}

type cellKey struct {
	method string
	eps    float64
}

// recordSet holds the records of one table and refuses those that do not
// belong in it: another dataset (by name, or by fingerprint when both
// records carry one), another split, another private level, or a second
// record for a (method, ε) cell. A byte-identical copy of a record is
// counted once, with a warning.
type recordSet struct {
	list    []*sweepRecord
	cells   map[cellKey]*sweepRecord
	first   *sweepRecord // the dataset and split of the table
	printed *sweepRecord // the first with a dataset fingerprint
	private *sweepRecord // the first at a private level
	warn    io.Writer
}

func newRecordSet(warn io.Writer) *recordSet {
	return &recordSet{cells: map[cellKey]*sweepRecord{}, warn: warn}
}

// errIdentical marks a byte-identical repeat of a record in the set.
var errIdentical = errors.New("identical record")

// check reports whether r may join the set (errIdentical for a
// byte-identical repeat).
func (s *recordSet) check(r *sweepRecord) error {
	if f := s.first; f != nil {
		if r.Dataset != f.Dataset {
			return fmt.Errorf("%s is on dataset %s but %s is on %s: records of different datasets cannot share one table",
				r.where, r.Dataset, f.where, f.Dataset)
		}
		if r.Split != f.Split {
			return fmt.Errorf("%s has split %s but %s has %s: records of different splits cannot share one table",
				r.where, r.Split, f.where, f.Split)
		}
	}
	if f := s.printed; f != nil && r.DatasetFingerprint != "" && r.DatasetFingerprint != f.DatasetFingerprint {
		return fmt.Errorf("%s and %s are both on %s but on different data (dataset fingerprints %.12s… and %.12s…): records of different data cannot share one table",
			r.where, f.where, r.Dataset, r.DatasetFingerprint, f.DatasetFingerprint)
	}
	if f := s.private; f != nil && r.Privacy != string(methods.None) && r.Privacy != f.Privacy {
		return fmt.Errorf("%s is at %s level but %s at %s level: records of different privacy levels cannot share one table",
			r.where, r.Privacy, f.where, f.Privacy)
	}
	o, ok := s.cells[cellKey{r.Method, r.eps()}]
	if !ok {
		return nil
	}
	if r.raw != nil && bytes.Equal(r.raw, o.raw) {
		return errIdentical
	}
	if r.Privacy == o.Privacy && slices.Equal(r.seeds(), o.seeds()) {
		if r.raw == nil { // a cell a live sweep is about to run
			return fmt.Errorf("duplicate records for %s: %s holds it already and %s would write it again; use another --out or remove that record",
				r.cell(), o.where, r.where)
		}
		return fmt.Errorf("duplicate records for %s: %s and %s differ; keep one", r.cell(), o.where, r.where)
	}
	return fmt.Errorf("%s and %s both fill the cell %s at ε=%s, with different runs (privacy %s, seeds %s vs privacy %s, seeds %s); keep one",
		o.where, r.where, r.Method, fmtEps(r.Epsilon), o.Privacy, seedText(o.seeds()), r.Privacy, seedText(r.seeds()))
}

// add puts r into the set, or reports why it does not belong there; a
// byte-identical repeat is dropped with a warning (added is then false).
func (s *recordSet) add(r *sweepRecord) (added bool, err error) {
	if err := s.check(r); err != nil {
		if errors.Is(err, errIdentical) {
			o := s.cells[cellKey{r.Method, r.eps()}]
			fmt.Fprintf(s.warn, "dpgnn: warning: %s repeats %s byte for byte (%s at ε=%s); counted once\n", r.where, o.where, r.Method, fmtEps(r.Epsilon))
			return false, nil
		}
		return false, err
	}
	if s.first == nil {
		s.first = r
	}
	if s.printed == nil && r.DatasetFingerprint != "" {
		s.printed = r
	}
	if s.private == nil && r.Privacy != string(methods.None) {
		s.private = r
	}
	s.list = append(s.list, r)
	s.cells[cellKey{r.Method, r.eps()}] = r
	return true, nil
}

// readFile adds the records of a JSON-lines file (blank lines skipped);
// with missingOK a file that does not exist holds none.
func (s *recordSet) readFile(file string, missingOK bool) error {
	b, err := os.ReadFile(file)
	if err != nil {
		if missingOK && errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	for n, line := range bytes.Split(b, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		r := &trainers.Record{}
		if err := json.Unmarshal(line, r); err != nil {
			return fmt.Errorf("%s line %d: not a dpgnn JSON record: %v", file, n+1, err)
		}
		if _, ok := r.Metrics["test_acc"]; !ok || r.Method == "" {
			return fmt.Errorf("%s line %d: record has no method or test_acc", file, n+1)
		}
		if _, err := s.add(&sweepRecord{Record: r, raw: line, where: fmt.Sprintf("%s line %d", file, n+1)}); err != nil {
			return err
		}
	}
	return nil
}

// sweepFromRecords rebuilds a sweep's table from JSON records: columns are
// the budgets found (finite ones ascending, then ∞), rows the methods in
// order of first appearance; a run that read no private data fills every
// finite column it has no record for, as in a live sweep. Records that do
// not belong in one table are refused (recordSet).
func sweepFromRecords(w, stderr io.Writer, files []string, plotFile string) error {
	set := newRecordSet(stderr)
	for _, file := range files {
		if err := set.readFile(strings.TrimSpace(file), false); err != nil {
			return fmt.Errorf("--from %w", err)
		}
	}
	if len(set.list) == 0 {
		return fmt.Errorf("--from %s: no records", strings.Join(files, ","))
	}
	free := map[string]*trainers.Record{}
	var names []string
	seenEps := map[float64]bool{}
	for _, r := range set.list {
		if !slices.Contains(names, r.Method) {
			names = append(names, r.Method)
		}
		seenEps[r.eps()] = true
		if isFree(r.Record) {
			free[r.Method] = r.Record
		}
	}
	eps := slices.Sorted(maps.Keys(seenEps)) // +Inf sorts last
	epsText := make([]string, len(eps))
	for i, e := range eps {
		epsText[i] = "inf"
		if !math.IsInf(e, 1) {
			epsText[i] = fmtEps(&e)
		}
	}
	cells := map[string][]sweepCell{}
	for _, name := range names {
		cell := make([]sweepCell, len(eps))
		for i, e := range eps {
			if r, ok := set.cells[cellKey{name, e}]; ok {
				cell[i] = cellOf(r.Record)
			} else if f, ok := free[name]; ok && !math.IsInf(e, 1) {
				cell[i] = cellOf(f)
			}
		}
		cells[name] = cell
	}
	level := set.first.Privacy
	if set.private != nil {
		level = set.private.Privacy
	}
	return reportSweep(w, plotFile, fmt.Sprintf("%s, split %s, %s-level DP", set.first.Dataset, set.first.Split, level), epsText, names, cells)
}

// cellOf is a record's mean test accuracy and its 95% half-width.
func cellOf(r *trainers.Record) sweepCell {
	s := r.Metrics["test_acc"]
	return sweepCell{s.Mean, s.CI95, true}
}

// isFree reports a run that read no private data (privacy report ε = 0,
// e.g. the feature-only MLP at edge level): its result holds at every ε.
func isFree(r *trainers.Record) bool {
	p := r.PrivacyReport
	return p != nil && p.Epsilon != nil && *p.Epsilon == 0
}

// reportSweep prints the markdown table of a sweep and, with a plot file,
// draws it.
func reportSweep(w io.Writer, plotFile, title string, epsText, names []string, cells map[string][]sweepCell) error {
	fmt.Fprintf(w, "| method | %s |\n|---|%s\n", strings.Join(prefixAll("ε=", epsText), " | "), strings.Repeat("---|", len(epsText)))
	for _, name := range names {
		row := make([]string, len(epsText))
		for i := range row {
			row[i] = "–"
			if i < len(cells[name]) && cells[name][i].ok {
				c := cells[name][i]
				row[i] = fmt.Sprintf("%.3f ± %.3f", c.mean, c.ci)
			}
		}
		fmt.Fprintf(w, "| %s | %s |\n", name, strings.Join(row, " | "))
	}
	if plotFile == "" {
		return nil
	}
	return plotSweep(plotFile, title, epsText, names, cells)
}

func prefixAll(p string, xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = p + x
	}
	return out
}
