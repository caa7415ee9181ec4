package asgl

import (
	"slices"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/layers"
	"github.com/dpgnn/dpgnn/methods/run"
)

// TestAuditNodesMatchParameters: the audit target's node map follows the
// released gradient's layout — the player's parameters are E (n×dim) then
// b (n×1), in that order — and has one entry per released value, every
// value belonging to a node, each node owning dim+1 of them.
func TestAuditNodesMatchParameters(t *testing.T) {
	g, d := tinySigned(t, 30)
	cfg := tinyConfig(d)
	cfg.Dim, cfg.DiscBatch = 3, 10
	m := New(cfg)
	hg := dp.HypergeomGaussian{Population: g.N, Batch: cfg.DiscBatch, Occurrences: 1, Multiplier: 0.5, Change: 2, Steps: 1}
	all, err := hg.Event()
	if err != nil {
		t.Fatal(err)
	}
	plan := &dp.Plan{Releases: []dp.Planned{{Name: ledgerDisc, Event: all}}}
	pl, err := m.newPlayer(1, ledgerDisc, layers.Discriminator, g.N, cfg.DiscBatch, cfg.DiscBatch, 2*cfg.Paths, &hg, nil, plan, dp.NewLedger(), dp.NewSource(0))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var sizes []int
	for _, p := range pl.m.Params {
		names = append(names, p.Name)
		sizes = append(sizes, p.Node.Shape().TotalSize())
	}
	if len(names) != 2 || !strings.HasSuffix(names[0], ".E") || !strings.HasSuffix(names[1], ".b") || sizes[0] != g.N*cfg.Dim || sizes[1] != g.N {
		t.Fatalf("parameters %v of sizes %v, want E (%d) then b (%d)", names, sizes, g.N*cfg.Dim, g.N)
	}
	target, err := m.AuditTarget(context(g, 8), run.AuditOptions{Multiplier: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := target.CoordinateNodes(g.N)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := target.Prepare(g)
	if err != nil {
		t.Fatal(err)
	}
	out, err := rel(dp.NewSource(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != len(out) || target.OwnRow != "" {
		t.Fatalf("%d node ids for %d released values; OwnRow %q (want every value compared)", len(nodes), len(out), target.OwnRow)
	}
	owned := make([]int, g.N)
	for _, v := range nodes {
		if v >= 0 {
			owned[v]++
		}
	}
	for v, c := range owned {
		if c != cfg.Dim+1 {
			t.Fatalf("node %d owns %d values, want %d", v, c, cfg.Dim+1)
		}
	}
	if nodes[cfg.Dim] != 1 || nodes[g.N*cfg.Dim] != 0 || nodes[len(nodes)-1] != g.N-1 || slices.Contains(nodes, -1) {
		t.Fatalf("node map %v… does not follow E's rows then b", nodes[:2*cfg.Dim])
	}
}
