package nn

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// PerSampleRule is how a parameter's per-sample gradient is formed from the
// gradient δ of the loss at its layer's output. DP-SGD asks the rule for
// per-sample squared norms (ghost norms, without materialising per-sample
// gradients) and for the sum of the per-sample gradients after clipping;
// a new layer kind makes its parameters private by implementing it.
type PerSampleRule interface {
	// NormSq returns the per-sample squared norms ‖g_s‖² of the
	// parameter's gradient, one per sample of groups.
	NormSq(delta *G.Node, groups *RowGroups, name string) (*G.Node, error)
	// ClippedSum returns Σ_s c_s·g_s given cd = the rows of δ scaled by
	// their sample's clip factor c_s.
	ClippedSum(cd *G.Node) (*G.Node, error)
	String() string
}

// LinearWeight is the rule of W in y = a·W (+…): sample s's gradient is
// Σ_{r∈s} aᵣᵀδᵣ, with a dense input a or a constant sparse one.
type LinearWeight struct {
	Input       *G.Node
	SparseInput *Sparse
}

func (r LinearWeight) NormSq(delta *G.Node, groups *RowGroups, name string) (*G.Node, error) {
	if r.SparseInput != nil {
		return GhostNormSqSparse(r.SparseInput, delta, groups, name)
	}
	return GhostNormSq(r.Input, delta, groups, name)
}

func (r LinearWeight) ClippedSum(cd *G.Node) (*G.Node, error) {
	if r.SparseInput != nil {
		return SpMMT(r.SparseInput, cd)
	}
	return MatMulTA(r.Input, cd), nil
}

func (LinearWeight) String() string { return "linear-weight" }

// Bias is the rule of b in y = … + b: sample s's gradient is Σ_{r∈s} δᵣ.
type Bias struct{}

func (Bias) NormSq(delta *G.Node, groups *RowGroups, name string) (*G.Node, error) {
	return GhostNormSq(nil, delta, groups, name)
}

func (Bias) ClippedSum(cd *G.Node) (*G.Node, error) { return ColSums(cd), nil }

func (Bias) String() string { return "bias" }

// NormScale is the rule of γ in y = γ∘x̂ (+…): sample s's gradient is
// Σ_{r∈s} δᵣ∘x̂ᵣ.
type NormScale struct {
	Normalized *G.Node // x̂
}

func (r NormScale) NormSq(delta *G.Node, groups *RowGroups, name string) (*G.Node, error) {
	return GhostNormSq(nil, G.Must(G.HadamardProd(delta, r.Normalized)), groups, name)
}

func (r NormScale) ClippedSum(cd *G.Node) (*G.Node, error) {
	return ColSums(G.Must(G.HadamardProd(cd, r.Normalized))), nil
}

func (NormScale) String() string { return "norm-scale" }

// PerSample records, for one parameter on the training path of a model
// built in recording mode, its per-sample rule and the probe whose
// gradient is δ.
type PerSample struct {
	Param *Param
	Rule  PerSampleRule
	// Probe is a zero-valued input added to the layer's output; the
	// gradient of the loss with respect to it is δ (gorgonia's Grad only
	// differentiates with respect to leaf nodes).
	Probe *G.Node
}

// StartRecording makes the layers built from now on add gradient probes and
// per-sample records (the DP-SGD training path). StopRecording ends it (an
// evaluation path over all nodes shares the parameters but records
// nothing).
func (m *Model) StartRecording() { m.recording = true }

// StopRecording ends recording mode.
func (m *Model) StopRecording() { m.recording = false }

// Recording reports whether layers should record per-sample information.
func (m *Model) Recording() bool { return m.recording }

// PerSampleRecords returns what the training path recorded.
func (m *Model) PerSampleRecords() []PerSample { return m.records }

// MixesSamples lists the layers on the recorded path that mix samples
// (BatchNorm): DP-SGD must refuse them.
func (m *Model) MixesSamples() []string { return m.mixing }

// Probe adds a zero-valued input node of the given shape and returns it,
// labelled "dp:probe" for inspection.
func (m *Model) Probe(name string, rows, cols int) *G.Node {
	t := tensor.New(tensor.WithShape(rows, cols), tensor.WithBacking(make([]float64, rows*cols)))
	n := G.NewMatrix(m.G, tensor.Float64, G.WithShape(rows, cols), G.WithName(name), G.WithValue(t))
	m.Tag(n, DPTagPrefix+"probe")
	return n
}

// RecordLinear adds a probe to y = a·W (+ b) on the recorded path and
// records W (dense input a, or sparse input sa) and b (may be nil). It
// returns y + probe. Outside recording mode it returns y unchanged.
func (m *Model) RecordLinear(y *G.Node, w, b *Param, a *G.Node, sa *Sparse) *G.Node {
	if !m.recording {
		return y
	}
	s := y.Shape()
	probe := m.Probe(fmt.Sprintf("%s.probe", w.Name), s[0], s[1])
	m.records = append(m.records, PerSample{Param: w, Rule: LinearWeight{Input: a, SparseInput: sa}, Probe: probe})
	if b != nil {
		m.records = append(m.records, PerSample{Param: b, Rule: Bias{}, Probe: probe})
	}
	return G.Must(Add(y, probe))
}

// RecordAffine adds a probe to y = γ∘x̂ + β on the recorded path and records
// γ and β. Outside recording mode it returns y unchanged.
func (m *Model) RecordAffine(y *G.Node, gamma, beta *Param, xhat *G.Node) *G.Node {
	if !m.recording {
		return y
	}
	s := y.Shape()
	probe := m.Probe(fmt.Sprintf("%s.probe", gamma.Name), s[0], s[1])
	m.records = append(m.records,
		PerSample{Param: gamma, Rule: NormScale{Normalized: xhat}, Probe: probe},
		PerSample{Param: beta, Rule: Bias{}, Probe: probe})
	return G.Must(Add(y, probe))
}
