package attacks

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// ClassifierConfig configures the attack classifier: an MLP with ReLU
// hidden layers and one logit, trained on the logistic loss with Adam on
// shuffled mini-batches.
type ClassifierConfig struct {
	Hidden []int
	Epochs int
	LR     float64
	Batch  int
	Seed   uint64
}

// DefaultClassifier is G-MIA's attack model (its TSTF code): hidden layers
// of 100 and 50 ReLU units, Adam at learning rate 0.01, 100 epochs of
// mini-batches of 32. (Its two softmax outputs are one logit here.)
func DefaultClassifier() ClassifierConfig {
	return ClassifierConfig{Hidden: []int{100, 50}, Epochs: 100, LR: 0.01, Batch: 32}
}

// Classifier is a trained binary classifier.
type Classifier struct {
	w, b [][]float64 // layer l: w[l] is out×in row-major, b[l] has out entries
	dims []int
}

// TrainClassifier trains a classifier on the rows x (all of one width) with
// labels y (0 or 1). Weights start Xavier-uniform and biases at 0.01, as in
// G-MIA; everything is drawn from cfg.Seed, so training is deterministic.
func TrainClassifier(x [][]float64, y []int, cfg ClassifierConfig) (*Classifier, error) {
	if len(x) == 0 || len(x) != len(y) {
		return nil, fmt.Errorf("attack classifier: %d rows and %d labels", len(x), len(y))
	}
	if cfg.Epochs <= 0 || cfg.Batch <= 0 || !(cfg.LR > 0) {
		return nil, fmt.Errorf("attack classifier: epochs, batch and learning rate must be positive")
	}
	in := len(x[0])
	for i, r := range x {
		if len(r) != in {
			return nil, fmt.Errorf("attack classifier: row %d has %d values, want %d", i, len(r), in)
		}
		if y[i] != 0 && y[i] != 1 {
			return nil, fmt.Errorf("attack classifier: label %d at row %d, want 0 or 1", y[i], i)
		}
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x617474616b))
	c := &Classifier{dims: append(append([]int{in}, cfg.Hidden...), 1)}
	L := len(c.dims) - 1
	for l := 0; l < L; l++ {
		fi, fo := c.dims[l], c.dims[l+1]
		bound := math.Sqrt(6 / float64(fi+fo))
		w := make([]float64, fo*fi)
		for k := range w {
			w[k] = (2*rng.Float64() - 1) * bound
		}
		b := make([]float64, fo)
		for k := range b {
			b[k] = 0.01
		}
		c.w, c.b = append(c.w, w), append(c.b, b)
	}
	// Adam state.
	const beta1, beta2, eps = 0.9, 0.999, 1e-8
	mw, vw, mb, vb := zerosLike(c.w), zerosLike(c.w), zerosLike(c.b), zerosLike(c.b)
	gw, gb := zerosLike(c.w), zerosLike(c.b)
	acts := make([][]float64, L+1)
	deltas := make([][]float64, L+1)
	for l := range acts {
		acts[l] = make([]float64, c.dims[l])
		deltas[l] = make([]float64, c.dims[l])
	}
	order := make([]int, len(x))
	for i := range order {
		order[i] = i
	}
	step := 0
	for range cfg.Epochs {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for lo := 0; lo < len(order); lo += cfg.Batch {
			hi := min(lo+cfg.Batch, len(order))
			for l := range gw {
				clear(gw[l])
				clear(gb[l])
			}
			for _, i := range order[lo:hi] {
				logit := c.forward(x[i], acts)
				// d(logistic loss)/d(logit) = σ(logit) − y, averaged over the batch.
				deltas[L][0] = (sigmoid(logit) - float64(y[i])) / float64(hi-lo)
				for l := L - 1; l >= 0; l-- {
					fi, fo := c.dims[l], c.dims[l+1]
					d := deltas[l+1]
					a := acts[l]
					for o := 0; o < fo; o++ {
						gb[l][o] += d[o]
						row := gw[l][o*fi : (o+1)*fi]
						for k, v := range a {
							row[k] += d[o] * v
						}
					}
					if l > 0 {
						prev := deltas[l]
						clear(prev)
						for o := 0; o < fo; o++ {
							row := c.w[l][o*fi : (o+1)*fi]
							for k := range prev {
								prev[k] += d[o] * row[k]
							}
						}
						for k, v := range a { // ReLU'
							if v <= 0 {
								prev[k] = 0
							}
						}
					}
				}
			}
			step++
			c1 := 1 - math.Pow(beta1, float64(step))
			c2 := 1 - math.Pow(beta2, float64(step))
			adam := func(p, g, m, v []float64) {
				for k := range p {
					m[k] = beta1*m[k] + (1-beta1)*g[k]
					v[k] = beta2*v[k] + (1-beta2)*g[k]*g[k]
					p[k] -= cfg.LR * (m[k] / c1) / (math.Sqrt(v[k]/c2) + eps)
				}
			}
			for l := 0; l < L; l++ {
				adam(c.w[l], gw[l], mw[l], vw[l])
				adam(c.b[l], gb[l], mb[l], vb[l])
			}
		}
	}
	return c, nil
}

// forward fills acts (acts[0] the input, acts[l] the ReLU outputs of
// hidden layer l) and returns the logit.
func (c *Classifier) forward(x []float64, acts [][]float64) float64 {
	copy(acts[0], x)
	L := len(c.dims) - 1
	for l := 0; l < L; l++ {
		fi, fo := c.dims[l], c.dims[l+1]
		out := acts[l+1]
		for o := 0; o < fo; o++ {
			s := c.b[l][o]
			row := c.w[l][o*fi : (o+1)*fi]
			for k, v := range acts[l] {
				s += row[k] * v
			}
			if l < L-1 {
				s = math.Max(0, s)
			}
			out[o] = s
		}
	}
	return acts[L][0]
}

// Score returns the classifier's probability that row x is a member.
func (c *Classifier) Score(x []float64) float64 {
	acts := make([][]float64, len(c.dims))
	for l := range acts {
		acts[l] = make([]float64, c.dims[l])
	}
	return sigmoid(c.forward(x, acts))
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

func zerosLike(a [][]float64) [][]float64 {
	out := make([][]float64, len(a))
	for i, r := range a {
		out[i] = make([]float64, len(r))
	}
	return out
}
