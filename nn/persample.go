package nn

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// PerSampleRule is how one parameter's per-example gradient is formed on a
// DP-SGD training path, from the gradient δ of the batch loss at the output
// y of the op that uses the parameter (the node Model.Record put a probe
// on). DP-SGD (dp/dpnn) never materialises per-example gradients: it asks
// every parameter's rule for the per-example squared norms (ghost norms),
// turns their sums into clip factors, and asks the rules again for the
// clipped sums. A layer or a custom op makes its parameters usable under
// DP-SGD by recording one rule per parameter (Model.Record, or
// RecordLinear and RecordAffine for the built-in forms);
// Model.CheckPerSample tests recorded rules against per-example gradients
// computed one example at a time.
//
// Rows and examples. A batch has R rows: the rows of y, of δ and of the
// per-row loss vector ℓ, which must agree. groups.Of[r] = k says that row r
// belongs to the k-th example of the batch (0 ≤ k < groups.Samples), −1
// that it is padding (ℓ_r = 0). An example may span several rows (a
// computation tree, a PPR row, a pair of nodes). Example k's loss is
// L_k = Σ_{r: Of[r]=k} ℓ_r (a sum, not a mean), the batch loss is
// L = Σ_r ℓ_r, and δ = ∂L/∂y (R rows, y's columns).
//
// The per-example gradient. g_k = ∂L_k/∂θ is the gradient of example k's
// loss with respect to the parameter θ, shaped like θ, in units of the
// loss per unit of θ. A rule is valid for a path when g_k is a fixed
// linear map Γ of δ with the rows of other examples zeroed,
// g_k = Γ(1_k∘δ), where Γ may read the forward values of the batch. That
// holds when (a) no row of y belonging to example k is read by another
// example's loss, so that ∂L_k/∂y = 1_k∘δ, and (b) θ reaches L_k only
// through y. (a) fails on a path that mixes rows of different examples
// after the op (BatchNorm over the batch, an aggregation whose adjacency
// joins two examples' rows): DP-SGD refuses BatchNorm (MixesSamples), and
// CheckPerSample detects the rest empirically.
//
// Privacy meaning. The sensitivity C of DP-SGD's noisy sum rests on the
// rules: example k's contribution c_k·g_k (over all parameters, with
// c_k = min(1, C/‖g_k‖)) has norm at most C only if NormSq returns the
// true ‖g_k‖² and ClippedSum really sums the c_k·g_k. A rule that
// under-reports a norm lets one changed example move the released sum by
// more than C, and the ε printed would be too small.
type PerSampleRule interface {
	// NormSq returns a node computing ‖g_k‖² (the squared L2 norm over
	// all of θ's entries) for every example k of groups: a vector of R
	// entries, entry k for k < groups.Samples and 0 after. groups is
	// refilled by DP-SGD before every run: the node must read it when it
	// runs, not when it is built. name labels the node.
	NormSq(delta *G.Node, groups *RowGroups, name string) (*G.Node, error)
	// ClippedSum returns a node computing Γ(cd), shaped like θ, for
	// cd = δ with each row r multiplied by c_{Of[r]} (0 for padding
	// rows): by linearity this is Σ_k c_k·g_k. A row of cd that is
	// entirely 0 (a clipped-out example, whose inputs may be infinite or
	// NaN) must add exactly 0: select, do not multiply (the built-in
	// rules use ZeroRowsWhereZero on their inputs). With c = 1 for example k
	// and 0 elsewhere it is g_k, which is how CheckPerSample reads the
	// rule's per-example gradient.
	ClippedSum(cd *G.Node) (*G.Node, error)
	// String names the rule in errors and inspection ("linear-weight").
	String() string
	// Inputs names every node and sparse matrix the rule reads besides δ
	// (LinearWeight's a, NormScale's x̂): DP-SGD over declared examples
	// checks that row r of each reads only the example of δ's row r, and
	// that a sparse one is a batch input of the training path
	// (CheckRowLocal). A rule that reads something it does not name here
	// is not checked.
	Inputs() (dense []*G.Node, sparse []*Sparse)
}

// LinearWeight is the rule of W in y = a·W (+…): sample s's gradient is
// Σ_{r∈s} aᵣᵀδᵣ, with a dense input a or a constant sparse one. Its NormSq
// is the Gram form Σ_{r,q∈s} (aᵣ·a_q)(δᵣ·δ_q) (‖aᵣ‖²‖δᵣ‖² for one row per
// sample), its ClippedSum aᵀ·cd.
//
// It is also the rule of W in a graph convolution y = Â·(a·W) + b
// (layers.GCNConv), with the probe on z = a·W: there δ_z = Âᵀ·δ_y, and
// the per-example gradient Σ_{r∈s} (Â·a)ᵣᵀ(δ_y)ᵣ equals Σ_{j∈s} a_jᵀ(δ_z)_j
// when Â joins no rows of different examples (Â_{rj} ≠ 0 only for r and j
// in the same example or both padding).
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
	// rows of clipped-out examples (cd = 0) select 0, even for an input
	// row that overflowed (ZeroRowsWhereZero)
	a, err := ZeroRowsWhereZero(r.Input, cd)
	if err != nil {
		return nil, err
	}
	return MatMulTA(a, cd), nil
}

