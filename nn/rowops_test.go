package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestFusedOpsMatchGorgonia: SELU, ReLU, AddRow, MulRow, ScaleRows and ConcatCols give what
// gorgonia's composed ops give, in value and in the gradient of a weighted
// sum (the gradient checks in nn_test.go cover them against finite
// differences inside a model).
func TestFusedOpsMatchGorgonia(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	randT := func(shape ...int) *tensor.Dense {
		n := 1
		for _, s := range shape {
			n *= s
		}
		d := make([]float64, n)
		for i := range d {
			d[i] = 2 * rng.NormFloat64()
		}
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(d))
	}
	const n, d, e = 5, 4, 3
	xv, yv, bv, wv, fv := randT(n, d), randT(n, e), randT(d), randT(n, d+e), randT(n)
	// (no exact zeros: at SELU's kink the two forms pick different
	// subgradients, λ from gorgonia's Rectify and λα here)
	eval := func(fused bool) (out []float64, grads [][]float64) {
		g := G.NewGraph()
		x := G.NewMatrix(g, G.Float64, G.WithShape(n, d), G.WithValue(xv.Clone()), G.WithName("x"))
		y := G.NewMatrix(g, G.Float64, G.WithShape(n, e), G.WithValue(yv.Clone()), G.WithName("y"))
		b := G.NewVector(g, G.Float64, G.WithShape(d), G.WithValue(bv.Clone()), G.WithName("b"))
		w := G.NewMatrix(g, G.Float64, G.WithShape(n, d+e), G.WithValue(wv.Clone()), G.WithName("w"))
		f := G.NewVector(g, G.Float64, G.WithShape(n), G.WithValue(fv.Clone()), G.WithName("f"))
		var h *G.Node
		if fused {
			h = ConcatCols(SELU(AddRow(MulRow(x, b), b)), ReLU(ScaleRows(y, f)))
		} else {
			const alpha, lambda = seluAlpha, seluLambda
			s := G.Must(G.BroadcastHadamardProd(x, b, nil, []byte{0}))
			s = G.Must(G.BroadcastAdd(s, b, nil, []byte{0}))
			pos := G.Must(G.Rectify(s))
			neg := G.Must(G.Neg(G.Must(G.Rectify(G.Must(G.Neg(s))))))
			sum := G.Must(G.Add(pos, G.Must(G.Mul(G.Must(G.Expm1(neg)), G.NewConstant(alpha)))))
			ys := G.Must(G.Rectify(G.Must(G.BroadcastHadamardProd(y, f, nil, []byte{1}))))
			h = G.Must(G.Concat(1, G.Must(G.Mul(sum, G.NewConstant(lambda))), ys))
		}
		loss := G.Must(G.Sum(G.Must(G.HadamardProd(h, w))))
		wrt := G.Nodes{x, y, b, f}
		if _, err := G.Grad(loss, wrt...); err != nil {
			t.Fatal(err)
		}
		vm := G.NewTapeMachine(g)
		defer vm.Close()
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		out = append(out, h.Value().Data().([]float64)...)
		for _, p := range wrt {
			gv, err := p.Grad()
			if err != nil {
				t.Fatal(err)
			}
			grads = append(grads, append([]float64(nil), gv.Data().([]float64)...))
		}
		return out, grads
	}
	fo, fg := eval(true)
	co, cg := eval(false)
	close := func(what string, a, b []float64) {
		t.Helper()
		if len(a) != len(b) {
			t.Fatalf("%s: %d values vs %d", what, len(a), len(b))
		}
		for i := range a {
			if math.Abs(a[i]-b[i]) > 1e-12*math.Max(1, math.Abs(b[i])) {
				t.Fatalf("%s[%d]: fused %v, gorgonia %v", what, i, a[i], b[i])
			}
		}
	}
	close("value", fo, co)
	for k, name := range []string{"dx", "dy", "db", "df"} {
		close(name, fg[k], cg[k])
	}
	// spot values: SELU(1) = λ, SELU(−1) = λα(e⁻¹ − 1)
	one := tensor.New(tensor.WithShape(1, 2), tensor.WithBacking([]float64{1, -1}))
	v, err := seluFwd.Do(one)
	if err != nil {
		t.Fatal(err)
	}
	got := v.Data().([]float64)
	if math.Abs(got[0]-seluLambda) > 1e-15 || math.Abs(got[1]-seluLambda*seluAlpha*(math.Exp(-1)-1)) > 1e-15 {
		t.Fatalf("SELU(1, −1) = %v", got)
	}
	// ReLU keeps 0 and NaN, zeroes negatives; its gradient passes at 0
	x := tensor.New(tensor.WithShape(1, 4), tensor.WithBacking([]float64{-1, 0, 2, math.NaN()}))
	v, err = reluFwd.Do(x)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Data().([]float64); got[0] != 0 || got[1] != 0 || got[2] != 2 || !math.IsNaN(got[3]) {
		t.Fatalf("ReLU(−1, 0, 2, NaN) = %v", got)
	}
	dy := tensor.New(tensor.WithShape(1, 4), tensor.WithBacking([]float64{5, 6, 7, 8}))
	v, err = reluGradOp{}.Do(x, dy)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Data().([]float64); got[0] != 0 || got[1] != 6 || got[2] != 7 || got[3] != 0 {
		t.Fatalf("ReLU gradient at (−1, 0, 2, NaN) = %v", got)
	}
}

