package nn

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Node is a node of a model's expression graph (gorgonia's): what layers
// return and take, so that a method author names it without importing
// gorgonia.
type Node = G.Node

// Param is a learnable matrix or vector of a Model.
type Param struct {
	Name string
	Node *G.Node
	// grad is the node of the loss's gradient with respect to the
	// parameter (Compile).
	grad *G.Node
	size int // gorgonia's Node.Shape allocates a copy per call
}

// Value returns the parameter's values (row-major), aliased: writing to the
// slice changes the parameter.
func (p *Param) Value() []float64 { return Values(p.Node) }

// Size is the number of scalars in the parameter.
func (p *Param) Size() int { return p.size }

// Grad returns the gradient computed by the last training run (aliased; it
// is overwritten by the next run).
func (p *Param) Grad() ([]float64, error) {
	if p.grad == nil {
		return nil, fmt.Errorf("nn: %s has no gradient compiled", p.Name)
	}
	g := Values(p.grad)
	if g == nil {
		return nil, fmt.Errorf("nn: gradient of %s has not been computed", p.Name)
	}
	return g, nil
}

// Init fills a parameter's values given its shape (fan-in first).
type Init func(rng *rand.Rand, shape []int, data []float64)

// Uniform draws from U(−bound, bound).
func Uniform(bound float64) Init {
	return func(rng *rand.Rand, _ []int, d []float64) {
		for i := range d {
			d[i] = (2*rng.Float64() - 1) * bound
		}
	}
}

// GlorotUniform draws from U(±√(6/(fan_in+fan_out))) (Glorot & Bengio 2010;
// PyG's `glorot`, used by GCNConv).
func GlorotUniform() Init {
	return func(rng *rand.Rand, s []int, d []float64) {
		fin, fout := fans(s)
		Uniform(math.Sqrt(6/float64(fin+fout)))(rng, s, d)
	}
}

// FanInUniform draws from U(±1/√fan_in): PyTorch's and PyG's default for
// Linear weights (kaiming_uniform with a=√5) and biases.
func FanInUniform(fanIn int) Init {
	return func(rng *rand.Rand, s []int, d []float64) {
		Uniform(1/math.Sqrt(float64(fanIn)))(rng, s, d)
	}
}

// Constant fills every value with c (zeros for biases, ones for norm scales).
func Constant(c float64) Init {
	return func(_ *rand.Rand, _ []int, d []float64) {
		for i := range d {
			d[i] = c
		}
	}
}

func fans(s []int) (int, int) {
	if len(s) == 1 {
		return s[0], s[0]
	}
	return s[0], s[1]
}

// modal is anything whose behaviour depends on training vs evaluation.
type modal interface{ SetTraining(bool) }

// Model is one gorgonia expression graph with its learnable parameters,
// input feeds, dropout masks and train/eval mode. Compile builds two
// machines over it (machine.go): one for the loss and its gradients, one
// (forward only) for the evaluation outputs.
type Model struct {
	G      *G.ExprGraph
	Params []*Param

	rng      *rand.Rand
	drop     *rand.Rand // the dropout masks' stream (SetDropoutStream); nil: rng
	modal    []modal
	training bool

	loss    *G.Node
	outputs []*G.Node
	trainVM *machine
	evalVM  *machine
	keep    []*G.Node // intermediate nodes read after runs (Keep)
	// frozen maps BatchNorm ops to their twins while NewFrozen builds a
	// path (nil otherwise).
	frozen map[*standardizeOp]*standardizeOp
	// frozenVMs are the machines of the frozen paths (Fallbacks).
	frozenVMs []*machine

	// DP-SGD support (persample.go)
	recording bool
	records   []PerSample
	mixing    []string
	// gradNodes, when set, replace the parameters' own gradients: DP-SGD
	// computes privatised gradients as nodes.
	gradNodes []*G.Node

	// Labels for inspection (graphview.go): tags holds the explicit labels
	// of Tag, section the label TagNew gave the nodes built inside it.
	tags    map[*G.Node][]string
	section map[*G.Node]string

	// Grads' and ParamValues' results, reused by their next calls.
	grads, values [][]float64
}

// NewModel returns an empty model whose initialisation and dropout draw from
// a PCG stream seeded by seed.
func NewModel(seed uint64) *Model {
	return &Model{G: G.NewGraph(), rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)), training: true}
}

// RNG returns the model's random stream (initialisation and dropout).
func (m *Model) RNG() *rand.Rand { return m.rng }

