package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strings"

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
seeds, write one JSON record per (method, ε) (the record of 'train --json') to
--out, and print a markdown table of mean test accuracy ± 95% bootstrap
half-width (and with --plot, draw it). A method that does not support the privacy level runs once,
non-private, in the ∞ column (e.g. gcn as the upper baseline); at edge level
the feature-only mlp costs ε = 0: it runs once and fills every finite ε.

With --from FILE[,FILE...] it trains nothing and redraws the table (and the
plot) from records written earlier with --out or 'train --json'.

Method hyperparameters: --set METHOD:FLAGS, e.g. --set 'progap:--hops 1 --lr 0.05'
(repeatable).`,
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
				return sweepFromRecords(stdout, strings.Split(from, ","), plotFile)
			}
			opts, err := d.options()
			if err != nil {
				return err
			}
			if opts.Level == methods.None {
				return fmt.Errorf("sweep needs --privacy edge or node (the budgets are the columns)")
			}
			var eps []float64
			var epsText []string
			for _, e := range strings.Split(epsList, ",") {
				v, err := parseEpsilon(strings.TrimSpace(e))
				if err != nil {
					return err
				}
				eps, epsText = append(eps, v), append(epsText, strings.TrimSpace(e))
			}
			names := strings.Split(methodList, ",")
			for i := range names {
				names[i] = strings.TrimSpace(names[i])
			}
			extra := map[string][]string{}
			for _, s := range sets {
				name, flags, ok := strings.Cut(s, ":")
				if !ok {
					return fmt.Errorf("--set %q: want METHOD:FLAGS", s)
				}
				extra[name] = append(extra[name], strings.Fields(flags)...)
			}
			var w io.Writer = io.Discard
			if out != "" {
				f, err := os.Create(out)
				if err != nil {
					return fmt.Errorf("--out: %w", err)
				}
				defer f.Close()
				w = f
			}
			enc := json.NewEncoder(w)
			var rec trainers.Recorder = trainers.Nop{}
			if f, ok := stderr.(*os.File); ok {
				rec = trainers.NewBar(f)
			}
			cells := map[string][]sweepCell{}
			for _, name := range names {
				cell := make([]sweepCell, len(eps))
				var free *trainers.Record // a run that read no private data (ε = 0)
				for i, e := range eps {
					if free != nil && !math.IsInf(e, 1) {
						// Same seeds, same model: the result does not depend on ε.
						cell[i] = cellOf(free)
						continue
					}
					m, err := methods.New(name)
					if err != nil {
						return err
					}
					fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
					m.BindFlags(fs)
					if err := fs.Parse(extra[name]); err != nil {
						return fmt.Errorf("--set %s: %w", name, err)
					}
					o := opts
					o.Epsilon, o.Runs, o.Recorder, o.Flags = e, runs, rec, fs
					if !methods.Supports(m, o.Level) {
						if !math.IsInf(e, 1) {
							continue
						}
						o.Level = methods.None
					}
					r, err := methods.Train(m, o)
					if err != nil {
						return fmt.Errorf("%s at ε=%s: %w", name, epsText[i], err)
					}
					if err := enc.Encode(r); err != nil {
						return err
					}
					cell[i] = cellOf(r)
					if isFree(r) && !math.IsInf(e, 1) {
						free = r
					}
				}
				cells[name] = cell
			}
			ds := opts.Dataset
			if ds == "" {
				ds = "csbm"
			}
			title := fmt.Sprintf("%s, %s-level DP, %d runs", ds, opts.Level, runs)
			return reportSweep(stdout, plotFile, title, epsText, names, cells)
		},
	}
	d.bind(cmd.Flags())
	f := cmd.Flags()
	f.StringVar(&methodList, "methods", "mlp,gap,progap", "comma-separated methods")
	f.StringVar(&epsList, "epsilons", "1,8,inf", "comma-separated budgets (inf allowed)")
	f.IntVar(&runs, "runs", 5, "runs per (method, ε) with seeds seed, seed+1, ...")
	f.StringVar(&out, "out", "", "write one JSON record per (method, ε) to FILE (JSON lines)")
	f.StringVar(&from, "from", "", "train nothing: tabulate (and with --plot draw) the JSON records of earlier sweeps or 'train --json' runs, FILE[,FILE...]")
	f.StringVar(&plotFile, "plot", "", "draw test accuracy against ε, one line per method with 95% error bars, to FILE (.png, .svg or .pdf)")
	f.StringArrayVar(&sets, "set", nil, "method hyperparameters, METHOD:FLAGS (repeatable)")
	return cmd
}

// sweepFromRecords rebuilds a sweep's table from JSON records: columns are
// the budgets found (finite ones ascending, then ∞), rows the methods in
// order of first appearance; a run that read no private data fills every
// finite column it has no record for, as in a live sweep.
func sweepFromRecords(w io.Writer, files []string, plotFile string) error {
	type key struct {
		method string
		eps    float64
	}
	got := map[key]*trainers.Record{}
	free := map[string]*trainers.Record{}
	var names []string
	seenEps := map[float64]bool{}
	var ds, level, split string
	for _, file := range files {
		b, err := os.ReadFile(strings.TrimSpace(file))
		if err != nil {
			return fmt.Errorf("--from: %w", err)
		}
		for n, line := range strings.Split(string(b), "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			r := &trainers.Record{}
			if err := json.Unmarshal([]byte(line), r); err != nil {
				return fmt.Errorf("--from %s line %d: not a dpgnn JSON record: %v", file, n+1, err)
			}
			if _, ok := r.Metrics["test_acc"]; !ok || r.Method == "" {
				return fmt.Errorf("--from %s line %d: record has no method or test_acc", file, n+1)
			}
			e := math.Inf(1)
			if r.Epsilon != nil {
				e = *r.Epsilon
			}
			if !slices.Contains(names, r.Method) {
				names = append(names, r.Method)
			}
			got[key{r.Method, e}] = r
			seenEps[e] = true
			if isFree(r) {
				free[r.Method] = r
			}
			if ds == "" {
				ds, level, split = r.Dataset, r.Privacy, r.Split
			}
		}
	}
	if len(got) == 0 {
		return fmt.Errorf("--from %s: no records", strings.Join(files, ","))
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
			if r, ok := got[key{name, e}]; ok {
				cell[i] = cellOf(r)
			} else if f, ok := free[name]; ok && !math.IsInf(e, 1) {
				cell[i] = cellOf(f)
			}
		}
		cells[name] = cell
	}
	return reportSweep(w, plotFile, fmt.Sprintf("%s, split %s, %s-level DP", ds, split, level), epsText, names, cells)
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
		for i, c := range cells[name] {
			row[i] = "–"
			if c.ok {
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
