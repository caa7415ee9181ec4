package asgl

import (
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/degree"
	"github.com/dpgnn/dpgnn/graphs/gen"
	graphio "github.com/dpgnn/dpgnn/graphs/io"
	"github.com/dpgnn/dpgnn/graphs/walk"
	"github.com/dpgnn/dpgnn/internal/testutil"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/methods/run"
	"github.com/dpgnn/dpgnn/trainers"
)

// tinySigned is a small two-community signed graph prepared by the task
// (20 % of the edges held out) and the largest degree of G+ and G−.
func tinySigned(t *testing.T, nodes int) (*graphs.Graph, int) { return sparseSigned(t, nodes, 12) }

func sparseSigned(t *testing.T, nodes int, degree float64) (*graphs.Graph, int) {
	t.Helper()
	s := gen.SignedSBM(gen.SignedSBMConfig{Nodes: nodes, Communities: 2, AvgDegree: degree, NegWithin: 0.05, PosAcross: 0.05}, 4)
	g, err := (&ASGL{}).Task().Prepare(s, 1)
	if err != nil {
		t.Fatal(err)
	}
	d := 0
	for _, a := range []*graphs.CSR{g.Adj, g.Neg} {
		d = max(d, slices.Max(a.Degrees()))
	}
	return g, d
}

func tinyConfig(maxDegree int) Config {
	c := DefaultConfig()
	c.Dim, c.Paths, c.MaxLen, c.MaxDegree, c.Window = 8, 2, 2, maxDegree, 2
	c.TrainEpochs, c.DiscSteps, c.GenSteps, c.DiscBatch, c.GenBatch = 3, 4, 4, 16, 16
	return c
}

func context(g *graphs.Graph, eps float64) *methods.Context {
	ctx := &methods.Context{Graph: g, Dataset: g.Name, Level: methods.None, Epsilon: math.Inf(1), Seed: 1, Selection: trainers.SelectLast}
	if !math.IsInf(eps, 1) {
		ctx.Level, ctx.Epsilon, ctx.Delta, ctx.DeltaRule = methods.Node, eps, 1e-5, methods.DeltaGiven
	}
	return ctx
}

// TestRunEndToEnd trains on a small signed graph without privacy and at
// ε = 2 (public degree bound, strict accounting): the metrics are there,
// the non-private generator separates the communities (SSI well above the
// 1/2 of random embeddings), and the private run's report states ε ≤ 2
// with every step of both players recorded.
func TestRunEndToEnd(t *testing.T) {
	g, d := tinySigned(t, 200)
	for _, eps := range []float64{math.Inf(1), 2} {
		cfg := tinyConfig(d)
		cfg.TrainEpochs, cfg.LR, cfg.DiscBatch, cfg.GenBatch = 12, 0.05, 32, 32
		m := New(cfg)
		ctx := context(g, eps)
		out, err := m.Run(ctx)
		if err != nil {
			t.Fatalf("ε = %v: %v", eps, err)
		}
		met, err := m.Task().Metrics(g, out)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("ε = %v: %v", eps, met)
		for _, k := range []string{"sign_auc", "sign_f1", "ssi", "gen_sign_auc", "gen_sign_f1", "gen_ssi"} {
			if v, ok := met[k]; !ok || math.IsNaN(v) {
				t.Errorf("ε = %v: metric %s is %v", eps, k, v)
			}
		}
		if math.IsInf(eps, 1) {
			if met["gen_ssi"] < 0.6 {
				t.Errorf("non-private generator SSI %.3f, want well above 1/2", met["gen_ssi"])
			}
			continue
		}
		rep := out.Privacy
		if rep.Epsilon == nil || *rep.Epsilon > eps {
			t.Fatalf("report ε %v above the target %v", rep.Epsilon, eps)
		}
		tD, tG := m.steps()
		counts := map[string]int{}
		for _, e := range ctx.Ledger().Entries() {
			counts[e.Name]++
		}
		if counts[ledgerDisc] != tD || counts[ledgerGen] != tG || tD != 2*12*4 {
			t.Errorf("ledger %v, want %d discriminator and %d generator steps", counts, tD, tG)
		}
	}
}

