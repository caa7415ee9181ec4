package run

import (
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/gen"
)

// LinkPairs lists every training and held-out edge beside one random pair,
// reproducibly; Hadamard rows and TestAUC read them in that order.
func TestLinkPairs(t *testing.T) {
	g := gen.CSBM(gen.CSBMConfig{Nodes: 60, Classes: 2, Features: 3, AvgDegree: 4, Homophily: 0.8, Signal: 1}, 3)
	g, err := graphs.HoldOutEdges(g, 0.2, 1)
	if err != nil {
		t.Fatal(err)
	}
	p := NewLinkPairs(g, 7)
	if p.Train != 2*g.EdgeTrain.NNZ() || len(p.U) != p.Train+2*g.EdgeTest.NNZ() {
		t.Fatalf("%d pairs, %d training; edges %d train, %d test", len(p.U), p.Train, g.EdgeTrain.NNZ(), g.EdgeTest.NNZ())
	}
	for k := range p.U {
		if p.Class[k] != 1-k%2 {
			t.Fatalf("pair %d has class %d: edges and random pairs must alternate", k, p.Class[k])
		}
	}
	if q := NewLinkPairs(g, 7); q.U[1] != p.U[1] || q.V[len(q.V)-1] != p.V[len(p.V)-1] {
		t.Fatal("the random pairs differ for one seed")
	}
	h := make([]float64, g.N*2)
	for i := range h {
		h[i] = float64(i)
	}
	x := p.Hadamard(h, 2)
	if x.N != len(p.U) || x.Dense[3] != h[p.U[1]*2+1]*h[p.V[1]*2+1] {
		t.Fatalf("Hadamard row 1 = %v", x.Dense[2:4])
	}
	samples, targets := p.Samples()
	if len(samples) != p.Train || samples[5] != 5 || targets[4] != 1 {
		t.Fatalf("samples %v, targets %v", samples[:6], targets[:6])
	}
	score := make([]float64, len(p.U))
	for k := range score {
		score[k] = float64(p.Class[k])
	}
	if auc := p.TestAUC(score); auc != 1 {
		t.Fatalf("AUC of the true classes %v, want 1", auc)
	}
}
