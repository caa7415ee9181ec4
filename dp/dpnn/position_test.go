package dpnn_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The second outside audit of issue 38 found constants laid out by batch
// position that the first fix did not reach (Δ 6.5 to 41.6 for a declared
// 1): gorgonia constants, values reshaped, concatenated or sliced from
// leaves of other shapes, a fixed diagonal product, a target reshaped from
// a flat leaf, a probe set at build, in all three example shapes. Each
// test below passes when every mode is refused or stays within its bound.
// audRelease is one noiseless step
// (q = 1, z = 0, C = 1) over n one-row examples declared with Start,
// R = 1, Change = 1, of a one-layer linear model on a dense batch input
// Xb, with a constant laid out by batch position introduced by mode. On
// G′ example 0 has no rows (start), so every later example moves up one
// batch row. The fill writes exactly each example's features and label
// into its own row (the documented assumption) and nothing else.
// It returns the clipped sum (the division by q·N undone), or the
// construction's refusal.
func audRelease(t *testing.T, n int, start []int, feats []float64, labels []int, f, c int, mode string) ([]float64, error) {
	x, cfg, capacity, m, xin := startModel(t, n, start, nil, "row", f)
	sign := func(i int) float64 { return float64(1 - 2*(i%2)) }
	signs := make([]float64, capacity)
	for i := range signs {
		signs[i] = sign(i)
	}
	var ce *nn.CrossEntropy
	var loss *G.Node
	mustBuild(t, func() error {
		in := f
		if mode == "concatcols-const" {
			in = f + 1
		}
		lin := layers.NewLinear(m, "lin", in, c, true, layers.InitPyG)
		m.StartRecording()
		h := xin
		if mode == "concatcols-const" {
			// a (capacity, 1) column of ±100 by batch position, as a
			// gorgonia constant (an op node, not a leaf: not reset)
			col := make([]float64, capacity)
			for i := range col {
				col[i] = 100 * sign(i)
			}
			k := G.NewConstant(tensor.New(tensor.WithShape(capacity, 1), tensor.WithBacking(col)), G.WithName("poscol"))
			h = nn.ConcatCols(xin, k)
		}
		y := lin.Forward(h)
		m.StopRecording()
		switch mode {
		case "scalerows-const":
			k := G.NewConstant(tensor.New(tensor.WithShape(capacity), tensor.WithBacking(signs)), G.WithName("possign"))
			y = nn.ScaleRows(y, k)
		case "scalerows-reshaped":
			// a leaf of shape (1, capacity) (first dim 1: a constant, not
			// a batch input) reshaped to a (capacity) vector
			leaf := m.Input("possign1", append([]float64(nil), signs...), 1, capacity)
			y = nn.ScaleRows(y, G.Must(G.Reshape(leaf, tensor.Shape{capacity})))
		case "spmm-diag":
			// a constant diagonal ±1 matrix over the batch rows (passes
			// CheckBlocks for one-row examples; never reset)
			src, dst, val := make([]int, capacity), make([]int, capacity), make([]float64, capacity)
			for i := range src {
				src[i], dst[i], val[i] = i, i, sign(i)
			}
			var err error
			if y, err = nn.SpMM(nn.NewSparse("posdiag", graphs.FromCOO(capacity, capacity, src, dst, val)), y); err != nil {
				return err
			}
		case "rank3-leaf":
			// a leaf (capacity, c, 1) of ±1e4 by position: first dim =
			// rows, so a batch input that Reset empties (expected within)
			off := make([]float64, capacity*c)
			for i := 0; i < capacity; i++ {
				off[i*c], off[i*c+1] = 1e4*sign(i), -1e4*sign(i)
			}
			l3 := G.NewTensor(m.G, G.Float64, 3, G.WithShape(capacity, c, 1), G.WithName("pos3"), G.WithValue(tensor.New(tensor.WithShape(capacity, c, 1), tensor.WithBacking(off))))
			var err error
			if y, err = nn.Add(y, G.Must(G.Reshape(l3, tensor.Shape{capacity, c}))); err != nil {
				return err
			}
		case "concat0-leaves":
			// two constant leaves of first dims 1 and capacity−1 (neither
			// is the batch's rows: not reset) stacked by gorgonia's Concat
			// along rows into a (capacity, 1) column, then joined to the
			// logits as a third class logit (±1e4 by position)
			top := m.Input("top", []float64{1e4}, 1, 1)
			rest := make([]float64, capacity-1)
			for i := range rest {
				rest[i] = 1e4 * sign(i+1)
			}
			bot := m.Input("bot", rest, capacity-1, 1)
			col := G.Must(G.Concat(0, top, bot))
			y = nn.ConcatCols(y, col)
		case "slice-table":
			// a constant table of capacity+5 rows (not the batch's rows:
			// not reset), its first capacity rows taken by gorgonia's
			// Slice, joined to the logits' columns
			tab := make([]float64, capacity+5)
			for i := range tab {
				tab[i] = 1e4 * sign(i)
			}
			table := m.Input("table", tab, capacity+5, 1)
			y = nn.ConcatCols(y, G.Must(G.Slice(table, G.S(0, capacity))))
		case "offset-leaf":
			// the offsets as a leaf with the batch's rows: a batch input,
			// emptied before the fill (within)
			off := make([]float64, capacity*c)
			for i := 0; i < capacity; i++ {
				off[i*c], off[i*c+1] = 1e4*sign(i), -1e4*sign(i)
			}
			var err error
			if y, err = nn.Add(y, m.Input("posoffset", off, capacity, c)); err != nil {
				return err
			}
		case "gather-table":
			// a table of capacity+7 rows picked by fixed positions into
			// the batch rows (refused)
			tab := make([]float64, (capacity+7)*c)
			for i := 0; i < capacity+7; i++ {
				tab[i*c], tab[i*c+1] = 1e4*sign(i), -1e4*sign(i)
			}
			idx := make([]int, capacity)
			for i := range idx {
				idx[i] = i
			}
			g, err := nn.GatherRows(m.Input("table", tab, capacity+7, c), idx, "fixed")
			if err == nil {
				y, err = nn.Add(y, g)
			}
			if err != nil {
				return err
			}
		case "add-const":
			off := make([]float64, capacity*c)
			for i := 0; i < capacity; i++ {
				off[i*c], off[i*c+1] = 1e4*sign(i), -1e4*sign(i)
			}
			k := G.NewConstant(tensor.New(tensor.WithShape(capacity, c), tensor.WithBacking(off)), G.WithName("posoff"))
			var err error
			if y, err = nn.Add(y, k); err != nil {
				return err
			}
		}
		var err error
		if ce, err = nn.NewCrossEntropy(m, y, "loss"); err != nil {
			return err
		}
		loss = ce.PerRow
		switch mode {
		case "nll-target":
			// the labels by batch position, stored flat (first dim
			// capacity·c: a constant) and reshaped to (capacity, c)
			tg := make([]float64, capacity*c)
			for i := 0; i < capacity; i++ {
				tg[i*c+i%2] = 1
			}
			flat := G.NewVector(m.G, G.Float64, G.WithShape(capacity*c), G.WithName("postarget"), G.WithValue(tensor.New(tensor.WithShape(capacity*c), tensor.WithBacking(tg))))
			logp := G.Must(nn.LogSoftmax(y))
			loss = G.Must(nn.NLLRows(logp, G.Must(G.Reshape(flat, tensor.Shape{capacity, c}))))
		case "hadamard-const":
			k := G.NewConstant(tensor.New(tensor.WithShape(capacity), tensor.WithBacking(signs)), G.WithName("posw"))
			loss = G.Must(G.HadamardProd(ce.PerRow, k))
		}
		return nil
	})
	if mode == "probe" {
		// the probe of lin.W: a leaf with the batch's rows that Reset skips
		rec := m.PerSampleRecords()[0]
		s := rec.Probe.Shape()
		off := make([]float64, s[0]*s[1])
		for i := 0; i < s[0]; i++ {
			off[i*s[1]], off[i*s[1]+1] = 1e4*sign(i), -1e4*sign(i)
		}
		if err := nn.SetValue(rec.Probe, off); err != nil {
			t.Fatal(err)
		}
	}
	sgd, err := noiselessPrivate(m, loss, x, cfg)
	if err != nil {
		return nil, err
	}
	fill := firstRowsFill(xin, ce, f, capacity, feats, labels, nil)
	return mustScaledRelease(t, mode+": ", sgd, cfg, fill), nil
}

