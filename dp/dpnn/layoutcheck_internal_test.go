package dpnn

import (
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The layout check must catch what the whitelist would miss. No model the
// whitelist accepts is known to break the claim, so each case builds a
// plain construction (no row-locality check) on a loss that breaks it,
// gives the check the batch inputs of the honest loss beside it, and asks
// whether the check alone refuses the path.
func TestLayoutCheckCatchesWhatTheWhitelistMisses(t *testing.T) {
	const rows, f, c = 8, 3, 2
	for _, tc := range []struct {
		name, refused string // "" when the path must pass
	}{
		{"honest", ""},
		// a ±1 weight by batch position (the first outside audit's break):
		// the norms stay, the directions flip
		{"position-weight", "away from the sum of their clipped sums alone"},
		// loss row r reads row r+1 (the last row twice, row 0 never): an
		// example's loss is counted by position
		{"next-row", "per-sample norm²"},
		// a weight by position that is the same for rows 0 and 1 and
		// differs after: norms equal alone and in order, not reversed
		{"late-rows", "norm²"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := nn.NewModel(1)
			xin := m.Input("Xb", make([]float64, rows*f), rows, f)
			var ce *nn.CrossEntropy
			var loss *G.Node
			err := nn.Build(func() error {
				lin := layers.NewLinear(m, "lin", f, c, true, layers.InitPyG)
				m.StartRecording()
				y := lin.Forward(nn.ReLU(xin))
				m.StopRecording()
				var err error
				if ce, err = nn.NewCrossEntropy(m, y, "loss"); err != nil {
					return err
				}
				w := make([]float64, rows)
				for r := range w {
					switch tc.name {
					case "position-weight":
						w[r] = float64(1 - 2*(r%2))
					case "late-rows":
						w[r] = 1
						if r >= 2 {
							w[r] = 3
						}
					}
				}
				col := G.Must(G.Reshape(ce.PerRow, tensor.Shape{rows, 1}))
				switch tc.name {
				case "honest":
					loss = ce.PerRow
					return nil
				case "next-row":
					idx := make([]int, rows)
					for r := range idx {
						idx[r] = min(r+1, rows-1)
					}
					col = G.Must(nn.GatherRows(col, idx, "next"))
				default:
					col = nn.ScaleRows(col, G.NewConstant(tensor.New(tensor.WithShape(rows), tensor.WithBacking(w)), G.WithName("w")))
				}
				loss = G.Must(G.Reshape(col, tensor.Shape{rows}))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			cfg := SGDConfig{Clip: 1, Multiplier: 1, Samples: rows, Capacity: rows, Rate: 1}
			s, err := BuildSGD(m, loss, cfg, dp.NewSource(1), nil)
			if err != nil {
				t.Fatal(err)
			}
			rl, err := m.CheckRowLocal(ce.PerRow, rows, 0)
			if err != nil {
				t.Fatal(err)
			}
			s.inputs = rl
			err = s.checkLayouts()
			if tc.refused == "" {
				if err != nil {
					t.Fatalf("an honest path was refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.refused) || !strings.Contains(err.Error(), "layout check") {
				t.Fatalf("want a refusal naming %q, got %v", tc.refused, err)
			}
			t.Log(err)
		})
	}
}
