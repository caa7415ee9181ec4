package layers

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
)

func buildPlayer(t *testing.T, kind GANKind, n, k, capacity int, record bool) (*nn.Model, *GANPlayer) {
	t.Helper()
	m := nn.NewModel(3)
	if record {
		m.StartRecording()
	}
	p, err := NewGANPlayer(m, "d", kind, n, k, capacity)
	if err != nil {
		t.Fatal(err)
	}
	m.StopRecording()
	return m, p
}

// TestDiscriminatorSpecVector is a worked example computed by hand: d_u = [0.1,
// −0.2], d_v = [0.3, 0.4], b = 0 give s = −0.05, D = 0.4875026035157896 and
// the BCE values and gradients for y = 1 and y = 0.
func TestDiscriminatorSpecVector(t *testing.T) {
	for _, tc := range []struct {
		y, bce float64
		du, dv [2]float64
	}{
		{1, 0.7184596480132864, [2]float64{-0.15374921894526308, -0.20499895859368414}, [2]float64{-0.051249739648421035, 0.10249947929684207}},
		{0, 0.6684596480132863, [2]float64{0.14625078105473688, 0.19500104140631586}, [2]float64{0.048750260351578964, -0.09750052070315793}},
	} {
		m, p := buildPlayer(t, Discriminator, 2, 2, 1, false)
		copy(p.Emb.Value(), []float64{0.1, -0.2, 0.3, 0.4})
		if err := m.Compile(p.Loss, []*G.Node{p.Score}); err != nil {
			t.Fatal(err)
		}
		if err := p.SetPairs([]GANPair{{U: 0, V: 1, Sign: 1, Target: tc.y, Weight: 1}}, nil, 0); err != nil {
			t.Fatal(err)
		}
		loss, err := m.StepMode(false)
		if err != nil {
			t.Fatal(err)
		}
		close := func(what string, got, want float64) {
			t.Helper()
			if math.Abs(got-want) > 1e-12 {
				t.Errorf("y=%v %s = %.17g, want %.17g", tc.y, what, got, want)
			}
		}
		close("s", nn.Values(p.Score)[0], -0.05)
		close("D", 1/(1+math.Exp(0.05)), 0.4875026035157896)
		close("BCE", loss, tc.bce)
		g, _ := p.Emb.Grad()
		close("∂/∂d_u[0]", g[0], tc.du[0])
		close("∂/∂d_u[1]", g[1], tc.du[1])
		close("∂/∂d_v[0]", g[2], tc.dv[0])
		close("∂/∂d_v[1]", g[3], tc.dv[1])
		gb, _ := p.Bias.Grad()
		close("∂/∂b_v", gb[1], 0.4875026035157896-tc.y)
		close("∂/∂b_u", gb[0], 0)
		close("reward", Reward(p, 0, 1, 1), 0.6684596480132863)
	}
	// The negative player scores −s: its BCE at label 1 is the positive
	// player's at label 0 with the roles of the gradients flipped.
	m, p := buildPlayer(t, Discriminator, 2, 2, 1, false)
	copy(p.Emb.Value(), []float64{0.1, -0.2, 0.3, 0.4})
	if err := m.Compile(p.Loss, nil); err != nil {
		t.Fatal(err)
	}
	_ = p.SetPairs([]GANPair{{U: 0, V: 1, Sign: -1, Target: 1, Weight: 1}}, nil, 0)
	loss, _ := m.StepMode(false)
	if want := Softplus(0.05) - 0.05; math.Abs(loss-want) > 1e-15 {
		t.Errorf("negative player: BCE(0.05, 1) = %v, want %v", loss, want)
	}
}

// randomPairs draws pairs over n nodes (repeats and shared endpoints
// included), in `samples` samples.
func randomPairs(r *rand.Rand, kind GANKind, n, count, samples int) []GANPair {
	out := make([]GANPair, count)
	for i := range out {
		u := r.IntN(n)
		v := (u + 1 + r.IntN(n-1)) % n
		sign := 1.0
		if r.IntN(2) == 0 {
			sign = -1
		}
		target := float64(r.IntN(2))
		if kind == Generator {
			target = 2 * r.Float64()
		}
		out[i] = GANPair{U: u, V: v, Sign: sign, Target: target, Weight: 0.2 + r.Float64(), Sample: r.IntN(samples)}
	}
	return out
}