// TestPositionConstantsRefusedOrBounded: G has n one-row examples; G' = G minus
// example 0 (its features and label), laid out with the universe rows of
// the remaining ones renumbered 0…n−2 (the layout any run on G' gets).
// Declared: R·Change·C = 1.
func TestPositionConstantsRefusedOrBounded(t *testing.T) {
	const n, f, c = 30, 4, 2
	v := []float64{3, -2, 5, 1}
	mk := func(ids []int) ([]float64, []int) { return signedRows(ids, v, featScale) }
	all, startG, startG2 := oneRowPair(n)
	for _, mode := range []string{"none", "add-const", "hadamard-const", "scalerows-const", "scalerows-reshaped", "spmm-diag", "rank3-leaf", "concat0-leaves", "slice-table", "concatcols-const", "nll-target", "probe", "offset-leaf", "gather-table"} {
		fG, lG := mk(all)
		fG2, lG2 := mk(all[1:])
		a, errA := audRelease(t, n, startG, fG, lG, f, c, mode)
		// G': id 0 keeps its id and has no rows
		b, errB := audRelease(t, n, startG2, fG2, lG2, f, c, mode)
		if errA != nil || errB != nil {
			t.Logf("%-20s refused: %v / %v", mode, errA, errB)
			continue
		}
		d := dist(a, b)
		verdict := "within"
		if d > 1+1e-9 {
			verdict = "BROKEN"
		}
		t.Logf("%-20s accepted: ‖Δ clipped sum‖ = %.4f (declared R·Change·C = 1) %s", mode, d, verdict)
		if d > 1+1e-9 {
			t.Errorf("%s: one deleted example moved the clipped sum by %.4f > 1", mode, d)
		}
	}
	_ = fmt.Sprint
}

