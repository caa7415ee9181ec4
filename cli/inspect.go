package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os/exec"
	"strings"
	"text/tabwriter"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/gen"
	graphio "github.com/dpgnn/dpgnn/graphs/io"
	"github.com/dpgnn/dpgnn/methods"
	mrun "github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/nn"
	"github.com/dpgnn/dpgnn/trainers"
	"github.com/spf13/cobra"
)

// inspectFlags are the options of `inspect METHOD` besides the data flags.
type inspectFlags struct {
	dataFlags
	format, out string
	gradCheck   bool
	tolerance   float64
	step        float64
	entries     int
}

func newInspectCmd(stdout io.Writer) *cobra.Command {
	inspect := &cobra.Command{
		Use:   "inspect METHOD [flags]",
		Short: "Show a method's expression graph (text, DOT, SVG) or check its gradients",
		Long: `Build a method's model without training it and show its expression graph:
the forward nodes, the gradient nodes that symbolic differentiation adds, and
the privacy (DP) nodes — noise, per-sample norms, clip factors, clipped sums,
objective-perturbation terms — marked as such, with shapes and op names.

  dpgnn inspect gcn                                 text listing, one node a line
  dpgnn inspect mlp --privacy node --epsilon 1 --delta 1e-5
                                                    the DP-SGD graph (its noise is calibrated
                                                    at the run's ε and δ, so node level needs
                                                    --delta as train does)
  dpgnn inspect gcn --format dot --out gcn.dot      Graphviz DOT
  dpgnn inspect gcn --format svg --out gcn.svg      SVG (needs Graphviz's dot)
  dpgnn inspect mlp --grad-check                    symbolic vs numeric gradients

Methods: ` + strings.Join(methods.Names(), ", ") + `. Run 'dpgnn inspect METHOD --help'
for a method's hyperparameters (the same as for train).`,
		Args: methodArg("inspect"),
		RunE: func(cmd *cobra.Command, args []string) error { return nil },
	}
	for _, name := range methods.Names() {
		inspect.AddCommand(newInspectMethodCmd(name, stdout))
	}
	return inspect
}