// TestStandardizeValues checks BatchNorm (per column, running statistics
// with PyTorch's momentum and unbiased variance) and the per-row norm
// against values computed by hand.
func TestStandardizeValues(t *testing.T) {
	x := []float64{1, 10, 2, 20, 3, 60} // 3×2: columns (1,2,3) and (10,20,60)
	in := func() *tensor.Dense {
		return tensor.New(tensor.WithShape(3, 2), tensor.WithBacking(append([]float64(nil), x...)))
	}
	approx := func(what string, got []float64, want ...float64) {
		t.Helper()
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-12 {
				t.Fatalf("%s: got %v, want %v", what, got, want)
			}
		}
	}
	bn := newStandardize(0, 0, 0.1)
	v, err := bn.Do(in())
	if err != nil {
		t.Fatal(err)
	}
	s1, s2 := math.Sqrt(2.0/3), math.Sqrt(1400.0/3) // population std of each column
	approx("batch norm", v.Data().([]float64), -1/s1, -20/s2, 0, -10/s2, 1/s1, 30/s2)
	// running stats after one step: 0.9·(0, 1) + 0.1·(mean, unbiased var)
	approx("running mean", bn.runMean, 0.2, 3)
	approx("running var", bn.runVar, 0.9+0.1*1, 0.9+0.1*700)
	bn.SetTraining(false)
	v, err = bn.Do(in())
	if err != nil {
		t.Fatal(err)
	}
	approx("eval", v.Data().([]float64), 0.8, 7/math.Sqrt(70.9), 1.8, 17/math.Sqrt(70.9), 2.8, 57/math.Sqrt(70.9))
	rn := newStandardize(1, 0, 0.1)
	v, err = rn.Do(in())
	if err != nil {
		t.Fatal(err)
	}
	approx("row norm", v.Data().([]float64), -1, 1, -1, 1, -1, 1)
}

