package sage

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/graphs/degree"
	"github.com/dpgnn/dpgnn/graphs/gen"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/trainers"
)

// TestHugeFeatures (from the outside audit of issue 38): a node v whose
// features are mag. Inside the public range (1e30, even through 64 hops)
// one DP-SGD step releases only finite coordinates on G as on G − v (v's
// overflowing gradient is clipped out, not NaN); outside it (1e155, 1e300)
// the library path refuses G naming only the bound, where it used to
// release NaN in every coordinate on G only.
func TestHugeFeatures(t *testing.T) {
	for _, tc := range []struct {
		mag    float64
		hops   int
		refuse bool
	}{{1e30, 1, false}, {1e30, 64, false}, {1e155, 1, true}, {1e300, 1, true}} {
		for _, side := range []string{"G", "G-v"} {
			g := gen.Path(1)
			g.X.Dense = slices.Clone(g.X.Dense)
			for j := 0; j < g.X.F; j++ {
				g.X.Dense[j] = tc.mag
			}
			var train []int
			for i := 0; i < g.N; i++ {
				train = append(train, i)
			}
			g.Split.Train, g.Split.Val, g.Split.Test = train, nil, nil
			if side == "G-v" {
				g = withoutNode(g, 0)
			}
			cfg := DefaultConfig()
			cfg.Hidden, cfg.Clip, cfg.Hops = 64, 1, tc.hops
			cfg.Flags = degree.Flags{MaxDegree: 2, DegreeBound: "public"}
			cfg.BatchSize = 1000
			ctx := &methods.Context{Graph: g, Level: methods.Node, Epsilon: 1, Delta: 1e-5, Seed: 3, Selection: trainers.SelectLast}
			priv, net, err := run.PrivateNet(ctx, &Sage{cfg: cfg})
			if tc.refuse && side == "G" {
				if err == nil || !strings.Contains(err.Error(), "public range") {
					t.Errorf("mag %g hops %d on G: got %v, want the feature-range refusal", tc.mag, tc.hops, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("mag %g hops %d on %s: %v", tc.mag, tc.hops, side, err)
			}
			rel, err := priv.SGD.ReleaseExamples(net.Fill)
			if err != nil {
				t.Fatalf("mag %g hops %d on %s: step: %v", tc.mag, tc.hops, side, err)
			}
			bad := 0
			for _, v := range rel {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					bad++
				}
			}
			if bad > 0 {
				t.Errorf("mag %g hops %d on %s: %d of %d released coordinates non-finite", tc.mag, tc.hops, side, bad, len(rel))
			}
		}
	}
}

// TestNoAbortOnPrivateLoss (from the outside audit of issue 38): with
// extreme public hyperparameters (lr 1e4, 24 hops) and v's features at
// 1e30 (inside the public range), training used to abort on G ("loss
// became NaN", the private noiseless loss) while G − v released a model.
// The abort is now on public values only, so G and G − v end alike.
func TestNoAbortOnPrivateLoss(t *testing.T) {
	var errs [2]error
	for s, side := range []string{"G", "G-v"} {
		g := gen.Path(4)
		g.X.Dense = slices.Clone(g.X.Dense)
		for j := 0; j < g.X.F; j++ {
			g.X.Dense[j] = 1e30
		}
		g.Split.Train, g.Split.Val, g.Split.Test = []int{0, 1, 2, 3}, nil, []int{1, 2, 3}
		if side == "G-v" {
			g = withoutNode(g, 0)
		}
		cfg := DefaultConfig()
		cfg.Hidden, cfg.Hops, cfg.LR, cfg.Epochs, cfg.BatchSize = 16, 24, 1e4, 20, 4
		cfg.Flags = degree.Flags{MaxDegree: 2, DegreeBound: "public"}
		ctx := &methods.Context{Graph: g, Level: methods.Node, Epsilon: 1, Delta: 1e-5, Seed: 3, Selection: trainers.SelectLast}
		_, errs[s] = New(cfg).Run(ctx)
		t.Logf("%s: %v", side, errs[s])
		if errs[s] != nil && strings.Contains(errs[s].Error(), "loss became") {
			t.Errorf("%s: aborted on the private loss: %v", side, errs[s])
		}
	}
	if (errs[0] == nil) != (errs[1] == nil) {
		t.Errorf("G and G − v end differently: %v / %v", errs[0], errs[1])
	}
}