// SetDropoutStream makes every dropout mask of m — those registered and
// those to come — draw from r instead of the model's seeded stream. DP-SGD
// (dp/dpnn) gives its training path a child of the mechanism source, so the
// masks are keyed like the noise (from crypto/rand under --secure-noise)
// instead of following the seed written in a run's record. A mask an
// observer knows is a fixed function of a batch position: removing one
// example shifts the others' positions, hence their masks and their clipped
// gradients, which no occurrence bound counts; masks nobody knows are i.i.d.
// whatever the positions, so the examples that did not change contribute
// the same law.
func (m *Model) SetDropoutStream(r *rand.Rand) {
	m.drop = r
	for _, d := range m.modal {
		switch d := d.(type) {
		case *dropout:
			d.rng = r
		case *sparseDropout:
			d.rng = r
		}
	}
}

// maskRNG is the stream dropout masks draw from.
func (m *Model) maskRNG() *rand.Rand {
	if m.drop != nil {
		return m.drop
	}
	return m.rng
}

// NewParam adds a learnable parameter of the given shape (a vector when one
// dimension is given), initialised by init.
func (m *Model) NewParam(name string, init Init, shape ...int) *Param {
	size := 1
	for _, s := range shape {
		size *= s
	}
	data := make([]float64, size)
	init(m.rng, shape, data)
	t := tensor.New(tensor.WithShape(shape...), tensor.WithBacking(data))
	var n *G.Node
	if len(shape) == 1 {
		n = G.NewVector(m.G, tensor.Float64, G.WithShape(shape...), G.WithName(name), G.WithValue(t))
	} else {
		n = G.NewMatrix(m.G, tensor.Float64, G.WithShape(shape...), G.WithName(name), G.WithValue(t))
	}
	p := &Param{Name: name, Node: n, size: n.Shape().TotalSize()}
	m.Params = append(m.Params, p)
	return p
}

// Input adds a constant-valued dense input matrix (rows×cols, row-major
// data). Its value can be replaced between runs with SetValue.
func (m *Model) Input(name string, data []float64, rows, cols int) *G.Node {
	t := tensor.New(tensor.WithShape(rows, cols), tensor.WithBacking(data))
	return G.NewMatrix(m.G, tensor.Float64, G.WithShape(rows, cols), G.WithName(name), G.WithValue(t))
}

// SetValue replaces the value of an input node (same shape).
func SetValue(n *G.Node, data []float64) error {
	t := tensor.New(tensor.WithShape(n.Shape()...), tensor.WithBacking(data))
	return G.Let(n, t)
}

// BatchStandardize standardises each column over the rows of x (BatchNorm
// without the affine part; batch statistics in training, running ones in
// evaluation). It mixes samples and is not usable under DP-SGD.
func (m *Model) BatchStandardize(x *G.Node, eps, momentum float64) *G.Node {
	return m.NewBatchStandardizer(eps, momentum).Apply(x)
}

// BatchStandardizer is a BatchNorm standardiser with one set of running
// statistics that can be applied to several inputs (a training path over
// the training rows and an evaluation path over all rows).
type BatchStandardizer struct {
	op *standardizeOp
	m  *Model
}

// NewBatchStandardizer adds a BatchNorm standardiser to m.
func (m *Model) NewBatchStandardizer(eps, momentum float64) *BatchStandardizer {
	op := newStandardize(0, eps, momentum)
	m.modal = append(m.modal, op)
	return &BatchStandardizer{op: op, m: m}
}

// Apply standardises x's columns.
func (b *BatchStandardizer) Apply(x *G.Node) *G.Node {
	if b.m.recording {
		b.m.mixing = append(b.m.mixing, b.op.String())
	}
	if t := b.m.twin(b.op); t != nil {
		return G.Must(G.ApplyOp(t, x))
	}
	return G.Must(G.ApplyOp(b.op, x))
}

// Affine returns γ∘standardise(x) + β as one evaluation-only node while a
// frozen path is being built (the path's BatchNorm is then an evaluation
// twin, never differentiated), in one pass over x instead of Apply's and
// the affine part's four; nil otherwise (and while recording per-sample
// rules): the caller then builds Apply and the affine ops.
func (b *BatchStandardizer) Affine(x, gamma, beta *G.Node) *G.Node {
	t := b.m.twin(b.op)
	if t == nil || b.m.recording {
		return nil
	}
	return G.Must(G.ApplyOp(affineEvalOp{bn: t}, x, gamma, beta))
}

// Stats returns a copy of the running mean and variance (nil before any
// training run).
func (b *BatchStandardizer) Stats() [2][]float64 { return b.op.saveStats([2][]float64{}) }

// SetStats loads running statistics (from another model's standardiser).
func (b *BatchStandardizer) SetStats(s [2][]float64) { b.op.loadStats(s) }