// TestExtraReleaseFailsThePlan: one noisy step more than planned fails
// the plan check.
func TestExtraReleaseFailsThePlan(t *testing.T) {
	g, d := tinySigned(t, 60)
	cfg := tinyConfig(d)
	cfg.TrainEpochs = 1
	m := New(cfg)
	ctx := context(g, 4)
	p, err := m.calibrate(ctx, g.N)
	if err != nil {
		t.Fatal(err)
	}
	r, err := m.newRun(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.train(); err != nil {
		t.Fatal(err)
	}
	if _, err := run.Report(ctx, p.Plan); err != nil {
		t.Fatalf("a run that kept to its plan: %v", err)
	}
	// One more discriminator step through the same machinery.
	if _, err := r.disc.step(func(roots []int) ([]layers.GANPair, error) { return r.discPairs(r.phases[0], roots) }); err != nil {
		t.Fatal(err)
	}
	if _, err := run.Report(ctx, p.Plan); err == nil || !strings.Contains(err.Error(), ledgerDisc) {
		t.Fatalf("one step more than planned: %v, want a plan-check error naming %s", err, ledgerDisc)
	}
}

// TestAccounting: strict plans compose 2·epochs·(disc + gen steps)
// HypergeomGaussian steps with change 2 and noise σ·R·C, within the
// target; the paper's plan states ε = ∞ with the generators not covered
// and the paper's figure in its notes; the public bound refuses an input
// above it, none is refused with the strict accounting.
func TestAccounting(t *testing.T) {
	g, d := tinySigned(t, 60)
	cfg := tinyConfig(d)
	m := New(cfg)
	ctx := context(g, 2)
	p, err := m.calibrate(ctx, g.N)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := walk.ReceptiveField(d, cfg.MaxLen)
	if p.occ != min(r, g.N) || p.disc.Change != 2 || p.disc.Steps != 24 || p.gen.Steps != 24 || p.disc.Population != g.N {
		t.Fatalf("strict mechanisms %+v %+v (R = %d)", p.disc, p.gen, p.occ)
	}
	rep, err := p.Plan.Report(p.Plan.AsPlanned())
	if err != nil || *rep.Epsilon > 2 || *rep.Epsilon < 1.99 {
		t.Fatalf("strict report ε %v (%v), want just below 2", rep.Epsilon, err)
	}
	// One multiplier convention: the plan's z is the noise std over the
	// sensitivity of the whole released sum, R·2·C (the multiplier
	// reported used to be std/(R·C), half the real ratio's reciprocal).
	testutil.AssertClose(t, "noise std / C", p.noiseMultiplier(), p.Plan.Multiplier*float64(p.occ)*2, 1e-12)
	testutil.AssertClose(t, "reported noise std", p.Plan.Noise["noise_std"], p.Plan.Noise["multiplier"]*float64(p.occ)*2*cfg.Clip, 1e-12)

	paper := cfg
	paper.Accounting = AccountingPaper
	pm := New(paper)
	ctxP := context(g, 2)
	pp, err := pm.calibrate(ctxP, g.N)
	if err != nil {
		t.Fatal(err)
	}
	rep, err = pp.Plan.Report(pp.Plan.AsPlanned())
	if err != nil || rep.Epsilon != nil {
		t.Fatalf("paper report ε %v (%v), want null (∞)", rep.Epsilon, err)
	}
	pp.annotate(rep)
	found := false
	for _, u := range rep.Uses {
		found = found || strings.HasPrefix(u.Covered, "not covered")
	}
	if !found || !strings.Contains(rep.Notes, "claims ε = 2") {
		t.Errorf("paper report: uses %+v, notes %q", rep.Uses, rep.Notes)
	}
	// The paper's σ is below the strict one (fewer steps, change 1).
	if strict := p.Plan.Multiplier * p.disc.Change; !(pp.paperSigma < strict) {
		t.Errorf("paper σ %v, strict σ %v", pp.paperSigma, strict)
	}

	low := cfg
	low.MaxDegree = d - 1
	if _, err := New(low).newRun(ctx, mustCalibrate(t, New(low), ctx, g.N)); err == nil || !strings.Contains(err.Error(), "--degree-bound sample") {
		t.Errorf("input above the public bound: %v", err)
	}
	// The refusal names the bound only: the same text for two inputs
	// above it with different largest degrees, a *degree.BoundError
	// inside, no "largest" and no "raise it".
	var first string
	for _, deg := range []float64{12, 24} {
		h, hd := sparseSigned(t, 60, deg)
		if hd <= 3 {
			t.Fatalf("signed SBM of degree %g has largest degree %d, not above the bound 3", deg, hd)
		}
		b := cfg
		b.MaxDegree = 3
		hc := context(h, 2)
		hc.Dataset = "signed"
		_, err := New(b).newRun(hc, mustCalibrate(t, New(b), hc, h.N))
		var be *degree.BoundError
		if !errors.As(err, &be) {
			t.Fatalf("degree %g: err = %v, want a *degree.BoundError", deg, err)
		}
		msg := err.Error()
		if strings.Contains(msg, "largest") || strings.Contains(msg, "raise it") || strings.Contains(msg, "node(s)") {
			t.Errorf("degree %g: refusal %q names a private statistic", deg, msg)
		}
		if first == "" {
			first = msg
		} else if msg != first {
			t.Errorf("refusals differ with the input: %q vs %q", first, msg)
		}
	}
	none := cfg
	none.DegreeBound = degree.None.String()
	if _, err := New(none).calibrate(ctx, g.N); err == nil || !strings.Contains(err.Error(), "none") {
		t.Errorf("strict accounting without a degree bound: %v", err)
	}
}

func mustCalibrate(t *testing.T, m *ASGL, ctx *methods.Context, n int) *privacy {
	t.Helper()
	p, err := m.calibrate(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// subgraphs samples every root's training subgraph the way a run does
// (its discriminator pairs and its generator pairs, from fixed keys and the
// generator's initial scores) and returns each root's node set.
func subgraphs(t *testing.T, r *trainRun, ph *phase) [][]int {
	t.Helper()
	n := ph.adj.Rows
	ph.key = degree.NewKey(dp.NewSource(5))
	var err error
	if ph.disc, err = ph.walker.NewSampler(ph.key, ph.rule, r.gen.p.Scores()); err != nil {
		t.Fatal(err)
	}
	gs, err := ph.walker.NewSampler(degree.NewKey(dp.NewSource(6)), ph.rule, r.gen.p.Scores())
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]int, n)
	for root := 0; root < n; root++ {
		dps, err := r.discPairs(ph, []int{root})
		if err != nil {
			t.Fatal(err)
		}
		gps, err := r.genPairs(ph, gs, []int{root})
		if err != nil {
			t.Fatal(err)
		}
		set := []int{root}
		for _, q := range append(dps, gps...) {
			set = append(set, q.U, q.V)
		}
		slices.Sort(set)
		out[root] = slices.Compact(set)
	}
	return out
}

// maxOccurrence is the most subgraphs one node lies in.
func maxOccurrence(sets [][]int) int {
	count := map[int]int{}
	mx := 0
	for _, s := range sets {
		for _, v := range s {
			count[v]++
			mx = max(mx, count[v])
		}
	}
	return mx
}

// TestOccurrenceBound checks the claim the accounting rests on, on the
// training subgraphs a run builds (discriminator and generator pairs):
// on bitcoin_alpha with the paper's N = D = 3, L = 4 (R = 121) and the cap,
// no node lies in more than R subgraphs, on G and on G without its largest
// hub; under a public bound on a small graph, the subgraphs that differ
// between G and G − v are at most R, all of roots within L hops of v.
func TestOccurrenceBound(t *testing.T) {
	g, err := graphio.LoadSigned(filepath.Join(testutil.DataDir(t), "signed", "bitcoin_alpha"))
	if err != nil {
		t.Fatal(err)
	}
	if g, err = (&ASGL{}).Task().Prepare(g, 1); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Dim, cfg.DegreeBound = 4, degree.Sample.String()
	degs := g.Adj.Degrees()
	hub := 0
	for v, d := range degs {
		if d > degs[hub] {
			hub = v
		}
	}
	for _, gv := range []*graphs.Graph{g, withoutNode(g, hub)} {
		r := runFor(t, cfg, gv)
		for _, ph := range r.phases {
			if mx := maxOccurrence(subgraphs(t, r, ph)); mx > 121 {
				t.Errorf("G%s: a node lies in %d training subgraphs, above R = 121", ph.name, mx)
			} else {
				t.Logf("G%s (%d nodes): at most %d subgraphs contain one node (R = 121)", ph.name, gv.N, mx)
			}
		}
	}
	// Public bound: differing subgraphs between G and G − v.
	tg, d := sparseSigned(t, 300, 3)
	small := tinyConfig(d)
	rv, _ := walk.ReceptiveField(d, small.MaxLen)
	if rv >= tg.N {
		t.Fatalf("R = %d is not below n = %d: the check would be void", rv, tg.N)
	}
	hubOf := func(a *graphs.CSR) int {
		d := a.Degrees()
		return slices.Index(d, slices.Max(d))
	}
	for _, v := range []int{hubOf(tg.Adj), hubOf(tg.Neg), 7} {
		base, rem := runFor(t, small, tg), runFor(t, small, withoutNode(tg, v))
		for k := range base.phases {
			a, b := subgraphs(t, base, base.phases[k]), subgraphs(t, rem, rem.phases[k])
			ball := ballOf(base.phases[k].adj, v, small.MaxLen)
			diff := 0
			for root := range a {
				if !slices.Equal(a[root], b[root]) {
					diff++
					if !ball[root] {
						t.Errorf("G%s − %d: root %d outside the %d-ball changed", base.phases[k].name, v, root, small.MaxLen)
					}
				}
			}
			if diff > rv {
				t.Errorf("G%s − %d: %d subgraphs differ, above R = %d", base.phases[k].name, v, diff, rv)
			}
			if mx := maxOccurrence(a); mx > rv {
				t.Errorf("G%s: a node lies in %d subgraphs, above R = %d", base.phases[k].name, mx, rv)
			}
			t.Logf("G%s − %d (public D = %d): %d subgraphs differ (R = %d)", base.phases[k].name, v, d, diff, rv)
		}
	}
}

// runFor builds a private run's walkers and players on g (no training).
func runFor(t *testing.T, cfg Config, g *graphs.Graph) *trainRun {
	t.Helper()
	m := New(cfg)
	ctx := context(g, 4)
	p, err := m.calibrate(ctx, g.N)
	if err != nil {
		t.Fatal(err)
	}
	r, err := m.newRun(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// withoutNode is g without v's edges (both signs; v keeps its id).
func withoutNode(g *graphs.Graph, v int) *graphs.Graph {
	out := *g
	out.Adj, out.Neg = graphs.RemoveNode(g.Adj, v), graphs.RemoveNode(g.Neg, v)
	return &out
}

// ballOf is the set of nodes within l hops of v in a.
func ballOf(a *graphs.CSR, v, l int) map[int]bool {
	in := map[int]bool{v: true}
	front := []int{v}
	for range l {
		var next []int
		for _, u := range front {
			cols, _ := a.Row(u)
			for _, w := range cols {
				if !in[w] {
					in[w] = true
					next = append(next, w)
				}
			}
		}
		front = next
	}
	return in
}

// TestAuditStep: the audited D+ step releases the full privatised gradient
// (n·k + n values) on G and G − v, repeatably from a source, and a small
// audit does not refute its claim.
func TestAuditStep(t *testing.T) {
	g, d := tinySigned(t, 30)
	cfg := tinyConfig(d)
	cfg.Dim, cfg.DiscBatch = 2, 10
	m := New(cfg)
	target, err := m.AuditTarget(context(g, 8), run.AuditOptions{Multiplier: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if !(target.Claimed > 0) || math.IsInf(target.Claimed, 1) {
		t.Fatalf("claim %v", target.Claimed)
	}
	relG, err := target.Prepare(g)
	if err != nil {
		t.Fatal(err)
	}
	hub := 0
	for v, dv := range g.Adj.Degrees() {
		if dv > g.Adj.Degrees()[hub] {
			hub = v
		}
	}
	relGp, err := target.Prepare(withoutNode(g, hub))
	if err != nil {
		t.Fatal(err)
	}
	a, err := relG(dp.NewSource(3))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := relG(dp.NewSource(3))
	if len(a) != g.N*(cfg.Dim+1) || !slices.Equal(a, b) {
		t.Fatalf("release of %d values (want %d), repeatable %v", len(a), g.N*(cfg.Dim+1), slices.Equal(a, b))
	}
	res, err := dp.AuditStream(func(i int, _ bool) ([]float64, error) { return relG(dp.NewSource(uint64(10 + i))) },
		func(i int, _ bool) ([]float64, error) { return relGp(dp.NewSource(uint64(1e6 + i))) }, 300, dp.AuditConfig{Delta: target.Delta})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("claim ε = %.3f, audit ε_lb = %.3f", target.Claimed, res.EpsilonLB)
	if res.EpsilonLB > target.Claimed {
		t.Errorf("audit ε_lb %.3f above the claim %.3f", res.EpsilonLB, target.Claimed)
	}
}

// TestDiscNoiseAtAccountedScale: one D+ step adds noise of the accounted
// std σ·R·C. The clipped sum has norm at most B·C, so the norm of the
// release times B lies within B·C of the noise's norm, which concentrates
// at std·√n (5 std-of-norm of slack).
func TestDiscNoiseAtAccountedScale(t *testing.T) {
	g, d := tinySigned(t, 30)
	cfg := tinyConfig(d)
	cfg.Dim, cfg.DiscBatch = 4, 10
	m := New(cfg)
	ctx := context(g, 8)
	c := *ctx
	c.Multiplier = 0.5
	p, err := m.calibrate(&c, g.N)
	if err != nil {
		t.Fatal(err)
	}
	std := p.noiseMultiplier() * cfg.Clip
	target, err := m.AuditTarget(ctx, run.AuditOptions{Multiplier: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	rel, err := target.Prepare(g)
	if err != nil {
		t.Fatal(err)
	}
	for seed := uint64(1); seed <= 3; seed++ {
		r, err := rel(dp.NewSource(seed))
		if err != nil {
			t.Fatal(err)
		}
		norm := 0.0
		for _, v := range r {
			norm += v * v * float64(cfg.DiscBatch*cfg.DiscBatch)
		}
		norm = math.Sqrt(norm)
		want := std * math.Sqrt(float64(len(r)))
		if slack := float64(cfg.DiscBatch)*cfg.Clip + 5*std; math.Abs(norm-want) > slack {
			t.Fatalf("seed %d: ‖B·release‖ = %.4g, noise alone ≈ %.4g (std %.4g over %d coordinates), want within %.4g", seed, norm, want, std, len(r), slack)
		}
	}
}

// TestRefusalSameForEitherSign: under the public bound the refusal does not
// say which of G+ and G− has a node above it (an outside review found
// "on X, G−" against "on X, G+"): one graph above the bound in G+ only and
// its mirror above it in G− only get the same message.
func TestRefusalSameForEitherSign(t *testing.T) {
	h, hd := sparseSigned(t, 60, 12)
	if hd <= 3 {
		t.Fatalf("largest degree %d, not above the bound 3", hd)
	}
	empty := &graphs.CSR{Rows: h.N, Cols: h.N, Indptr: make([]int, h.N+1)}
	onlyPos, onlyNeg := *h, *h
	onlyPos.Neg = empty
	onlyNeg.Adj, onlyNeg.Neg = empty, h.Adj
	cfg := tinyConfig(3)
	var msgs []string
	for _, g := range []*graphs.Graph{&onlyPos, &onlyNeg} {
		ctx := context(g, 2)
		ctx.Dataset = "signed"
		_, err := New(cfg).newRun(ctx, mustCalibrate(t, New(cfg), ctx, g.N))
		var be *degree.BoundError
		if !errors.As(err, &be) {
			t.Fatalf("err = %v, want a *degree.BoundError", err)
		}
		msgs = append(msgs, err.Error())
	}
	if msgs[0] != msgs[1] {
		t.Errorf("the refusal says which sign is above the bound: %q vs %q", msgs[0], msgs[1])
	}
}
