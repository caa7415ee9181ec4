package nn

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func binaryRows(rows, cols, perRow int) *graphs.CSR {
	a := &graphs.CSR{Rows: rows, Cols: cols, Indptr: make([]int, rows+1)}
	for r := 0; r < rows; r++ {
		for k := 0; k < perRow; k++ {
			a.Indices = append(a.Indices, (r+k*7)%cols)
		}
		slices.Sort(a.Indices[a.Indptr[r]:]) // canonical rows, as Sparse keeps them
		a.Indptr[r+1] = len(a.Indices)
	}
	return a // Data nil: every stored value is 1
}

// TestSparseDropoutFollowsBatchRefills: in training the matrix holds only
// the kept entries of the rows set last (a batch refill replaces the
// matrix), about 1−p of them, scaled by 1/(1−p), in their rows and columns;
// evaluation mode restores those rows; the caller's matrix is never
// written.
func TestSparseDropoutFollowsBatchRefills(t *testing.T) {
	m := NewModel(3)
	s := NewSparse("X", &graphs.CSR{Rows: 400, Cols: 50, Indptr: make([]int, 401)}) // empty at build time
	m.SparseDropout(s, 0.3)
	batch := binaryRows(400, 50, 10)
	if err := s.Set(batch); err != nil {
		t.Fatal(err)
	}
	m.SetTraining(true)
	a := s.A
	if a == batch {
		t.Fatal("training mode left the batch in place")
	}
	for i := 0; i < a.Rows; i++ {
		want := batch.Indices[batch.Indptr[i]:batch.Indptr[i+1]]
		w := 0
		for k := a.Indptr[i]; k < a.Indptr[i+1]; k++ {
			if v := a.Value(k); math.Abs(v-1/0.7) > 1e-12 {
				t.Fatalf("kept entry %d = %v, want 1/0.7", k, v)
			}
			for w < len(want) && want[w] != a.Indices[k] {
				w++ // a subsequence of the row's entries, in order
			}
			if w == len(want) {
				t.Fatalf("row %d: kept column %d is not one of the row's %v", i, a.Indices[k], want)
			}
			w++
		}
	}
	n, kept := float64(batch.NNZ()), float64(a.NNZ())
	// 4000 Bernoulli(0.7): sd ≈ 29; 5 sd either side.
	if n != 4000 || math.Abs(kept-0.7*n) > 5*math.Sqrt(n*0.3*0.7) {
		t.Fatalf("%v of %v entries kept, want about %v", kept, n, 0.7*n)
	}
	if batch.Data != nil {
		t.Fatal("dropout wrote into the caller's matrix")
	}
	m.SetTraining(false)
	if s.A != batch {
		t.Fatal("evaluation mode did not restore the rows as set")
	}
	// A second refill with other rows is picked up too.
	if err := s.Set(binaryRows(400, 50, 3)); err != nil {
		t.Fatal(err)
	}
	m.SetTraining(true)
	if k := s.A.NNZ(); k == 0 || k == 1200 || s.A.Rows != 400 {
		t.Fatalf("after the second refill: %d of 1200 entries kept", k)
	}
}

// TestDropLanes: the drop probability T/2^w of the lane test is p exactly
// where p·2^w is an integer for some w ≤ 32 (one bit per entry at p = ½),
// and within 2⁻³² above p otherwise.
func TestDropLanes(t *testing.T) {
	for _, tc := range []struct {
		p float64
		w uint
	}{{0.5, 1}, {0.25, 2}, {0.75, 2}, {0.125, 4}, {0.7, 32}, {0.1, 32}, {1.0 / 3, 32}, {1e-9, 32}, {0.999999, 32}} {
		w, th := dropLanes(tc.p)
		q := float64(th) / float64(uint64(1)<<w)
		if w != tc.w || q < tc.p || q-tc.p > 1.0/(1<<32) || (w < 32 && q != tc.p) {
			t.Errorf("p = %v: lanes of %d bits, threshold %d (probability %v); want %d bits", tc.p, w, th, q, tc.w)
		}
	}
}

// floatMask is the mask as float64 entries (0 dropped, 1 kept) drawn by the
// lane rule directly, one entry after another: the masks of bits must
// keep exactly these entries (and did as float masks before).
func floatMask(n int, p float64, seed uint64) []float64 {
	w, th := dropLanes(p)
	out := make([]float64, n)
	for b := 0; b*maskBlock < n; b++ {
		rng := rand.NewPCG(seed, uint64(b))
		for i := b * maskBlock; i < min((b+1)*maskBlock, n); {
			u := rng.Uint64()
			for l := 0; l < 64/int(w) && i < min((b+1)*maskBlock, n); l++ {
				if u&(1<<w-1) >= th {
					out[i] = 1
				}
				u >>= w
				i++
			}
		}
	}
	return out
}