// RowStandardize standardises each row of x over its features (GroupNorm
// with one group, without the affine part). It is per-sample.
func (m *Model) RowStandardize(x *G.Node, eps float64) *G.Node {
	return G.Must(G.ApplyOp(newStandardize(1, eps, 0), x))
}

// Build runs f, turning panics raised by gorgonia's Must during graph
// construction (shape mismatches) into errors.
func Build(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = fmt.Errorf("nn: building graph: %w", e)
				return
			}
			err = fmt.Errorf("nn: building graph: %v", r)
		}
	}()
	return f()
}

// Learnables returns the parameter nodes.
func (m *Model) Learnables() G.Nodes {
	ns := make(G.Nodes, len(m.Params))
	for i, p := range m.Params {
		ns[i] = p.Node
	}
	return ns
}

// Compile adds the symbolic gradient of loss with respect to every parameter
// and builds the machines. outputs are what Evaluate computes (logits,
// embeddings); loss may be nil for a model that is never trained by
// gradient.
func (m *Model) Compile(loss *G.Node, outputs []*G.Node) error {
	return Build(func() error {
		m.loss, m.outputs = loss, outputs
		if loss != nil {
			grads, err := m.Grad(loss, m.Learnables()...)
			if err != nil {
				return err
			}
			for i, p := range m.Params {
				p.grad = grads[i]
			}
			// Only what the loss and its gradients need: evaluation-only
			// paths (e.g. a forward pass over all nodes) stay out.
			roots := append(G.Nodes{loss}, grads...)
			if m.trainVM, err = m.newMachine(roots); err != nil {
				return err
			}
		}
		return m.compileEval(outputs)
	})
}

// newMachine builds a training machine over roots and records which
// dropout masks it runs.
// The evaluation outputs it computes on the way are kept too (readable
// after Step), and so are the nodes marked with Keep.
func (m *Model) newMachine(roots G.Nodes) (*machine, error) {
	sub := m.G.SubgraphRoots(roots...)
	m.markTrainPath(sub)
	keep := append(append(append(G.Nodes{}, roots...), m.outputs...), m.keep...)
	return newMachine(sub, keep)
}

// Keep marks nodes whose values are read after a run (Values, ScalarValue)
// though they are neither the loss, a gradient nor an output: the
// machines reuse every other intermediate buffer within a run. Call it
// before Compile.
func (m *Model) Keep(nodes ...*G.Node) { m.keep = append(m.keep, nodes...) }

func (m *Model) compileEval(outputs []*G.Node) error {
	if len(outputs) == 0 {
		return nil
	}
	var err error
	m.evalVM, err = newMachine(m.G.SubgraphRoots(outputs...), append(append(G.Nodes{}, outputs...), m.keep...))
	return err
}

// CompileGradients builds the training machine over the given roots and
// takes gradNodes (one per parameter, in Params order) as the parameters'
// gradients: Grads returns their values instead of gorgonia's dual values.
// DP-SGD uses it to hand the optimiser privatised gradients computed as
// nodes. loss (may be nil) is reported by Step.
func (m *Model) CompileGradients(loss *G.Node, gradNodes []*G.Node, outputs []*G.Node, extraRoots ...*G.Node) error {
	if len(gradNodes) != len(m.Params) {
		return fmt.Errorf("nn: %d gradient nodes for %d parameters", len(gradNodes), len(m.Params))
	}
	return Build(func() error {
		m.loss, m.outputs, m.gradNodes = loss, outputs, gradNodes
		roots := append(append(G.Nodes{}, gradNodes...), extraRoots...)
		if loss != nil {
			roots = append(roots, loss)
		}
		var err error
		if m.trainVM, err = m.newMachine(roots); err != nil {
			return err
		}
		for i, p := range m.Params {
			p.grad = gradNodes[i]
		}
		return m.compileEval(outputs)
	})
}

// Runner evaluates a set of output nodes on demand, in evaluation mode, with
// its own machine. Methods use it for releases that must run exactly once
// (a NAP aggregate computed from the best checkpoint), apart from the
// per-epoch evaluation machine.
type Runner struct {
	m  *Model
	vm *machine
}

// NewRunner compiles a forward-only machine for the given outputs.
func (m *Model) NewRunner(outputs ...*G.Node) (*Runner, error) {
	r := &Runner{m: m}
	err := Build(func() error {
		var err error
		r.vm, err = newMachine(m.G.SubgraphRoots(outputs...), append(append(G.Nodes{}, outputs...), m.keep...))
		return err
	})
	return r, err
}