// TestGANPlayerGradCheck compares both players' symbolic gradients with
// finite differences on random pairs with repeated nodes, random biases and
// both signs (padding rows included).
func TestGANPlayerGradCheck(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, kind := range []GANKind{Discriminator, Generator} {
		m, p := buildPlayer(t, kind, 7, 3, 12, false)
		for i := range p.Emb.Value() {
			p.Emb.Value()[i] = r.NormFloat64()
		}
		for i := range p.Bias.Value() {
			p.Bias.Value()[i] = 0.5 * r.NormFloat64()
		}
		if err := m.Compile(p.Loss, nil); err != nil {
			t.Fatal(err)
		}
		if err := p.SetPairs(randomPairs(r, kind, 7, 10, 3), nil, 0); err != nil {
			t.Fatal(err)
		}
		res, err := m.GradCheck(1e-4, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range res {
			if c.MaxRel > 1e-6 {
				t.Errorf("%s %s: relative error %.3g at entry %d", kind, c.Param, c.MaxRel, c.WorstIdx)
			}
		}
	}
}

// TestGANPlayerPerSampleNorms: on the recorded path, the ghost norms the
// DP-SGD construction computes from the player's records equal the norms
// of each sample's gradient computed alone (a node appearing on both sides
// of a pair, in several pairs and in several samples included).
func TestGANPlayerPerSampleNorms(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	const n, k, capacity, samples = 6, 4, 14, 4
	for _, kind := range []GANKind{Discriminator, Generator} {
		pairs := randomPairs(r, kind, n, 12, samples)
		pairs[1].U, pairs[1].V = pairs[0].V, pairs[0].U // the same two nodes, swapped
		pairs[1].Sample = pairs[0].Sample
		// the DP path: per-row loss, groups, ghost norms via the records
		mdp, pdp := buildPlayer(t, kind, n, k, capacity, true)
		recs := mdp.PerSampleRecords()
		if len(recs) != 2 {
			t.Fatalf("%s: %d per-sample records, want 2 (E and b)", kind, len(recs))
		}
		groups := &nn.RowGroups{Of: make([]int, 2*capacity)}
		var norms []*G.Node
		var probes G.Nodes
		for _, rec := range recs {
			probes = append(probes, rec.Probe)
		}
		deltas, err := mdp.Grad(pdp.Loss, probes...)
		if err != nil {
			t.Fatal(err)
		}
		sparse := func(r nn.PerSample) *nn.Sparse { return r.Rule.(nn.LinearWeight).SparseInput }
		for i, rec := range recs {
			norms = append(norms, G.Must(nn.GhostNormSqSparse(sparse(rec), deltas[i], groups, rec.Param.Name)))
		}
		total := G.Must(G.Add(norms[0], norms[1]))
		if err := mdp.CompileGradients(pdp.Loss, []*G.Node{G.Must(nn.SpMMT(sparse(recs[0]), deltas[0])), G.Must(nn.SpMMT(sparse(recs[1]), deltas[1]))}, nil, total); err != nil {
			t.Fatal(err)
		}
		if err := pdp.SetPairs(pairs, groups, samples); err != nil {
			t.Fatal(err)
		}
		if _, err := mdp.Step(); err != nil {
			t.Fatal(err)
		}
		ghost := nn.Values(total)
		// the reference: one sample at a time on a plain model with the same
		// parameters
		mref, pref := buildPlayer(t, kind, n, k, capacity, false)
		if err := mref.Compile(pref.Loss, nil); err != nil {
			t.Fatal(err)
		}
		for s := 0; s < samples; s++ {
			var mine []GANPair
			for _, q := range pairs {
				if q.Sample == s {
					mine = append(mine, q)
				}
			}
			if err := pref.SetPairs(mine, nil, 0); err != nil {
				t.Fatal(err)
			}
			if _, err := mref.StepMode(false); err != nil {
				t.Fatal(err)
			}
			want := 0.0
			for _, prm := range mref.Params {
				g, _ := prm.Grad()
				for _, v := range g {
					want += v * v
				}
			}
			if math.Abs(ghost[s]-want) > 1e-12*math.Max(1, want) {
				t.Errorf("%s sample %d: ghost norm² %.15g, per-sample reference %.15g", kind, s, ghost[s], want)
			}
		}
	}
}

func TestGANPlayerErrors(t *testing.T) {
	_, p := buildPlayer(t, Discriminator, 3, 2, 2, false)
	for _, tc := range []struct {
		pairs []GANPair
		want  string
	}{
		{[]GANPair{{U: 0, V: 3, Sign: 1}}, "outside"},
		{[]GANPair{{U: 0, V: 1, Sign: 0}}, "sign"},
		{make([]GANPair, 3), "capacity"},
	} {
		for i := range tc.pairs {
			if tc.pairs[i].Sign == 0 && tc.want != "sign" {
				tc.pairs[i].Sign = 1
			}
		}
		if err := p.SetPairs(tc.pairs, nil, 0); err == nil || !contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.pairs, err, tc.want)
		}
	}
	if _, err := NewGANPlayer(nn.NewModel(1), "x", Generator, 0, 2, 2); err == nil {
		t.Error("0 nodes accepted")
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