var featScale = 100.0

// TestPositionConstantsSmallFeatures: the ScaleRows bypass with features
// that do not saturate the softmax.
func TestPositionConstantsSmallFeatures(t *testing.T) {
	defer func(s float64) { featScale = s }(featScale)
	featScale = 0.05
	TestPositionConstantsRefusedOrBounded(t)
}

// pooledRelease: DPAR's shape. n pooled examples of 2 rows each (weights
// 0.5), ids of a public universe, id 0 absent when absent0 (G − v: its
// example dropped from the batch, so every later example moves up one
// pooled output row). The pooled output is multiplied by a ±1 constant
// per pooled row (ScaleRows by a gorgonia constant). R = Change = 1.
// mode "pooled-count-minus-n" (leaf_count_pooled_test.go) multiplies the
// per-row loss by Count − n instead.
func pooledRelease(t *testing.T, n, f int, feats []float64, labels []int, absent0 bool, mode string) ([]float64, error) {
	const c = 2
	x := pooledExamples(t, n, 2, 0.5, absent0)
	pool := n
	cfg := dpnn.PrivateConfig{N: n, R: 1, Change: 1, BatchSize: n, Epochs: 1, Clip: 1, What: "pooled", PoolRows: pool}
	capacity := dpnn.RowCapacity(x, cfg.Rate())
	m := nn.NewModel(1)
	xin := m.Input("Xb", make([]float64, capacity*f), capacity, f)
	ps := emptySparse("pool", pool, capacity)
	signs := make([]float64, pool)
	for i := range signs {
		signs[i] = float64(1 - 2*(i%2))
	}
	var ce *nn.CrossEntropy
	var perRow *G.Node
	mustBuild(t, func() error {
		h := recordedLinear(m, "lin", xin, f, c, true)
		z, err := nn.SpMM(ps, h)
		if err != nil {
			return err
		}
		if mode == "pooled-scalerows" {
			z = nn.ScaleRows(z, G.NewConstant(tensor.New(tensor.WithShape(pool), tensor.WithBacking(signs)), G.WithName("possign")))
		}
		if ce, err = nn.NewCrossEntropy(m, z, "loss"); err != nil {
			return err
		}
		pr := ce.PerRow
		if mode == "pooled-count-minus-n" {
			pr = G.Must(G.Mul(ce.PerRow, G.Must(G.Sub(ce.Count, G.NewConstant(float64(n))))))
		}
		zeros := G.NewConstant(tensor.New(tensor.WithShape(capacity-pool), tensor.WithBacking(make([]float64, capacity-pool))), G.WithName("loss.pad"))
		perRow = G.Must(G.Concat(0, pr, zeros))
		return nil
	})
	sgd, err := noiselessPrivate(m, perRow, x, cfg)
	if err != nil {
		return nil, err
	}
	lab, buf := make([]int, pool), make([]float64, capacity*f)
	fill := func(b *dpnn.Batch) error {
		clear(buf)
		var outRows []int
		for k, e := range b.Examples {
			for r := b.First[k]; r < b.First[k+1]; r++ {
				u := b.Rows[r]
				copy(buf[r*f:(r+1)*f], feats[u*f:(u+1)*f])
			}
			if b.First[k+1] > b.First[k] {
				lab[k] = labels[e]
				outRows = append(outRows, k)
			}
		}
		if err := nn.SetValue(xin, buf); err != nil {
			return err
		}
		if err := ps.Set(b.Pool); err != nil {
			return err
		}
		return ce.SetRows(outRows, lab)
	}
	return mustScaledRelease(t, mode+": ", sgd, cfg, fill), nil
}

