package graphio

import (
	"path/filepath"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
)

// TestClassNamesFixClassCount: an npz's class_names gives the class count
// (its header only is read, whatever its dtype), so that removing a node —
// its edges, its feature row and its label (0, or -1 for unlabelled, in the
// raw neighbour) — leaves the count, and the width of every model's
// output, unchanged. Without class_names the count is the largest label +
// 1, which removing the only node of the highest class lowers: the case
// that reads a private extreme (a private run treats it as public).
func TestClassNamesFixClassCount(t *testing.T) {
	dir := t.TempDir()
	names := func(descr string, shape ...int) []byte {
		n := 1
		for _, d := range shape {
			n *= d
		}
		size := map[string]int{"<U5": 20, "|O": 1}[descr]
		return npyBytes(descr, shape, false, make([]byte, n*size))
	}
	// toy: 4 nodes, node 2 the only node of class 2; its removal empties
	// its feature row (attr_indptr) and its edges (adj rows 1→2, 2→0, 2→2).
	g := toyEntries().with("labels", i8Arr(0, 1, 2, -1))
	minusV := g.with("adj_data", f32Arr(1, 1, 1)).with("adj_indices", i32Arr(1, 0, 1)).with("adj_indptr", i32Arr(0, 1, 2, 2, 3)).
		with("attr_indptr", i32Arr(0, 2, 3, 3, 6))
	load := func(name string, e npzEntries) (*graphs.Graph, error) {
		p := filepath.Join(dir, name+".npz")
		writeNPZ(t, p, e)
		return LoadNPZ(p)
	}
	for _, tc := range []struct {
		name string
		e    npzEntries
		want int // class count; 0: want err
		err  []string
	}{
		{"G with class_names", g.with("class_names", names("<U5", 3)), 3, nil},
		{"G − v (label 0) with class_names", minusV.with("labels", i8Arr(0, 1, 0, -1)).with("class_names", names("<U5", 3)), 3, nil},
		{"G − v (unlabelled) with class_names", minusV.with("labels", i8Arr(0, 1, -1, -1)).with("class_names", names("<U5", 3)), 3, nil},
		{"pickled class_names", g.with("class_names", names("|O", 4)), 4, nil},
		{"G without class_names", g, 3, nil},
		{"G − v without class_names", minusV.with("labels", i8Arr(0, 1, 0, -1)), 2, nil},
		{"label beyond class_names", g.with("class_names", names("<U5", 2)), 0,
			[]string{`array "labels": label of node 2 is 2, but class_names lists 2 classes (ids 0 to 1)`}},
		{"class_names not 1-D", g.with("class_names", names("|O")), 0,
			[]string{`array "class_names": has shape [], want one name per class`, "remove it to count the classes from the labels"}},
		{"more class names than nodes", g.with("class_names", names("<U5", 9)), 0,
			[]string{`array "class_names": class id 8 (as class_names lists) but only 4 nodes`}},
		{"corrupt class_names", g.with("class_names", []byte("not numpy")), 0,
			[]string{`array "class_names": not a .npy array (bad magic)`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := load(fileSafe(tc.name), tc.e)
			if tc.want == 0 {
				wantErr(t, err, tc.err...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.NumClasses != tc.want {
				t.Errorf("NumClasses = %d, want %d", h.NumClasses, tc.want)
			}
		})
	}
}

// TestGeomGCNFeatureCountIsTheHeaders: with a feature_amount:K header, F =
// K + 1 on G and on G − v (v's feature ids removed, its row kept with no
// feature and label 0, its edges removed), even when v alone holds the
// largest id; without the header F is the largest id + 1, which the
// removal lowers (the case a private run treats as public).
func TestGeomGCNFeatureCountIsTheHeaders(t *testing.T) {
	edges := "h\n0\t1\n1\t2\n"
	edgesMinusV := "h\n0\t1\n"
	for _, tc := range []struct {
		name, nodes, edges string
		wantF              int
	}{
		{"G, header", "node_id\tfeature(feature_amount:40)\tlabel\n0\t1\t0\n1\t2\t1\n2\t40\t1\n", edges, 41},
		{"G − v, header", "node_id\tfeature(feature_amount:40)\tlabel\n0\t1\t0\n1\t2\t1\n2\t\t0\n", edgesMinusV, 41},
		{"G, no header", "node_id\tfeature\tlabel\n0\t1\t0\n1\t2\t1\n2\t40\t1\n", edges, 41},
		{"G − v, no header", "node_id\tfeature\tlabel\n0\t1\t0\n1\t2\t1\n2\t\t0\n", edgesMinusV, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := LoadGeomGCN(geomFixture{edges: tc.edges, nodes: tc.nodes}.write(t))
			if err != nil {
				t.Fatal(err)
			}
			if g.X.F != tc.wantF {
				t.Errorf("F = %d, want %d", g.X.F, tc.wantF)
			}
		})
	}
}
