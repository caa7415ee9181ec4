package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
)

func binaryRows(rows, cols, perRow int) *graphs.CSR {
	a := &graphs.CSR{Rows: rows, Cols: cols, Indptr: make([]int, rows+1)}
	for r := 0; r < rows; r++ {
		for k := 0; k < perRow; k++ {
			a.Indices = append(a.Indices, (r+k*7)%cols)
		}
		a.Indptr[r+1] = len(a.Indices)
	}
	return a // Data nil: every stored value is 1
}

// TestSparseDropoutFollowsBatchRefills: dropout acts on the rows set last
// (a batch refill replaces the matrix), at rate p with survivors scaled by
// 1/(1−p); evaluation mode restores those rows' values; the caller's matrix
// is never written.
func TestSparseDropoutFollowsBatchRefills(t *testing.T) {
	m := NewModel(3)
	s := NewSparse("X", &graphs.CSR{Rows: 400, Cols: 50, Indptr: make([]int, 401)}) // empty at build time
	m.SparseDropout(s, 0.3)
	batch := binaryRows(400, 50, 10)
	if err := s.Set(batch); err != nil {
		t.Fatal(err)
	}
	m.SetTraining(true)
	zero, kept := 0, 0
	for k := 0; k < s.A.NNZ(); k++ {
		switch v := s.A.Value(k); {
		case v == 0:
			zero++
		case math.Abs(v-1/0.7) < 1e-12:
			kept++
		default:
			t.Fatalf("entry %d = %v, want 0 or 1/0.7", k, v)
		}
	}
	n := float64(s.A.NNZ())
	if n != 4000 || zero+kept != 4000 {
		t.Fatalf("%v stored entries, %d zeroed + %d kept", n, zero, kept)
	}
	// 4000 Bernoulli(0.3): sd ≈ 29; 5 sd either side.
	if math.Abs(float64(zero)-0.3*n) > 5*math.Sqrt(n*0.3*0.7) {
		t.Fatalf("%d of %v entries dropped, want about %v", zero, n, 0.3*n)
	}
	if batch.Data != nil {
		t.Fatal("dropout wrote into the caller's matrix")
	}
	m.SetTraining(false)
	for k := 0; k < s.A.NNZ(); k++ {
		if s.A.Value(k) != 1 {
			t.Fatalf("evaluation mode: entry %d = %v, want the clean 1", k, s.A.Value(k))
		}
	}
	// A second refill with other rows is picked up too.
	if err := s.Set(binaryRows(400, 50, 3)); err != nil {
		t.Fatal(err)
	}
	m.SetTraining(true)
	zero = 0
	for k := 0; k < s.A.NNZ(); k++ {
		if s.A.Value(k) == 0 {
			zero++
		}
	}
	if s.A.NNZ() != 1200 || zero == 0 || zero == 1200 {
		t.Fatalf("after the second refill: %d entries, %d dropped", s.A.NNZ(), zero)
	}
}

// TestDropThresholdIsFloat64Test: comparing the low 53 bits with
// dropThreshold(p) decides exactly as rng.Float64() < p, at random draws
// and at the boundary draws ⌊p·2⁵³⌋ and ⌈p·2⁵³⌉.
func TestDropThresholdIsFloat64Test(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, p := range []float64{1e-9, 0.1, 0.25, 0.5, 0.7, 1.0 / 3, 0.999999} {
		th := dropThreshold(p)
		x := p * (1 << 53)
		cand := []uint64{uint64(math.Floor(x)), uint64(math.Ceil(x)), uint64(math.Floor(x)) - 1, uint64(math.Ceil(x)) + 1}
		for i := 0; i < 10000; i++ {
			cand = append(cand, rng.Uint64())
		}
		for _, u := range cand {
			low := u & (1<<53 - 1)
			if (float64(low)/(1<<53) < p) != (low < th) {
				t.Fatalf("p=%v draw %d: Float64 test and threshold %d disagree", p, low, th)
			}
		}
	}
}
