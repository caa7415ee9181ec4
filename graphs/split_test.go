package graphs

import (
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"testing"
)

func TestSplitForRun(t *testing.T) {
	per, _ := ParseSplit("masks")
	for r, want := range []int{0, 1, 2, 0, 1} {
		got := per.ForRun(r, 3)
		if got.MaskPerRun || got.Mask != want || got.String() != fmt.Sprintf("masks:%d", want) {
			t.Errorf("run %d: %+v, want mask %d", r, got, want)
		}
	}
	fixed, _ := ParseSplit("masks:2")
	if got := fixed.ForRun(4, 3); got != fixed {
		t.Errorf("masks:2 for run 4 = %+v", got)
	}
	other, _ := ParseSplit("ratio:0.1:0.2")
	if got := other.ForRun(3, 10); got != other {
		t.Errorf("ratio for run 3 = %+v", got)
	}
}

func TestParseSplit(t *testing.T) {
	good := []struct {
		in, canon string
		want      SplitSpec
	}{
		{"per-class:20:500:1000", "per-class:20:500:1000", SplitSpec{Kind: SplitPerClass, TrainPerClass: 20, NumVal: 500, NumTest: 1000}},
		{" Per-Class:1:0:2 ", "per-class:1:0:2", SplitSpec{Kind: SplitPerClass, TrainPerClass: 1, NumTest: 2}},
		{"ratio:0.1:0.2", "ratio:0.1:0.2", SplitSpec{Kind: SplitRatio, TrainFrac: 0.1, TestFrac: 0.2}},
		{"ratio:.75:0.150", "ratio:0.75:0.15", SplitSpec{Kind: SplitRatio, TrainFrac: 0.75, TestFrac: 0.15}},
		{"masks:0", "masks:0", SplitSpec{Kind: SplitMasks}},
		{"masks:9", "masks:9", SplitSpec{Kind: SplitMasks, Mask: 9}},
		{"masks", "masks", SplitSpec{Kind: SplitMasks, MaskPerRun: true}},
		{"inductive:0.8", "inductive:0.8", SplitSpec{Kind: SplitInductive, TrainFrac: 0.8}},
		{"inductive:0.6:0.2", "inductive:0.6:0.2", SplitSpec{Kind: SplitInductive, TrainFrac: 0.6, TestFrac: 0.2}},
		{"Inductive:.5:0.25", "inductive:0.5:0.25", SplitSpec{Kind: SplitInductive, TrainFrac: 0.5, TestFrac: 0.25}},
		// a:(1−a) is the one-number form (the rest test, the same draw)
		{"inductive:0.8:0.2", "inductive:0.8", SplitSpec{Kind: SplitInductive, TrainFrac: 0.8}},
		{"inductive:0.7:0.3", "inductive:0.7", SplitSpec{Kind: SplitInductive, TrainFrac: 0.7}},
	}
	for _, tc := range good {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSplit(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			if got.String() != tc.canon {
				t.Fatalf("String() = %q, want %q", got.String(), tc.canon)
			}
			again, err := ParseSplit(got.String())
			if err != nil || again != got {
				t.Fatalf("round trip: %+v, %v", again, err)
			}
		})
	}
	bad := []struct{ in, want string }{
		{"", "unknown kind"},
		{"random:0.5", "unknown kind"},
		{"per-class:20:500", "3 numbers"},
		{"per-class:20:500:1000:5", "3 numbers"},
		{"per-class:x:500:1000", "train count \"x\" is not an integer"},
		{"per-class:20:-1:1000", "val count -1 is negative"},
		{"per-class:0:500:1000", "at least 1"},
		{"per-class:20:500:0", "test count must be at least 1, got 0"},
		{"per-class:2.5:1:1", "not an integer"},
		{"ratio:0.1", "2 numbers"},
		{"ratio:abc:0.2", "not a number"},
		{"ratio:0:0.2", "train fraction 0 is not in (0, 1)"},
		{"ratio:1.2:0.2", "not in (0, 1)"},
		{"ratio:0.1:1", "test fraction 1 is not in (0, 1)"},
		{"ratio:0.6:0.4", "must be below 1"},
		{"ratio:0.7:0.5", "must be below 1"},
		{"ratio:NaN:0.1", "not in (0, 1)"},
		{"masks:", "not an integer"},
		{"masks:-1", "negative"},
		{"masks:1:2", "1 numbers"},
		{"inductive:1", "not in (0, 1)"},
		{"inductive:0", "not in (0, 1)"},
		{"inductive:inf", "not in (0, 1)"},
		{"inductive", "1 or 2 numbers"},
		{"inductive:0.6:0.2:0.1", "1 or 2 numbers"},
		{"inductive:0.6:x", "test fraction \"x\" is not a number"},
		{"inductive:0.6:0", "test fraction 0 is not in (0, 1)"},
		{"inductive:0.6:-0.2", "test fraction -0.2 is not in (0, 1)"},
		{"inductive:0.6:1", "test fraction 1 is not in (0, 1)"},
		{"inductive:0.6:0.5", "must be below 1"},
		{"inductive:1.2:0.2", "train fraction 1.2 is not in (0, 1)"},
		{"inductive:0:0.2", "train fraction 0 is not in (0, 1)"},
	}
	for _, tc := range bad {
		t.Run("bad "+tc.in, func(t *testing.T) {
			_, err := ParseSplit(tc.in)
			tcWantErr(t, err, "split \""+tc.in+"\"", tc.want)
		})
	}
}

