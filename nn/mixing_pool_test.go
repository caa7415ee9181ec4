package nn

import (
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
)

// TestCheckPools: a pooling product (output rows × batch rows) passes when
// output row k reads only batch example k's rows and a padding output row
// only padding rows, and is refused, naming the op and both sides, for
// every other entry; a stored zero is not an entry.
func TestCheckPools(t *testing.T) {
	// batch rows 0,1: example 0; row 2: example 1; row 3: padding.
	groups := &RowGroups{Of: []int{0, 0, 1, -1}, Samples: 2}
	pool := func(src, dst []int, val []float64) []Mixing {
		return []Mixing{{Op: "SpMM(pool)", S: NewSparse("pool", graphs.FromCOO(3, 4, src, dst, val))}}
	}
	for _, tc := range []struct {
		name     string
		src, dst []int
		val      []float64
		want     string // "" passes
	}{
		{"block pool", []int{0, 0, 1}, []int{0, 1, 2}, []float64{0.5, 0.5, 1}, ""},
		{"padding output reads padding", []int{0, 2}, []int{0, 3}, []float64{1, 1}, ""},
		{"stored zero across examples", []int{0, 1}, []int{2, 2}, []float64{0, 1}, ""},
		{"output 0 reads example 1", []int{0, 1}, []int{2, 2}, []float64{1, 1}, "pools row 2 (batch example 1) into output row 0 (batch example 0)"},
		{"output 1 reads example 0", []int{1}, []int{1}, []float64{1}, "pools row 1 (batch example 0) into output row 1 (batch example 1)"},
		{"example reads a padding row", []int{0}, []int{3}, []float64{1}, "pools row 3 (a padding row) into output row 0"},
		{"padding output reads example 1", []int{2}, []int{2}, []float64{1}, "pools row 2 (batch example 1) into output row 2 (a padding row)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckPools(pool(tc.src, tc.dst, tc.val), groups, nil)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && err == nil:
				t.Fatal("accepted")
			case tc.want != "" && (!strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "SpMM(pool)")):
				t.Fatalf("error %q, want it to name SpMM(pool) and %q", err, tc.want)
			}
		})
	}
}
