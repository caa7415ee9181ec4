package nn_test

import (
	"fmt"

	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

// scaleRule is the per-sample rule of s in a custom op y = x∘s (a learnable
// scale per column): example k's gradient is Σ_{rows r of k} δᵣ∘xᵣ.
type scaleRule struct{ x *G.Node }

func (r scaleRule) NormSq(delta *G.Node, groups *nn.RowGroups, name string) (*G.Node, error) {
	return nn.GhostNormSq(nil, G.Must(G.HadamardProd(delta, r.x)), groups, name)
}

func (r scaleRule) ClippedSum(cd *G.Node) (*G.Node, error) {
	return nn.ColSums(G.Must(G.HadamardProd(cd, r.x))), nil
}

func (scaleRule) String() string { return "column-scale" }

// Inputs is what the rule reads besides δ: x, whose rows DP-SGD checks
// belong to δ's examples.
func (r scaleRule) Inputs() ([]*G.Node, []*nn.Sparse) { return []*G.Node{r.x}, nil }

// A custom op made private: Model.Record registers the rule of its
// parameter on the recorded (DP-SGD) path, and Model.CheckPerSample tests
// every recorded rule against per-example gradients computed one example at
// a time. Here each example is two rows of a batch of five (one padding).
func ExampleModel_CheckPerSample() {
	const rows, f, classes = 5, 3, 2
	x := [][]float64{{1, 0, 2}, {0.5, -1, 0}, {-1, 1, 1}, {2, 0.5, -0.5}, {0, 0, 1}, {1, 1, 0}}
	labels := []int{0, 1, 1, 0, 1, 0}

	m := nn.NewModel(1)
	buf := make([]float64, rows*f)
	groups := &nn.RowGroups{Of: make([]int, rows)}
	var ce *nn.CrossEntropy
	var in *G.Node
	err := nn.Build(func() error {
		in = m.Input("X", buf, rows, f)
		s := m.NewParam("scale", nn.Uniform(1), f)
		w := m.NewParam("W", nn.GlorotUniform(), f, classes)
		m.StartRecording()
		h := m.Record(nn.MulRow(in, s.Node), s, scaleRule{x: in}) // the custom op
		logits := m.RecordLinear(nn.MatMul(h, w.Node), w, nil, h, nil)
		m.StopRecording()
		var err error
		ce, err = nn.NewCrossEntropy(m, logits, "loss")
		return err
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// fill loads examples (rows 2e and 2e+1 of x) into the batch, as a
	// DP-SGD step does: example k of the list is group k.
	fill := func(examples []int) error {
		clear(buf)
		lab := make([]int, rows)
		var live []int
		for r := range groups.Of {
			groups.Of[r] = -1
		}
		for k, e := range examples {
			for i := range 2 {
				r := 2*k + i
				copy(buf[r*f:], x[2*e+i])
				groups.Of[r], lab[r] = k, labels[2*e+i]
				live = append(live, r)
			}
		}
		groups.Samples = len(examples)
		if err := nn.SetValue(in, buf); err != nil {
			return err
		}
		return ce.SetRows(live, lab)
	}
	res, err := m.CheckPerSample(nn.PerSampleCheck{Loss: ce.PerRow, Groups: groups, Fill: fill, Examples: []int{0, 1}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range res {
		fmt.Printf("%s (%s): agrees: %v\n", r.Param, r.Rule, r.NormErr < 1e-9 && r.GradErr < 1e-9)
	}
	// Output:
	// scale (column-scale): agrees: true
	// W (linear-weight): agrees: true
}
