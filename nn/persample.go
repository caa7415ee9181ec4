package nn

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// PerSampleKind says how a parameter's per-sample gradient is formed from a
// layer's input and the gradient of the loss at the layer's output.
type PerSampleKind int

const (
	// LinearWeight: y = a·W (+…); the gradient of sample rows r is aᵣᵀδᵣ.
	LinearWeight PerSampleKind = iota
	// Bias: y = … + b; the gradient of row r is δᵣ.
	Bias
	// NormScale: y = γ∘x̂ (+…); the gradient of row r is δᵣ∘x̂ᵣ.
	NormScale
)

func (k PerSampleKind) String() string {
	switch k {
	case LinearWeight:
		return "linear-weight"
	case Bias:
		return "bias"
	case NormScale:
		return "norm-scale"
	}
	return "unknown"
}

// PerSample records, for one parameter on the training path of a model
// built in recording mode, the nodes from which DP-SGD computes per-sample
// gradient norms (ghost norms) and clipped gradient sums without ever
// materialising per-sample gradients.
type PerSample struct {
	Param *Param
	Kind  PerSampleKind
	// Input is the layer input a (LinearWeight, dense) or nil.
	Input *G.Node
	// SparseInput is the constant sparse layer input (LinearWeight on
	// sparse features) or nil.
	SparseInput *Sparse
	// Normalized is x̂ (NormScale).
	Normalized *G.Node
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
	m.records = append(m.records, PerSample{Param: w, Kind: LinearWeight, Input: a, SparseInput: sa, Probe: probe})
	if b != nil {
		m.records = append(m.records, PerSample{Param: b, Kind: Bias, Probe: probe})
	}
	return G.Must(G.Add(y, probe))
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
		PerSample{Param: gamma, Kind: NormScale, Normalized: xhat, Probe: probe},
		PerSample{Param: beta, Kind: Bias, Probe: probe})
	return G.Must(G.Add(y, probe))
}
