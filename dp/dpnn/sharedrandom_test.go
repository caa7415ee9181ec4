package dpnn_test

import (
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	spoof "github.com/dpgnn/dpgnn/dp/dpnn/internal/spoof/gorgonia"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The eleventh outside audit of issue 38: a dropout mask over a value that
// holds no batch rows is drawn once per run of the graph, and DP-SGD runs
// the graph once per chunk of a step, so every example of a chunk shares
// it; which examples share a chunk depends on the layout, which a removed
// example shifts. With a chunk of two rows, DropConnect (Dropout on W)
// reached ‖Δ‖ 2.83·C and a mask on a gorgonia constant read whole 3.85·C,
// for a declared C (600 mask draws; ε ≥ 9.8 estimated at z = 1 against a
// claim of 4.38). Every mask whose input holds no batch rows is refused
// at construction; masks over batch rows draw their bits per row and stay.
// The twelfth audit did the same with noise drawn once per run on a
// constant (nn.AddNoise, or gorgonia's GaussianRandomNode) normalised into
// a random direction, gated by the data so that the layout check never met
// it: 5.3·C. Every random op on values without batch rows is refused, and
// so is an op of another package there (nothing tells whether it draws),
// and, since the thirteenth audit (gorgonia's BatchNorm of a constant read
// the machine's reused buffer: 6.58·C), any gorgonia op not on a short list
// of deterministic ops that read only their inputs.
func TestPrivateRefusesRandomnessSharedByAChunk(t *testing.T) {
	const n, f, nodes = 8, 3, 5
	identity := func(m *nn.Model) *G.Node {
		return G.NewConstant(tensor.New(tensor.WithShape(3, 3), tensor.WithBacking([]float64{1, 0, 0, 0, 1, 0, 0, 0, 1})), G.WithName("K"), G.In(m.G))
	}
	for _, mode := range []string{"activations", "dropconnect", "constant", "sparse-constant", "noise", "gorgonia-random", "author-op", "gorgonia-batchnorm"} {
		x, cfg, capacity, m, xin := oneRowModel(t, n, f, 1)
		var ce *nn.CrossEntropy
		mustBuild(t, func() error {
			lin := layers.NewLinear(m, "lin", f, 3, false, layers.InitPyG)
			h := xin
			switch mode {
			case "activations": // a mask over batch rows: per-row bits
				h = m.Dropout(xin, 0.5)
			case "sparse-constant": // features of every node, masked, gathered by a batch matrix
				feats := nn.NewSparse("X", graphs.FromCOO(nodes, f, []int{0, 1, 2, 3, 4}, []int{0, 1, 2, 0, 1}, nil))
				m.SparseDropout(feats, 0.5)
				a := emptySparse("A", capacity, nodes)
				h = G.Must(nn.SpMM(a, G.Must(nn.SpMM(feats, G.NewConstant(tensor.New(tensor.WithShape(f, f), tensor.WithBacking(make([]float64, f*f))), G.WithName("K"), G.In(m.G))))))
				h = G.Must(G.Add(h, xin))
			}
			m.StartRecording()
			var y *G.Node
			switch mode {
			case "dropconnect":
				y = m.Record(nn.MatMul(h, m.Dropout(lin.W.Node, 0.5)), lin.W, nn.LinearWeight{Input: h})
			default:
				y = lin.Forward(h)
			}
			m.StopRecording()
			switch mode { // (x·W)·K′, K′ from a constant K read whole
			case "constant":
				y = nn.MatMul(y, m.Dropout(identity(m), 0.5))
			case "noise":
				k, err := nn.AddNoise(identity(m), &nn.Noise{Name: "K", Std: 1, Src: dp.NewSource(2)})
				if err != nil {
					return err
				}
				y = nn.MatMul(y, k)
			case "gorgonia-random":
				y = nn.MatMul(y, G.GaussianRandomNode(m.G, G.Float64, 0, 1, 3, 3))
			case "author-op":
				y = nn.MatMul(y, G.Must(spoof.SumAll(identity(m))))
			case "gorgonia-batchnorm": // read the machine's reused buffer (the thirteenth audit)
				bn, _, _, _, err := G.BatchNorm(identity(m), nil, nil, 0.9, 1e-5)
				if err != nil {
					return err
				}
				y = nn.MatMul(y, bn)
			}
			var err error
			ce, err = nn.NewCrossEntropy(m, y, "loss")
			return err
		})
		_, err := noiselessPrivate(m, ce.PerRow, x, cfg)
		switch {
		case mode == "activations" && err != nil:
			t.Errorf("%s: a per-row mask was refused: %v", mode, err)
		case mode == "author-op" && (err == nil || !strings.Contains(err.Error(), "an op of neither nn nor gorgonia")):
			t.Errorf("%s: want the op refused, got %v", mode, err)
		case mode == "gorgonia-batchnorm" && (err == nil || !strings.Contains(err.Error(), "not one of the gorgonia ops accepted there")):
			t.Errorf("%s: want the op refused, got %v", mode, err)
		case mode != "activations" && mode != "author-op" && mode != "gorgonia-batchnorm" && (err == nil || !strings.Contains(err.Error(), "every example of a chunk would share it")):
			t.Errorf("%s: want the shared mask refused, got %v", mode, err)
		}
	}
}
