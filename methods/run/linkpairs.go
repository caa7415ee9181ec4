package run

import (
	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/trainers"
)

// LinkPairs are the node pairs of a link-prediction run (the LinkPrediction
// task's graph: EdgeTrain and EdgeTest): every training edge (class 1)
// followed by as many uniformly random pairs (class 0, drawn from the seed
// without looking at the graph), then likewise for the held-out edges.
// Pairs [0, Train) are the training samples, the rest the test.
type LinkPairs struct {
	U, V  []int
	Class []int
	Train int
}

// NewLinkPairs lists g's training and held-out edges, each beside a random
// pair.
func NewLinkPairs(g *graphs.Graph, seed uint64) *LinkPairs {
	p := &LinkPairs{}
	r := dp.NewSource(seed)
	add := func(a *graphs.CSR) {
		for i := 0; a != nil && i < a.Rows; i++ {
			cols, _ := a.Row(i)
			for _, j := range cols {
				p.U, p.V, p.Class = append(p.U, i, int(r.Uint64()%uint64(g.N))), append(p.V, j, int(r.Uint64()%uint64(g.N))), append(p.Class, 1, 0)
			}
		}
	}
	add(g.EdgeTrain)
	p.Train = len(p.U)
	add(g.EdgeTest)
	return p
}

// Hadamard returns one row h_u ⊙ h_v (c columns) per pair, from the
// row-major node embedding h.
func (p *LinkPairs) Hadamard(h []float64, c int) *graphs.Features {
	rows := make([]float64, 0, len(p.U)*c)
	for k := range p.U {
		for j := 0; j < c; j++ {
			rows = append(rows, h[p.U[k]*c+j]*h[p.V[k]*c+j])
		}
	}
	return &graphs.Features{N: len(p.U), F: c, Dense: rows}
}

// Samples returns the training pairs' indices and classes (the samples and
// targets of a module trained on them).
func (p *LinkPairs) Samples() (samples, targets []int) {
	samples = make([]int, p.Train)
	for k := range samples {
		samples[k] = k
	}
	return samples, p.Class[:p.Train]
}

// TestAUC is the AUC of the held-out edges against their random pairs under
// score (one value per pair, higher meaning "edge").
func (p *LinkPairs) TestAUC(score []float64) float64 {
	var pos, neg []float64
	for k := p.Train; k < len(p.U); k++ {
		if p.Class[k] == 1 {
			pos = append(pos, score[k])
		} else {
			neg = append(neg, score[k])
		}
	}
	return trainers.AUC(pos, neg)
}
