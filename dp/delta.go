package dp

import (
	"fmt"
	"math"
	"strconv"
)

// DeltaAuto returns the δ of the "auto" rule of GAP's and ProGAP's code:
// 10^−d, where d is the number of decimal digits of units, the number of
// private units (directed edges for edge-level DP, training nodes for
// node-level DP).
//
// This is that code's delta = 1/10^len(str(units)), which realises the
// papers' "δ smaller than the inverse number of private units" (ProGAP
// §5.3; CARIBOU §6, which reuses GAP's accounting), so δ is always below
// 1/units: 2,708 → 1e-4; 10,556 → 1e-5 (Cora's directed edges);
// 19,804 → 1e-5; 840,210 → 1e-6; 2,117,924 → 1e-7. GCON sets δ = 1/|E|
// instead (GCON §VI-A) and DPAR uses fixed values: those are not this rule.
func DeltaAuto(units int) (float64, error) {
	if units < 1 {
		return 0, fmt.Errorf("dp: delta auto needs at least one private unit, got %d", units)
	}
	return math.Pow10(-len(strconv.Itoa(units))), nil
}