// Run evaluates the outputs once.
func (r *Runner) Run() error {
	r.m.SetTraining(false)
	return r.vm.Run()
}

// TagGrad is the label of the nodes a symbolic differentiation added
// (Model.Grad).
const TagGrad = "grad"

// DPTagPrefix starts the labels of privacy nodes: "dp:WHAT", where WHAT
// says what the node is ("dp:clipped-sum", "dp:noisy-grad",
// "dp:objective-perturbation", ...).
const DPTagPrefix = "dp:"

// Tag labels n for inspection (`dpgnn inspect`, View). A label "dp:WHAT"
// marks n as a privacy node and WHAT says what it is; other labels are
// shown as they are. Tags never change what the graph computes. Nodes made
// by the ops of ghost.go (per-sample norms, clip factors, noise) are
// recognised as privacy nodes without tags; methods tag the rest: clipped
// sums, privatised gradients, objective-perturbation terms.
func (m *Model) Tag(n *G.Node, tags ...string) {
	if n == nil {
		return
	}
	if m.tags == nil {
		m.tags = map[*G.Node][]string{}
	}
	for _, t := range tags {
		if !slices.Contains(m.tags[n], t) {
			m.tags[n] = append(m.tags[n], t)
		}
	}
}

// Tags returns n's labels: those given by Tag, in order, then the one
// TagNew gave it (if any).
func (m *Model) Tags(n *G.Node) []string {
	out := append([]string(nil), m.tags[n]...)
	if s, ok := m.section[n]; ok && !slices.Contains(out, s) {
		out = append(out, s)
	}
	return out
}

// TagNew runs f and labels every node f added to the graph with tag, except
// nodes a nested TagNew (or Grad) inside f already labelled: the innermost
// label wins. Nodes f reuses (gorgonia merges a new node into an equal
// existing one) keep their old label. dpnn.BuildSGD labels its whole
// construction "dp:dp-sgd" this way.
func (m *Model) TagNew(tag string, f func() error) error {
	// gorgonia numbers nodes from a counter that only grows, so the nodes
	// added by f are exactly those with an id above the largest one now.
	last := int64(-1)
	for _, n := range m.G.AllNodes() {
		last = max(last, n.ID())
	}
	err := f()
	if m.section == nil {
		m.section = map[*G.Node]string{}
	}
	for _, n := range m.G.AllNodes() {
		if n.ID() > last {
			if _, done := m.section[n]; !done {
				m.section[n] = tag
			}
		}
	}
	return err
}

