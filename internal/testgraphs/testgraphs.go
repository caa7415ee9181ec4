// Package testgraphs builds the small generated graphs dpgnn's tests train
// on. It is apart from internal/testutil because graphs' own tests use
// testutil, and this package imports graphs.
package testgraphs

import (
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
)

// CSBM returns graphs.CSBM(cfg, seed) with the split spec applied (drawn
// with splitSeed); a bad spec fails t.
func CSBM(t testing.TB, cfg graphs.CSBMConfig, seed uint64, spec string, splitSeed uint64) *graphs.Graph {
	t.Helper()
	s, err := graphs.ParseSplit(spec)
	if err != nil {
		t.Fatal(err)
	}
	g, err := graphs.ApplySplit(graphs.CSBM(cfg, seed), s, splitSeed)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
