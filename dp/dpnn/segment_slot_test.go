package dpnn_test

// The fourteenth outside audit of issue 38: nn's machine runs a chain of row-wise steps (a segment)
// block of rows by block, and lets a later step of the chain reuse the
// slot of a WHOLE input read by an earlier step of the same chain (freed
// after its last reader). Here V = K1·K2 (constants: a whole value, read
// whole by the row-wise product A = ReLU(X·Wc)·V) has the size of the
// product B = A·U (rows × 512); B takes V's slot, so block 1 of the chain
// writes its rows of B (examples 0..15's data) into V before block 2..4's
// rows of A read V. Rows ≥ 16 (other examples) then read examples 0..15's
// data; every step runs, the classifier accepts (V: constants, read whole;
// U, U2: parameters with stock LinearWeight rules) and the layout check
// passes (its ≤ 3 synthetic examples sit in the first block). Before the
// fix, removing example 0 moved the clipped sum by 32–34·C for a declared
// C; now no step writes into a slot its chain reads whole.

import (
	"math"
	"runtime"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func segslotC(m *nn.Model, name string, r, c int, f func(i, j int) float64) *G.Node {
	v := make([]float64, r*c)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			v[i*c+j] = f(i, j)
		}
	}
	return G.NewConstant(tensor.New(tensor.WithShape(r, c), tensor.WithBacking(v)), G.WithName(name), G.In(m.G))
}

// segslotRelease returns S/C (noise-free) for n one-row examples whose
// features are feat(e); example 0 absent when removed0.
func segslotRelease(t *testing.T, n int, removed0 bool, feat func(e, j int) float64, clip float64) ([]float64, error) {
	const d, wide, mid, classes = 4, 512, 64, 2
	capacity := n
	start := make([]int, n+1)
	for e := 0; e < n; e++ {
		start[e+1] = start[e] + 1
	}
	x, err := dpnn.NewExamples(n, start, nil, 1, 1, "row")
	if err != nil {
		t.Fatal(err)
	}
	if removed0 {
		x.Present = make([]bool, n)
		for e := 1; e < n; e++ {
			x.Present[e] = true
		}
	}
	cfg := dpnn.PrivateConfig{N: n, R: 1, Change: 1, BatchSize: n, Epochs: 1, Clip: clip, What: "row"}
	m := nn.NewModel(1)
	xin := m.Input("Xb", make([]float64, capacity*d), capacity, d)
	var ce *nn.CrossEntropy
	err = nn.Build(func() error {
		lu := layers.NewLinear(m, "U", mid, wide, false, layers.InitPyG)
		lu2 := layers.NewLinear(m, "U2", wide, classes, false, layers.InitPyG)
		m.StartRecording()
		h := nn.MatMul(xin, segslotC(m, "Wc", d, wide, func(i, j int) float64 { return math.Sin(float64(3*i + j + 1)) }))
		V := nn.MatMul(segslotC(m, "K1", wide, 4, func(i, j int) float64 { return math.Cos(float64(i + 2*j)) }),
			segslotC(m, "K2", 4, mid, func(i, j int) float64 { return math.Sin(float64(i*j + 1)) })) // wide×mid = rows×wide entries
		a := nn.MatMul(nn.ReLU(h), V)                                             // rows×mid: V's last reader
		b := m.Record(nn.MatMul(a, lu.W.Node), lu.W, nn.LinearWeight{Input: a})   // rows×wide: takes V's slot
		c := m.Record(nn.MatMul(b, lu2.W.Node), lu2.W, nn.LinearWeight{Input: b}) // rows×classes
		m.StopRecording()
		ce, err = nn.NewCrossEntropy(m, c, "loss")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sgd, err := dpnn.Private(m, ce.PerRow, nil, x, cfg, 0, nil, dp.NewSource(7))
	if err != nil {
		return nil, err
	}
	lab := make([]int, capacity)
	fill := func(bt *dpnn.Batch) error {
		buf := nn.Values(xin)
		var rows []int
		for k, e := range bt.Examples {
			for r := bt.First[k]; r < bt.First[k+1]; r++ {
				for j := 0; j < d; j++ {
					buf[d*r+j] = feat(e, j)
				}
				rows = append(rows, r)
			}
		}
		return ce.SetRows(rows, lab)
	}
	rel, err := sgd.ReleaseExamples(fill)
	if err != nil {
		return nil, err
	}
	for i := range rel {
		rel[i] *= cfg.Rate() * float64(n) / clip // in units of C
	}
	return rel, nil
}

func segslotDist(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return math.Sqrt(s)
}

func TestDPSGDSegmentKeepsWholeInputs(t *testing.T) {
	for _, procs := range []int{1, runtime.GOMAXPROCS(0)} {
		old := runtime.GOMAXPROCS(procs)
		const n = 64
		for _, big := range []float64{1, 1000} {
			feat := func(e, j int) float64 {
				if e == 0 {
					return big * float64(j%2*2-1) // example 0: ±big
				}
				return math.Sin(float64(7*e+j) * 0.31)
			}
			// the modified neighbour: example 0's features times −1 (same slot layout)
			featMod := func(e, j int) float64 {
				if e == 0 {
					return -feat(e, j)
				}
				return feat(e, j)
			}
			for _, clip := range []float64{1e-6, 1} {
				a, errA := segslotRelease(t, n, false, feat, clip)
				a2, errA2 := segslotRelease(t, n, false, feat, clip)
				b, errB := segslotRelease(t, n, true, feat, clip)
				mo, errM := segslotRelease(t, n, false, featMod, clip)
				if errA != nil || errB != nil || errM != nil || errA2 != nil {
					t.Logf("GOMAXPROCS %d big %v C %v: refused: G %v / G′ %v / modified %v", procs, big, clip, errA, errB, errM)
					continue
				}
				t.Logf("GOMAXPROCS %d big %v C %v: ‖S_G − S_G(again)‖ = %.4g·C, removal ‖Δ‖ = %.4f·C, modification ‖Δ‖ = %.4f·C (claim: ≤ 1·C removal, ≤ 2·C modification... R·Change·C with Change = 1)",
					procs, big, clip, segslotDist(a, a2), segslotDist(a, b), segslotDist(a, mo))
				if segslotDist(a, b) > 1+1e-6 || segslotDist(a, mo) > 1+1e-6 {
					t.Errorf("BREAK GOMAXPROCS %d big %v C %v: removal ‖Δ‖ = %.4f·C, modification ‖Δ‖ = %.4f·C > R·Change·C = C", procs, big, clip, segslotDist(a, b), segslotDist(a, mo))
				}
			}
		}
		runtime.GOMAXPROCS(old)
	}
}
