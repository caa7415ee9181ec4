package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
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
	var methodList, epsList, out, plotFile string
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

Method hyperparameters: --set METHOD:FLAGS, e.g. --set 'progap:--hops 1 --lr 0.05'
(repeatable).`,
		Example: `  dpgnn sweep --methods mlp,gap,progap,gcn --epsilons 1,8,inf --privacy edge \
      --dataset cora --data-dir ../shared/datasets --split ratio:0.1:0.2 --runs 5 --out cora.jsonl --plot cora.png`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
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
			if plotFile != "" {
				if err := checkPlotFile(plotFile); err != nil {
					return err
				}
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
			table := map[string][]string{}
			cells := map[string][]sweepCell{}
			for _, name := range names {
				row := make([]string, len(eps))
				cell := make([]sweepCell, len(eps))
				for i := range row {
					row[i] = "–"
				}
				var free *trainers.Record // a run that read no private data (ε = 0)
				for i, e := range eps {
					if free != nil && !math.IsInf(e, 1) {
						// Same seeds, same model: the result does not depend on ε.
						s := free.Metrics["test_acc"]
						row[i] = fmt.Sprintf("%.3f ± %.3f", s.Mean, s.CI95)
						cell[i] = sweepCell{s.Mean, s.CI95, true}
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
					s := r.Metrics["test_acc"]
					row[i] = fmt.Sprintf("%.3f ± %.3f", s.Mean, s.CI95)
					cell[i] = sweepCell{s.Mean, s.CI95, true}
					if p := r.PrivacyReport; p != nil && p.Epsilon != nil && *p.Epsilon == 0 && !math.IsInf(e, 1) {
						free = r
					}
				}
				table[name], cells[name] = row, cell
			}
			fmt.Fprintf(stdout, "| method | %s |\n|---|%s\n", strings.Join(prefixAll("ε=", epsText), " | "), strings.Repeat("---|", len(eps)))
			for _, name := range names {
				fmt.Fprintf(stdout, "| %s | %s |\n", name, strings.Join(table[name], " | "))
			}
			if plotFile != "" {
				ds := opts.Dataset
				if ds == "" {
					ds = "csbm"
				}
				title := fmt.Sprintf("%s, %s-level DP, %d runs", ds, opts.Level, runs)
				return plotSweep(plotFile, title, epsText, names, cells)
			}
			return nil
		},
	}
	d.bind(cmd.Flags())
	f := cmd.Flags()
	f.StringVar(&methodList, "methods", "mlp,gap,progap", "comma-separated methods")
	f.StringVar(&epsList, "epsilons", "1,8,inf", "comma-separated budgets (inf allowed)")
	f.IntVar(&runs, "runs", 5, "runs per (method, ε) with seeds seed, seed+1, ...")
	f.StringVar(&out, "out", "", "write one JSON record per (method, ε) to FILE (JSON lines)")
	f.StringVar(&plotFile, "plot", "", "draw test accuracy against ε, one line per method with 95% error bars, to FILE (.png, .svg or .pdf)")
	f.StringArrayVar(&sets, "set", nil, "method hyperparameters, METHOD:FLAGS (repeatable)")
	return cmd
}

func prefixAll(p string, xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = p + x
	}
	return out
}