// TestBatchNormBits: BatchNorm's training pass (batch statistics and the
// running statistics it updates) and its gradient give the bits of the
// formulas written out element by element, whether the gradient finds the
// forward pass's statistics of its input or computes them again (another
// input in between), on sizes up to one whose gradient is split over the
// cores.
func TestBatchNormBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for _, sz := range [][2]int{{1, 1}, {3, 2}, {5, 7}, {40, 16}, {270, 48}, {5003, 16}} {
		n, k := sz[0], sz[1]
		x, dy, other := randSlice(rng, n*k), randSlice(rng, n*k), randSlice(rng, n*k)
		const eps, mom = 1e-5, 0.1
		// The reference, column by column in row order.
		mean, inv, rm, rv := make([]float64, k), make([]float64, k), make([]float64, k), make([]float64, k)
		for c := range k {
			for i := range n {
				mean[c] += x[i*k+c]
			}
			mean[c] /= float64(n)
			var v float64
			for i := range n {
				d := x[i*k+c] - mean[c]
				v += d * d
			}
			v /= float64(n)
			inv[c] = 1 / math.Sqrt(v+eps)
			u := v
			if n > 1 {
				u = v * float64(n) / float64(n-1)
			}
			rm[c] = (1-mom)*0 + mom*mean[c]
			rv[c] = (1-mom)*1 + mom*u
		}
		wantY, wantDx := make([]float64, n*k), make([]float64, n*k)
		for c := range k {
			var a, b float64
			for i := range n {
				d := dy[i*k+c]
				a += d
				b += d * (x[i*k+c] - mean[c]) * inv[c]
			}
			a /= float64(n)
			b /= float64(n)
			for i := range n {
				y := (x[i*k+c] - mean[c]) * inv[c]
				wantY[i*k+c] = (x[i*k+c] + -mean[c]) * inv[c]
				wantDx[i*k+c] = inv[c] * (dy[i*k+c] - a - y*b)
			}
		}
		same := func(what string, got, want []float64) {
			t.Helper()
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("%d×%d %s[%d] = %v, want %v", n, k, what, i, got[i], want[i])
				}
			}
		}
		mat := func(d []float64) *tensor.Dense { return tensor.New(tensor.WithShape(n, k), tensor.WithBacking(d)) }
		op := newStandardize(0, eps, mom)
		xt := mat(x)
		y, err := op.Do(xt)
		if err != nil {
			t.Fatal(err)
		}
		same("y", y.Data().([]float64), wantY)
		same("running mean", op.runMean, rm)
		same("running var", op.runVar, rv)
		for _, between := range []bool{false, true} {
			if between { // a pass on another input: the gradient computes the statistics again
				if _, err := op.Do(mat(other)); err != nil {
					t.Fatal(err)
				}
			}
			dx, err := (&standardizeGradOp{fwd: op}).Do(xt, mat(dy))
			if err != nil {
				t.Fatal(err)
			}
			same(fmt.Sprintf("dx (another pass between: %v)", between), dx.Data().([]float64), wantDx)
		}
	}
}

