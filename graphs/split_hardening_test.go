package graphs

import (
	"bytes"
	"io"
	"math"
	"strings"
	"testing"
)

// ---------------------------------------------------------------------------
// 5. splits that leave nothing to train or test on

func TestSplitEmptySets(t *testing.T) {
	old := Warnings
	Warnings = io.Discard
	defer func() { Warnings = old }()
	g := tcSplitGraph() // 1000 nodes, 857 labelled
	g.Name = "csbm"
	masked := &Graph{Name: "masked", N: 6, Labels: []int{0, 1, 0, 1, -1, 0}, NumClasses: 2,
		MaskSplits: []Split{
			{Train: []int{4}, Val: []int{2}, Test: []int{3, 5}},
			{Train: []int{0, 1}, Val: []int{2}, Test: nil},
		}}
	fixed := &Graph{Name: "fixedg", N: 4, Labels: []int{0, 1, 0, 1}, NumClasses: 2, Split: Split{Train: []int{0, 1}, Val: []int{2, 3}}}
	cases := []struct {
		name, spec string
		g          *Graph
		want       []string
	}{
		{"ratio train rounds to zero", "ratio:0.0001:0.2", g,
			[]string{"split ratio:0.0001:0.2 on csbm: it leaves no training node (0 train, 686 validation, 171 test of 857 labelled nodes)",
				"the train fraction 0.0001 of 857 labelled nodes rounds to zero: use at least 0.000584"}},
		{"ratio test rounds to zero", "ratio:0.5:0.0001", g,
			[]string{"leaves no test node (429 train, 428 validation, 0 test", "the test fraction 0.0001", "use at least 0.000584"}},
		{"inductive train side unlabelled", "inductive:0.0001", g, []string{"split inductive:0.0001 on csbm: it leaves no training node", "rounds to zero"}},
		{"inductive test side empty", "inductive:0.9999", g, []string{"leaves no test node", "leaves no labelled node on the test side"}},
		// published splits are the dataset's: empty sets are warned of,
		// not refused (want nil; TestPublishedSplitEmptySets)
		{"mask train unlabelled", "masks:0", masked, nil},
		{"mask without test", "masks:1", masked, nil},
		{"fixed without test", "fixed", fixed, nil},
		{"per-class too few in a class", "per-class:300:10:10", g, []string{"class 0 has", "need at least 300 for training", "ratio split"}},
		{"per-class empty class id", "per-class:1:0:1", &Graph{Name: "gap", N: 4, Labels: []int{0, 0, 2, 2}, NumClasses: 3},
			[]string{"class 1 has 0 labelled nodes"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec, err := ParseSplit(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			_, err = ApplySplit(c.g, spec, 1)
			if c.want == nil {
				if err != nil {
					t.Fatalf("a published split with an empty set: %v", err)
				}
				return
			}
			tcWantErr(t, err, c.want...)
		})
	}
	// The hinted fraction is enough, for every labelled count.
	for l := 1; l <= 5000; l++ {
		least := ceilSignificant(0.5/float64(l), 3)
		if math.Round(least*float64(l)) < 1 || least > 1.01/float64(l) {
			t.Fatalf("%d labelled nodes: hint %v", l, least)
		}
	}
	spec, _ := ParseSplit("ratio:0.000584:0.2")
	if out, err := ApplySplit(g, spec, 1); err != nil || len(out.Split.Train) != 1 {
		t.Fatalf("hinted fraction: %v", err)
	}
}

func TestSplitWarnings(t *testing.T) {
	var buf bytes.Buffer
	old := Warnings
	Warnings = &buf
	defer func() { Warnings = old }()
	// Class 2 has 3 labelled nodes of 103: a 1 % train fraction gives it none.
	labels := make([]int, 103)
	for i := range labels {
		labels[i] = i % 2
	}
	labels[100], labels[101], labels[102] = 2, 2, 2
	g := &Graph{Name: "skewed-warn", N: 103, Labels: labels, NumClasses: 3}
	cases := []struct {
		spec string
		warn string // "" for none
	}{
		{"ratio:0.02:0.3", "warning: split ratio:0.02:0.3 on skewed-warn: class 2 gets no training node"},
		{"inductive:0.02", "warning: split inductive:0.02 on skewed-warn: class 2 gets no training node"},
		{"ratio:0.5:0.3", ""},
		{"per-class:3:0:10", ""},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			buf.Reset()
			spec, _ := ParseSplit(c.spec)
			for run := 0; run < 3; run++ { // once per process, not once per run
				if _, err := ApplySplit(g, spec, uint64(run)); err != nil {
					t.Fatal(err)
				}
			}
			got := buf.String()
			if c.warn == "" {
				if got != "" {
					t.Fatalf("unexpected warning %q", got)
				}
				return
			}
			if strings.Count(got, "\n") != 1 || !strings.Contains(got, c.warn) {
				t.Fatalf("warnings %q, want one line containing %q", got, c.warn)
			}
		})
	}
}
