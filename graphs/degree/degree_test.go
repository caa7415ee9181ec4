package degree_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/degree"
	"github.com/dpgnn/dpgnn/graphs/gen"
	"github.com/dpgnn/dpgnn/graphs/graphstest"
)

func rangeOf(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func TestSampleOut(t *testing.T) {
	g := gen.CSBM(gen.CSBMConfig{Nodes: 400, Classes: 2, Features: 1, AvgDegree: 12, Homophily: 0.5, Signal: 0}, 3)
	a := g.Adj
	for _, d := range []int{-1, 0, 1, 5, 12, 1000} {
		var b *graphs.CSR
		graphstest.Immutable(t, "SampleOut", a, func() { b = degree.SampleOut(a, d, graphstest.Key(11)) })
		graphstest.CheckCanonical(t, "sampled", b)
		for i := 0; i < a.Rows; i++ {
			orig, _ := a.Row(i)
			got, _ := b.Row(i)
			if len(got) != min(len(orig), max(d, 0)) {
				t.Fatalf("d=%d row %d keeps %d of %d", d, i, len(got), len(orig))
			}
			for _, j := range got {
				if _, ok := slices.BinarySearch(orig, j); !ok {
					t.Fatalf("d=%d row %d gained entry %d", d, i, j)
				}
			}
		}
		if !graphstest.Equal(b, degree.SampleOut(a, d, graphstest.Key(11))) {
			t.Fatal("not a function of the key")
		}
		if d == 5 {
			if graphstest.Equal(b, degree.SampleOut(a, d, graphstest.Key(12))) {
				t.Fatal("different keys gave the same sample")
			}
			if graphs.IsSymmetric(b) {
				t.Fatal("sampled graph unexpectedly symmetric (it must not be re-symmetrised)")
			}
		}
	}
	// The last row is bounded too (ProGAP's code skips it).
	star := graphs.FromCOO(3, 3, []int{2, 2, 0}, []int{0, 1, 2}, nil)
	if b := degree.SampleOut(star, 1, graphstest.Key(1)); b.Indptr[3]-b.Indptr[2] != 1 {
		t.Fatal("last row not bounded")
	}
	// Weights travel with their entries.
	w := graphs.FromCOO(1, 6, []int{0, 0, 0, 0, 0, 0}, []int{0, 1, 2, 3, 4, 5}, []float64{10, 11, 12, 13, 14, 15})
	b := degree.SampleOut(w, 3, graphstest.Key(5))
	for k, j := range b.Indices {
		if b.Data[k] != float64(10+j) {
			t.Fatal("weight separated from its column")
		}
	}
	// Uniformity over keys: each of 10 entries is kept with probability 3/10.
	row := graphs.FromCOO(1, 10, make([]int, 10), rangeOf(10), nil)
	counts := make([]int, 10)
	const trials = 4000
	for s := uint64(0); s < trials; s++ {
		for _, j := range degree.SampleOut(row, 3, graphstest.Key(s)).Indices {
			counts[j]++
		}
	}
	for j, c := range counts {
		if f := float64(c) / trials; math.Abs(f-0.3) > 0.04 {
			t.Fatalf("entry %d kept with frequency %.3f, want 0.3", j, f)
		}
	}
}

// TestSampleOutNodeRemoval checks SampleOut's proven stability
// statement on 120 random graphs (power-law, Erdős–Rényi, directed) for
// every node v: sampling G − v gives the sample of G with v's row and
// column emptied, plus exactly one promoted entry in each row j ≠ v that
// has more than d entries and kept v, and nothing else.
func TestSampleOutNodeRemoval(t *testing.T) {
	graphsSeen, promotions := 0, 0
	for s := uint64(0); s < 120; s++ {
		var a *graphs.CSR
		var kind string
		switch s % 3 {
		case 0:
			a, kind = graphstest.PowerLaw(60, 2.2, 5, s), "power-law"
		case 1:
			a, kind = graphstest.RandomDirected(40, 0.15, s), "directed"
		default:
			a, kind = gen.CSBM(gen.CSBMConfig{Nodes: 50, Classes: 2, Features: 1, AvgDegree: 6, Homophily: 0.7, Signal: 0}, s).Adj, "csbm"
		}
		d := []int{1, 2, 3, 5}[s%4]
		key := graphstest.Key(1000 + s)
		base := degree.SampleOut(a, d, key)
		graphsSeen++
		for v := 0; v < a.Rows; v++ {
			nb := degree.SampleOut(graphs.RemoveNode(a, v), d, key)
			if c := graphstest.Row(nb, v); len(c) != 0 {
				t.Fatalf("%s seed %d: removed node %d keeps row %v", kind, s, v, c)
			}
			for j := 0; j < a.Rows; j++ {
				if j == v {
					continue
				}
				before := slices.DeleteFunc(graphstest.Row(base, j), func(i int) bool { return i == v })
				after := graphstest.Row(nb, j)
				keptV := base.HasEntry(j, v)
				deg := a.Indptr[j+1] - a.Indptr[j]
				if !(keptV && deg > d) {
					if !slices.Equal(before, after) {
						t.Fatalf("%s seed %d d=%d v=%d: row %d changed %v → %v without having kept v", kind, s, d, v, j, before, after)
					}
					continue
				}
				// Exactly one promoted entry, taken from A's row j.
				var added []int
				for _, i := range after {
					if !slices.Contains(before, i) {
						added = append(added, i)
					}
				}
				for _, i := range before {
					if !slices.Contains(after, i) {
						t.Fatalf("%s seed %d v=%d: row %d lost entry %d", kind, s, v, j, i)
					}
				}
				if len(added) != 1 || !a.HasEntry(j, added[0]) || added[0] == v {
					t.Fatalf("%s seed %d v=%d: row %d gained %v, want one promoted out-neighbour", kind, s, v, j, added)
				}
				promotions++
			}
		}
	}
	if graphsSeen < 100 || promotions == 0 {
		t.Fatalf("property exercised on %d graphs with %d promotions", graphsSeen, promotions)
	}
}

// TestSampleOutSpread shows the spread that makes sampling unsound
// for raw graphs: node v with 200 neighbours u of degree 101 (v and the
// same 100 nodes w). At D = 100 about 200·100/101 of the u's kept v, and
// each of them enters one more w row when v is removed.
func TestSampleOutSpread(t *testing.T) {
	const nu, nw, d = 200, 100, 100
	v := 0
	var src, dst []int
	add := func(i, j int) { src, dst = append(src, i, j), append(dst, j, i) }
	for u := 1; u <= nu; u++ {
		add(v, u)
		for w := 0; w < nw; w++ {
			add(u, 1+nu+w)
		}
	}
	a := graphs.FromCOO(1+nu+nw, 1+nu+nw, src, dst, nil)
	base := degree.SampleOut(a, d, graphstest.Key(3))
	nb := degree.SampleOut(graphs.RemoveNode(a, v), d, graphstest.Key(3))
	added := 0
	for u := 1; u <= nu; u++ {
		added += len(graphstest.Row(nb, u)) - len(slices.DeleteFunc(graphstest.Row(base, u), func(i int) bool { return i == v }))
	}
	if added < 180 {
		t.Fatalf("%d rows gained an entry, want ≈ 198", added)
	}
}

// TestCheckRows: the public-bound mode refuses inputs above the bound and
// its universe is closed under node removal.
func TestCheckRows(t *testing.T) {
	a := graphstest.PowerLaw(80, 2.1, 4, 7)
	_, mx := degree.Excess(a, 0)
	if err := degree.CheckRows(a, mx); err != nil {
		t.Fatal(err)
	}
	err := degree.CheckRows(a, mx-1)
	var be *degree.BoundError
	if !errors.As(err, &be) {
		t.Fatalf("above the bound: err = %v, want a *BoundError", err)
	}
	graphstest.WantErr(t, err, "outside the public bound", fmt.Sprintf("at most %d out-neighbours", mx-1))
	if degree.CheckRows(a, -1) == nil {
		t.Fatal("negative bound accepted")
	}
	for v := 0; v < a.Rows; v++ {
		if err := degree.CheckRows(graphs.RemoveNode(a, v), mx); err != nil {
			t.Fatalf("G − %d left the universe: %v", v, err)
		}
	}
}

// TestBoundRefusalNamesOnlyTheBound: a refusal by a public bound is the
// same text for every input outside the bound, whatever its largest degree
// and however many nodes exceed the bound (both private statistics), and
// it never contains them. Inputs: stars with hubs of 6 to 40 leaves and 1 to
// 4 hubs, at bound D = 5, for both kinds of degree, and through the run's
// Refusal wrapper.
func TestBoundRefusalNamesOnlyTheBound(t *testing.T) {
	const d = 5
	stars := func(hubs, leaves int) *graphs.CSR {
		n := hubs * (leaves + 1)
		var src, dst []int
		for h := 0; h < hubs; h++ {
			c := h * (leaves + 1)
			for l := 1; l <= leaves; l++ {
				src, dst = append(src, c, c+l), append(dst, c+l, c)
			}
		}
		return graphs.FromCOO(n, n, src, dst, nil)
	}
	bounds := []degree.Bound{
		{Mode: degree.Public, D: d, Kind: degree.Out, Of: "every node's out-degree", Offered: []degree.Mode{degree.Public, degree.Sample}},
		{Mode: degree.Public, D: d, Kind: degree.Undirected, Of: "every node's degree", Offered: []degree.Mode{degree.Public}},
	}
	texts := make([]string, len(bounds))
	for _, tc := range []struct{ hubs, leaves int }{{1, 6}, {1, 40}, {4, 6}, {3, 23}} {
		a := stars(tc.hubs, tc.leaves)
		cnt, mx := degree.Excess(a, d)
		if cnt != tc.hubs || mx != tc.leaves {
			t.Fatalf("stars(%d, %d): %d above %d, largest %d", tc.hubs, tc.leaves, cnt, d, mx)
		}
		for i, b := range bounds {
			_, err := b.Apply(a, degree.Key{})
			var be *degree.BoundError
			if !errors.As(err, &be) {
				t.Fatalf("stars(%d, %d): err = %v, want a *BoundError", tc.hubs, tc.leaves, err)
			}
			err = b.Refusal("stars", err)
			if !errors.As(err, &be) {
				t.Fatalf("Refusal lost the *BoundError: %v", err)
			}
			msg := err.Error()
			if strings.Contains(msg, fmt.Sprint(tc.leaves)) || strings.Contains(msg, "largest") || strings.Contains(msg, "node(s)") {
				t.Errorf("stars(%d, %d): refusal %q names a private statistic", tc.hubs, tc.leaves, msg)
			}
			if got := strings.Contains(msg, "--degree-bound sample"); got != (b.Kind == degree.Out) {
				t.Errorf("refusal %q: suggests sample = %v, but the bound offers %v", msg, got, b.Offered)
			}
			if texts[i] == "" {
				texts[i] = msg
			}
			if msg != texts[i] {
				t.Errorf("stars(%d, %d): refusal %q differs from %q: it depends on the input", tc.hubs, tc.leaves, msg, texts[i])
			}
		}
	}
}

// TestGreedyProjectionCascades documents why the stable-ordering greedy
// projection (Day, Li & Lyu 2016; SampleSymmetric's greedy with a fixed
// order) is not used for a proven node-level sensitivity: on a path
// visited from one end with D = 1, removing the first node flips every
// edge.
func TestGreedyProjectionCascades(t *testing.T) {
	const n = 41
	var pairs [][2]int
	for i := 0; i+1 < n; i++ {
		pairs = append(pairs, [2]int{i, i + 1})
	}
	g := degree.Greedy(n, pairs, 1)
	h := degree.Greedy(n, pairs[1:], 1) // node 0 removed
	changed := 0
	for _, p := range pairs[1:] {
		if g.HasEntry(p[0], p[1]) != h.HasEntry(p[0], p[1]) {
			changed++
		}
	}
	if changed != n-2 {
		t.Fatalf("%d of %d remaining edges changed, want all (the chain runs to the end)", changed, n-2)
	}
}

// TestSampleSymmetric: the keyed cap keeps a symmetric subgraph of A with
// degrees ≤ d that is maximal (a dropped pair has a full endpoint), keeps
// values, is the identity on graphs within d, is a function of the key,
// and does not mutate its input.
func TestSampleSymmetric(t *testing.T) {
	inputs := map[string]*graphs.CSR{
		"csbm":       gen.CSBM(gen.CSBMConfig{Nodes: 300, Classes: 3, Features: 1, AvgDegree: 10, Homophily: 0.6, Signal: 0}, 1).Adj,
		"power-law":  graphstest.PowerLaw(120, 2.2, 6, 3),
		"signed":     signed(graphstest.PowerLaw(60, 2.2, 5, 4)),
		"with loops": graphs.AddSelfLoops(graphstest.PowerLaw(50, 2.2, 4, 5), 1),
	}
	for name, a := range inputs {
		for _, d := range []int{0, 1, 3, 8} {
			var b *graphs.CSR
			graphstest.Immutable(t, "SampleSymmetric", a, func() { b = degree.SampleSymmetric(a, d, graphstest.Key(9)) })
			graphstest.CheckCanonical(t, name, b)
			if !graphs.IsSymmetric(b) {
				t.Fatalf("%s d=%d: result not symmetric", name, d)
			}
			if (b.Data != nil) != (a.Data != nil) {
				t.Fatalf("%s: weightedness changed", name)
			}
			deg := b.Degrees()
			for i, k := range deg {
				if k > d {
					t.Fatalf("%s d=%d: node %d has degree %d", name, d, i, k)
				}
			}
			for i := 0; i < a.Rows; i++ {
				cols, vals := a.Row(i)
				for k, j := range cols {
					kept := b.HasEntry(i, j)
					if kept && b.Data != nil {
						bc, bv := b.Row(i)
						if bv[slices.Index(bc, j)] != vals[k] {
							t.Fatalf("%s: entry (%d,%d) lost its value", name, i, j)
						}
					}
					room := deg[i] < d && deg[j] < d
					if i == j {
						room = deg[i] < d
					}
					if !kept && room {
						t.Fatalf("%s d=%d: pair (%d,%d) dropped though both endpoints have room", name, d, i, j)
					}
				}
				bc, _ := b.Row(i)
				for _, j := range bc {
					if !a.HasEntry(i, j) {
						t.Fatalf("%s: entry (%d,%d) not in A", name, i, j)
					}
				}
			}
			if !graphstest.Equal(b, degree.SampleSymmetric(a, d, graphstest.Key(9))) {
				t.Fatalf("%s: not a function of the key", name)
			}
			if _, mx := degree.Excess(a, 0); d >= mx && !graphstest.Equal(b, a) {
				t.Fatalf("%s d=%d: not the identity on a graph within the bound", name, d)
			}
		}
	}
	a := inputs["csbm"]
	if graphstest.Equal(degree.SampleSymmetric(a, 4, graphstest.Key(1)), degree.SampleSymmetric(a, 4, graphstest.Key(2))) {
		t.Fatal("different keys gave the same result")
	}
}

// signed gives a symmetric pattern alternating ±1 values (symmetric in
// value too).
func signed(a *graphs.CSR) *graphs.CSR {
	var src, dst []int
	var vals []float64
	for i := 0; i < a.Rows; i++ {
		cols, _ := a.Row(i)
		for _, j := range cols {
			src, dst = append(src, i), append(dst, j)
			vals = append(vals, float64(1-2*((i+j)%2)))
		}
	}
	return graphs.FromCOO(a.Rows, a.Cols, src, dst, vals)
}

// TestParseMode: the three names, ASGL's earlier "cap" read as sample, and
// a refusal of anything else.
func TestParseMode(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want degree.Mode
	}{{"public", degree.Public}, {"sample", degree.Sample}, {"none", degree.None}, {"cap", degree.Sample}} {
		m, err := degree.ParseMode(tc.in)
		if err != nil || m != tc.want {
			t.Errorf("ParseMode(%q) = %v, %v; want %v", tc.in, m, err, tc.want)
		}
		if tc.in != "cap" && m.String() != tc.in {
			t.Errorf("%v.String() = %q", m, m.String())
		}
	}
	for _, bad := range []string{"", "Public", "clip", "sampled"} {
		if _, err := degree.ParseMode(bad); err == nil {
			t.Errorf("ParseMode(%q) accepted", bad)
		}
	}
}