func newInspectMethodCmd(name string, stdout io.Writer) *cobra.Command {
	m, _ := methods.New(name)
	var c inspectFlags
	cmd := &cobra.Command{
		Use:   name + " [flags]",
		Short: "Inspect " + name + ": " + m.Short(),
		Long: "Show the expression graph of " + name + " (" + m.Short() + ").\nPrivacy levels: " + levelList(m) + `.

--grad-check builds the non-private model on a small generated graph (a
40-node contextual SBM with 3 classes; for an edge-sign method its edges
within a class are positive and the others negative), once with dense and
once with sparse features, and compares every parameter's symbolic gradient with
fourth-order central finite differences; it exits non-zero when the worst
relative error exceeds --tolerance. An entry that disagrees (its stencil may
straddle a kink of SELU, ReLU or a norm) is checked again with its value
moved by 10h, and the better of the two counts; the table says how many
entries were confirmed after a move.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if c.gradCheck {
				return runGradCheck(stdout, m, c.seed, gradCheckOptions{Tol: c.tolerance, Step: c.step, Entries: c.entries})
			}
			switch c.format {
			case "text", "dot", "svg":
			default:
				return fmt.Errorf("--format must be text, dot or svg, got %q", c.format)
			}
			if c.format == "svg" {
				if _, err := exec.LookPath("dot"); err != nil {
					return errNoDot
				}
			}
			opts, err := c.options()
			if err != nil {
				return err
			}
			ctx, err := mrun.NewContext(m, opts)
			if err != nil {
				return err
			}
			model, err := mrun.BuildModel(m, ctx)
			if err != nil {
				return err
			}
			if c.out == "" {
				return writeGraph(stdout, c.format, graphTitle(m, ctx), model.View())
			}
			// Written atomically: a failing dot leaves no empty file behind.
			if err := graphio.WriteFileAtomic(c.out, func(w io.Writer) error {
				return writeGraph(w, c.format, graphTitle(m, ctx), model.View())
			}); err != nil {
				return fmt.Errorf("--out %s: %w", c.out, err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	c.dataFlags.bind(f)
	f.StringVar(&c.format, "format", "text", "text (one node a line), dot (Graphviz) or svg (rendered with Graphviz's dot)")
	f.StringVar(&c.out, "out", "", "write to FILE instead of standard output")
	f.BoolVar(&c.gradCheck, "grad-check", false, "compare symbolic gradients with finite differences on a small generated graph")
	f.Float64Var(&c.tolerance, "tolerance", 1e-6, "--grad-check: largest relative error accepted")
	f.Float64Var(&c.step, "grad-step", 1e-4, "--grad-check: finite-difference step h")
	f.IntVar(&c.entries, "grad-entries", 0, "--grad-check: entries checked per parameter, spread evenly (0: all)")
	methods.BindConfig(f, m.Config())
	return cmd
}

// levelList is the method's privacy levels, comma-separated.
func levelList(m methods.Method) string {
	levels := make([]string, len(m.Levels()))
	for i, l := range m.Levels() {
		levels[i] = string(l)
	}
	return strings.Join(levels, ", ")
}

// graphTitle names what is shown: method, dataset, privacy.
func graphTitle(m methods.Method, ctx *methods.Context) string {
	t := fmt.Sprintf("%s on %s (%d nodes), privacy %s", m.Name(), ctx.Dataset, ctx.Graph.N, ctx.Level)
	if ctx.Level != methods.None {
		t += fmt.Sprintf(" ε=%s", fmtEps(dp.EpsilonJSON(ctx.Epsilon)))
		if ctx.Delta > 0 {
			t += fmt.Sprintf(" δ=%g", ctx.Delta)
		}
	}
	return t
}

var errNoDot = errors.New("--format svg needs Graphviz's dot program, which is not on PATH: install Graphviz (apt-get install graphviz; brew install graphviz on macOS), or write --format dot and render it elsewhere with dot -Tsvg")

// writeGraph writes a graph view as text, DOT, or SVG rendered by dot.
func writeGraph(w io.Writer, format, title string, v *nn.GraphView) error {
	switch format {
	case "text":
		if _, err := fmt.Fprintf(w, "# %s\n", title); err != nil {
			return err
		}
		return v.WriteText(w)
	case "dot":
		return v.WriteDOT(w, title)
	case "svg":
		path, err := exec.LookPath("dot")
		if err != nil {
			return errNoDot
		}
		var src, stderr bytes.Buffer
		if err := v.WriteDOT(&src, title); err != nil {
			return err
		}
		run := exec.Command(path, "-Tsvg")
		run.Stdin, run.Stdout, run.Stderr = &src, w, &stderr
		if err := run.Run(); err != nil {
			return fmt.Errorf("rendering SVG with %s: %w: %s", path, err, strings.TrimSpace(stderr.String()))
		}
		return nil
	}
	return fmt.Errorf("--format must be text, dot or svg, got %q", format)
}

// gradCheckOptions configure a gradient check.
type gradCheckOptions struct {
	Tol     float64 // largest relative error accepted
	Step    float64 // finite-difference step h
	Entries int     // entries per parameter (0: all)
}

// gradCheckGraph is the small graph --grad-check builds models on: a
// 40-node CSBM with 3 classes and 8 features, of which the entries below
// 0.5 in magnitude are zeroed so that the sparse copy is sparse, split
// 50/25/25. With sparse set, the features are stored as CSR.
func gradCheckGraph(seed uint64, sparse bool) (*graphs.Graph, error) {
	g := gen.CSBM(gen.CSBMConfig{Nodes: 40, Classes: 3, Features: 8, AvgDegree: 4, Homophily: 0.8, Signal: 1}, seed)
	x := g.X.Dense
	for i, v := range x {
		if math.Abs(v) < 0.5 {
			x[i] = 0
		}
	}
	if sparse {
		var rows, cols []int
		var vals []float64
		for i := 0; i < g.N; i++ {
			for j := 0; j < g.X.F; j++ {
				if v := x[i*g.X.F+j]; v != 0 {
					rows, cols, vals = append(rows, i), append(cols, j), append(vals, v)
				}
			}
		}
		g.X = &graphs.Features{N: g.N, F: g.X.F, Sparse: graphs.FromCOO(g.N, g.X.F, rows, cols, vals)}
	}
	spec, err := graphs.ParseSplit("ratio:0.5:0.25")
	if err != nil {
		return nil, err
	}
	return graphs.ApplySplit(g, spec, seed)
}

// signGradCheckGraph makes g signed for an edge-sign method's gradient
// check: an edge between nodes of one class is positive, any other edge
// negative.
func signGradCheckGraph(g *graphs.Graph) {
	var ps, pd, ns, nd []int
	for u := 0; u < g.N; u++ {
		for _, v := range g.Adj.Indices[g.Adj.Indptr[u]:g.Adj.Indptr[u+1]] {
			if g.Labels[u] == g.Labels[v] {
				ps, pd = append(ps, u), append(pd, v)
			} else {
				ns, nd = append(ns, u), append(nd, v)
			}
		}
	}
	g.Adj, g.Neg = graphs.FromCOO(g.N, g.N, ps, pd, nil), graphs.FromCOO(g.N, g.N, ns, nd, nil)
}

// runGradCheck checks m's non-private model with dense and with sparse
// features and fails when any parameter's relative error exceeds o.Tol.
func runGradCheck(w io.Writer, m methods.Method, seed uint64, o gradCheckOptions) error {
	if !(o.Tol > 0) || !(o.Step > 0) || o.Entries < 0 {
		return fmt.Errorf("--tolerance and --grad-step must be positive and --grad-entries non-negative")
	}
	if err := m.Validate(); err != nil {
		return err
	}
	fmt.Fprintf(w, "# gradient check of %s (non-private model) on a generated 40-node csbm graph: fourth-order central differences, h=%g, tolerance %g\n",
		m.Name(), o.Step, o.Tol)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "features\tparameter\tentries\tmax rel err\tmax abs err\t")
	var failed []string
	for _, variant := range []string{"dense", "sparse"} {
		g, err := gradCheckGraph(seed, variant == "sparse")
		if err != nil {
			return err
		}
		if _, ok := mrun.TaskOf(m).(mrun.SignedLink); ok {
			signGradCheckGraph(g)
		}
		ctx := methods.NewContext(methods.Context{Graph: g, Dataset: "csbm-40", Level: methods.None, Epsilon: math.Inf(1),
			Seed: seed, Recorder: trainers.Nop{}})
		model, err := mrun.BuildModel(m, ctx)
		if err != nil {
			return err
		}
		bad, err := gradCheckReport(tw, variant, model, o)
		if err != nil {
			return fmt.Errorf("gradient check with %s features: %w", variant, err)
		}
		failed = append(failed, bad...)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(failed) > 0 {
		return fmt.Errorf("gradient check of %s failed: relative error above %g for %s", m.Name(), o.Tol, strings.Join(failed, "; "))
	}
	fmt.Fprintf(w, "ok: every parameter within tolerance %g\n", o.Tol)
	return nil
}

// gradCheckReport runs model.GradCheck and writes one tab-separated line
// per parameter: the variant, the parameter, the entries compared, the
// worst relative and absolute errors, and ok or FAIL (relative error above
// o.Tol), with the entries confirmed only after a move (a kink, or rounding)
// (nn.GradCheck). It returns the failing parameters, each described with its error.
func gradCheckReport(w io.Writer, variant string, model *nn.Model, o gradCheckOptions) ([]string, error) {
	res, err := model.GradCheck(o.Step, o.Entries)
	if err != nil {
		return nil, err
	}
	var failed []string
	for _, r := range res {
		verdict := "ok"
		if !(r.MaxRel <= o.Tol) {
			verdict = "FAIL"
			failed = append(failed, fmt.Sprintf("%s (%s): %.3g at entry %d", r.Param, variant, r.MaxRel, r.WorstIdx))
		}
		if r.Moved > 0 {
			verdict += fmt.Sprintf(" (%d confirmed after a move)", r.Moved)
		}
		if _, err := fmt.Fprintf(w, "%s\t%s\t%d\t%.3g\t%.3g\t%s\n", variant, r.Param, r.Checked, r.MaxRel, r.MaxAbs, verdict); err != nil {
			return nil, err
		}
	}
	return failed, nil
}
