package nn

import (
	"errors"
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// PerSampleCheck says what Model.CheckPerSample runs: the recorded path's
// per-row loss, its row groups and how to load a batch of examples, as
// DP-SGD runs it (dp/dpnn's SGD.Step takes the same fill function).
type PerSampleCheck struct {
	// Loss is the vector of per-row losses of the recorded path (R rows,
	// 0 on padding rows): dpnn.BuildSGD's perRowLoss.
	Loss *G.Node
	// Groups is the row groups Fill sets (len(Groups.Of) = R).
	Groups *RowGroups
	// Fill loads the rows of the given examples into the batch inputs (the
	// k-th example of the list gets group k, Groups.Samples = len(list)),
	// makes the loss count only their rows, and zeroes or pads the rest.
	Fill func(examples []int) error
	// Examples are the ids of the examples to check, in one batch of at
	// most the path's capacity; each is then also run alone.
	Examples []int
	// Tol is the largest relative error accepted (0: 1e-6). Errors are
	// relative to the larger of the two values compared, or to 10⁻⁶ of the
	// largest value over the examples for that parameter, whichever is
	// larger (a gradient that is zero for one example is compared on its
	// parameter's scale).
	Tol float64
}

// PerSampleResult is the worst disagreement found for one parameter.
type PerSampleResult struct {
	Param, Rule string
	// NormErr is the worst relative error of the rule's squared norm,
	// GradErr that of its per-example gradient (max over entries,
	// relative to the larger max-norm), over the examples checked.
	NormErr, GradErr float64
	// Worst is the example id where the larger of the two was found.
	Worst int
}

// CheckPerSample tests every per-sample rule recorded on m's recorded path
// against per-example gradients computed one example at a time, the way a
// researcher checks a new layer or a custom op before training it with
// DP-SGD. It needs no compiled model; it adds its own nodes to m's graph
// and runs them in evaluation mode (dropout off), so run it on a model
// built for the check, with the same layers as the real one.
//
// Two computations are compared, for each example e of c.Examples:
//   - the rules, as DP-SGD evaluates them: all of c.Examples are loaded in
//     one batch (c.Fill), δ = ∂(Σ_r ℓ_r)/∂y is taken at every recorded
//     output, each rule's NormSq gives ‖g_e‖², and its ClippedSum with
//     clip factor 1 for e and 0 for the other examples gives g_e;
//   - the reference: e is loaded alone (c.Fill([e])) and the gradient of
//     its loss with respect to every parameter is taken by ordinary
//     symbolic differentiation of the whole path.
//
// They agree when the rule is right and the path keeps examples apart; a
// wrong rule, a rule that ignores the row groups, or an op that joins rows
// of different examples (an adjacency across examples, a batch statistic)
// makes them differ. The error names every parameter that disagrees, its
// rule, the worst example and both values. It refuses, as DP-SGD does, a
// path that mixes samples (BatchNorm) and a parameter with no rule or two.
// The results list every parameter's worst errors, also when the check
// passes.
func (m *Model) CheckPerSample(c PerSampleCheck) ([]PerSampleResult, error) {
	if c.Loss == nil || c.Groups == nil || c.Fill == nil {
		return nil, errors.New("nn: per-sample check needs the per-row loss, the row groups and a fill function")
	}
	if len(c.Examples) == 0 {
		return nil, errors.New("nn: per-sample check needs at least one example")
	}
	if c.Tol == 0 {
		c.Tol = 1e-6
	}
	if !(c.Tol > 0) || math.IsInf(c.Tol, 1) {
		return nil, fmt.Errorf("nn: per-sample check tolerance %g, want a positive finite number", c.Tol)
	}
	s := c.Loss.Shape()
	if len(s) != 1 {
		return nil, fmt.Errorf("nn: per-sample check wants a vector of per-row losses, got shape %v", s)
	}
	rows := s[0]
	if len(c.Groups.Of) != rows {
		return nil, fmt.Errorf("nn: per-sample check: %d row groups for %d loss rows", len(c.Groups.Of), rows)
	}
	if mix := m.MixesSamples(); len(mix) > 0 {
		return nil, fmt.Errorf("nn: per-sample check: the recorded path has %v, which mixes samples in a batch", mix)
	}
	byParam, err := m.PerSampleRules(rows)
	if err != nil {
		return nil, fmt.Errorf("nn: per-sample check: %w", err)
	}
	np := len(m.Params)
	var (
		norms, ruleGrads, refGrads []*G.Node
		pick                       *G.Node // 1 on the rows of the example read, 0 elsewhere
		pickVal                    = tensor.New(tensor.WithShape(rows), tensor.WithBacking(make([]float64, rows)))
	)
	err = Build(func() error {
		sum := G.Must(SumAll(c.Loss))
		var probes G.Nodes
		seen := map[*G.Node]bool{}
		for _, p := range m.Params {
			if pr := byParam[p].Probe; !seen[pr] {
				seen[pr] = true
				probes = append(probes, pr)
			}
		}
		grads, err := m.Grad(sum, append(append(G.Nodes{}, probes...), m.Learnables()...)...)
		if err != nil {
			return err
		}
		delta := map[*G.Node]*G.Node{}
		for i, pr := range probes {
			delta[pr] = grads[i]
		}
		refGrads = grads[len(probes):]
		pick = G.NewVector(m.G, tensor.Float64, G.WithShape(rows), G.WithName("check.example-rows"), G.WithValue(pickVal))
		for _, p := range m.Params {
			r := byParam[p]
			d := delta[r.Probe]
			n, err := r.Rule.NormSq(d, c.Groups, p.Name)
			if err != nil {
				return fmt.Errorf("parameter %s (%s): %w", p.Name, r.Rule, err)
			}
			g, err := r.Rule.ClippedSum(ScaleRows(d, pick))
			if err != nil {
				return fmt.Errorf("parameter %s (%s): %w", p.Name, r.Rule, err)
			}
			if got := g.Shape().TotalSize(); got != p.Size() {
				return fmt.Errorf("parameter %s (%s): the rule's gradient has %d entries, the parameter %d", p.Name, r.Rule, got, p.Size())
			}
			norms, ruleGrads = append(norms, n), append(ruleGrads, g)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("nn: per-sample check: %w", err)
	}
	batchRoots := append(append(G.Nodes{}, norms...), ruleGrads...)
	batchVM, err := newMachine(m.G.SubgraphRoots(batchRoots...), batchRoots)
	if err != nil {
		return nil, fmt.Errorf("nn: per-sample check: %w", err)
	}
	aloneVM, err := newMachine(m.G.SubgraphRoots(refGrads...), refGrads)
	if err != nil {
		return nil, fmt.Errorf("nn: per-sample check: %w", err)
	}
	fill := func(ex []int) error {
		if err := c.Fill(ex); err != nil {
			return err
		}
		if c.Groups.Samples != len(ex) || len(c.Groups.Of) != rows {
			return fmt.Errorf("fill set %d examples over %d rows for a batch of %d examples over %d rows", c.Groups.Samples, len(c.Groups.Of), len(ex), rows)
		}
		m.SetTraining(false) // after the fill: a refilled sparse input is picked up at the switch
		return nil
	}

	// The rules, every example of one batch.
	ne := len(c.Examples)
	ruleNorm := make([][]float64, np) // [param][example]
	ruleGrad := make([][][]float64, np)
	for i := range ruleNorm {
		ruleNorm[i] = make([]float64, ne)
		ruleGrad[i] = make([][]float64, ne)
	}
	if err := fill(c.Examples); err != nil {
		return nil, fmt.Errorf("nn: per-sample check: batch of %d examples: %w", ne, err)
	}
	pk := pickVal.Float64s()
	for k := range ne {
		in := false
		for r, g := range c.Groups.Of {
			if g == k {
				pk[r], in = 1, true
			} else {
				pk[r] = 0
			}
		}
		if !in {
			return nil, fmt.Errorf("nn: per-sample check: example %d (batch position %d) has no rows", c.Examples[k], k)
		}
		if err := batchVM.Run(); err != nil {
			return nil, fmt.Errorf("nn: per-sample check: %w", err)
		}
		for i := range np {
			v := Values(norms[i])
			if len(v) <= k {
				return nil, fmt.Errorf("nn: per-sample check: parameter %s (%s): NormSq gave %d values for a batch of %d examples", m.Params[i].Name, byParam[m.Params[i]].Rule, len(v), ne)
			}
			ruleNorm[i][k] = v[k]
			ruleGrad[i][k] = append([]float64(nil), Values(ruleGrads[i])...)
		}
	}

	// The reference: every example alone.
	refGrad := make([][][]float64, np)
	for i := range refGrad {
		refGrad[i] = make([][]float64, ne)
	}
	for k, e := range c.Examples {
		if err := fill([]int{e}); err != nil {
			return nil, fmt.Errorf("nn: per-sample check: example %d alone: %w", e, err)
		}
		if err := aloneVM.Run(); err != nil {
			return nil, fmt.Errorf("nn: per-sample check: %w", err)
		}
		for i := range np {
			refGrad[i][k] = append([]float64(nil), Values(refGrads[i])...)
		}
	}

	// Compare.
	var out []PerSampleResult
	var errs []error
	for i, p := range m.Params {
		rule := byParam[p].Rule
		res := PerSampleResult{Param: p.Name, Rule: rule.String(), Worst: c.Examples[0]}
		refNorm := make([]float64, ne)
		normScale, gradScale := 0.0, 0.0
		for k := range ne {
			for _, v := range refGrad[i][k] {
				refNorm[k] += v * v
				gradScale = math.Max(gradScale, math.Abs(v))
			}
			normScale = math.Max(normScale, refNorm[k])
		}
		normFloor, gradFloor := 1e-6*normScale, 1e-6*gradScale
		worst, worstK := -1.0, 0
		var worstMsg string
		for k, e := range c.Examples {
			rn, tn := ruleNorm[i][k], refNorm[k]
			nErr := relErr(rn, tn, math.Max(math.Abs(rn), math.Abs(tn)), normFloor)
			ge, j := 0.0, -1
			big := math.Max(maxAbs(ruleGrad[i][k]), maxAbs(refGrad[i][k]))
			for q, v := range ruleGrad[i][k] {
				if d := relErr(v, refGrad[i][k][q], big, gradFloor); d > ge || math.IsNaN(d) {
					ge, j = d, q
				}
			}
			res.NormErr = math.Max(res.NormErr, nErr)
			res.GradErr = math.Max(res.GradErr, ge)
			if w := math.Max(nErr, ge); w > worst || math.IsNaN(w) {
				worst, worstK, res.Worst = w, k, e
				switch {
				case !(nErr <= c.Tol):
					worstMsg = fmt.Sprintf("squared norm %.6g by the rule, %.6g computed alone (relative error %.2g)", rn, tn, nErr)
				case !(ge <= c.Tol):
					worstMsg = fmt.Sprintf("gradient entry %d is %.6g by the rule, %.6g computed alone (relative error %.2g)", j, ruleGrad[i][k][j], refGrad[i][k][j], ge)
				}
			}
		}
		out = append(out, res)
		if !(worst <= c.Tol) {
			errs = append(errs, fmt.Errorf("parameter %s (%s) disagrees with example %d (batch position %d): %s > tolerance %g",
				p.Name, rule, res.Worst, worstK, worstMsg, c.Tol))
		}
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("nn: per-sample rules disagree with per-example gradients computed one example at a time (a wrong rule, or an op on the path that joins rows of different examples):\n%w", errors.Join(errs...))
	}
	return out, nil
}

// relErr is |a−b| / max(scale, floor) (0 when both are 0).
func relErr(a, b, scale, floor float64) float64 {
	d := math.Abs(a - b)
	if d == 0 {
		return 0
	}
	return d / math.Max(scale, floor)
}

func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}
