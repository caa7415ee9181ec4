package asgl

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/dp/dpnn"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/degree"
	"github.com/dpgnn/dpgnn/graphs/walk"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/nn"
	"github.com/dpgnn/dpgnn/trainers"
)

// genChunk is the most roots of a generator batch one graph run holds (a
// root has up to N·walkPairs pairs; larger batches run in chunks).
const genChunk = 64

// walkPairs is the most window pairs of one walk of at most maxLen hops
// (maxLen+1 nodes) with window w.
func walkPairs(maxLen, w int) int {
	n := 0
	for i := 0; i <= maxLen; i++ {
		for j := max(0, i-w); j <= min(maxLen, i+w); j++ {
			if j != i {
				n++
			}
		}
	}
	return n
}

// phase is one adversarial pair's walk graph and sampling state: G+ with
// the positive transition rule and sign +1, or G− with the negative rule
// and sign −1.
type phase struct {
	name   string
	sign   float64
	rule   walk.Transition
	walker *walk.SignedWalker
	adj    *graphs.CSR // the walk graph (real neighbours)
	// the discriminator round of the current epoch: its key and sampler
	key  walk.Key
	disc *walk.Sampler
}

// player is one GAN player with its optimiser and one step's machinery:
// DP-SGD with fixed-size batches when private, plain minibatch gradients
// otherwise.
type player struct {
	m     *nn.Model
	p     *layers.GANPlayer
	opt   nn.Optimizer
	decay float64
	lr    float64
	sgd   *dpnn.SGD  // nil without privacy
	src   *dp.Source // batch draws without privacy
	n     int        // node ids: the population of roots
	batch int        // roots per step
	chunk int        // roots per graph run
	// rec, if set, records a step of a player without noise that the
	// plan declares (the paper's generators); nil records nothing.
	rec *dp.Recorder
}

// trainRun is one training run.
type trainRun struct {
	cfg       Config
	ctx       *methods.Context
	p         *privacy
	phases    []*phase
	disc, gen *player
	keys      *dp.Source // walk keys
}

// newPlayer builds a player on n nodes with a capacity of chunk roots of
// perRoot pairs each. With hg (a private player) it is DP-SGD over the n
// roots as generated examples (a root's training subgraph: the pairs of
// the walks drawn from it with the step's key, 2·perRoot rows at most),
// built by dpnn.Private with fixed-size batches of hg.Batch roots drawn
// without replacement, noise std hg.NoiseStd(C) on the summed clipped
// gradient and every noisy step recorded by the construction under name
// as hg's step; it refuses a construction whose step is not hg's. Without
// hg it is plain minibatch training, every step recorded as record when
// the plan declares one (the paper's generators: walks on the private
// graph without noise, an event of no bound). Both record in ledger
// through the recorder of plan's release name, which refuses, before the
// player is built, a plan that does not declare that release.
func (m *ASGL) newPlayer(seed uint64, name string, kind layers.GANKind, n, batch, chunk, perRoot int, hg *dp.HypergeomGaussian, record dp.Event, plan *dp.Plan, ledger *dp.Ledger, src *dp.Source) (*player, error) {
	c := m.cfg
	mod := nn.NewModel(seed)
	private := hg != nil
	if private {
		mod.StartRecording()
	}
	pairs := chunk * perRoot
	if private && 2*pairs == n {
		// The one-hot lookups SpMM(ends, E) are 2P × n: with n columns
		// equal to the 2P batch rows, DP-SGD's row-locality check cannot
		// tell them from a batch adjacency applied to a parameter and
		// refuses them (the tenth outside audit: a spurious refusal at
		// n = 128). One more pair of capacity (padding) breaks the tie;
		// n is public.
		pairs++
	}
	gp, err := layers.NewGANPlayer(mod, name, kind, n, c.Dim, pairs)
	if err != nil {
		return nil, err
	}
	mod.StopRecording()
	pl := &player{m: mod, p: gp, decay: c.WeightDecay, lr: c.LR, n: n, batch: batch, chunk: chunk, src: src}
	switch c.Optimizer {
	case OptAdam:
		pl.opt = nn.NewAdam(c.LR, 0)
	default:
		pl.opt = &nn.SGD{LR: c.LR}
	}
	if private {
		if pl.sgd, err = privatePlayer(mod, gp, name, n, batch, perRoot, c.Clip, *hg, plan, ledger, src); err != nil {
			return nil, err
		}
		return pl, nil
	}
	if err := mod.Compile(gp.Loss, nil); err != nil {
		return nil, err
	}
	if record != nil {
		if pl.rec, err = plan.Recorder(ledger, name, record); err != nil {
			return nil, err
		}
	}
	return pl, nil
}

