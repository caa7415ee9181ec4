package graphs

import (
	"io"
	"slices"
	"strings"
	"testing"
)

// FuzzParseSplit: ParseSplit never panics, its errors name the spec, and an
// accepted spec round-trips through String; applied to small graphs (with
// unlabelled nodes, mask splits, a fixed split) ApplySplit never panics and
// any split it returns is disjoint, sorted, labelled, and has training and
// test nodes.
func FuzzParseSplit(f *testing.F) {
	for _, s := range []string{
		"per-class:20:500:1000", "per-class:1:0:1", "per-class:3:2:2", "Per-Class: 2 :1:1", "per-class:0:1:1",
		"per-class:1:9223372036854775807:9223372036854775807", "per-class:1:1",
		"ratio:0.1:0.2", "ratio:0.0001:0.2", "ratio:0.5:0.0001", "ratio:.75:0.150", "ratio:0.6:0.4", "ratio:1e-300:0.5",
		"ratio:NaN:0.1", "ratio:0x1p-3:0.5", "masks", "masks:0", "masks:1", "masks:2", "masks:-1", "masks:",
		"inductive:0.8", "inductive:0.0001", "inductive:0.9999", "fixed", "fixed:1", "", ":", "random:0.5",
	} {
		f.Add(s, uint64(1))
	}
	old := Warnings
	Warnings = io.Discard
	defer func() { Warnings = old }()
	labels := make([]int, 40)
	for i := range labels {
		labels[i] = i % 3
		if i%7 == 0 {
			labels[i] = -1
		}
	}
	labels[39] = 3 // a class of one node
	adj := Symmetrize(FromCOO(40, 40, tcRange(39), tcRange(40)[1:], nil))
	graphs := []*Graph{
		{Name: "small", N: 40, Adj: adj, Labels: labels, NumClasses: 4,
			MaskSplits: []Split{{Train: []int{1, 2, 3}, Val: []int{4}, Test: []int{5, 6}}, {Train: []int{0}, Test: []int{1}}},
			Split:      Split{Train: []int{1, 2}, Test: []int{3}}},
		{Name: "tiny", N: 3, Adj: Symmetrize(FromCOO(3, 3, []int{0}, []int{1}, nil)), Labels: []int{0, -1, 1}, NumClasses: 2},
		{Name: "unlabelled", N: 2, Adj: Symmetrize(FromCOO(2, 2, []int{0}, []int{1}, nil)), Labels: []int{-1, -1}},
	}
	f.Fuzz(func(t *testing.T, in string, seed uint64) {
		spec, err := ParseSplit(in)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "split ") {
				t.Fatalf("error %q does not name the spec", err)
			}
			return
		}
		again, err := ParseSplit(spec.String())
		if err != nil || again != spec {
			t.Fatalf("%q → %+v → %q → %+v, %v", in, spec, spec.String(), again, err)
		}
		for _, g := range graphs {
			out, err := ApplySplit(g, spec.ForRun(int(seed%5), len(g.MaskSplits)), seed)
			if err != nil {
				if !strings.HasPrefix(err.Error(), "split ") {
					t.Fatalf("error %q does not name the spec", err)
				}
				continue
			}
			sp := out.Split
			published := spec.Kind == SplitMasks || spec.Kind == SplitFixed // the dataset's sets, warned of when empty
			if !published && (len(sp.Train) == 0 || len(sp.Test) == 0) {
				t.Fatalf("%s on %s: %d train, %d test", spec, g.Name, len(sp.Train), len(sp.Test))
			}
			if !tcDisjoint(sp.Train, sp.Val, sp.Test) {
				t.Fatalf("%s on %s: sets overlap", spec, g.Name)
			}
			for _, set := range [][]int{sp.Train, sp.Val, sp.Test} {
				if !slices.IsSorted(set) {
					t.Fatalf("%s on %s: set not sorted", spec, g.Name)
				}
				for _, i := range set {
					if i < 0 || i >= g.N || g.Labels[i] < 0 {
						t.Fatalf("%s on %s: node %d unlabelled or out of range", spec, g.Name, i)
					}
				}
			}
		}
	})
}

// The compact FuzzLoadNPZ encoding carries a loadable graph.