func TestPooledPositionConstants(t *testing.T) {
	const n, f = 30, 4
	v := []float64{3, -2, 5, 1}
	for _, mode := range []string{"pooled-none", "pooled-scalerows"} {
		// universe rows of G: example e has rows 2e, 2e+1; G − 0: rows of
		// e ≥ 1 renumbered from 0
		fG, lG := pooledSignedRows(n, v, 0.05, false)
		fG2, lG2 := pooledSignedRows(n, v, 0.05, true)
		a, errA := pooledRelease(t, n, f, fG, lG, false, mode)
		b, errB := pooledRelease(t, n, f, fG2, lG2, true, mode)
		withinOrRefused(t, mode, a, b, errA, errB, 1)
	}
}

// genRelease: ASGL's shape. n generated examples of at most 1 row; the
// fill appends a row for each example that has data (skip0: example 0 has
// none, G − v) and tags it. mode "gen-scalerows" multiplies the logits by
// a ±1 gorgonia constant per batch row.
func genRelease(t *testing.T, n, f int, feats []float64, labels []int, skip0 bool, mode string) ([]float64, error) {
	const c = 2
	x, cfg, capacity, m, xin := generatedModel(t, n, "generated", f)
	signs := make([]float64, capacity)
	for i := range signs {
		signs[i] = float64(1 - 2*(i%2))
	}
	var ce *nn.CrossEntropy
	mustBuild(t, func() error {
		y := recordedLinear(m, "lin", xin, f, c, true)
		if mode == "gen-scalerows" {
			y = nn.ScaleRows(y, G.NewConstant(tensor.New(tensor.WithShape(capacity), tensor.WithBacking(signs)), G.WithName("possign")))
		}
		var err error
		ce, err = nn.NewCrossEntropy(m, y, "loss")
		return err
	})
	sgd, err := noiselessPrivate(m, ce.PerRow, x, cfg)
	if err != nil {
		return nil, err
	}
	lab, buf := make([]int, capacity), make([]float64, capacity*f)
	fill := func(b *dpnn.Batch) error {
		clear(buf)
		var rows []int
		for k, e := range b.Examples {
			if e == 0 && skip0 {
				continue
			}
			r := len(rows)
			copy(buf[r*f:(r+1)*f], feats[e*f:(e+1)*f])
			lab[r] = labels[e]
			b.Tags.Of[r] = k
			rows = append(rows, r)
		}
		if err := nn.SetValue(xin, buf); err != nil {
			return err
		}
		return ce.SetRows(rows, lab)
	}
	return mustScaledRelease(t, mode+": ", sgd, cfg, fill), nil
}

