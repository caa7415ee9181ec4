package main

import (
	"fmt"
	"github.com/dpgnn/dpgnn/graphs"
	"io"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// sweepCell is one (method, ε) result of a sweep: mean test accuracy and
// its 95% bootstrap half-width.
type sweepCell struct {
	mean, ci float64
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

// plotSweep draws mean test accuracy against the budgets, one line with
// 95% error bars per method, the budgets as equally spaced categories in
// the order given (so ∞ sits at the right), and writes it to file (PNG,
// SVG or PDF by extension).
func plotSweep(file, title string, epsText, names []string, cells map[string][]sweepCell) error {
	if err := checkPlotFile(file); err != nil {
		return err
	}
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = "test accuracy (mean, 95% CI)"
	p.X.Label.Text = "privacy budget"
	labels := make([]string, len(epsText))
	for i, e := range epsText {
		labels[i] = "ε=" + e
		if e == "inf" {
			labels[i] = "ε=∞"
		}
	}
	p.NominalX(labels...)
	p.X.Min, p.X.Max = -0.5, float64(len(epsText))-0.5
	p.Legend.Top = true
	p.Legend.Left = true
	for k, name := range names {
		var pts plotter.XYs
		var errs plotter.YErrors
		for i, c := range cells[name] {
			if c.ok {
				pts = append(pts, plotter.XY{X: float64(i), Y: c.mean})
				errs = append(errs, struct{ Low, High float64 }{c.ci, c.ci})
			}
		}
		if len(pts) == 0 {
			continue
		}
		line, marks, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		line.Color, marks.Color, marks.Shape = plotutil.Color(k), plotutil.Color(k), plotutil.Shape(k)
		bars, err := plotter.NewYErrorBars(struct {
			plotter.XYs
			plotter.YErrors
		}{pts, errs})
		if err != nil {
			return err
		}
		bars.Color = plotutil.Color(k)
		p.Add(line, marks, bars)
		p.Legend.Add(name, line, marks)
	}
	// room above and below the error bars (and for the legend)
	span := p.Y.Max - p.Y.Min
	p.Y.Min, p.Y.Max = max(0, p.Y.Min-0.05*span), min(1, p.Y.Max+0.25*span)
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(file)), ".")
	wt, err := p.WriterTo(6*vg.Inch, 4*vg.Inch, format)
	if err != nil {
		return fmt.Errorf("--plot: %w", err)
	}
	// Written atomically: a failure leaves no partial file behind.
	if err := graphs.WriteFileAtomic(file, func(w io.Writer) error { _, err := wt.WriteTo(w); return err }); err != nil {
		return fmt.Errorf("--plot %s: %w", file, err)
	}
	return nil
}