// tcSplitGraph is a CSBM graph with every 7th node unlabelled.
func tcSplitGraph() *Graph {
	g := tcGraph(1000, 4, 6, 2)
	labels := slices.Clone(g.Labels)
	for i := 0; i < len(labels); i += 7 {
		labels[i] = -1
	}
	g.Labels = labels
	return g
}

func tcCheckSplit(t *testing.T, g *Graph, sp Split) {
	t.Helper()
	if !tcDisjoint(sp.Train, sp.Val, sp.Test) {
		t.Fatal("split sets overlap")
	}
	for _, set := range [][]int{sp.Train, sp.Val, sp.Test} {
		if !slices.IsSorted(set) {
			t.Fatal("split set not sorted")
		}
		for _, i := range set {
			if i < 0 || i >= g.N || g.Labels[i] < 0 {
				t.Fatalf("node %d (unlabelled or out of range) in split", i)
			}
		}
	}
}

func tcClassCounts(g *Graph, set []int) []int {
	c := make([]int, g.NumClasses)
	for _, i := range set {
		c[g.Labels[i]]++
	}
	return c
}

func TestApplySplitPerClass(t *testing.T) {
	g := tcSplitGraph()
	adj := g.Adj
	spec, _ := ParseSplit("per-class:20:300:400")
	out, err := ApplySplit(g, spec, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Split.Train) != 0 || out.Adj != adj || g.Adj != adj {
		t.Fatal("input modified or adjacency replaced")
	}
	sp := out.Split
	tcCheckSplit(t, g, sp)
	if !slices.Equal(tcClassCounts(g, sp.Train), []int{20, 20, 20, 20}) || len(sp.Val) != 300 || len(sp.Test) != 400 {
		t.Fatalf("sizes: train %v val %d test %d", tcClassCounts(g, sp.Train), len(sp.Val), len(sp.Test))
	}
	again, _ := ApplySplit(g, spec, 1)
	other, _ := ApplySplit(g, spec, 2)
	if !slices.Equal(again.Split.Train, sp.Train) || !slices.Equal(again.Split.Test, sp.Test) || !slices.Equal(again.Split.Val, sp.Val) {
		t.Fatal("not deterministic")
	}
	if slices.Equal(other.Split.Train, sp.Train) {
		t.Fatal("different seeds gave the same split")
	}

	// Errors: too few nodes in a class, too few left for val+test.
	small := &Graph{Name: "tiny", N: 6, Labels: []int{0, 0, 0, 1, 1, -1}, NumClasses: 2}
	_, err = ApplySplit(small, SplitSpec{Kind: SplitPerClass, TrainPerClass: 3, NumTest: 1}, 1)
	tcWantErr(t, err, "per-class:3:0:1", "tiny", "class 1 has 2 labelled nodes", "at least 3")
	_, err = ApplySplit(small, SplitSpec{Kind: SplitPerClass, TrainPerClass: 1, NumVal: 2, NumTest: 2}, 1)
	tcWantErr(t, err, "3 labelled nodes remain", "need 2 for validation + 2 for test")
	_, err = ApplySplit(&Graph{N: 2, Labels: []int{-1, -1}}, spec, 1)
	tcWantErr(t, err, "no labelled nodes")
	_, err = ApplySplit(&Graph{N: 2, Labels: []int{0}}, spec, 1)
	tcWantErr(t, err, "1 labels for 2 nodes")
	_, err = ApplySplit(g, SplitSpec{Kind: "bogus"}, 1)
	tcWantErr(t, err, "unknown kind")
}