func TestGeneratedPositionConstants(t *testing.T) {
	const n, f = 30, 4
	v := []float64{3, -2, 5, 1}
	feats, labels := make([]float64, n*f), make([]int, n)
	for e := 0; e < n; e++ {
		labels[e] = e % 2
		for j := 0; j < f; j++ {
			feats[e*f+j] = 0.05 * float64(1-2*(e%2)) * v[j]
		}
	}
	for _, mode := range []string{"gen-none", "gen-scalerows"} {
		a, errA := genRelease(t, n, f, feats, labels, false, mode)
		b, errB := genRelease(t, n, f, feats, labels, true, mode)
		withinOrRefused(t, mode, a, b, errA, errB, 1)
	}
}

// TestFixedSelectionOverMultiRowExamplesRefused: a fixed row selection
// pairing batch rows (2i, 2i+1) over examples of two rows each declared
// with Start used to pass a step on G and be refused on G′, where one
// example had lost a row (a refusal that depends on the data, after earlier
// steps). It is refused at construction on both now.
func TestFixedSelectionOverMultiRowExamplesRefused(t *testing.T) {
	const n, f = 10, 3
	run := func(start []int) error {
		x, err := dpnn.NewExamples(n, start, nil, 1, 2, "pair")
		if err != nil {
			t.Fatal(err)
		}
		cfg := dpnn.PrivateConfig{N: n, R: 1, Change: 2, BatchSize: n, Epochs: 1, Clip: 1, What: "pair"}
		capacity := dpnn.RowCapacity(x, cfg.Rate())
		m := nn.NewModel(1)
		xin := m.Input("Xb", make([]float64, capacity*f), capacity, f)
		swap := make([]int, capacity)
		for i := range swap {
			swap[i] = i ^ 1
		}
		var ce *nn.CrossEntropy
		mustBuild(t, func() error {
			lin := layers.NewLinear(m, "lin", f, 2, true, layers.InitPyG)
			m.StartRecording()
			sw, err := nn.GatherRows(xin, swap, "partner")
			if err != nil {
				return err
			}
			h, err := nn.Add(xin, sw)
			if err != nil {
				return err
			}
			y := lin.Forward(h)
			m.StopRecording()
			ce, err = nn.NewCrossEntropy(m, y, "loss")
			return err
		})
		sgd, err := dpnn.Private(m, ce.PerRow, nil, x, cfg, 0, nil, dp.NewSource(1))
		if err != nil {
			return err
		}
		lab := make([]int, capacity)
		_, err = sgd.ReleaseExamples(func(b *dpnn.Batch) error {
			buf := make([]float64, capacity*f)
			for r := range b.Rows {
				buf[r*f] = 1
			}
			if err := nn.SetValue(xin, buf); err != nil {
				return err
			}
			var firsts []int
			for k := range b.Examples {
				if b.First[k+1] > b.First[k] {
					firsts = append(firsts, b.First[k])
				}
			}
			return ce.SetRows(firsts, lab)
		})
		return err
	}
	startG, startG2 := make([]int, n+1), make([]int, n+1)
	for e := 0; e < n; e++ {
		startG[e+1] = startG[e] + 2
		d := 2
		if e == 3 {
			d = 1
		}
		startG2[e+1] = startG2[e] + d
	}
	for side, err := range []error{run(startG), run(startG2)} {
		if err == nil || !strings.Contains(err.Error(), "fixed positions") {
			t.Errorf("side %d: got %v, want the construction's refusal of a fixed selection over multi-row examples", side, err)
		}
	}
}
