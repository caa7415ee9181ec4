package layers

import (
	"fmt"
	"math"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/walk"
	"github.com/dpgnn/dpgnn/nn"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// GraphGAN-style players over node embeddings (Wang et al., AAAI 2018;
// ASGL, Ke et al., KDD 2026, appendix G): a discriminator and a generator,
// each an embedding matrix E (n×k) and a bias vector b (n) scoring a node
// pair as
//
//	s(u, v) = e_u·e_v + b_v
//
// (the bias makes s asymmetric, as in both papers' code). A pair is played
// by the positive or the negative player: Sign ς = +1 scores it as s,
// ς = −1 as −s, so the two players of a signed graph (D+/D−, G+/G−) share
// one embedding matrix and one bias, and a negative edge is one whose
// embeddings point apart.
//
// Discriminator (ASGL eqs. 3–4): D_ς(u, v) = sigmoid(ς·s) is the
// probability that (u, v) is a real ς-edge; the loss of a pair with label
// y ∈ {0, 1} is the binary cross-entropy BCE(ς·s, y) = softplus(ς·s) −
// y·ς·s. Maximising eq. 4 is minimising it.
//
// Generator (eq. 2 and its policy gradient, in the per-pair surrogate form
// of GraphGAN's and ASGL's code): pairs come from walks the generator's own
// scores steer (graph softmax on BFS trees, graphs.SignedTree.Walk); a pair
// with reward ρ = −log(1 − D_ς(u, v)) (fixed: no gradient reaches the
// discriminator) has the loss −ρ·log sigmoid(ς·s_G) = ρ·softplus(−ς·s_G), so
// descending raises the generator's probability of the pairs the
// discriminator takes for real. The code's clip of the probability to
// [1e-5, 1] is not replicated: softplus needs no guard against log 0.
//
// Each player is one gorgonia graph over a fixed capacity of P pairs. Both
// endpoint rows of every pair are looked up in one sparse one-hot product
// (2P rows: the U's, then the V's) and the biases in another (rows P…2P
// hold the V's), so on a model's recorded path DP-SGD sees each parameter
// used once, as a linear layer on a constant sparse input: its ghost norm
// is the exact per-sample norm (the Gram form over a sample's rows, the one
// hot rows' products saying which rows are the same node), and its clipped
// sum is a scatter back to n rows, noise then going to every row. The
// per-row loss has 2P entries (the pair losses, then P zeros), rows p and
// P+p belonging to pair p's sample.

// GANPair is one training pair of a player.
type GANPair struct {
	U, V int // scored as s(U, V) = e_U·e_V + b_V
	// Sign ς = +1 (the positive player) or −1 (the negative one).
	Sign float64
	// Target is the label y ∈ {0, 1} for a discriminator (1: a real edge)
	// and the reward ρ ≥ 0 for a generator.
	Target float64
	// Weight multiplies the pair's loss (e.g. one over its sample's pairs
	// of that kind: an expectation per root, as in eqs. 2 and 4).
	Weight float64
	// Sample is the DP-SGD sample (training subgraph) the pair belongs to:
	// 0 … samples−1.
	Sample int
}

// GANKind is a player's role.
type GANKind int

const (
	// Discriminator pairs carry labels: loss w·BCE(ς·s, y).
	Discriminator GANKind = iota
	// Generator pairs carry rewards: loss w·ρ·softplus(−ς·s).
	Generator
)

// String returns "discriminator" or "generator".
func (k GANKind) String() string {
	if k == Generator {
		return "generator"
	}
	return "discriminator"
}

// GANPlayer is one player: its parameters and its training path over a
// capacity of Pairs pairs.
type GANPlayer struct {
	Name  string
	Kind  GANKind
	Nodes int // n
	Dim   int // k
	Pairs int // P, the capacity in pairs
	Emb   *nn.Param
	Bias  *nn.Param // n×1

	ends, bias          *nn.Sparse // 2P×n one-hot lookups
	sign, target, weigh *G.Node    // P inputs
	// Score is s(U_p, V_p) of every pair (P); PerRow the per-row loss (2P:
	// the weighted pair losses, then P zeros); Loss their sum.
	Score, PerRow, Loss *G.Node
}

// NewGANPlayer adds a player's parameters (E with Glorot-uniform entries,
// U(±√(6/(n+k))): what the authors' TensorFlow code gets, as its intended
// initialiser is never applied; b zero) and its training path over
// capacity pairs to m. On a model in recording mode the path is recorded
// for DP-SGD (per-sample norms of both parameters).
func NewGANPlayer(m *nn.Model, name string, kind GANKind, nodes, dim, capacity int) (*GANPlayer, error) {
	if nodes < 1 || dim < 1 || capacity < 1 {
		return nil, fmt.Errorf("layers: GAN player %s: %d nodes, dimension %d, capacity %d pairs; want all ≥ 1", name, nodes, dim, capacity)
	}
	p := &GANPlayer{Name: name, Kind: kind, Nodes: nodes, Dim: dim, Pairs: capacity}
	err := nn.Build(func() error {
		p.Emb = m.NewParam(name+".E", nn.GlorotUniform(), nodes, dim)
		p.Bias = m.NewParam(name+".b", nn.Constant(0), nodes, 1)
		empty := &graphs.CSR{Rows: 2 * capacity, Cols: nodes, Indptr: make([]int, 2*capacity+1), Indices: []int{}}
		p.ends = nn.NewSparse(name+".pairs", empty)
		p.bias = nn.NewSparse(name+".pairs.v", empty)
		vec := func(what string) *G.Node {
			return G.NewVector(m.G, G.Float64, G.WithShape(capacity), G.WithName(name+"."+what), G.WithValue(vecOf(make([]float64, capacity))))
		}
		p.sign, p.target, p.weigh = vec("sign"), vec("target"), vec("weight")
		x := m.RecordLinear(G.Must(nn.SpMM(p.ends, p.Emb.Node)), p.Emb, nil, nil, p.ends)    // 2P×k
		bl := m.RecordLinear(G.Must(nn.SpMM(p.bias, p.Bias.Node)), p.Bias, nil, nil, p.bias) // 2P×1
		first, second := make([]int, capacity), make([]int, capacity)
		for i := range first {
			first[i], second[i] = i, capacity+i
		}
		u := G.Must(nn.GatherRows(x, first, "U"))
		v := G.Must(nn.GatherRows(x, second, "V"))
		bv := G.Must(G.Reshape(G.Must(nn.GatherRows(bl, second, "V")), []int{capacity}))
		p.Score = G.Must(G.Add(G.Must(G.Sum(G.Must(G.HadamardProd(u, v)), 1)), bv))
		z := G.Must(G.HadamardProd(p.sign, p.Score)) // ς·s
		var loss *G.Node
		switch kind {
		case Discriminator: // softplus(z) − y·z
			loss = G.Must(G.Sub(G.Must(G.Softplus(z)), G.Must(G.HadamardProd(p.target, z))))
		case Generator: // ρ·softplus(−z)
			loss = G.Must(G.HadamardProd(p.target, G.Must(G.Softplus(G.Must(G.Neg(z))))))
		default:
			return fmt.Errorf("unknown player kind %d", int(kind))
		}
		pairLoss := G.Must(G.HadamardProd(p.weigh, loss))
		zeros := G.NewConstant(vecOf(make([]float64, capacity)), G.WithName(name+".loss.pad"))
		p.PerRow = G.Must(G.Concat(0, pairLoss, zeros))
		p.Loss = G.Must(G.Sum(p.PerRow))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("layers: GAN player %s: %w", name, err)
	}
	return p, nil
}

// SetPairs loads up to Pairs pairs into the training path (the rest is
// padding with weight 0). With groups non-nil (DP-SGD) rows p and P+p are
// assigned to pair p's Sample, padding rows to −1, and groups.Samples is
// set to samples; every Sample must lie in [0, samples). It fails on a node
// out of range, a sign other than ±1, or too many pairs.
func (p *GANPlayer) SetPairs(pairs []GANPair, groups *nn.RowGroups, samples int) error {
	P := p.Pairs
	if len(pairs) > P {
		return fmt.Errorf("layers: %s: %d pairs exceed the capacity %d", p.Name, len(pairs), P)
	}
	ends := &graphs.CSR{Rows: 2 * P, Cols: p.Nodes, Indptr: make([]int, 2*P+1), Indices: make([]int, 0, 2*len(pairs))}
	bias := &graphs.CSR{Rows: 2 * P, Cols: p.Nodes, Indptr: make([]int, 2*P+1), Indices: make([]int, 0, len(pairs))}
	sign, target, weight := make([]float64, P), make([]float64, P), make([]float64, P)
	for k, q := range pairs {
		if q.U < 0 || q.U >= p.Nodes || q.V < 0 || q.V >= p.Nodes {
			return fmt.Errorf("layers: %s: pair (%d, %d) outside the %d nodes", p.Name, q.U, q.V, p.Nodes)
		}
		if q.Sign != 1 && q.Sign != -1 {
			return fmt.Errorf("layers: %s: pair (%d, %d) has sign %v, want ±1", p.Name, q.U, q.V, q.Sign)
		}
		if groups != nil && (q.Sample < 0 || q.Sample >= samples) {
			return fmt.Errorf("layers: %s: pair (%d, %d) in sample %d of %d", p.Name, q.U, q.V, q.Sample, samples)
		}
		sign[k], target[k], weight[k] = q.Sign, q.Target, q.Weight
	}
	// Rows 0…P−1 hold the U's, rows P…2P−1 the V's (CSR rows in order).
	for r := 0; r < 2*P; r++ {
		k := r % P
		if k < len(pairs) {
			q := pairs[k]
			if r < P {
				ends.Indices = append(ends.Indices, q.U)
			} else {
				ends.Indices = append(ends.Indices, q.V)
				bias.Indices = append(bias.Indices, q.V)
			}
		}
		ends.Indptr[r+1], bias.Indptr[r+1] = len(ends.Indices), len(bias.Indices)
	}
	if groups != nil {
		if len(groups.Of) != 2*P {
			return fmt.Errorf("layers: %s: %d row groups for %d rows", p.Name, len(groups.Of), 2*P)
		}
		for r := range groups.Of {
			groups.Of[r] = -1
		}
		for k, q := range pairs {
			groups.Of[k], groups.Of[P+k] = q.Sample, q.Sample
		}
		groups.Samples = samples
	}
	if err := p.ends.Set(ends); err != nil {
		return err
	}
	if err := p.bias.Set(bias); err != nil {
		return err
	}
	for _, in := range []struct {
		n *G.Node
		v []float64
	}{{p.sign, sign}, {p.target, target}, {p.weigh, weight}} {
		if err := G.Let(in.n, vecOf(in.v)); err != nil {
			return err
		}
	}
	return nil
}

// ScoreOf returns s(u, v) = e_u·e_v + b_v from the current parameter
// values.
func (p *GANPlayer) ScoreOf(u, v int) float64 {
	return score(p.Emb.Value(), p.Bias.Value(), p.Dim, u, v)
}

func score(e, b []float64, k, u, v int) float64 {
	s := b[v]
	eu, ev := e[u*k:(u+1)*k], e[v*k:(v+1)*k]
	for j, x := range eu {
		s += x * ev[j]
	}
	return s
}

// Scores is the graph-softmax score function of the walks (graphs.ScoreFunc)
// from the current parameter values: out[j] = s(cur, cands[j]). It reads the
// parameters at every call: use it while they do not change.
func (p *GANPlayer) Scores() walk.ScoreFunc {
	return func(cur int, cands []int, out []float64) {
		e, b := p.Emb.Value(), p.Bias.Value()
		for j, c := range cands {
			out[j] = score(e, b, p.Dim, cur, c)
		}
	}
}

// Reward is the generator's reward for a pair the discriminator d scores:
// −log(1 − D_ς(u, v)) = softplus(ς·s_D(u, v)), with ς·s_D clipped to
// [−10, 10] as in GraphGAN's and ASGL's code.
func Reward(d *GANPlayer, u, v int, sign float64) float64 {
	return Softplus(math.Max(-10, math.Min(10, sign*d.ScoreOf(u, v))))
}

// Softplus is log(1 + eˣ), computed without overflow.
func Softplus(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

// String describes the player.
func (p *GANPlayer) String() string {
	return fmt.Sprintf("GANPlayer(%s: %s, %d nodes × %d, %d pairs)", p.Name, p.Kind, p.Nodes, p.Dim, p.Pairs)
}

func vecOf(data []float64) *tensor.Dense {
	return tensor.New(tensor.WithShape(len(data)), tensor.WithBacking(data))
}