func TestApplySplitRatio(t *testing.T) {
	g := tcSplitGraph()
	labelled := 0
	sizes := make([]int, g.NumClasses)
	for _, y := range g.Labels {
		if y >= 0 {
			labelled++
			sizes[y]++
		}
	}
	for _, tc := range []struct{ a, b float64 }{{0.1, 0.2}, {0.6, 0.2}, {0.05, 0.9}, {0.333, 0.333}} {
		spec := SplitSpec{Kind: SplitRatio, TrainFrac: tc.a, TestFrac: tc.b}
		out, err := ApplySplit(g, spec, 4)
		if err != nil {
			t.Fatal(err)
		}
		sp := out.Split
		tcCheckSplit(t, g, sp)
		if len(sp.Train)+len(sp.Val)+len(sp.Test) != labelled {
			t.Fatalf("%s: split does not cover the labelled nodes", spec)
		}
		if len(sp.Train) != int(math.Round(tc.a*float64(labelled))) || len(sp.Test) != int(math.Round(tc.b*float64(labelled))) {
			t.Fatalf("%s: train %d test %d of %d", spec, len(sp.Train), len(sp.Test), labelled)
		}
		// Stratified: per-class counts within one of the proportional share.
		for name, set := range map[string]struct {
			ids []int
			f   float64
		}{"train": {sp.Train, tc.a}, "test": {sp.Test, tc.b}} {
			for c, k := range tcClassCounts(g, set.ids) {
				if math.Abs(float64(k)-set.f*float64(sizes[c])) >= 1 {
					t.Fatalf("%s: %s class %d has %d, want ≈ %.1f", spec, name, c, k, set.f*float64(sizes[c]))
				}
			}
		}
	}
}

func TestApplySplitMasks(t *testing.T) {
	g := &Graph{Name: "masked", N: 6, Labels: []int{0, 1, 0, 1, -1, 0}, NumClasses: 2,
		MaskSplits: []Split{
			{Train: []int{0, 1}, Val: []int{2}, Test: []int{3, 4, 5}},
			{Train: []int{5, 3}, Val: nil, Test: []int{0}},
		}}
	out, err := ApplySplit(g, SplitSpec{Kind: SplitMasks, Mask: 0}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Split.Train, []int{0, 1}) || !slices.Equal(out.Split.Val, []int{2}) || !slices.Equal(out.Split.Test, []int{3, 5}) {
		t.Fatalf("mask 0 → %+v", out.Split)
	}
	out, _ = ApplySplit(g, SplitSpec{Kind: SplitMasks, Mask: 1}, 1)
	if !slices.Equal(out.Split.Train, []int{3, 5}) {
		t.Fatalf("mask 1 train %v, want sorted [3 5]", out.Split.Train)
	}
	_, err = ApplySplit(g, SplitSpec{Kind: SplitMasks, Mask: 2}, 1)
	tcWantErr(t, err, "masks:2", "has 2 mask splits (0..1)")
	_, err = ApplySplit(&Graph{N: 1, Labels: []int{0}}, SplitSpec{Kind: SplitMasks}, 1)
	tcWantErr(t, err, "no mask splits")
	g.MaskSplits[0].Test = []int{6}
	_, err = ApplySplit(g, SplitSpec{Kind: SplitMasks}, 1)
	tcWantErr(t, err, "test set holds node 6")
}