// TestMatMulMatchesGorgonia: op(A)·op(B) for all four transpose flags
// equals gorgonia's Mul of (materialised) transposes, in value and in the
// gradients with respect to A and B.
func TestMatMulMatchesGorgonia(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	rnd := func(r, c int) *tensor.Dense {
		d := make([]float64, r*c)
		for i := range d {
			d[i] = rng.NormFloat64()
		}
		return tensor.New(tensor.WithShape(r, c), tensor.WithBacking(d))
	}
	const m, k, n = 4, 3, 5
	for _, tc := range []struct{ ta, tb bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		ashape, bshape := []int{m, k}, []int{k, n}
		if tc.ta {
			ashape = []int{k, m}
		}
		if tc.tb {
			bshape = []int{n, k}
		}
		av, bv, wv := rnd(ashape[0], ashape[1]), rnd(bshape[0], bshape[1]), rnd(m, n)
		run := func(ours bool) [][]float64 {
			g := G.NewGraph()
			a := G.NewMatrix(g, G.Float64, G.WithShape(ashape...), G.WithValue(av.Clone()), G.WithName("a"))
			b := G.NewMatrix(g, G.Float64, G.WithShape(bshape...), G.WithValue(bv.Clone()), G.WithName("b"))
			w := G.NewMatrix(g, G.Float64, G.WithShape(m, n), G.WithValue(wv.Clone()), G.WithName("w"))
			var c *G.Node
			if ours {
				c = G.Must(G.ApplyOp(matMulOp{ta: tc.ta, tb: tc.tb}, a, b))
			} else {
				x, y := a, b
				if tc.ta {
					x = G.Must(G.Transpose(a))
				}
				if tc.tb {
					y = G.Must(G.Transpose(b))
				}
				c = G.Must(G.Mul(x, y))
			}
			loss := G.Must(G.Sum(G.Must(G.HadamardProd(c, w))))
			if _, err := G.Grad(loss, a, b); err != nil {
				t.Fatal(err)
			}
			vm := G.NewTapeMachine(g)
			defer vm.Close()
			if err := vm.RunAll(); err != nil {
				t.Fatal(err)
			}
			da, _ := a.Grad()
			db, _ := b.Grad()
			return [][]float64{append([]float64(nil), c.Value().Data().([]float64)...),
				append([]float64(nil), da.Data().([]float64)...), append([]float64(nil), db.Data().([]float64)...)}
		}
		got, want := run(true), run(false)
		for j, what := range []string{"value", "dA", "dB"} {
			if len(got[j]) != len(want[j]) {
				t.Fatalf("ta=%v tb=%v %s: %d values, want %d", tc.ta, tc.tb, what, len(got[j]), len(want[j]))
			}
			for i := range got[j] {
				if math.Abs(got[j][i]-want[j][i]) > 1e-12 {
					t.Fatalf("ta=%v tb=%v %s[%d] = %v, gorgonia %v", tc.ta, tc.tb, what, i, got[j][i], want[j][i])
				}
			}
		}
	}
}

// TestMulRowsMatchesGemm: the row kernel gives gonum's Gemm result bit for
// bit (same summation order, zero factors adding ±0), for A and Aᵀ, on
// narrow and wide sizes that run serially and over the cores, with exact
// zeros in A.
func TestMulRowsMatchesGemm(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, sz := range [][3]int{{1, 1, 1}, {5, 3, 7}, {300, 64, 7}, {2708, 16, 32}, {40, 1433, 16}, {300, 70, 64}, {9, 3, 133}, {13, 5000, 5}} {
		m, k, n := sz[0], sz[1], sz[2]
		for _, ta := range []bool{false, true} {
			rows, cols := m, k
			if ta {
				rows, cols = k, m
			}
			ad := make([]float64, rows*cols)
			for i := range ad {
				if rng.Float64() < 0.3 {
					continue // exact zeros, as after ReLU or dropout
				}
				ad[i] = rng.NormFloat64()
			}
			bd := randSlice(rng, k*n)
			a := blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: ad}
			want := make([]float64, m*n)
			tr := blas.NoTrans
			if ta {
				tr = blas.Trans
			}
			blas64.Gemm(tr, blas.NoTrans, 1, a, blas64.General{Rows: k, Cols: n, Stride: n, Data: bd}, 0, blas64.General{Rows: m, Cols: n, Stride: n, Data: want})
			got := make([]float64, m*n)
			for i := range got {
				got[i] = math.NaN() // stale contents are overwritten
			}
			mulRows(ta, m, n, a, bd, got)
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("%v ta=%v: entry %d = %v, Gemm %v", sz, ta, i, got[i], want[i])
				}
			}
		}
	}
}