// TestFlagsBound: the flag pair gives a bound only for a mode the method
// offers and D ≥ 1, and the default is a public bound.
func TestFlagsBound(t *testing.T) {
	f := degree.DefaultFlags(7)
	b, err := f.Bound(degree.Out, "every node's out-degree", degree.Public, degree.Sample)
	if err != nil || b.Mode != degree.Public || b.D != 7 || b.Kind != degree.Out {
		t.Fatalf("default flags: %+v, %v", b, err)
	}
	for _, tc := range []struct {
		f       degree.Flags
		offered []degree.Mode
		msg     string
	}{
		{degree.Flags{MaxDegree: 3, DegreeBound: "none"}, []degree.Mode{degree.Public, degree.Sample}, `--degree-bound must be public or sample, got "none"`},
		{degree.Flags{MaxDegree: 3, DegreeBound: "sample"}, []degree.Mode{degree.Public}, `must be public, got "sample"`},
		{degree.Flags{MaxDegree: 3, DegreeBound: "clip"}, nil, `must be public, sample or none, got "clip"`},
		{degree.Flags{MaxDegree: 0, DegreeBound: "public"}, nil, "--max-degree must be at least 1, got 0"},
	} {
		_, err := tc.f.Bound(degree.Undirected, "every node's degree", tc.offered...)
		graphstest.WantErr(t, err, tc.msg)
	}
	if b, err := (degree.Flags{MaxDegree: 3, DegreeBound: "cap"}).Bound(degree.Undirected, "x"); err != nil || b.Mode != degree.Sample {
		t.Fatalf("cap: %+v, %v", b, err)
	}
}

