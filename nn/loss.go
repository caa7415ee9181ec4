package nn

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// CrossEntropy is a masked softmax cross-entropy over the rows of a logits
// matrix. Target is an input node holding one-hot rows for the rows that
// count and zero rows elsewhere; changing the target (SetRows) changes which
// rows are trained on without rebuilding the graph.
//
// PerRow is the vector of per-row losses −log softmax(z_i)[y_i] (0 for rows
// outside the mask): DP-SGD clips per sample and needs it. Mean is
// Σ PerRow / count.
type CrossEntropy struct {
	Target *G.Node // (N, C) one-hot rows
	PerRow *G.Node // (N)
	Mean   *G.Node // scalar
	Count  *G.Node // scalar input: the number of rows in the mask

	n, c int
	// target is Target's value, rewritten in place by every SetRows (a
	// DP-SGD step sets its batch's rows: allocating the matrix each time
	// was a third of a DP-MLP run's allocations).
	target *tensor.Dense
	count  *G.F64 // Count's value, rewritten in place likewise
}

// NewCrossEntropy builds the loss nodes for logits of shape (N, C).
func NewCrossEntropy(m *Model, logits *G.Node, name string) (*CrossEntropy, error) {
	s := logits.Shape()
	if len(s) != 2 {
		return nil, fmt.Errorf("nn: cross-entropy wants (N, C) logits, got %v", s)
	}
	ce := &CrossEntropy{n: s[0], c: s[1]}
	err := Build(func() error {
		ce.Target = m.Input(name+".target", make([]float64, s[0]*s[1]), s[0], s[1])
		ce.Count = G.NewScalar(m.G, G.Float64, G.WithName(name+".count"), G.WithValue(1.0))
		logp := G.Must(LogSoftmax(logits))
		ce.PerRow = G.Must(NLLRows(logp, ce.Target))
		ce.Mean = G.Must(G.Div(G.Must(SumAll(ce.PerRow)), ce.Count))
		return nil
	})
	return ce, err
}

// SetRows makes the loss average over the given rows with the given labels
// (labels[row]). Rows must be distinct; with weights non-nil row r counts
// weights[k] times (used by Poisson-sampled batches with padding).
func (ce *CrossEntropy) SetRows(rows []int, labels []int) error {
	for _, r := range rows {
		if y := labels[r]; r < 0 || r >= ce.n || y < 0 || y >= ce.c {
			return fmt.Errorf("nn: cross-entropy row %d with label %d out of range (%d rows, %d classes)", r, y, ce.n, ce.c)
		}
	}
	if ce.target == nil {
		ce.target = tensor.New(tensor.WithShape(ce.n, ce.c), tensor.WithBacking(make([]float64, ce.n*ce.c)))
	}
	t := ce.target.Float64s()
	clear(t)
	for _, r := range rows {
		t[r*ce.c+labels[r]] = 1
	}
	if !bound(ce.Target, ce.target) {
		if err := G.Let(ce.Target, ce.target); err != nil {
			return err
		}
	}
	cnt := float64(len(rows))
	if cnt == 0 {
		cnt = 1
	}
	if ce.count == nil {
		ce.count = new(G.F64)
	}
	*ce.count = G.F64(cnt)
	if bound(ce.Count, ce.count) {
		return nil
	}
	return G.Let(ce.Count, ce.count)
}