// Grad is gorgonia's Grad (the symbolic gradients of y, a scalar, with
// respect to the leaves wrt) that also labels the nodes it adds TagGrad, so
// inspection can tell the gradient graph from the forward one. gorgonia
// v0.9.18 keeps that distinction only in an unexported field, and its
// exported DerivOf marks only each node's summed gradient, not the terms
// inside it. Use it instead of G.Grad on a Model's graph.
func (m *Model) Grad(y *G.Node, wrt ...*G.Node) (G.Nodes, error) {
	var grads G.Nodes
	err := m.TagNew(TagGrad, func() error {
		var err error
		grads, err = G.Grad(y, wrt...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("nn: gradient: %w", err)
	}
	return grads, nil
}

// markTrainPath records which dropout masks the training machine runs.
func (m *Model) markTrainPath(sub *G.ExprGraph) {
	in := map[*G.Node]bool{}
	for _, n := range sub.AllNodes() {
		in[n] = true
	}
	trained := map[*Sparse]bool{} // sparse inputs the training machine multiplies
	masked := map[*dropout]bool{} // dropout masks it applies
	for n := range in {
		switch op := n.Op().(type) {
		case *spmmOp:
			trained[op.s] = true
		case maskOp:
			masked[op.d] = true
		case *dropSpMMOp:
			trained[op.s], masked[op.d] = true, true
		}
	}
	for _, x := range m.modal {
		switch d := x.(type) {
		case *dropout:
			d.onTrainPath = masked[d]
			d.ones = d.ones || !d.onTrainPath
		case *sparseDropout:
			d.offTrainPath = !trained[d.s]
		}
	}
}

// SetTraining switches dropout and BatchNorm between training and
// evaluation behaviour (and draws fresh dropout masks when training).
func (m *Model) SetTraining(t bool) {
	m.training = t
	for _, x := range m.modal {
		x.SetTraining(t)
	}
}

// Step runs the training machine once in training mode (fresh dropout
// masks): the loss and every gradient are computed. It returns the loss.
func (m *Model) Step() (float64, error) { return m.StepMode(true) }

// StepMode runs the training machine (loss and gradients) with dropout and
// BatchNorm in the given mode; StepMode(false) is deterministic and is what
// gradient checks differentiate.
func (m *Model) StepMode(training bool) (float64, error) {
	if m.trainVM == nil {
		return 0, errors.New("nn: model has no training graph compiled")
	}
	m.SetTraining(training)
	if err := m.trainVM.Run(); err != nil {
		return 0, fmt.Errorf("nn: training step: %w", err)
	}
	if m.loss == nil {
		return 0, nil
	}
	return ScalarValue(m.loss), nil
}

// Evaluate runs the forward pass of the outputs in evaluation mode.
func (m *Model) Evaluate() error {
	if m.evalVM == nil {
		return errors.New("nn: model has no outputs compiled")
	}
	m.SetTraining(false)
	if err := m.evalVM.Run(); err != nil {
		return fmt.Errorf("nn: evaluation: %w", err)
	}
	return nil
}

// ScalarValue returns the value of a scalar node (or the first entry).
func ScalarValue(n *G.Node) float64 {
	switch v := n.Value().(type) {
	case *G.F64:
		return float64(*v)
	case tensor.Tensor:
		return v.Data().([]float64)[0]
	}
	return math.NaN()
}

// Values returns the data of a node's current value (aliased).
func Values(n *G.Node) []float64 {
	switch v := n.Value().(type) {
	case *G.F64:
		return []float64{float64(*v)}
	case *tensor.Dense:
		if d, ok := float64s(v); ok {
			return d
		}
		return v.Data().([]float64)
	case tensor.Tensor:
		return v.Data().([]float64)
	}
	return nil
}

// Grads returns the current gradient of every parameter, in Params order
// (aliased, in a slice the next call reuses).
func (m *Model) Grads() ([][]float64, error) {
	if len(m.grads) != len(m.Params) {
		m.grads = make([][]float64, len(m.Params))
	}
	out := m.grads
	for i, p := range m.Params {
		g, err := p.Grad()
		if err != nil {
			return nil, err
		}
		if len(g) != p.Size() {
			return nil, fmt.Errorf("nn: gradient node of %s has %d values, want %d", p.Name, len(g), p.Size())
		}
		out[i] = g
	}
	return out, nil
}

// State is a saved copy of a model's parameters and of any running
// statistics (BatchNorm), for best-validation restore.
type State struct {
	Params [][]float64
	stats  [][2][]float64
}

// stateful is a modal part with running statistics.
type stateful interface {
	saveStats(reuse [2][]float64) [2][]float64
	loadStats([2][]float64)
}

// Snapshot copies every parameter's values and the running statistics.
func (m *Model) Snapshot() *State { return m.SnapshotInto(nil) }

// SnapshotInto is Snapshot into the buffers of s, an earlier snapshot of
// this model that is no longer needed (nil: new buffers), so that keeping
// the best epoch does not allocate the parameters again at every
// improvement.
func (m *Model) SnapshotInto(s *State) *State {
	if s == nil || len(s.Params) != len(m.Params) {
		s = &State{Params: make([][]float64, len(m.Params))}
	}
	for i, p := range m.Params {
		s.Params[i] = append(s.Params[i][:0], p.Value()...)
	}
	k := 0
	for _, x := range m.modal {
		if st, ok := x.(stateful); ok {
			if k == len(s.stats) {
				s.stats = append(s.stats, [2][]float64{})
			}
			s.stats[k] = st.saveStats(s.stats[k])
			k++
		}
	}
	s.stats = s.stats[:k]
	return s
}

// Restore writes a snapshot back into the parameters and statistics.
func (m *Model) Restore(s *State) {
	for i, p := range m.Params {
		copy(p.Value(), s.Params[i])
	}
	k := 0
	for _, x := range m.modal {
		if st, ok := x.(stateful); ok {
			st.loadStats(s.stats[k])
			k++
		}
	}
}

// NumParams is the total number of learnable scalars.
func (m *Model) NumParams() int {
	n := 0
	for _, p := range m.Params {
		n += p.Size()
	}
	return n
}

// Fallbacks counts, by op, the runs in which a dense op of the model's
// machines allocated its output instead of reusing its buffer (an op that
// implements neither UsePreallocDo nor in-place UnsafeDo).
func (m *Model) Fallbacks() map[string]int {
	out := map[string]int{}
	for _, mc := range append([]*machine{m.trainVM, m.evalVM}, m.frozenVMs...) {
		if mc == nil {
			continue
		}
		for _, s := range mc.steps {
			if s.allocs > 0 {
				out[s.op.String()] += s.allocs
			}
		}
	}
	return out
}