// privatePlayer is a player's DP-SGD over the n roots (dpnn.Private with
// generated examples and fixed-size batches, newPlayer).
//
// What the framework checks, and what it cannot. A root's rows are the
// pairs of its walks, drawn at step time, so the framework lays out no
// rows: the fill (layers.GANPlayer.SetPairs) tags pair p's two rows (p
// and P+p) with the pair's root, and the framework refuses a tag outside
// the chunk or more rows than a root may have before it sets the row
// groups from the tags, then checks every row-mixing product of the
// training path against them. The GAN player has none (its rows read
// the embedding tables, parameters, and a pair's score multiplies its own
// two rows), so that check has nothing to refuse; what no check can see
// is whether a pair tagged with root r really is one of r's walk pairs,
// the method's claim on which R = min(R_{D,L}, n) rests (discPairs and
// genPairs tag every pair with the root it was drawn from; Claim 2 of
// walk.SignedWalker bounds the roots whose pairs change).
func privatePlayer(mod *nn.Model, gp *layers.GANPlayer, name string, n, batch, perRoot int, clip float64, hg dp.HypergeomGaussian, plan *dp.Plan, ledger *dp.Ledger, src *dp.Source) (*dpnn.SGD, error) {
	step, err := hg.Step()
	if err != nil {
		return nil, err
	}
	if hg.Change != math.Trunc(hg.Change) || hg.Population != n || hg.Batch != batch {
		return nil, fmt.Errorf("asgl: %s: the plan's step %v is not over batches of %d of the %d roots with an integer change", name, hg, batch, n)
	}
	x, err := dpnn.GeneratedExamples(n, 2*perRoot, hg.Occurrences, int(hg.Change), "a root's training subgraph: the pairs of the walks drawn from it with the step's key")
	if err != nil {
		return nil, err
	}
	cfg := dpnn.PrivateConfig{Name: name, N: n, R: x.R, Change: x.Change, What: x.What, BatchSize: batch, WithoutReplacement: true,
		StepCount: hg.Steps, Clip: clip}
	if got, want := cfg.StepEvent(hg.Multiplier).String(), step.String(); got != want || cfg.Steps() != hg.Steps {
		return nil, fmt.Errorf("asgl: %s: the DP-SGD construction's step %s × %d is not the plan's %s × %d", name, got, cfg.Steps(), want, hg.Steps)
	}
	rec, err := plan.Recorder(ledger, cfg.LedgerName(), step)
	if err != nil {
		return nil, fmt.Errorf("asgl: %s: %w", name, err)
	}
	return dpnn.Private(mod, gp.PerRow, nil, x, cfg, hg.Multiplier, rec, src)
}

// step takes one optimiser step on a batch of roots whose pairs pairsOf
// gives (sample k of the pairs is roots[k]).
func (pl *player) step(pairsOf func(roots []int) ([]layers.GANPair, error)) (trainers.EpochStats, error) {
	var grads [][]float64
	var st trainers.EpochStats
	if pl.sgd != nil {
		g, s, err := pl.sgd.StepExamples(func(b *dpnn.Batch) error {
			pairs, err := pairsOf(b.Examples)
			if err != nil {
				return err
			}
			return pl.p.SetPairs(pairs, b.Tags, len(b.Examples))
		})
		if err != nil {
			return st, err
		}
		grads = g
		st = trainers.EpochStats{Loss: s.Loss, GradNorms: s.ParamNorms, ClippedFrac: s.ClippedFrac, NoiseNorm: s.NoiseNorm, BatchSize: s.BatchSize}
	} else {
		roots, err := dp.FixedSample(pl.src, pl.n, pl.batch)
		if err != nil {
			return st, err
		}
		loss := 0.0
		for lo := 0; lo < len(roots); lo += pl.chunk {
			chunk := roots[lo:min(lo+pl.chunk, len(roots))]
			pairs, err := pairsOf(chunk)
			if err != nil {
				return st, err
			}
			if err := pl.p.SetPairs(pairs, nil, 0); err != nil {
				return st, err
			}
			l, err := pl.m.Step()
			if err != nil {
				return st, err
			}
			loss += l
			g, err := pl.m.Grads()
			if err != nil {
				return st, err
			}
			if grads == nil {
				grads = make([][]float64, len(g))
				for i := range g {
					grads[i] = make([]float64, len(g[i]))
				}
			}
			for i := range g {
				for j, v := range g[i] {
					grads[i][j] += v
				}
			}
		}
		inv := 1 / float64(len(roots))
		for i := range grads {
			for j := range grads[i] {
				grads[i][j] *= inv
			}
		}
		st = trainers.EpochStats{Loss: loss * inv, BatchSize: len(roots)}
		pl.rec.Record()
	}
	params := pl.m.ParamValues()
	pl.opt.Step(params, grads)
	if pl.decay > 0 { // decoupled weight decay: reads the parameters only
		f := 1 - pl.lr*pl.decay
		for _, p := range params {
			for j := range p {
				p[j] *= f
			}
		}
	}
	return st, nil
}

