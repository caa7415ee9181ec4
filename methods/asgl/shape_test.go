package asgl

import (
	"testing"

	"github.com/dpgnn/dpgnn/methods/run"
)

// The tenth outside audit of issue 38: a private ASGL run was refused when
// the node count equalled the discriminator's batch rows, 2P =
// 4·DiscBatch·Paths (128 here): the GAN player's one-hot lookup SpMM(ends,
// E) then has as many columns as batch rows, which the row-locality check
// refuses by shape. The player now takes one pair more of capacity then.
func TestPrivateASGLAcceptsNodeCountEqualToBatchRows(t *testing.T) {
	for _, nodes := range []int{129, 128} {
		g, d := tinySigned(t, nodes)
		cfg := tinyConfig(d)
		if 4*cfg.DiscBatch*cfg.Paths != 128 {
			t.Fatalf("the test configuration's 2P is %d, want 128", 4*cfg.DiscBatch*cfg.Paths)
		}
		target, err := New(cfg).AuditTarget(context(g, 8), run.AuditOptions{Release: "disc"})
		if err == nil {
			_, err = target.Prepare(g)
		}
		if err != nil {
			t.Errorf("n = %d: a legitimate construction refused: %v", g.N, err)
		}
	}
}
