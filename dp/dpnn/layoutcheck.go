package dpnn

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/dpgnn/dpgnn/nn"
	"gonum.org/v1/gonum/floats"
)

// checkLayouts is the empirical half of the construction's row-locality
// check. nn.CheckRowLocal classes every op of the training path by a
// whitelist, and eight outside audits each found an op or a combination it
// classed wrongly: a value that depended on a row's position in the batch,
// or on another example's rows. This check does not need to know the form
// of such a value. It writes a synthetic batch of a few examples whose data
// is a function of the example alone (nn.RowLocal.Synthetic), and runs the
// compiled step, noiseless, with the examples laid out in order, in reverse
// order, and each alone at the first rows. It refuses the path unless
//
//   - each example's per-sample norm² is the same in every layout;
//   - the clipped sum of the batch is the sum of the examples' clipped
//     sums alone (no example's contribution depends on another's);
//   - each example's clipped sum alone has norm at most its clip factor
//     times the norm its rules report, hence at most C (a rule that
//     under-reports its parameter's norm would let it exceed C) — checked
//     in evaluation mode on data in [−1, 1), and again in training mode
//     (dropout on, from a stream of its own) on data a thousand times
//     larger (the tenth outside audit: a custom rule whose norm read a
//     dropout of its input, or its input clamped to [−1, 1], under-reported
//     only there).
//
// Together these are the step's sensitivity claim on one batch: removing
// example e moves the clipped sum by its contribution alone, of norm at
// most C. It is a test on public, synthetic batches, not a proof: the
// whitelist's classes and the per-sample rules' proofs are the guarantee
// (a custom rule must report an honest norm in every mode and on all
// data), and this check catches a break of them that shows on generic
// data (every position-dependent value the audits built did). The layout
// comparisons run without dropout, whose masks are drawn per batch
// position. A non-finite norm counts as equal to itself (its example is
// clipped out, factor 0). It reads no private data and draws from no
// source of the run, so seeded runs are unchanged; the inputs are emptied
// after it.
func (s *SGD) checkLayouts() (err error) {
	rows := len(s.Groups.Of)
	units := unitsOf(s.reads, rows)
	if len(units) == 0 {
		return nil
	}
	perExample := 1 // units an example may span
	if x := s.Cfg.Examples; x != nil && (x.Start != nil || x.Generated > 0) {
		perExample = max(1, x.MaxRows()/len(units[0]))
	}
	sizes := []int{min(2, perExample), 1, min(3, perExample)}
	if p := s.Cfg.PoolRows; p > 0 && len(sizes) > p {
		sizes = sizes[:p]
	}
	for len(sizes) > 0 && sum(sizes) > len(units) {
		sizes = sizes[:len(sizes)-1]
	}
	if len(sizes) == 0 {
		return nil
	}
	stds := make([]float64, len(s.Noise))
	for i, n := range s.Noise {
		stds[i], n.Std = n.Std, 0
	}
	defer func() {
		for i, n := range s.Noise {
			n.Std = stds[i]
		}
		for r := range s.Groups.Of {
			s.Groups.Of[r] = -1
		}
		s.Groups.Samples = 0
		if e := s.inputs.Reset(); err == nil && e != nil {
			err = e
		}
	}()
	type result struct {
		sum          []float64
		norm, factor []float64 // by example id
		rows         [][]int   // by example id
	}
	b := s.Cfg.ExpectedBatch()
	run := func(order []int, training bool, scale float64) (result, error) {
		res := result{norm: make([]float64, len(sizes)), factor: make([]float64, len(sizes)), rows: make([][]int, len(sizes))}
		lay := nn.Synthetic{Seed: 0x5eed, Pool: s.Cfg.PoolRows, Scale: scale}
		for r := range s.Groups.Of {
			s.Groups.Of[r] = -1
		}
		next := 0
		for k, e := range order {
			var rs []int
			for _, u := range units[next : next+sizes[e]] {
				rs = append(rs, u...)
			}
			next += sizes[e]
			for _, r := range rs {
				s.Groups.Of[r] = k
			}
			lay.Rows, lay.Ids = append(lay.Rows, rs), append(lay.Ids, e)
			res.rows[e] = rs
		}
		s.Groups.Samples = len(order)
		if err := s.inputs.Reset(); err != nil {
			return res, err
		}
		if err := s.inputs.Synthetic(lay, rows); err != nil {
			return res, err
		}
		name := func(k int) string { return fmt.Sprintf("synthetic example %d", order[min(k, len(order)-1)]) }
		if err := errors.Join(nn.CheckBlocks(s.mixing, s.Groups, name), nn.CheckPools(s.pools, s.Groups, name), nn.CheckRowReads(s.reads, s.Groups, name)); err != nil {
			return res, fmt.Errorf("a synthetic batch the layout check built: %w", err)
		}
		if _, err := s.model.StepMode(training); err != nil {
			return res, err
		}
		grads, err := s.model.Grads()
		if err != nil {
			return res, err
		}
		for _, g := range grads {
			for _, v := range g {
				res.sum = append(res.sum, v*b)
			}
		}
		ns, fs := nn.Values(s.NormSq), nn.Values(s.Factors)
		for k, e := range order {
			res.norm[e], res.factor[e] = ns[k], fs[k]
		}
		return res, nil
	}
	const tol = 1e-6
	c := s.Cfg.Clip
	// within checks example e's clipped gradient alone against its clip
	// factor times the norm its rules report, and against C.
	within := func(res result, e int, how string) error {
		got := floats.Norm(res.sum, 2)
		bound := 0.0 // a clipped-out example (factor 0) adds exactly 0
		if f := res.factor[e]; f > 0 {
			bound = f * math.Sqrt(res.norm[e])
		}
		if !(got <= bound*(1+tol)+tol*c) || !(got <= c*(1+tol)) {
			return fmt.Errorf("dp: DP-SGD: a per-sample rule under-reports its parameter's gradient: on a synthetic example alone (%s; the layout check), the clipped gradient has norm %g, above its clip factor %g times the norm %g the rules report, or C = %g; a custom rule (Model.Record) must report an upper bound on the norm of what its ClippedSum adds, in every mode and on all data (nn.Model.CheckPerSample tests a rule against per-example gradients)", how, got, res.factor[e], math.Sqrt(res.norm[e]), c)
		}
		return nil
	}
	refuse := func(format string, args ...any) error {
		return fmt.Errorf("dp: DP-SGD: the training path depends on where an example lies in the batch, or on other examples: on a synthetic batch (the layout check), "+format+"; nn.CheckRowLocal accepted every op, so one of them reads a row's position or another example's rows (please report the model: the check's whitelist missed it)", args...)
	}
	alone := make([]result, len(sizes))
	var total []float64
	scale := c
	for e := range sizes {
		if alone[e], err = run([]int{e}, false, 1); err != nil {
			return err
		}
		if err := within(alone[e], e, "evaluation mode, data in [−1, 1)"); err != nil {
			return err
		}
		if total == nil {
			total = make([]float64, len(alone[e].sum))
		}
		for i, v := range alone[e].sum {
			total[i] += v
		}
		scale += floats.Norm(alone[e].sum, 2)
	}
	orders := [][]int{make([]int, len(sizes)), make([]int, len(sizes))}
	for e := range sizes {
		orders[0][e], orders[1][e] = e, len(sizes)-1-e
	}
	for _, order := range orders {
		if len(order) < 2 {
			break
		}
		res, err := run(order, false, 1)
		if err != nil {
			return err
		}
		for e := range sizes {
			if a, o := res.norm[e], alone[e].norm[e]; !same(a, o, tol) {
				return refuse("example %d's per-sample norm² is %g at batch rows %v beside %d others and %g alone at rows %v", e, a, res.rows[e], len(sizes)-1, o, alone[e].rows[e])
			}
		}
		d := slices.Clone(res.sum)
		for i := range d {
			d[i] -= total[i]
		}
		if got := floats.Norm(d, 2); !(got <= tol*scale) {
			return refuse("the clipped sum of %d examples laid out at rows %v is %g away from the sum of their clipped sums alone", len(order), res.rows, got)
		}
	}
	// Training mode: dropout masks from a stream of the check's own (the
	// run's keyed stream is set after it, keyDropout), on larger data.
	s.model.SetDropoutStream(rand.New(rand.NewPCG(0x5eed, 1)))
	for e := range sizes {
		res, err := run([]int{e}, true, 1e3)
		if err != nil {
			return err
		}
		if err := within(res, e, "training mode, data in [−1000, 1000)"); err != nil {
			return err
		}
	}
	return nil
}

