package asgl

import (
	"fmt"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/degree"
	"github.com/dpgnn/dpgnn/graphs/walk"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/run"
)

// Releases are the kinds of release `dpgnn audit --release` chooses
// from: one discriminator step.
func (m *ASGL) Releases() []string { return []string{"disc"} }

// AuditTarget is one private step of ASGL for `dpgnn audit`: a step of the
// positive discriminator D+ from the initial parameters (the same on G and
// G′, drawn from the run's seed), its walks steered by the initial
// generator. Every random choice of the step — the batch of B_d roots
// without replacement, the discriminator round's walk key and, with
// --degree-bound sample, the cap's key — comes from the release's source, and
// the walk graph is built on the graph given (so a removed node's edges
// are gone from G+ and from every other root's tree). Released: the
// privatised gradient of the embedding and the bias (every row, the
// removed node's included). Claimed: the ε of one dp.HypergeomGaussian
// step at the run's calibrated noise (with --multiplier, at that noise
// multiplier: σ in strict accounting, the paper's σ with --accounting
// paper). The audit's --remove-node edits the positive adjacency, which is
// all a D+ step reads; a D− step is the same mechanism on G−. Every value
// belongs to a node (Nodes: row i of E's gradient and entry i of b's are
// node i's) and every one is compared, the removed node's included: the
// step's claim is for the whole gradient (the removed node's embedding row
// is a parameter every release exposes, and on G′ its gradient is what a
// node in no subgraph gets, 0 plus noise).
func (m *ASGL) AuditTarget(ctx *methods.Context, opts run.AuditOptions) (*run.AuditTarget, error) {
	if !ctx.Private() || ctx.Level != methods.Node {
		return nil, fmt.Errorf("asgl is audited at node level with a finite --epsilon")
	}
	if opts.Release != "" && opts.Release != "disc" {
		return nil, fmt.Errorf("--release %q: asgl audits disc (one discriminator step)", opts.Release)
	}
	c := *ctx
	if opts.Multiplier > 0 {
		c.Multiplier = opts.Multiplier
	}
	g := ctx.Graph
	p, err := m.calibrate(&c, g.N)
	if err != nil {
		return nil, err
	}
	step, err := p.disc.Step()
	if err != nil {
		return nil, err
	}
	claimed, err := run.ClaimedEpsilon(step, p.Plan.Delta)
	if err != nil {
		return nil, err
	}
	cfg := m.cfg
	t := &run.AuditTarget{Claimed: claimed, Delta: p.Plan.Delta, Nodes: auditNodes(g.N, cfg.Dim),
		What: fmt.Sprintf("one D+ step from the initial parameters: %d of %d roots without replacement, each root's gradient clipped to %g, noise std %.4g (R = %d, %s degree bound D=%d); released: the privatised gradient of the embedding and the bias",
			cfg.DiscBatch, g.N, cfg.Clip, p.noiseMultiplier()*cfg.Clip, p.occ, p.walk.Mode, cfg.MaxDegree)}
	t.Prepare = func(g *graphs.Graph) (run.Release1, error) {
		n := g.N
		r := &trainRun{cfg: cfg}
		// the audit's steps are recorded in a ledger of its own (the audit
		// compares releases; it accounts nothing)
		disc, err := m.newPlayer(ctx.Seed, ledgerDisc, layers.Discriminator, n, cfg.DiscBatch, cfg.DiscBatch, 2*cfg.Paths, &p.disc, nil, p.Plan, dp.NewLedger(), dp.NewSource(0))
		if err != nil {
			return nil, err
		}
		gen, err := m.newPlayer(ctx.Seed+0x9e37, ledgerGen, layers.Generator, n, 1, 1, 1, nil, nil, nil, nil, dp.NewSource(0))
		if err != nil {
			return nil, err
		}
		walker := func(key degree.Key) (*walk.SignedWalker, error) {
			w := p.walk
			w.SampleKey = key
			return walk.NewSignedWalker(g.Adj, nil, w)
		}
		fixed, err := walker(degree.Key{})
		if err != nil {
			return nil, fmt.Errorf("walk graph G+: %w", err)
		}
		return func(src *dp.Source) ([]float64, error) {
			w := fixed
			if p.walk.Mode == degree.Sample {
				if w, err = walker(degree.NewKey(src.Split("asgl.cap"))); err != nil {
					return nil, err
				}
			}
			ph := &phase{name: "+", sign: 1, rule: walk.TransitionPositive, walker: w, adj: w.Graph(), key: degree.NewKey(src.Split("asgl.walks"))}
			if ph.disc, err = w.NewSampler(ph.key, ph.rule, gen.p.Scores()); err != nil {
				return nil, err
			}
			disc.sgd.SetSource(src.Split("asgl.disc"))
			return disc.sgd.ReleaseExamples(func(b *dpnn.Batch) error {
				pairs, err := r.discPairs(ph, b.Examples)
				if err != nil {
					return err
				}
				return disc.p.SetPairs(pairs, b.Tags, len(b.Examples))
			})
		}, nil
	}
	return t, nil
}

var _ run.Auditor = (*ASGL)(nil)

// auditNodes is the node of every value of a player's released gradient
// over n nodes, in the player's parameter order (layers.NewGANPlayer): the
// embedding E (n×dim, row i is node i's), then the bias b (n×1, entry i is
// node i's).
func auditNodes(n, dim int) []int {
	nodes := make([]int, 0, n*(dim+1))
	for i := range n {
		for range dim {
			nodes = append(nodes, i)
		}
	}
	for i := range n {
		nodes = append(nodes, i)
	}
	return nodes
}
