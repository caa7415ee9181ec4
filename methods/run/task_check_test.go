package run

import (
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/gen"
)

// TestNodeClassificationCheck: the one dataset check every
// node-classification run passes before training (issue 40, items 1 and
// 12): a graph built in code without a feature column is refused (it
// crashed gcn, gcon and dpar in a sparse product, and mlp refused it with
// "a non-positive width"), and labels of one class are named as such
// (they were reported as "no node labels").
func TestNodeClassificationCheck(t *testing.T) {
	g := gen.Path(1)
	noFeat := *g
	noFeat.X = &graphs.Features{N: g.N, F: 0, Dense: []float64{}}
	nilFeat := *g
	nilFeat.X = nil
	oneClass := *g
	oneClass.Labels = make([]int, g.N)
	oneClass.NumClasses = 1
	unlabelled := *g
	unlabelled.Labels = nil
	unlabelled.NumClasses = 0
	for _, tc := range []struct {
		name string
		g    *graphs.Graph
		want string // "" for no error
	}{
		{"path", g, ""},
		{"no feature column", &noFeat, "has no node features (0 feature columns)"},
		{"no features", &nilFeat, "has no node features"},
		{"one class", &oneClass, "has labels of one class only"},
		{"no labels", &unlabelled, "has no node labels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := NodeClassification{}.Check(tc.g)
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
