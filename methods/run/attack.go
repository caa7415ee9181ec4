package run

import (
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/trainers"
)

// AttackRuns are the runs an attack trains (`dpgnn audit METHOD --attack`):
// the method's options checked as Train checks them and the dataset loaded
// once, from which each run takes a graph — its split drawn as Train's run
// r draws it, or any graph the attack builds (a training subgraph).
type AttackRuns struct {
	// Graph is the dataset as loaded, with --features applied, before any
	// split.
	Graph *graphs.Graph
	// Fingerprint is DatasetFingerprint of the dataset as loaded.
	Fingerprint string
	// Split is the split Train would use (the method's default when
	// opts.Split is empty).
	Split graphs.SplitSpec

	m    methods.Method
	opts TrainOptions
}

// PrepareAttack checks opts and the method's configuration and loads the
// dataset, as Train does before its first run.
func PrepareAttack(m methods.Method, opts TrainOptions) (*AttackRuns, error) {
	g, spec, _, fp, err := prepare(m, &opts)
	if err != nil {
		return nil, err
	}
	return &AttackRuns{Graph: g, Fingerprint: fp, Split: spec, m: m, opts: opts}, nil
}

// RunGraph is run r's graph: the dataset with its split drawn from seed
// opts.Seed + r, as Train's run r.
func (a *AttackRuns) RunGraph(r int) (*graphs.Graph, error) {
	return runGraph(TaskOf(a.m), a.Graph, a.Split, r, a.opts.Seed+uint64(r))
}

// Run trains the method once on g with seed seed (the options' level, ε,
// δ, selection and noise source) and returns its outcome.
func (a *AttackRuns) Run(g *graphs.Graph, seed uint64, rec trainers.Recorder) (*methods.Outcome, error) {
	c := a.opts.context(g, a.Graph.Name, seed)
	if rec == nil {
		rec = trainers.Nop{}
	}
	c.Recorder = rec
	return a.m.Run(c)
}
