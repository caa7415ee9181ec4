package nn

import (
	"strings"
	"testing"
)

// The tenth outside audit of issue 38: DropoutRows with repeated rows
// ([0, 0, 1, 1, …]) gave two batch rows one mask row, tying two examples'
// masks by their batch positions; on a DP-SGD path a removed example
// shifts which examples share a mask (‖Δ‖ up to 4·C for a declared C, 400
// mask draws). Repeated rows are refused at the build, and the rows are
// copied, so a caller changing its slice afterwards cannot tie them.
func TestDropoutRowsRefusesRepeatedRows(t *testing.T) {
	for _, tc := range []struct {
		rows []int
		want string
	}{
		{[]int{0, 1, 2, 3}, ""},
		{[]int{0, 0, 1, 1}, "row 0 twice"},
		{[]int{3, 1, 2, 1}, "row 1 twice"},
	} {
		m := NewModel(1)
		x := m.Input("x", make([]float64, 8), 4, 2)
		var d *dropout
		err := Build(func() error {
			m.DropoutRows(x, 0.5, tc.rows, 4)
			d = m.modal[len(m.modal)-1].(*dropout)
			return nil
		})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("rows %v refused: %v", tc.rows, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("rows %v: want a refusal naming %q, got %v", tc.rows, tc.want, err)
		case tc.want == "":
			tc.rows[1] = tc.rows[0] // the caller's slice, changed after the build
			if d.rows[1] == d.rows[0] {
				t.Errorf("DropoutRows keeps the caller's slice: changing it tied rows 0 and 1")
			}
		}
	}
}
