package methods

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/trainers"
	"github.com/spf13/pflag"
)

// Level is the neighbouring relation a run protects.
type Level string

const (
	None Level = "none" // no privacy
	Edge Level = "edge" // edge-level DP: graphs differing in one edge
	Node Level = "node" // node-level DP: one node with its edges and features
)

// ParseLevel reads none|edge|node.
func ParseLevel(s string) (Level, error) {
	switch Level(s) {
	case None, Edge, Node:
		return Level(s), nil
	}
	return None, fmt.Errorf("unknown privacy level %q (want none, edge or node)", s)
}

// Context is what a method receives for one run.
type Context struct {
	Graph   *graphs.Graph // the split is in Graph.Split
	Dataset string
	Level   Level
	Epsilon float64 // +Inf when Level is None
	// Delta is the requested δ when DeltaRule is DeltaGiven (0 otherwise);
	// methods resolve it with ResolveDelta.
	Delta     float64
	DeltaRule DeltaRule
	// Selection is how training loops pick the epoch they keep
	// (trainers.SelectBest, SelectLast or SelectPrivate; resolved for the
	// level) and SelectionEpsilon the ε of each private selection.
	Selection        string
	SelectionEpsilon float64
	Seed             uint64
	Run              int
	Recorder         trainers.Recorder
	// SecureNoise draws every privacy mechanism's randomness (noise,
	// Poisson sampling) from crypto/rand instead of a stream keyed by Seed,
	// so nobody who learns the seed can regenerate and subtract the noise.
	SecureNoise bool
	// Multiplier, when positive, fixes the noise multiplier instead of
	// calibrating it to Epsilon (`dpgnn account --noise`, `dpgnn audit
	// --multiplier`): the plan then states the ε it gives.
	Multiplier float64
	// MaxMemory is the memory estimate (bytes) above which a run is refused
	// before it allocates (0: graphs.MemoryLimit).
	MaxMemory int64

	ledger *dp.Ledger
}

// NewContext returns the context of one run: c with the run's ledger
// created, so that every copy of it a method makes (a fold's or an
// encoder's context) records into the same ledger as the run. Every
// command builds the contexts it runs methods in here.
func NewContext(c Context) *Context {
	c.ledger = dp.NewLedger()
	return &c
}

// Ledger returns the run's ledger, where every mechanism records each
// release it makes (through the recorder Mechanism returns). A context
// built as a literal rather than by NewContext (tests) gets its ledger on
// first use, and a copy made before that does not share it.
func (c *Context) Ledger() *dp.Ledger {
	if c.ledger == nil {
		c.ledger = dp.NewLedger()
	}
	return c.ledger
}

// Mechanism returns the recorder a mechanism of this run is constructed
// with: the release name that plan declares, one release being the event
// per, recorded in the run's ledger. It refuses (before anything is
// drawn) a name the plan does not declare and an event of another kind
// than the plan's (dp.Plan.Recorder).
func (c *Context) Mechanism(plan *dp.Plan, name string, per dp.Event) (*dp.Recorder, error) {
	return plan.Recorder(c.Ledger(), name, per)
}

// NoiseSource returns the randomness for the privacy mechanisms named by
// label: a dp.Source derived from the run's seed (reproducible), or with
// SecureNoise one keyed from crypto/rand.
func (c *Context) NoiseSource(label string) (*dp.Source, error) {
	if c.SecureNoise {
		return dp.NewSecureSource()
	}
	return dp.NewSource(c.Seed).Split(label), nil
}

// Private reports whether the run must be differentially private: a
// private level with a finite ε or a fixed noise multiplier.
func (c *Context) Private() bool {
	return c.Level != None && (!math.IsInf(c.Epsilon, 1) || c.Multiplier > 0)
}

// Outcome is a method's result for one run.
type Outcome struct {
	Pred    []int   // predicted class of every node
	ValAcc  float64 // validation accuracy of the selected model (NaN if none)
	Privacy *dp.Report
	// Extra metrics (e.g. "train_acc", "auc") summarised alongside accuracy.
	Extra map[string]float64
	// Scores are the released model's posteriors, softmax of its logits,
	// for every node of the run's graph (N×C, row-major); nil for a method
	// that computes none.
	Scores []float64
	// Query re-runs the trained model's inference over the run's graph
	// with replaced node features, and QueryCost is what each query costs
	// in privacy (nil for a run without a privacy claim). QueryOn is the
	// same over another graph (the trained model applied to it). All three
	// are nil for a method that offers no queries.
	Query     QueryFunc
	QueryCost *QueryCost
	QueryOn   func(g *graphs.Graph) (QueryFunc, *QueryCost, error)
}

// Method is a registered training method. A fresh value is made for every
// command, holding its own configuration.
type Method interface {
	Spec
	// Run trains and evaluates once.
	Run(ctx *Context) (*Outcome, error)
}

// Spec is what every method states about itself besides how it runs: its
// name, help, levels, protocol and configuration. A method trained with
// DP-SGD over declared examples writes a Spec with its plan and its
// network, and run.SGDMethod supplies Run and the rest (methods/run).
type Spec interface {
	Name() string
	// Short is a one-line description for --help.
	Short() string
	// Levels lists the privacy levels the method supports.
	Levels() []Level
	// DefaultSplit is the paper's protocol for a dataset (used when --split
	// is not given).
	DefaultSplit(dataset string) string
	// Config returns a pointer to the method's configuration, a struct of
	// its hyperparameters tagged with their flags (see BindConfig), filled
	// with the method's defaults when the method is made; nil for a method
	// without hyperparameters. The commands bind it to flags, records state
	// it (ConfigValues) and sweeps set it (SetConfig).
	Config() any
	// Validate checks the configuration before a run.
	Validate() error
	// Epochs is the number of epochs one run reports (for progress bars).
	Epochs() int
}

var registry = map[string]func() Method{}

// Register adds a method factory under its name. It panics on a duplicate
// name or a malformed configuration (programming errors at init time).
func Register(f func() Method) {
	m := f()
	name := m.Name()
	if _, dup := registry[name]; dup {
		panic("methods: duplicate registration of " + name)
	}
	BindConfig(pflag.NewFlagSet(name, pflag.ContinueOnError), m.Config())
	registry[name] = f
}

// New returns a fresh instance of the named method.
func New(name string) (Method, error) {
	f, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown method %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return f(), nil
}

// Names lists the registered methods, sorted.
func Names() []string {
	var out []string
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Supports reports whether m supports level l.
func Supports(m Method, l Level) bool {
	for _, x := range m.Levels() {
		if x == l {
			return true
		}
	}
	return false
}
