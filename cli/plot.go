package cli

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/dpgnn/dpgnn/graphs/io"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// sweepCell is one (method, ε) result of a sweep: mean test accuracy, its
// 95% bootstrap half-width and the number of runs behind it.
type sweepCell struct {
	mean, ci float64
	n        int
	ok       bool
}

// checkPlotFile refuses a --plot file whose format gonum/plot cannot write
// (checked before a sweep starts, not after hours of training).
func checkPlotFile(file string) error {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".png", ".svg", ".pdf":
		return nil
	}
	return fmt.Errorf("--plot %s: want a .png, .svg or .pdf file", file)
}

// epsAxis places budgets on a log-scale axis: x = log10 ε for a finite ε,
// and ∞ at the right end, half a decade (or a quarter of the finite span,
// if more) beyond the largest finite budget, past a dashed break line.
type epsAxis struct {
	lo, hi   float64 // log10 of the smallest and largest finite budget
	inf, brk float64 // x of ∞ and of the break; NaN without ∞
	finite   bool    // any finite budget
}

func newEpsAxis(eps []float64) epsAxis {
	a := epsAxis{lo: math.Inf(1), hi: math.Inf(-1), inf: math.NaN(), brk: math.NaN()}
	hasInf := false
	for _, e := range eps {
		if math.IsInf(e, 1) {
			hasInf = true
			continue
		}
		a.finite = true
		a.lo, a.hi = min(a.lo, math.Log10(e)), max(a.hi, math.Log10(e))
	}
	if !a.finite {
		a.lo, a.hi = 0, 0
	}
	if hasInf {
		gap := max(0.5, 0.25*(a.hi-a.lo))
		if !a.finite {
			gap = 0
		}
		a.inf, a.brk = a.hi+gap, a.hi+gap/2
	}
	return a
}

func (a epsAxis) x(e float64) float64 {
	if math.IsInf(e, 1) {
		return a.inf
	}
	return math.Log10(e)
}

// ticks are the budgets' labels at their places and unlabelled ticks at
// the decades between.
func (a epsAxis) ticks(eps []float64) plot.ConstantTicks {
	var t plot.ConstantTicks
	for d := math.Ceil(a.lo); d <= a.hi; d++ {
		t = append(t, plot.Tick{Value: d})
	}
	for _, e := range eps {
		label := "∞"
		if !math.IsInf(e, 1) {
			label = epsLabel(e)
		}
		t = append(t, plot.Tick{Value: a.x(e), Label: label})
	}
	return t
}

// plotSweep draws mean test accuracy against the budgets of a sweep's
// table, one line per method with 95% error bars (a cell of one run has
// none), on a log-scale ε axis with ∞ at the right end past a break, the
// legend to the right of the data, and writes it to file (PNG, SVG or PDF
// by extension), atomically.
func plotSweep(file, title string, t *sweepTable) error {
	if err := checkPlotFile(file); err != nil {
		return err
	}
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = "test accuracy (mean, 95% CI)"
	p.X.Label.Text = "privacy budget ε (log scale)"
	ax := newEpsAxis(t.eps)
	p.X.Tick.Marker = ax.ticks(t.eps)
	right := ax.hi
	if !math.IsNaN(ax.inf) {
		right = ax.inf
	}
	pad := max(0.15, 0.08*(right-ax.lo))
	p.X.Min, p.X.Max = ax.lo-pad, right+pad
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for k, name := range t.names {
		var pts plotter.XYs
		var errs plotter.YErrors
		for i, c := range t.cells[name] {
			if !c.ok {
				continue
			}
			ci := c.ci
			if c.n < 2 || math.IsNaN(ci) {
				ci = 0
			}
			pts = append(pts, plotter.XY{X: ax.x(t.eps[i]), Y: c.mean})
			errs = append(errs, struct{ Low, High float64 }{ci, ci})
			ymin, ymax = min(ymin, c.mean-ci), max(ymax, c.mean+ci)
		}
		if len(pts) == 0 {
			continue
		}
		line, marks, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		line.Color, marks.Color, marks.Shape = plotutil.Color(k), plotutil.Color(k), plotutil.Shape(k)
		line.Dashes = plotutil.Dashes(k)
		bars, err := plotter.NewYErrorBars(struct {
			plotter.XYs
			plotter.YErrors
		}{pts, errs})
		if err != nil {
			return err
		}
		bars.Color = plotutil.Color(k)
		p.Add(line, marks, bars)
		legend.Add(name, line, marks)
	}
	if math.IsInf(ymin, 1) {
		ymin, ymax = 0, 1
	}
	span := max(ymax-ymin, 0.02)
	p.Y.Min, p.Y.Max = max(0, ymin-0.1*span), min(1, ymax+0.1*span)
	if !math.IsNaN(ax.brk) && ax.finite {
		brk, err := plotter.NewLine(plotter.XYs{{X: ax.brk, Y: p.Y.Min}, {X: ax.brk, Y: p.Y.Max}})
		if err != nil {
			return err
		}
		brk.Color, brk.Dashes = color.Gray{Y: 160}, []vg.Length{vg.Points(3), vg.Points(3)}
		p.Add(brk)
	}
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(file)), ".")
	// The legend sits in a strip to the right of the plot, off the data.
	legendW := vg.Length(0)
	for _, name := range t.names {
		legendW = max(legendW, legend.TextStyle.Width(name))
	}
	legendW += legend.ThumbnailWidth + 3*vg.Millimeter
	w, h := 6*vg.Inch+legendW, 4*vg.Inch
	c, err := draw.NewFormattedCanvas(w, h, format)
	if err != nil {
		return err
	}
	dc := draw.New(c)
	p.Draw(draw.Crop(dc, 0, -legendW, 0, 0))
	lc := draw.Crop(dc, w-legendW+vg.Millimeter, 0, 0, -vg.Inch/4)
	legend.Draw(lc)
	// Written atomically: a failure leaves no partial file behind.
	return graphio.WriteFileAtomic(file, func(w io.Writer) error { _, err := c.WriteTo(w); return err })
}