func (LinearWeight) String() string { return "linear-weight" }

func (r LinearWeight) Inputs() ([]*G.Node, []*Sparse) {
	if r.SparseInput != nil {
		return nil, []*Sparse{r.SparseInput}
	}
	return []*G.Node{r.Input}, nil
}

// Bias is the rule of b in y = … + b: sample s's gradient is Σ_{r∈s} δᵣ.
type Bias struct{}

func (Bias) NormSq(delta *G.Node, groups *RowGroups, name string) (*G.Node, error) {
	return GhostNormSq(nil, delta, groups, name)
}

func (Bias) ClippedSum(cd *G.Node) (*G.Node, error) { return ColSums(cd), nil }

func (Bias) String() string { return "bias" }

func (Bias) Inputs() ([]*G.Node, []*Sparse) { return nil, nil }

// NormScale is the rule of γ in y = γ∘x̂ (+…): sample s's gradient is
// Σ_{r∈s} δᵣ∘x̂ᵣ.
type NormScale struct {
	Normalized *G.Node // x̂
}

func (r NormScale) NormSq(delta *G.Node, groups *RowGroups, name string) (*G.Node, error) {
	return GhostNormSq(nil, G.Must(G.HadamardProd(delta, r.Normalized)), groups, name)
}

func (r NormScale) ClippedSum(cd *G.Node) (*G.Node, error) {
	xhat, err := ZeroRowsWhereZero(r.Normalized, cd)
	if err != nil {
		return nil, err
	}
	return ColSums(G.Must(G.HadamardProd(cd, xhat))), nil
}

func (NormScale) String() string { return "norm-scale" }

func (r NormScale) Inputs() ([]*G.Node, []*Sparse) { return []*G.Node{r.Normalized}, nil }

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

// Record adds a probe to y, the output of an op that uses param, on the
// recorded (DP-SGD) path, records rule as param's per-sample rule with δ
// taken at y, and returns y + probe: the caller builds the rest of the path
// on the returned node. Outside recording mode it returns y unchanged and
// records nothing. This is how a custom op makes its parameters private:
//
//	z := m.Record(myOp(h, w.Node), w, myRule{Input: h})
//
// y must be a matrix whose rows are the batch rows (the rows the row groups
// and the per-row loss index); rule must hold for every path the model
// records (PerSampleRule says when it does), which CheckPerSample tests.
// Each parameter is recorded once; DP-SGD refuses a parameter used twice.
// Misuse (nil arguments, a parameter of another model, y not a matrix) is
// a programming error: Record panics with an error, which Build returns.
func (m *Model) Record(y *G.Node, param *Param, rule PerSampleRule) *G.Node {
	if !m.recording {
		return y
	}
	if y == nil || param == nil || rule == nil {
		panic(fmt.Errorf("nn: Record needs an output, a parameter and a rule (got %v, %v, %v)", y, param, rule))
	}
	if !m.owns(param) {
		panic(fmt.Errorf("nn: Record: parameter %s is not a parameter of this model", param.Name))
	}
	s := y.Shape()
	if len(s) != 2 {
		panic(fmt.Errorf("nn: Record %s (%s): the recorded output must be a matrix of batch rows, got shape %v", param.Name, rule, s))
	}
	probe := m.Probe(fmt.Sprintf("%s.probe", param.Name), s[0], s[1])
	m.records = append(m.records, PerSample{Param: param, Rule: rule, Probe: probe})
	return G.Must(Add(y, probe))
}

// owns reports whether p is one of m's parameters.
func (m *Model) owns(p *Param) bool {
	for _, q := range m.Params {
		if q == p {
			return true
		}
	}
	return false
}

// PerSampleRules returns the record of every parameter of m on the recorded
// path, refusing, with an error naming it, a parameter recorded twice (a
// shared weight, whose per-sample gradient no single rule describes) or
// not at all (a layer without a per-sample rule, or a parameter off the
// path), and a record whose output does not have rows rows (the batch
// rows of the per-row loss; rows < 0 skips that check).
func (m *Model) PerSampleRules(rows int) (map[*Param]PerSample, error) {
	byParam := map[*Param]PerSample{}
	for _, r := range m.records {
		if _, dup := byParam[r.Param]; dup {
			return nil, fmt.Errorf("parameter %s is used twice on the DP-SGD training path; per-sample gradients of shared weights are not supported", r.Param.Name)
		}
		if got := r.Probe.Shape()[0]; rows >= 0 && got != rows {
			return nil, fmt.Errorf("parameter %s (%s): its recorded output has %d rows, the per-row loss %d; a per-sample rule's rows must be the batch rows", r.Param.Name, r.Rule, got, rows)
		}
		byParam[r.Param] = r
	}
	for _, p := range m.Params {
		if _, ok := byParam[p]; !ok {
			return nil, fmt.Errorf("parameter %s has no per-sample gradient rule on the training path (a layer DP-SGD does not support, or a parameter not on the path)", p.Name)
		}
	}
	return byParam, nil
}
