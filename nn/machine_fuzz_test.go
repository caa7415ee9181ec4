package nn_test

// The fifteenth outside audit of issue 38: a differential fuzz of nn's machine (segments, slot reuse, unaryCopy,
// fresh views, kept nodes). Random forward graphs whose output row i depends
// only on input row i (row-wise nn ops, whole operands made of constants in
// several ways: a leaf, a constant product, a unary op of one, a Reshape view,
// ReLU of one). Checks: changing row 0 (or the last row) of X changes no other
// output row (bitwise), and a rerun after restoring X gives the same bits.
// With 150 forward graphs it fails on the tree before the fourteenth
// audit's fix (a chain reusing the slot of a value it reads whole); the
// backward and training runs are shorter here (DPGNN_FUZZ_N sets all three).

import (
	"fmt"
	"math"
	"math/rand"
	randv2 "math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

type fuzzGen struct {
	m   *nn.Model
	rng *rand.Rand
	n   int
	log []string
}

func (g *fuzzGen) constMat(r, c int) *G.Node {
	v := make([]float64, r*c)
	for i := range v {
		v[i] = g.rng.Float64()*2 - 1
	}
	g.n++
	return G.NewConstant(tensor.New(tensor.WithShape(r, c), tensor.WithBacking(v)), G.WithName(fmt.Sprintf("K%d", g.n)), G.In(g.m.G))
}

func (g *fuzzGen) constVec(c int) *G.Node {
	v := make([]float64, c)
	for i := range v {
		v[i] = g.rng.Float64()*2 - 1
	}
	g.n++
	return G.NewConstant(tensor.New(tensor.WithShape(c), tensor.WithBacking(v)), G.WithName(fmt.Sprintf("v%d", g.n)), G.In(g.m.G))
}

// whole returns an r×c matrix without batch rows, made one of several ways.
func (g *fuzzGen) whole(r, c int) *G.Node {
	switch g.rng.Intn(6) {
	case 0:
		return g.constMat(r, c)
	case 1:
		k := 1 + g.rng.Intn(8)
		g.log = append(g.log, fmt.Sprintf("whole %dx%d = K·K", r, c))
		return nn.MatMul(g.constMat(r, k), g.constMat(k, c))
	case 2:
		k := 1 + g.rng.Intn(8)
		g.log = append(g.log, fmt.Sprintf("whole %dx%d = Neg(K·K)", r, c))
		return G.Must(G.Neg(nn.MatMul(g.constMat(r, k), g.constMat(k, c))))
	case 3:
		k := 1 + g.rng.Intn(8)
		g.log = append(g.log, fmt.Sprintf("whole %dx%d = Reshape(K·K)", r, c))
		p := nn.MatMul(g.constMat(c, k), g.constMat(k, r)) // c×r, reshaped to r×c
		return G.Must(G.Reshape(p, tensor.Shape{r, c}))
	case 4:
		k := 1 + g.rng.Intn(8)
		g.log = append(g.log, fmt.Sprintf("whole %dx%d = ReLU(K·K)", r, c))
		return nn.ReLU(nn.MatMul(g.constMat(r, k), g.constMat(k, c)))
	default:
		g.log = append(g.log, fmt.Sprintf("whole %dx%d = K + K", r, c))
		return G.Must(G.Add(g.constMat(r, c), g.constMat(r, c)))
	}
}

func (g *fuzzGen) width() int {
	ws := []int{4, 8, 16, 64, 128, 256, 512}
	return ws[g.rng.Intn(len(ws))]
}

func fuzzBuild(t *testing.T, seed int64, rows int) (*nn.Model, *G.Node, *G.Node, []string) {
	m := nn.NewModel(1)
	g := &fuzzGen{m: m, rng: rand.New(rand.NewSource(seed))}
	d := 8
	x := m.Input("X", make([]float64, rows*d), rows, d)
	var out *G.Node
	err := nn.Build(func() error {
		vals := []*G.Node{x}
		steps := 6 + g.rng.Intn(10)
		for s := 0; s < steps; s++ {
			a := vals[g.rng.Intn(len(vals))]
			ca := a.Shape()[1]
			var y *G.Node
			var err error
			switch g.rng.Intn(14) {
			case 0, 1, 2:
				w := g.width()
				y = nn.MatMul(a, g.whole(ca, w))
				g.log = append(g.log, fmt.Sprintf("MatMul -> %d", w))
			case 3:
				y = nn.ReLU(a)
				g.log = append(g.log, "ReLU")
			case 4:
				y = G.Must(G.Neg(a))
				g.log = append(g.log, "Neg")
			case 5:
				y, err = nn.RowNormalize(a)
				g.log = append(g.log, "RowNormalize")
			case 6:
				y, err = nn.LogSoftmax(a)
				g.log = append(g.log, "LogSoftmax")
			case 7:
				b := vals[g.rng.Intn(len(vals))]
				y = nn.ConcatCols(a, b)
				g.log = append(g.log, "ConcatCols")
			case 8:
				var v *G.Node
				if g.rng.Intn(2) == 0 {
					v = g.constVec(ca)
				} else {
					v = nn.ColSums(g.whole(3, ca))
				}
				y = nn.MulRow(a, v)
				g.log = append(g.log, "MulRow")
			case 9:
				y = nn.AddRow(a, g.constVec(ca))
				g.log = append(g.log, "AddRow")
			case 10:
				w := g.width()
				var b *G.Node
				if g.rng.Intn(2) == 0 {
					b = g.constVec(w)
				} else {
					b = nn.ColSums(g.whole(2, w))
				}
				y = nn.MatMulBias(a, g.whole(ca, w), b)
				g.log = append(g.log, fmt.Sprintf("MatMulBias -> %d", w))
			case 11:
				// same-width partner
				var b *G.Node
				for _, v := range vals {
					if v.Shape()[1] == ca && v != a {
						b = v
					}
				}
				if b == nil {
					b = nn.MatMul(x, g.whole(d, ca))
				}
				y = G.Must(G.HadamardProd(a, b))
				g.log = append(g.log, "Hadamard")
			case 12:
				// gorgonia ops between row-wise steps: a scalar product
				// (elemBinOp, prealloc), Square (unaryCopy), a reshape to
				// rows×c and back (fresh views)
				switch g.rng.Intn(3) {
				case 0:
					y = G.Must(G.Mul(a, G.NewConstant(0.5)))
					g.log = append(g.log, "Mul 0.5")
				case 1:
					y = G.Must(G.Square(a))
					g.log = append(g.log, "Square")
				default:
					y = G.Must(G.Reshape(G.Must(G.Reshape(a, tensor.Shape{rows * ca})), tensor.Shape{rows, ca}))
					g.log = append(g.log, "Reshape twice")
				}
			default:
				y = nn.SELU(a)
				g.log = append(g.log, "SELU")
			}
			if err != nil {
				return err
			}
			vals = append(vals, y)
		}
		// output: the last value and a random other one, to 4 columns
		last := vals[len(vals)-1]
		other := vals[g.rng.Intn(len(vals))]
		o1 := nn.MatMul(last, g.whole(last.Shape()[1], 4))
		o2 := nn.MatMul(other, g.whole(other.Shape()[1], 4))
		out = G.Must(G.Add(o1, o2))
		return nil
	})
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	return m, x, out, g.log
}

func TestMachineFuzzKeepsRowsApart(t *testing.T) {
	n := 150
	if s := os.Getenv("DPGNN_FUZZ_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	const rows, d = 512, 8
	bad := 0
	for seed := int64(0); seed < int64(n); seed++ {
		m, x, out, log := fuzzBuild(t, seed, rows)
		r, err := m.NewRunner(out)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		base := make([]float64, rows*d)
		rng := rand.New(rand.NewSource(seed + 1000))
		for i := range base {
			base[i] = rng.Float64()*2 - 1
		}
		run := func(xv []float64) []float64 {
			copy(nn.Values(x), xv)
			if err := r.Run(); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			return append([]float64(nil), nn.Values(out)...)
		}
		y0 := run(base)
		for _, pr := range []int{0, rows - 1, 37} {
			xv := append([]float64(nil), base...)
			for j := 0; j < d; j++ {
				xv[pr*d+j] = 5*rng.Float64() - 2.5
			}
			y1 := run(xv)
			changed := 0
			for i := 0; i < rows; i++ {
				if i == pr {
					continue
				}
				for j := 0; j < 4; j++ {
					a, b := y0[i*4+j], y1[i*4+j]
					if a != b && !(math.IsNaN(a) && math.IsNaN(b)) {
						changed++
						break
					}
				}
			}
			if changed > 0 {
				bad++
				t.Errorf("seed %d: changing row %d changed %d other rows; ops %v", seed, pr, changed, log)
			}
		}
		y2 := run(base)
		for i := range y0 {
			if y0[i] != y2[i] && !(math.IsNaN(y0[i]) && math.IsNaN(y2[i])) {
				t.Errorf("seed %d: rerun differs at %d (%v vs %v); ops %v", seed, i, y0[i], y2[i], log)
				bad++
				break
			}
		}
	}
	t.Logf("%d graphs, %d failures", n, bad)
}

// TestMachineFuzzBackwardKeepsRowsApart: the same random graphs, with a parameter
// P (h1 = X·P first) and the loss Σ out∘C; the runner computes the
// gradients with respect to h1 (row-wise in X: row i reads only row i) and
// P (a reduction over all rows, placed among the row-wise steps by
// placeReductions). Changing one row of X may change only that row of dh1.
// Run: go test ./nn -run TestMachineFuzzBackwardKeepsRowsApart -v
func TestMachineFuzzBackwardKeepsRowsApart(t *testing.T) {
	n := 60
	if s := os.Getenv("DPGNN_FUZZ_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	const rows, d = 512, 8
	bad := 0
	for seed := int64(0); seed < int64(n); seed++ {
		m := nn.NewModel(1)
		g := &fuzzGen{m: m, rng: rand.New(rand.NewSource(seed))}
		x := m.Input("X", make([]float64, rows*d), rows, d)
		w1 := g.width()
		P := m.NewParam("P", nn.GlorotUniform(), d, w1)
		var dh1, dP *G.Node
		z := m.Input("Z", make([]float64, rows*w1), rows, w1) // a zero probe: dZ = dh1
		err := nn.Build(func() error {
			h1 := G.Must(G.Add(nn.MatMul(x, P.Node), z))
			vals := []*G.Node{h1}
			steps := 4 + g.rng.Intn(10)
			for s := 0; s < steps; s++ {
				a := vals[g.rng.Intn(len(vals))]
				ca := a.Shape()[1]
				var y *G.Node
				var err error
				switch g.rng.Intn(12) {
				case 0, 1, 2:
					w := g.width()
					y = nn.MatMul(a, g.whole(ca, w))
					g.log = append(g.log, fmt.Sprintf("MatMul -> %d", w))
				case 3:
					y = nn.ReLU(a)
					g.log = append(g.log, "ReLU")
				case 4:
					y = G.Must(G.Neg(a))
					g.log = append(g.log, "Neg")
				case 5:
					y, err = nn.RowNormalize(a)
					g.log = append(g.log, "RowNormalize")
				case 6:
					y, err = nn.LogSoftmax(a)
					g.log = append(g.log, "LogSoftmax")
				case 7:
					b := vals[g.rng.Intn(len(vals))]
					y = nn.ConcatCols(a, b)
					g.log = append(g.log, "ConcatCols")
				case 8:
					y = nn.MulRow(a, g.constVec(ca))
					g.log = append(g.log, "MulRow")
				case 9:
					y = nn.AddRow(a, g.constVec(ca))
					g.log = append(g.log, "AddRow")
				case 10:
					w := g.width()
					y = nn.MatMulBias(a, g.whole(ca, w), g.constVec(w))
					g.log = append(g.log, fmt.Sprintf("MatMulBias -> %d", w))
				default:
					y = nn.SELU(a)
					g.log = append(g.log, "SELU")
				}
				if err != nil {
					return err
				}
				vals = append(vals, y)
			}
			last := vals[len(vals)-1]
			other := vals[g.rng.Intn(len(vals))]
			o1 := nn.MatMul(last, g.whole(last.Shape()[1], 4))
			o2 := nn.MatMul(other, g.whole(other.Shape()[1], 4))
			out := G.Must(G.Add(o1, o2))
			loss := G.Must(G.Sum(G.Must(G.HadamardProd(out, g.constMat(rows, 4)))))
			gr, err := m.Grad(loss, z, P.Node)
			if err != nil {
				return err
			}
			dh1, dP = gr[0], gr[1]
			return nil
		})
		if err != nil {
			t.Logf("seed %d: build: %v", seed, err)
			continue
		}
		r, err := m.NewRunner(dh1, dP)
		if err != nil {
			t.Logf("seed %d: runner: %v", seed, err)
			continue
		}
		base := make([]float64, rows*d)
		rng := rand.New(rand.NewSource(seed + 1000))
		for i := range base {
			base[i] = rng.Float64()*2 - 1
		}
		run := func(xv []float64) []float64 {
			copy(nn.Values(x), xv)
			if err := r.Run(); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			return append([]float64(nil), nn.Values(dh1)...)
		}
		y0 := run(base)
		for _, pr := range []int{0, rows - 1, 37} {
			xv := append([]float64(nil), base...)
			for j := 0; j < d; j++ {
				xv[pr*d+j] = 5*rng.Float64() - 2.5
			}
			y1 := run(xv)
			changed := 0
			for i := 0; i < rows; i++ {
				if i == pr {
					continue
				}
				for j := 0; j < w1; j++ {
					a, b := y0[i*w1+j], y1[i*w1+j]
					if a != b && !(math.IsNaN(a) && math.IsNaN(b)) {
						changed++
						break
					}
				}
			}
			if changed > 0 {
				bad++
				t.Errorf("seed %d: changing row %d changed %d other rows of dh1; ops %v", seed, pr, changed, g.log)
			}
		}
		y2 := run(base)
		for i := range y0 {
			if y0[i] != y2[i] && !(math.IsNaN(y0[i]) && math.IsNaN(y2[i])) {
				t.Errorf("seed %d: rerun differs at %d; ops %v", seed, i, g.log)
				bad++
				break
			}
		}
	}
	t.Logf("%d graphs, %d failures", n, bad)
}

// TestMachineFuzzTrainingKeepsRowsApart: training mode (dropout masks on, drawn from
// the same stream before every run), the training machine (CompileGradients
// with dZ as an extra root): row-wise chains with dropout masks and their
// gradients. Changing one row of X may change only that row of dZ.
// Run: go test ./nn -run TestMachineFuzzTrainingKeepsRowsApart -v
func TestMachineFuzzTrainingKeepsRowsApart(t *testing.T) {
	n := 60
	if s := os.Getenv("DPGNN_FUZZ_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	const rows, d = 512, 8
	bad := 0
	for seed := int64(0); seed < int64(n); seed++ {
		m := nn.NewModel(1)
		g := &fuzzGen{m: m, rng: rand.New(rand.NewSource(seed))}
		x := m.Input("X", make([]float64, rows*d), rows, d)
		w1 := g.width()
		P := m.NewParam("P", nn.GlorotUniform(), d, w1)
		z := m.Input("Z", make([]float64, rows*w1), rows, w1)
		var dz *G.Node
		err := nn.Build(func() error {
			h1 := G.Must(G.Add(nn.MatMul(x, P.Node), z))
			vals := []*G.Node{h1}
			steps := 4 + g.rng.Intn(10)
			for s := 0; s < steps; s++ {
				a := vals[g.rng.Intn(len(vals))]
				ca := a.Shape()[1]
				var y *G.Node
				var err error
				switch g.rng.Intn(9) {
				case 0, 1:
					w := g.width()
					y = nn.MatMul(a, g.whole(ca, w))
					g.log = append(g.log, fmt.Sprintf("MatMul -> %d", w))
				case 2, 3:
					y = m.Dropout(a, 0.3)
					g.log = append(g.log, "Dropout")
				case 4:
					y = nn.ReLU(a)
					g.log = append(g.log, "ReLU")
				case 5:
					y, err = nn.RowNormalize(a)
					g.log = append(g.log, "RowNormalize")
				case 6:
					b := vals[g.rng.Intn(len(vals))]
					y = nn.ConcatCols(a, b)
					g.log = append(g.log, "ConcatCols")
				case 7:
					w := g.width()
					y = nn.MatMulBias(a, g.whole(ca, w), g.constVec(w))
					g.log = append(g.log, fmt.Sprintf("MatMulBias -> %d", w))
				default:
					y, err = nn.LogSoftmax(a)
					g.log = append(g.log, "LogSoftmax")
				}
				if err != nil {
					return err
				}
				vals = append(vals, y)
			}
			last := vals[len(vals)-1]
			other := vals[g.rng.Intn(len(vals))]
			out := G.Must(G.Add(nn.MatMul(last, g.whole(last.Shape()[1], 4)), nn.MatMul(other, g.whole(other.Shape()[1], 4))))
			loss := G.Must(G.Sum(G.Must(G.HadamardProd(out, g.constMat(rows, 4)))))
			gr, err := m.Grad(loss, z, P.Node)
			if err != nil {
				return err
			}
			dz = gr[0]
			return m.CompileGradients(loss, []*G.Node{gr[1]}, nil, dz)
		})
		if err != nil {
			t.Logf("seed %d: build: %v", seed, err)
			continue
		}
		base := make([]float64, rows*d)
		rng := rand.New(rand.NewSource(seed + 1000))
		for i := range base {
			base[i] = rng.Float64()*2 - 1
		}
		run := func(xv []float64) []float64 {
			copy(nn.Values(x), xv)
			m.SetDropoutStream(randv2.New(randv2.NewPCG(7, 7)))
			if _, err := m.StepMode(true); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			return append([]float64(nil), nn.Values(dz)...)
		}
		y0 := run(base)
		for _, pr := range []int{0, rows - 1, 37} {
			xv := append([]float64(nil), base...)
			for j := 0; j < d; j++ {
				xv[pr*d+j] = 5*rng.Float64() - 2.5
			}
			y1 := run(xv)
			changed := 0
			for i := 0; i < rows; i++ {
				if i == pr {
					continue
				}
				for j := 0; j < w1; j++ {
					a, b := y0[i*w1+j], y1[i*w1+j]
					if a != b && !(math.IsNaN(a) && math.IsNaN(b)) {
						changed++
						break
					}
				}
			}
			if changed > 0 {
				bad++
				t.Errorf("seed %d: changing row %d changed %d other rows of dZ; ops %v", seed, pr, changed, g.log)
			}
		}
		y2 := run(base)
		for i := range y0 {
			if y0[i] != y2[i] && !(math.IsNaN(y0[i]) && math.IsNaN(y2[i])) {
				t.Errorf("seed %d: rerun differs at %d; ops %v", seed, i, g.log)
				bad++
				break
			}
		}
	}
	t.Logf("%d graphs, %d failures", n, bad)
}