// TestMulDotsMatchesGemm: A·Bᵀ as sums of rows gives gonum's Gemm result
// bit for bit, on sizes gonum takes whole (fewer than four 64×64 blocks of
// C) and in blocks of 64 inner indices, with inner sizes that leave 0–3
// terms after the groups of four.
func TestMulDotsMatchesGemm(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, sz := range [][3]int{{1, 1, 1}, {5, 3, 7}, {3, 5, 1}, {64, 9, 64}, {2708, 7, 64}, {100, 70, 100}, {300, 130, 200}, {130, 66, 9}, {270, 7, 48}, {270, 16, 7}, {67, 9, 3}} {
		m, k, n := sz[0], sz[1], sz[2]
		ad := make([]float64, m*k)
		for i := range ad {
			if rng.Float64() < 0.3 {
				continue
			}
			ad[i] = rng.NormFloat64() * math.Exp(4*rng.NormFloat64())
		}
		bd := randSlice(rng, n*k)
		a := blas64.General{Rows: m, Cols: k, Stride: k, Data: ad}
		b := blas64.General{Rows: n, Cols: k, Stride: k, Data: bd}
		want := make([]float64, m*n)
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, a, b, 0, blas64.General{Rows: m, Cols: n, Stride: n, Data: want})
		got := make([]float64, m*n)
		for i := range got {
			got[i] = math.NaN()
		}
		mulDots(m, n, a, b, got)
		for i := range got {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%v: entry %d = %v, Gemm %v", sz, i, got[i], want[i])
			}
		}
	}
}

// TestRowSumsMatchGorgonia: RowSums and its gradient agree exactly with
// gorgonia's Sum along axis 1.
func TestRowSumsMatchGorgonia(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, k := range []int{1, 7, 131} {
		xv, vv := randSlice(rng, 6*k), randSlice(rng, 6)
		run := func(own bool) (val, grad []float64) {
			return reduceAndGrad(t, 6, k, xv, vv, func(x *G.Node) *G.Node {
				if own {
					return RowSums(x)
				}
				return G.Must(G.Sum(x, 1))
			})
		}
		ov, og := run(true)
		gv, gg := run(false)
		if !equalSlices(ov, gv) || !equalSlices(og, gg) {
			t.Fatalf("width %d: RowSums %v grad %v; gorgonia %v grad %v", k, ov, og, gv, gg)
		}
	}
}

// reduceAndGrad runs reduce on an n×k matrix x (values xv) and
// differentiates Σ reduce(x)∘v (values vv) with respect to x on gorgonia's
// TapeMachine: the reduction's values and x's gradient.
func reduceAndGrad(t *testing.T, n, k int, xv, vv []float64, reduce func(*G.Node) *G.Node) (val, grad []float64) {
	t.Helper()
	g := G.NewGraph()
	x := G.NewMatrix(g, G.Float64, G.WithShape(n, k), G.WithValue(tensor.New(tensor.WithShape(n, k), tensor.WithBacking(append([]float64(nil), xv...)))), G.WithName("x"))
	s := reduce(x)
	m := s.Shape()[0]
	v := G.NewVector(g, G.Float64, G.WithShape(m), G.WithValue(tensor.New(tensor.WithShape(m), tensor.WithBacking(append([]float64(nil), vv...)))), G.WithName("v"))
	loss := G.Must(G.Sum(G.Must(G.HadamardProd(s, v))))
	if _, err := G.Grad(loss, x); err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	gx, err := x.Grad()
	if err != nil {
		t.Fatal(err)
	}
	return append([]float64(nil), s.Value().Data().([]float64)...), append([]float64(nil), gx.Data().([]float64)...)
}

// TestColSumsMatchGorgonia: ColSums and its gradient give the bits of
// gorgonia's Sum along axis 0 (row 0 copied, −0 kept, then rows added in
// turn), for narrow and wide rows, split over the cores by columns when
// large.
func TestColSumsMatchGorgonia(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 5, 270, 2000} {
		for _, d := range []int{1, 7, 16, 70, 150} {
			xv, vv := randSlice(rng, n*d), randSlice(rng, d)
			for j := 0; j < d; j += 3 {
				xv[j] = math.Copysign(0, -1)
			}
			run := func(own bool) (val, grad []float64) {
				return reduceAndGrad(t, n, d, xv, vv, func(x *G.Node) *G.Node {
					if own {
						return ColSums(x)
					}
					return G.Must(G.Sum(x, 0))
				})
			}
			ov, og := run(true)
			gv, gg := run(false)
			for i := range ov {
				if math.Float64bits(ov[i]) != math.Float64bits(gv[i]) {
					t.Fatalf("%d×%d: ColSums[%d] = %v, gorgonia %v", n, d, i, ov[i], gv[i])
				}
			}
			for i := range og {
				if math.Float64bits(og[i]) != math.Float64bits(gg[i]) {
					t.Fatalf("%d×%d: gradient[%d] = %v, gorgonia %v", n, d, i, og[i], gg[i])
				}
			}
		}
	}
}