// newRun sets up a run: the walk graphs (degree-bounded as planned), the
// two players and the mechanism sources.
func (m *ASGL) newRun(ctx *methods.Context, p *privacy) (*trainRun, error) {
	c := m.cfg
	g := ctx.Graph
	n := g.N
	src, err := ctx.NoiseSource("asgl")
	if err != nil {
		return nil, err
	}
	r := &trainRun{cfg: c, ctx: ctx, p: p, keys: src.Split("asgl.walks")}
	wc := p.walk
	if wc.Mode == degree.Sample {
		wc.SampleKey = degree.NewKey(src.Split("asgl.cap"))
	}
	for _, ph := range []struct {
		name     string
		pos, neg *graphs.CSR
		sign     float64
		rule     walk.Transition
	}{{"+", g.Adj, nil, 1, walk.TransitionPositive}, {"−", nil, g.Neg, -1, walk.TransitionNegative}} {
		w, err := walk.NewSignedWalker(ph.pos, ph.neg, wc)
		if err != nil {
			if wc.Mode == degree.Public {
				// The same refusal whichever of G+ and G− is above the
				// bound: which one it is is private.
				return nil, p.bound.Refusal(ctx.Dataset, err)
			}
			return nil, fmt.Errorf("walk graph G%s: %w", ph.name, err)
		}
		r.phases = append(r.phases, &phase{name: ph.name, sign: ph.sign, rule: ph.rule, walker: w, adj: w.Graph()})
	}
	var disc, gen *dp.HypergeomGaussian
	var genRecord dp.Event
	if p.private {
		disc = &p.disc
		switch {
		case p.paper:
			genRecord = infiniteEvent(1) // the paper's generators: no clipping, no noise
		case p.gen.Steps > 0:
			gen = &p.gen
		}
	}
	ledger := ctx.Ledger()
	if r.disc, err = m.newPlayer(ctx.Seed, ledgerDisc, layers.Discriminator, n, c.DiscBatch, c.DiscBatch, 2*c.Paths, disc, nil, p.Plan, ledger, src.Split("asgl.disc")); err != nil {
		return nil, err
	}
	if r.gen, err = m.newPlayer(ctx.Seed+0x9e37, ledgerGen, layers.Generator, n, c.GenBatch, min(c.GenBatch, genChunk), c.Paths*walkPairs(c.MaxLen, c.Window), gen, genRecord, p.Plan, ledger, src.Split("asgl.gen")); err != nil {
		return nil, err
	}
	return r, nil
}

// realNeighbours returns root's neighbours in the walk graph, at most N of
// them: all when there are at most N, else N drawn by a stream keyed by
// the round's key and the root (a function of T_r and the key, as the
// privacy argument needs).
func (r *trainRun) realNeighbours(ph *phase, root int) []int {
	cols, _ := ph.adj.Row(root)
	if len(cols) <= r.cfg.Paths {
		return cols
	}
	h := sha256.New()
	h.Write([]byte("dpgnn/asgl real pairs\x00"))
	h.Write(ph.key[:])
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(root))
	h.Write(b[:])
	var seed [32]byte
	copy(seed[:], h.Sum(nil))
	rng := rand.New(rand.NewChaCha8(seed))
	pick := slices.Clone(cols)
	rng.Shuffle(len(pick), func(a, b int) { pick[a], pick[b] = pick[b], pick[a] })
	return pick[:r.cfg.Paths]
}