func TestApplySplitInductive(t *testing.T) {
	g := tcSplitGraph()
	g.Neg = Symmetrize(FromCOO(g.N, g.N, tcRange(g.N-1), tcRange(g.N)[1:], nil)) // a path
	adjBefore, negBefore := g.Adj.Clone(), g.Neg.Clone()
	spec, _ := ParseSplit("inductive:0.8")
	out, err := ApplySplit(g, spec, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !tcEqualCSR(g.Adj, adjBefore) || !tcEqualCSR(g.Neg, negBefore) {
		t.Fatal("input adjacency modified")
	}
	sp := out.Split
	tcCheckSplit(t, g, sp)
	if len(sp.Val) != 0 {
		t.Fatal("inductive split has a validation set")
	}
	labelled := 0
	for _, y := range g.Labels {
		if y >= 0 {
			labelled++
		}
	}
	if len(sp.Train)+len(sp.Test) != labelled || len(sp.Train) != int(math.Round(0.8*float64(labelled))) {
		t.Fatalf("train %d test %d of %d labelled", len(sp.Train), len(sp.Test), labelled)
	}
	// Recover each node's side by connectivity: no edge may join the train
	// and test sets, and every other edge must survive.
	side := make([]int, g.N) // 1 train, 2 test, 0 unlabelled
	for _, i := range sp.Train {
		side[i] = 1
	}
	for _, i := range sp.Test {
		side[i] = 2
	}
	for _, pair := range []struct{ before, after *CSR }{{adjBefore, out.Adj}, {negBefore, out.Neg}} {
		tcCheckSymmetricSimple(t, "inductive adj", pair.after)
		kept, removed := 0, 0
		for i := 0; i < g.N; i++ {
			b, _ := pair.before.Row(i)
			a, _ := pair.after.Row(i)
			for _, j := range b {
				_, ok := slices.BinarySearch(a, j)
				cross := side[i] != 0 && side[j] != 0 && side[i] != side[j]
				if cross && ok {
					t.Fatalf("edge %d-%d joins train and test", i, j)
				}
				if side[i] != 0 && side[i] == side[j] && !ok {
					t.Fatalf("edge %d-%d within one side was removed", i, j)
				}
				if ok {
					kept++
				} else {
					removed++
				}
			}
		}
		if kept == 0 || removed == 0 {
			t.Fatalf("kept %d removed %d: the cut looks wrong", kept, removed)
		}
	}
	// Unlabelled nodes are on exactly one side: none touches both a train
	// and a test node.
	for i := 0; i < g.N; i++ {
		if side[i] != 0 {
			continue
		}
		cols, _ := out.Adj.Row(i)
		seen := [3]bool{}
		for _, j := range cols {
			seen[side[j]] = true
		}
		if seen[1] && seen[2] {
			t.Fatalf("unlabelled node %d bridges train and test", i)
		}
	}
}

func TestSplitHasValidationPart(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want bool
	}{
		{"per-class:20:500:1000", true}, {"per-class:2:0:3", false}, {"ratio:0.1:0.2", true},
		{"inductive:0.8", false}, {"inductive:0.8:0.2", false}, {"inductive:0.6:0.2", true},
		{"masks:0", true}, {"masks", true}, {"fixed", true},
	} {
		spec, err := ParseSplit(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := spec.HasValidationPart(); got != tc.want {
			t.Errorf("%s: HasValidationPart = %v, want %v", tc.spec, got, tc.want)
		}
	}
}

// TestApplySplitInductiveValidation: inductive:a:b cuts every node into a
// training side (fraction a), a test side (b) and a validation side (the
// rest), by class; removes every edge between the training side and the
// rest and keeps every other edge (validation–test edges too); draws the
// same training side and the same cut graph as inductive:a for the seed,
// with its test side split into validation and test.
func TestApplySplitInductiveValidation(t *testing.T) {
	g := tcSplitGraph()
	g.Neg = Symmetrize(FromCOO(g.N, g.N, tcRange(g.N-1), tcRange(g.N)[1:], nil)) // a path
	adjBefore, negBefore := g.Adj.Clone(), g.Neg.Clone()
	groups, _ := classGroups(g)
	labelled := 0
	for _, m := range groups {
		labelled += len(m)
	}
	for _, tc := range []struct {
		spec, twoPart string
		train, test   float64
	}{
		{"inductive:0.6:0.2", "inductive:0.6", 0.6, 0.2},
		{"inductive:0.8:0.1", "inductive:0.8", 0.8, 0.1},
		{"inductive:0.3:0.35", "inductive:0.3", 0.3, 0.35},
	} {
		for _, seed := range []uint64{1, 3, 101} {
			t.Run(fmt.Sprintf("%s seed %d", tc.spec, seed), func(t *testing.T) {
				spec, _ := ParseSplit(tc.spec)
				out, err := ApplySplit(g, spec, seed)
				if err != nil {
					t.Fatal(err)
				}
				if !tcEqualCSR(g.Adj, adjBefore) || !tcEqualCSR(g.Neg, negBefore) {
					t.Fatal("input adjacency modified")
				}
				sp := out.Split
				tcCheckSplit(t, g, sp)
				if len(sp.Train)+len(sp.Val)+len(sp.Test) != labelled {
					t.Fatalf("train %d val %d test %d of %d labelled", len(sp.Train), len(sp.Val), len(sp.Test), labelled)
				}
				// Per class, largest-remainder rounding: each class gets
				// ⌊f·size⌋ or ⌈f·size⌉ of its nodes.
				tr, te := tcClassCounts(g, sp.Train), tcClassCounts(g, sp.Test)
				for c, m := range groups {
					for _, x := range []struct {
						got  int
						frac float64
					}{{tr[c], tc.train}, {te[c], tc.test}} {
						q := x.frac * float64(len(m))
						if float64(x.got) < math.Floor(q) || float64(x.got) > math.Ceil(q) {
							t.Fatalf("class %d of %d nodes: %d for fraction %v", c, len(m), x.got, x.frac)
						}
					}
				}
				if len(sp.Val) == 0 {
					t.Fatal("no validation nodes")
				}
				// The training side is the one-number form's, for the same
				// seed; its test side is this one's validation ∪ test.
				two, _ := ParseSplit(tc.twoPart)
				ref, err := ApplySplit(g, two, seed)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(sp.Train, ref.Split.Train) || len(ref.Split.Val) != 0 ||
					!slices.Equal(slices.Sorted(slices.Values(append(slices.Clone(sp.Val), sp.Test...))), ref.Split.Test) {
					t.Fatalf("%s and %s draw different training sides", tc.spec, tc.twoPart)
				}
				if !tcEqualCSR(out.Adj, ref.Adj) || !tcEqualCSR(out.Neg, ref.Neg) {
					t.Fatalf("%s and %s cut different edges", tc.spec, tc.twoPart)
				}
				// No edge joins the training side and the rest; every
				// other edge between labelled nodes survives, among them
				// some between validation and test nodes.
				side := make([]int, g.N) // 1 train, 2 validation, 3 test, 0 unlabelled
				for s, set := range [][]int{sp.Train, sp.Val, sp.Test} {
					for _, i := range set {
						side[i] = s + 1
					}
				}
				for _, pair := range []struct{ before, after *CSR }{{adjBefore, out.Adj}, {negBefore, out.Neg}} {
					tcCheckSymmetricSimple(t, "inductive adj", pair.after)
					removed, valTest := 0, 0
					for i := 0; i < g.N; i++ {
						b, _ := pair.before.Row(i)
						a, _ := pair.after.Row(i)
						for _, j := range b {
							_, ok := slices.BinarySearch(a, j)
							si, sj := side[i], side[j]
							if si == 0 || sj == 0 {
								continue
							}
							if (si == 1) != (sj == 1) {
								if ok {
									t.Fatalf("edge %d-%d joins the training side and the rest", i, j)
								}
								removed++
							} else if !ok {
								t.Fatalf("edge %d-%d (sides %d, %d) was removed", i, j, si, sj)
							} else if si != sj {
								valTest++
							}
						}
					}
					if removed == 0 || valTest == 0 {
						t.Fatalf("removed %d, validation–test edges %d: the cut looks wrong", removed, valTest)
					}
				}
				// An unlabelled node is on one side: it never touches both a
				// training node and a validation or test node.
				for i := 0; i < g.N; i++ {
					if side[i] != 0 {
						continue
					}
					cols, _ := out.Adj.Row(i)
					var train, rest bool
					for _, j := range cols {
						train = train || side[j] == 1
						rest = rest || side[j] > 1
					}
					if train && rest {
						t.Fatalf("unlabelled node %d bridges the training side and the rest", i)
					}
				}
			})
		}
	}
}

// TestApplySplitInductiveUnchanged pins the one-number form's draws (sets
// and cut adjacencies) to those of the code before inductive:a:b existed
// (hashes computed at commit 5af639c), so seeded results stay identical,
// and checks that a:(1−a) draws the same.
func TestApplySplitInductiveUnchanged(t *testing.T) {
	g := tcSplitGraph()
	g.Neg = Symmetrize(FromCOO(g.N, g.N, tcRange(g.N-1), tcRange(g.N)[1:], nil))
	for _, tc := range []struct {
		spec string
		seed uint64
		want uint64
	}{
		{"inductive:0.8", 1, 0x47d48e6e73d396f3},
		{"inductive:0.8", 3, 0x7c4379954d13839d},
		{"inductive:0.8", 101, 0xeee2e63f3f8be774},
		{"inductive:0.5", 1, 0xa836ea293c52c167},
		{"inductive:0.5:0.5", 3, 0xb462ac794203ac55},
		{"inductive:0.5", 101, 0x88d27f14dc15cc6e},
		{"inductive:0.3", 1, 0x472ab2135ab51d2c},
		{"inductive:0.3:0.7", 3, 0x9049bbd89b8c67d1},
		{"inductive:0.3", 101, 0x76a5c09348d6072b},
	} {
		spec, err := ParseSplit(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		out, err := ApplySplit(g, spec, tc.seed)
		if err != nil {
			t.Fatal(err)
		}
		h := fnv.New64a()
		fmt.Fprint(h, out.Split.Train, out.Split.Val, out.Split.Test, out.Adj.Indptr, out.Adj.Indices, out.Neg.Indptr, out.Neg.Indices)
		if got := h.Sum64(); got != tc.want {
			t.Errorf("%s seed %d: draw hash %#x, want %#x (the old code's)", tc.spec, tc.seed, got, tc.want)
		}
	}
}

// TestFoldsPartition: folds are disjoint, cover the nodes, differ in size
// by at most one and repeat for a seed.
func TestFoldsPartition(t *testing.T) {
	nodes := []int{3, 9, 4, 12, 7, 1, 30, 22, 8, 5, 17}
	folds := Folds(nodes, 4, 7)
	seen := map[int]int{}
	for f, fold := range folds {
		if len(fold) < 2 || len(fold) > 3 {
			t.Fatalf("fold %d has %d nodes", f, len(fold))
		}
		for _, v := range fold {
			seen[v]++
		}
	}
	for _, v := range nodes {
		if seen[v] != 1 {
			t.Fatalf("node %d in %d folds", v, seen[v])
		}
	}
	if len(seen) != len(nodes) {
		t.Fatalf("folds hold %d nodes, want %d", len(seen), len(nodes))
	}
	again := Folds(nodes, 4, 7)
	for f := range folds {
		for i := range folds[f] {
			if folds[f][i] != again[f][i] {
				t.Fatal("folds differ for the same seed")
			}
		}
	}
}