// TestRowNormalizeBits: row normalisation and its gradient give the bits
// of the row-by-row formulas (rows split over the cores, and a core's
// chunk into blocks of rows), for row counts of 1 to 37 and 2,000 and
// widths 1, 7, 16 and 48, zero rows (one in a chunk's second block) and a
// row of infinite norm included.
func TestRowNormalizeBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, n := range []int{1, 3, 4, 5, 8, 11, 37, 2000} {
		for _, k := range []int{1, 7, 16, 48} {
			x, dy := make([]float64, n*k), make([]float64, n*k)
			for i := range x {
				x[i], dy[i] = rng.NormFloat64(), rng.NormFloat64()
			}
			if n > 2 {
				clear(x[2*k : 3*k]) // a zero row
			}
			if n > 420 {
				clear(x[420*k : 421*k]) // in the second block of a chunk at k = 48
			}
			if n > 4 {
				x[4*k] = math.Inf(1) // a row of infinite norm
			}
			xt := tensor.New(tensor.WithShape(n, k), tensor.WithBacking(x))
			gt := tensor.New(tensor.WithShape(n, k), tensor.WithBacking(dy))
			y, err := rowNorm.UsePreallocDo(nil, xt)
			if err != nil {
				t.Fatal(err)
			}
			dx, err := rowNormGradOp{labelled{label: "g", arity: 2}}.UsePreallocDo(nil, xt, gt)
			if err != nil {
				t.Fatal(err)
			}
			yd, dxd := y.(*tensor.Dense).Data().([]float64), dx.(*tensor.Dense).Data().([]float64)
			for i := 0; i < n; i++ {
				r, g := x[i*k:(i+1)*k], dy[i*k:(i+1)*k]
				s, dot := 0.0, 0.0
				for c, v := range r {
					s += v * v
					dot += v * g[c]
				}
				for c, v := range r {
					wantY, wantDx := 0.0, 0.0
					if s != 0 {
						norm := math.Sqrt(s)
						wantY = v * (1 / norm)
						wantDx = (g[c] - v/norm*(dot/norm)) / norm
					}
					same := func(a, b float64) bool {
						return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
					}
					if !same(yd[i*k+c], wantY) || !same(dxd[i*k+c], wantDx) {
						t.Fatalf("n %d, k %d, row %d, col %d: %v, %v; want %v, %v", n, k, i, c, yd[i*k+c], dxd[i*k+c], wantY, wantDx)
					}
				}
			}
		}
	}
}