// discPairs returns the discriminator pairs of a batch of roots in phase
// ph: per root (sample k), its real neighbours (label 1) and the terminals
// of its N walks (label 0), each kind weighted to average 1; nothing for
// a root whose walk met a dead end (GraphGAN's rule) or that has no
// neighbour.
func (r *trainRun) discPairs(ph *phase, roots []int) ([]layers.GANPair, error) {
	var out []layers.GANPair
	for k, root := range roots {
		ds, err := ph.disc.Disc(root)
		if err != nil {
			return nil, err
		}
		if ds.Aborted || len(ds.Real) == 0 {
			continue
		}
		real := r.realNeighbours(ph, root)
		for _, v := range real {
			out = append(out, layers.GANPair{U: root, V: v, Sign: ph.sign, Target: 1, Weight: 1 / float64(len(real)), Sample: k})
		}
		for _, f := range ds.Fakes {
			out = append(out, layers.GANPair{U: root, V: f, Sign: ph.sign, Target: 0, Weight: 1 / float64(len(ds.Fakes)), Sample: k})
		}
	}
	return out, nil
}

// genPairs returns the generator pairs of a batch of roots in phase ph
// with sampler s: per root (sample k), the window pairs of its N walks (in
// the negative phase only those balance theory signs negative), repeated
// pairs merged, weights averaging 1, rewards from the current
// discriminator.
func (r *trainRun) genPairs(ph *phase, s *walk.Sampler, roots []int) ([]layers.GANPair, error) {
	var out []layers.GANPair
	type key struct{ u, v int }
	for k, root := range roots {
		walks, err := s.Gen(root)
		if err != nil {
			return nil, err
		}
		count := map[key]int{}
		var order []key
		total := 0
		for _, w := range walks {
			for _, q := range w.Pairs(r.cfg.Window) {
				if float64(q.Sign) != ph.sign {
					continue // on G−: an even hop distance, a positive pair by balance theory
				}
				kk := key{q.U, q.V}
				if count[kk] == 0 {
					order = append(order, kk)
				}
				count[kk]++
				total++
			}
		}
		for _, kk := range order {
			out = append(out, layers.GANPair{U: kk.u, V: kk.v, Sign: ph.sign, Target: layers.Reward(r.disc.p, kk.u, kk.v, ph.sign),
				Weight: float64(count[kk]) / float64(total), Sample: k})
		}
	}
	return out, nil
}

// beginDisc starts phase ph's discriminator round: a fresh walk key; the
// generator's scores stay fixed until its own steps.
func (r *trainRun) beginDisc(ph *phase) error {
	ph.key = degree.NewKey(r.keys)
	var err error
	ph.disc, err = ph.walker.NewSampler(ph.key, ph.rule, r.gen.p.Scores())
	return err
}

// loop is the run's alternating loop.
func (r *trainRun) loop() *trainers.Adversarial {
	var phases []trainers.Phase
	for _, ph := range r.phases {
		phases = append(phases, trainers.Phase{
			Name:  "G" + ph.name,
			Begin: func(int) error { return r.beginDisc(ph) },
			Disc: func() (trainers.EpochStats, error) {
				return r.disc.step(func(roots []int) ([]layers.GANPair, error) { return r.discPairs(ph, roots) })
			},
			Gen: func() (trainers.EpochStats, error) {
				s, err := ph.walker.NewSampler(degree.NewKey(r.keys), ph.rule, r.gen.p.Scores())
				if err != nil {
					return trainers.EpochStats{}, err
				}
				return r.gen.step(func(roots []int) ([]layers.GANPair, error) { return r.genPairs(ph, s, roots) })
			},
			DiscSteps: r.cfg.DiscSteps, GenSteps: r.cfg.GenSteps,
		})
	}
	return &trainers.Adversarial{Epochs: r.cfg.TrainEpochs, Phases: phases, Recorder: r.ctx.Recorder, Run: r.ctx.Run}
}

// train runs the loop.
//
// The plan's step counts (steps) must be the loop's: a player that
// records its steps (a private player's DP-SGD, the paper's noiseless
// generators) is refused before the loop starts when its plan declares
// another number of them than the loop takes.
func (r *trainRun) train() error {
	loop := r.loop()
	tD, tG := loop.Steps()
	for _, c := range []struct {
		pl    *player
		steps int
	}{{r.disc, tD}, {r.gen, tG}} {
		if rec := c.pl.recorder(); rec != nil && rec.Planned() != float64(c.steps) {
			return fmt.Errorf("asgl: the plan declares %v steps of %s, the training loop takes %d", rec.Planned(), rec.Name(), c.steps)
		}
	}
	_, err := loop.Train()
	return err
}

// recorder is the recorder of the player's steps (nil when it records
// none).
func (pl *player) recorder() *dp.Recorder {
	if pl.sgd != nil {
		return pl.sgd.Cfg.Recorder
	}
	return pl.rec
}