// TestApply: public returns the input within the bound and refuses it
// above; sample is SampleOut or SampleSymmetric by kind; none is the input.
func TestApply(t *testing.T) {
	a := graphstest.PowerLaw(100, 2.2, 5, 2)
	_, mx := degree.Excess(a, 0)
	key := graphstest.Key(4)
	for _, tc := range []struct {
		b    degree.Bound
		want *graphs.CSR
		err  bool
	}{
		{degree.Bound{Mode: degree.Public, D: mx, Kind: degree.Out}, a, false},
		{degree.Bound{Mode: degree.Public, D: mx - 1, Kind: degree.Undirected}, nil, true},
		{degree.Bound{Mode: degree.Sample, D: 3, Kind: degree.Out}, degree.SampleOut(a, 3, key), false},
		{degree.Bound{Mode: degree.Sample, D: 3, Kind: degree.Undirected}, degree.SampleSymmetric(a, 3, key), false},
		{degree.Bound{Mode: degree.None, D: 1}, a, false},
	} {
		got, err := tc.b.Apply(a, key)
		if (err != nil) != tc.err || (err == nil && !graphstest.Equal(got, tc.want)) {
			t.Errorf("%v D=%d kind %d: err %v", tc.b.Mode, tc.b.D, tc.b.Kind, err)
		}
	}
	if graphstest.Equal(degree.SampleOut(a, 3, key), degree.SampleSymmetric(a, 3, key)) {
		t.Error("the two kinds sample alike")
	}
}

// TestUse: the report line of each mode says what was done and what the
// guarantee covers — a proof for the public bound, an assumption for
// sampling, nothing without a bound — and only the sampling mode has a
// note.
func TestUse(t *testing.T) {
	for _, tc := range []struct {
		mode          degree.Mode
		what, covered string
		note          bool
	}{
		{degree.Public, "public degree bound D=4 on every node's out-degree: the raw graph was checked", "public bound: the guarantee covers every graph within D=4", false},
		{degree.Sample, "keyed sampling", "assumption: the raw graph is already within D=4", true},
		{degree.None, "no degree bound", "not covered", false},
	} {
		b := degree.Bound{Mode: tc.mode, D: 4, Kind: degree.Out, Of: "every node's out-degree"}
		u := b.Use()
		if u.Kind != "degree-bound" || !strings.Contains(u.What, tc.what) || !strings.HasPrefix(u.Covered, tc.covered) {
			t.Errorf("%v: Use = %+v", tc.mode, u)
		}
		if n := b.Note("NAP's sensitivity √4"); (n != "") != tc.note || (tc.note && !strings.Contains(n, "NAP's sensitivity √4 assumes the raw graph is within D=4")) {
			t.Errorf("%v: Note = %q", tc.mode, n)
		}
	}
}