// TestLogSoftmaxBits: the row-wise log-softmax and its gradient give the
// bits of the formulas row by row (math.Max, math.Exp and math.Log per
// entry), on random rows and on rows with NaN, ±Inf and signed zeros, at
// widths with and without a tail of the four-lane exponential, on 23 rows
// and on 23,003 (split over the cores, in blocks of rows within each
// part: the odd rows again astride the first block's end).
func TestLogSoftmaxBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 30))
	nan, inf, neg0 := math.NaN(), math.Inf(1), math.Copysign(0, -1)
	odd := [][]float64{{nan, 1, 2}, {1, nan, 2}, {inf, nan, 1}, {neg0, 0, neg0}, {neg0, neg0, neg0}, {0, neg0, -1}, {-inf, -inf, -inf}, {inf, 1, 2}, {-800, 0, 1}}
	for _, sz := range [][2]int{{23, 3}, {23, 7}, {23, 16}, {23003, 3}, {23003, 16}} {
		n, k := sz[0], sz[1]
		x, dy := randSlice(rng, n*k), randSlice(rng, n*k)
		for i := range x {
			x[i] *= 5
		}
		for i, r := range odd {
			copy(x[i*k:], r)
			if b := rowBlock(k); n > b+len(odd) {
				copy(x[(b-4+i)*k:], r)
			}
		}
		want, wantDx := make([]float64, n*k), make([]float64, n*k)
		for i := range n {
			r := x[i*k : (i+1)*k]
			mx := math.Inf(-1)
			for _, v := range r {
				mx = math.Max(mx, v)
			}
			s := 0.0
			for _, v := range r {
				s += math.Exp(v - mx)
			}
			lse := mx + math.Log(s)
			for c, v := range r {
				want[i*k+c] = v - lse
			}
			g := 0.0
			for _, v := range dy[i*k : (i+1)*k] {
				g += v
			}
			for c := range k {
				wantDx[i*k+c] = dy[i*k+c] - math.Exp(want[i*k+c])*g
			}
		}
		mat := func(d []float64) *tensor.Dense { return tensor.New(tensor.WithShape(n, k), tensor.WithBacking(d)) }
		y, err := logSoftmax.Do(mat(x))
		if err != nil {
			t.Fatal(err)
		}
		dx, err := logSoftmaxGradOp{labelled{label: "grad", arity: 2}}.Do(mat(append([]float64(nil), want...)), mat(dy))
		if err != nil {
			t.Fatal(err)
		}
		for what, p := range map[string][2][]float64{"y": {y.Data().([]float64), want}, "dx": {dx.Data().([]float64), wantDx}} {
			for i := range p[1] {
				if a, b := p[0][i], p[1][i]; math.Float64bits(a) != math.Float64bits(b) && !(math.IsNaN(a) && math.IsNaN(b)) {
					t.Fatalf("width %d: %s[%d] = %v, want %v (row %v)", k, what, i, a, b, x[i/k*k:i/k*k+k])
				}
			}
		}
	}
}

// TestMatMulBiasIsAddRowOfMatMul: x·W + b in one op gives the bits of
// AddRow(MatMul(x, W), b), in value and in the gradients with respect to
// x, W and b, on sizes that run serially and over the cores (the last in
// chunks of two blocks of rows, each over two blocks of the inner index).
func TestMatMulBiasIsAddRowOfMatMul(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, sz := range [][3]int{{1, 1, 1}, {5, 3, 7}, {700, 33, 20}, {300, 64, 64}, {4200, 260, 64}} {
		m, k, n := sz[0], sz[1], sz[2]
		xv, wv, bv, cv := randSlice(rng, m*k), randSlice(rng, k*n), randSlice(rng, n), randSlice(rng, m*n)
		run := func(fused bool) [][]float64 {
			g := G.NewGraph()
			x := G.NewMatrix(g, G.Float64, G.WithShape(m, k), G.WithValue(tensor.New(tensor.WithShape(m, k), tensor.WithBacking(slices.Clone(xv)))), G.WithName("x"))
			w := G.NewMatrix(g, G.Float64, G.WithShape(k, n), G.WithValue(tensor.New(tensor.WithShape(k, n), tensor.WithBacking(slices.Clone(wv)))), G.WithName("w"))
			b := G.NewVector(g, G.Float64, G.WithShape(n), G.WithValue(tensor.New(tensor.WithShape(n), tensor.WithBacking(slices.Clone(bv)))), G.WithName("b"))
			c := G.NewMatrix(g, G.Float64, G.WithShape(m, n), G.WithValue(tensor.New(tensor.WithShape(m, n), tensor.WithBacking(slices.Clone(cv)))), G.WithName("c"))
			var y *G.Node
			if fused {
				y = MatMulBias(x, w, b)
			} else {
				y = AddRow(MatMul(x, w), b)
			}
			loss := G.Must(G.Sum(G.Must(G.HadamardProd(y, c))))
			if _, err := G.Grad(loss, x, w, b); err != nil {
				t.Fatal(err)
			}
			vm := G.NewTapeMachine(g)
			defer vm.Close()
			if err := vm.RunAll(); err != nil {
				t.Fatal(err)
			}
			out := [][]float64{slices.Clone(y.Value().Data().([]float64))}
			for _, p := range []*G.Node{x, w, b} {
				d, _ := p.Grad()
				out = append(out, slices.Clone(d.Data().([]float64)))
			}
			return out
		}
		got, want := run(true), run(false)
		for j, what := range []string{"value", "dx", "dW", "db"} {
			for i := range want[j] {
				if math.Float64bits(got[j][i]) != math.Float64bits(want[j][i]) {
					t.Fatalf("%v %s[%d] = %v, AddRow(MatMul) %v", sz, what, i, got[j][i], want[j][i])
				}
			}
		}
	}
}