// same reports whether two per-sample norms² agree within a relative tol
// (two NaNs agree: their examples are both clipped out).
func same(a, b, tol float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return a == b || math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b))
}

// unitsOf returns the batch rows grouped into the units a layout moves
// whole: the rows one fixed row selection reads together (reads), each
// other row alone. Only units of the first one's size are returned, in
// the order of their first rows.
func unitsOf(reads []nn.RowReads, rows int) [][]int {
	parent := make([]int, rows)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for _, rd := range reads {
		for _, js := range rd.Of {
			for _, j := range js {
				if j >= 0 && j < rows && len(js) > 0 && js[0] >= 0 && js[0] < rows {
					parent[find(j)] = find(js[0])
				}
			}
		}
	}
	byRoot := map[int][]int{}
	var roots []int
	for r := 0; r < rows; r++ {
		root := find(r)
		if _, ok := byRoot[root]; !ok {
			roots = append(roots, root)
		}
		byRoot[root] = append(byRoot[root], r)
	}
	var units [][]int
	for _, root := range roots { // in the order of their first rows
		if u := byRoot[root]; len(units) == 0 || len(u) == len(units[0]) {
			units = append(units, u)
		}
	}
	return units
}

func sum(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}

// ExampleDigests lays out each declared example alone, runs fill, and
// returns a digest of what the fill wrote for it (nn.RowLocal.Digest; 0
// for an absent id): two examples with equal digests hold the same data.
// `dpgnn audit` compares the digests on G and G − v to say how many
// examples the neighbour changed, beside the R its claim covers. Nothing
// runs the graph or draws from a source; the inputs are emptied after.
func (s *SGD) ExampleDigests(fill func(*Batch) error) (out []uint64, err error) {
	x := s.Cfg.Examples
	if x == nil || s.inputs == nil || x.Generated > 0 {
		return nil, errors.New("dp: DP-SGD: example digests need declared examples with rows (not generated ones)")
	}
	defer func() {
		for r := range s.Groups.Of {
			s.Groups.Of[r] = -1
		}
		s.Groups.Samples = 0
		if e := s.inputs.Reset(); err == nil && e != nil {
			err = e
		}
	}()
	out = make([]uint64, x.N)
	used := make([]bool, len(s.Groups.Of))
	for e := range out {
		if x.absent(e) {
			continue
		}
		if err := x.layout([]int{e}, len(s.Groups.Of), s.Cfg.PoolRows, &s.batch, s.Groups); err != nil {
			return nil, err
		}
		for r, g := range s.Groups.Of {
			used[r] = g == 0
		}
		if err := s.inputs.Reset(); err != nil {
			return nil, err
		}
		if err := fill(&s.batch); err != nil {
			return nil, err
		}
		out[e] = s.inputs.Digest(used)
	}
	return out, nil
}
