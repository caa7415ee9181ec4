package graphio

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/dpgnn/dpgnn/graphs/gen"
)

// TestGoldenChainFile guards the npz writer/reader and the chain generator
// against silent changes: the committed file must load to exactly the graph
// the generator makes today (the split is not stored in npz).
func TestGoldenChainFile(t *testing.T) {
	got, err := LoadNPZ(filepath.Join("testdata", "chain-s-seed1.npz"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := gen.Chain("s", 1)
	if err != nil {
		t.Fatal(err)
	}
	if got.N != want.N || got.NumClasses != want.NumClasses {
		t.Fatalf("N %d/%d, classes %d/%d", got.N, want.N, got.NumClasses, want.NumClasses)
	}
	if !reflect.DeepEqual(got.Labels, want.Labels) {
		t.Fatal("labels differ")
	}
	if !reflect.DeepEqual(got.Adj.Indptr, want.Adj.Indptr) || !reflect.DeepEqual(got.Adj.Indices, want.Adj.Indices) {
		t.Fatal("adjacency differs")
	}
	if !reflect.DeepEqual(got.X.ToDense(), want.X.ToDense()) {
		t.Fatal("features differ")
	}
}