// BenchmarkColSums: column sums of tall matrices, the bias gradients of
// full-batch layers (the 10⁶-row ones stream from memory).
func BenchmarkColSums(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		for _, d := range []int{16, 32, 64} {
			b.Run(fmt.Sprintf("%dx%d", n, d), func(b *testing.B) {
				x := make([]float64, n*d)
				for i := range x {
					x[i] = float64(i%7) * 0.5
				}
				xt := tensor.New(tensor.WithShape(n, d), tensor.WithBacking(x))
				out := tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(d))
				b.SetBytes(int64(8 * n * d))
				for i := 0; i < b.N; i++ {
					if _, err := (colSumOp{}).UsePreallocDo(out, xt); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkLogSoftmax: the log-softmax of a five-class output layer and
// its gradient, over a training tenth of a 10⁵- and a 10⁶-node graph.
func BenchmarkLogSoftmax(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{10_000, 100_000} {
		const k = 5
		x := tensor.New(tensor.WithShape(n, k), tensor.WithBacking(randSlice(rng, n*k)))
		dy := tensor.New(tensor.WithShape(n, k), tensor.WithBacking(randSlice(rng, n*k)))
		y := tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(n, k))
		dx := tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(n, k))
		b.Run(fmt.Sprintf("fwd/%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := logSoftmax.UsePreallocDo(y, x); err != nil {
					b.Fatal(err)
				}
			}
		})
		grad := logSoftmaxGradOp{labelled{label: "grad", arity: 2}}
		b.Run(fmt.Sprintf("grad/%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := grad.UsePreallocDo(dx, y, dy); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBatchNorm: a BatchNorm training pass (batch statistics) and its
// gradient, at GAP's shapes on cora (270×48) and on training tenths of
// 10⁵- and 10⁶-node graphs.
func BenchmarkBatchNorm(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sz := range [][2]int{{270, 48}, {10_000, 32}, {100_000, 48}} {
		n, k := sz[0], sz[1]
		x := tensor.New(tensor.WithShape(n, k), tensor.WithBacking(randSlice(rng, n*k)))
		dy := tensor.New(tensor.WithShape(n, k), tensor.WithBacking(randSlice(rng, n*k)))
		y := tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(n, k))
		dx := tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(n, k))
		op := newStandardize(0, 1e-5, 0.1)
		grad := &standardizeGradOp{fwd: op}
		b.Run(fmt.Sprintf("fwd/%dx%d", n, k), func(b *testing.B) {
			for b.Loop() {
				if _, err := op.UsePreallocDo(y, x); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("grad/%dx%d", n, k), func(b *testing.B) {
			for b.Loop() {
				if _, err := grad.UsePreallocDo(dx, x, dy); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