// TestDropoutMasks: masks keep exactly the entries of the lane rule
// (floatMask), drop about p of the entries at every lane width,
// lanes of one draw are independent (pairs of neighbours drop together
// with probability p²), and a mask is the same on one CPU and on several.
func TestDropoutMasks(t *testing.T) {
	const n = 3*maskBlock + 123
	for _, p := range []float64{0.5, 0.25, 0.7} {
		get := func(procs int) []bool {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			m := make([]uint64, (n+63)/64)
			for i := range m {
				m[i] = ^uint64(0) // fillMask writes every word
			}
			fillMask(m, n, p, 42)
			if m[len(m)-1]>>(n&63) != 0 {
				t.Fatalf("p = %v: bits set past the last entry", p)
			}
			d := make([]bool, n)
			ref := floatMask(n, p, 42)
			for i := range d {
				d[i] = m[i>>6]>>(i&63)&1 == 0
				if d[i] != (ref[i] == 0) {
					t.Fatalf("p = %v: entry %d dropped %v, the float mask says %v", p, i, d[i], ref[i])
				}
			}
			return d
		}
		one, many := get(1), get(4)
		dropped, pairs := 0, 0
		for i, x := range one {
			if x != many[i] {
				t.Fatalf("p = %v: entry %d differs between 1 and 4 CPUs", p, i)
			}
			if x {
				dropped++
				if i%2 == 1 && one[i-1] {
					pairs++
				}
			}
		}
		sd := math.Sqrt(n * p * (1 - p))
		if math.Abs(float64(dropped)-p*n) > 5*sd {
			t.Errorf("p = %v: %d of %d dropped", p, dropped, n)
		}
		h := float64(n / 2)
		if math.Abs(float64(pairs)-p*p*h) > 5*math.Sqrt(h*p*p*(1-p*p)) {
			t.Errorf("p = %v: %d neighbour pairs both dropped, want about %v", p, pairs, p*p*h)
		}
	}
}

// TestTransposedProductPaths: a transposed product of width 64 gives the
// bits of MulDense over the transpose whether it goes through the cached
// transpose (a matrix not replaced since the last transposed product) or
// scatters (one replaced by Set, as sparse dropout and batch refills do),
// and only a replaced matrix scatters (the transpose is not rebuilt).
func TestTransposedProductPaths(t *testing.T) {
	a, b := binaryRows(300, 50, 1), binaryRows(300, 50, 2)
	const k = 64
	x := tensor.New(tensor.WithShape(300, k), tensor.WithBacking(make([]float64, 300*k)))
	for i, xs := 0, x.Data().([]float64); i < len(xs); i++ {
		xs[i] = float64(i%97) - 48.5
	}
	s := NewSparse("x", a)
	op := &spmmOp{s: s, trans: true}
	check := func(m *graphs.CSR, what string) {
		t.Helper()
		v, err := op.UsePreallocDo(nil, x)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float64, m.Cols*k)
		m.Transpose().MulDense(x.Data().([]float64), k, want)
		got := v.(*tensor.Dense).Data().([]float64)
		for e := range want {
			if math.Float64bits(got[e]) != math.Float64bits(want[e]) {
				t.Fatalf("%s: entry %d %v, want %v", what, e, got[e], want[e])
			}
		}
	}
	check(a, "a constant matrix")
	built := s.at
	if built == nil {
		t.Fatal("a constant matrix was not multiplied through its transpose")
	}
	if err := s.Set(b); err != nil {
		t.Fatal(err)
	}
	check(b, "a replaced matrix")
	if s.at != built || len(s.at.Indices) != a.NNZ() {
		t.Fatal("a replaced matrix rebuilt the transpose instead of scattering")
	}
	check(b, "the replaced matrix again")
}

// TestDropoutRows: DropoutRows on some rows of a matrix gives those rows
// of Dropout on the whole matrix, in a model's training step (the mask
// drawn from the same point of the model's stream) and as an op over rows
// split over the cores, at a width whose rows straddle the mask's words
// and at one of whole words.
func TestDropoutRows(t *testing.T) {
	for _, k := range []int{7, 64} {
		dropoutRows(t, k)
	}
}

func dropoutRows(t *testing.T, k int) {
	const n, p = 5003, 0.5
	rng := rand.New(rand.NewPCG(5, uint64(k)))
	xv := randSlice(rng, n*k)
	var rows []int
	for i := 0; i < n; i++ {
		if rng.IntN(3) > 0 {
			rows = append(rows, i)
		}
	}
	sel := make([]float64, 0, len(rows)*k)
	for _, r := range rows {
		sel = append(sel, xv[r*k:(r+1)*k]...)
	}
	run := func(some bool) []float64 {
		m := NewModel(11)
		w := m.NewParam("w", Constant(1), k, 1)
		var y *G.Node
		err := Build(func() error {
			if some {
				y = m.DropoutRows(m.Input("x", sel, len(rows), k), p, rows, n)
			} else {
				y = m.Dropout(m.Input("x", xv, n, k), p)
			}
			m.Keep(y)
			return m.Compile(G.Must(G.Sum(MatMul(y, w.Node))), nil)
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.StepMode(true); err != nil {
			t.Fatal(err)
		}
		return append([]float64(nil), y.Value().Data().([]float64)...)
	}
	full, some := run(false), run(true)
	dropped := 0
	for i, r := range rows {
		for c := range k {
			a, b := some[i*k+c], full[r*k+c]
			if math.Float64bits(a) != math.Float64bits(b) {
				t.Fatalf("width %d, row %d (%d of the whole), column %d: %v, the whole matrix's %v", k, i, r, c, a, b)
			}
			if a == 0 {
				dropped++
			}
		}
	}
	if dropped == 0 || dropped == len(some) {
		t.Fatalf("%d of %d entries dropped", dropped, len(some))
	}
}
