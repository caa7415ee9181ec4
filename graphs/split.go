package graphs

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// SplitKind names a split protocol.
type SplitKind string

// The split protocols understood by ParseSplit and ApplySplit.
const (
	// SplitPerClass: a fixed number of training nodes per class, then fixed
	// numbers of validation and test nodes drawn from the remaining
	// labelled nodes ("per-class:20:500:1000").
	SplitPerClass SplitKind = "per-class"
	// SplitRatio: stratified train and test fractions, the rest validation
	// ("ratio:0.1:0.2").
	SplitRatio SplitKind = "ratio"
	// SplitMasks: the dataset's published split number K ("masks:K").
	SplitMasks SplitKind = "masks"
	// SplitInductive: stratified train and test fractions, the rest
	// validation, with every edge between the training side and the rest
	// removed ("inductive:0.6:0.2"); with the train fraction alone the rest
	// is test and there is no validation ("inductive:0.8").
	SplitInductive SplitKind = "inductive"
	// SplitFixed: the split the dataset comes with (the chain generators
	// draw theirs from the seed) ("fixed").
	SplitFixed SplitKind = "fixed"
)

// SplitSpec is a parsed split specification; only the fields of its Kind
// are meaningful. Build one with ParseSplit; String gives the canonical text.
type SplitSpec struct {
	Kind SplitKind
	// per-class
	TrainPerClass, NumVal, NumTest int
	// ratio (TrainFrac, TestFrac) and inductive (TrainFrac, and TestFrac
	// with a validation part; TestFrac 0: every non-training node is test)
	TrainFrac, TestFrac float64
	// masks
	Mask int
	// MaskPerRun ("masks" with no index): run r uses mask r mod the number
	// of published masks (ForRun picks it).
	MaskPerRun bool
}

func formatFrac(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// String returns the canonical text form, which ParseSplit accepts.
func (s SplitSpec) String() string {
	switch s.Kind {
	case SplitPerClass:
		return fmt.Sprintf("per-class:%d:%d:%d", s.TrainPerClass, s.NumVal, s.NumTest)
	case SplitRatio:
		return "ratio:" + formatFrac(s.TrainFrac) + ":" + formatFrac(s.TestFrac)
	case SplitMasks:
		if s.MaskPerRun {
			return "masks"
		}
		return fmt.Sprintf("masks:%d", s.Mask)
	case SplitInductive:
		if s.TestFrac == 0 {
			return "inductive:" + formatFrac(s.TrainFrac)
		}
		return "inductive:" + formatFrac(s.TrainFrac) + ":" + formatFrac(s.TestFrac)
	case SplitFixed:
		return "fixed"
	}
	return fmt.Sprintf("invalid-split(%q)", string(s.Kind))
}

// validate checks the fields of a spec (ParseSplit output always passes).
func (s SplitSpec) validate() error {
	switch s.Kind {
	case SplitPerClass:
		if s.TrainPerClass < 1 {
			return fmt.Errorf("train count per class must be at least 1, got %d", s.TrainPerClass)
		}
		if s.NumVal < 0 || s.NumTest < 0 {
			return fmt.Errorf("val and test counts must be ≥ 0, got %d and %d", s.NumVal, s.NumTest)
		}
		if s.NumTest < 1 {
			return fmt.Errorf("test count must be at least 1, got %d (a split without test nodes measures nothing)", s.NumTest)
		}
	case SplitRatio:
		if !(s.TrainFrac > 0 && s.TrainFrac < 1) {
			return fmt.Errorf("train fraction %v is not in (0, 1)", s.TrainFrac)
		}
		if !(s.TestFrac > 0 && s.TestFrac < 1) {
			return fmt.Errorf("test fraction %v is not in (0, 1)", s.TestFrac)
		}
		if s.TrainFrac+s.TestFrac >= 1 {
			return fmt.Errorf("train + test fractions = %v, must be below 1 (the rest is validation)", s.TrainFrac+s.TestFrac)
		}
	case SplitMasks:
		if s.Mask < 0 {
			return fmt.Errorf("mask index %d is negative", s.Mask)
		}
	case SplitInductive:
		if !(s.TrainFrac > 0 && s.TrainFrac < 1) {
			return fmt.Errorf("train fraction %v is not in (0, 1)", s.TrainFrac)
		}
		if s.TestFrac == 0 { // inductive:a, the rest test
			break
		}
		if !(s.TestFrac > 0 && s.TestFrac < 1) {
			return fmt.Errorf("test fraction %v is not in (0, 1)", s.TestFrac)
		}
		if s.TrainFrac+s.TestFrac >= 1 {
			return fmt.Errorf("train + test fractions = %v, must be below 1 (the rest is validation; inductive:%v alone makes the rest test)",
				s.TrainFrac+s.TestFrac, formatFrac(s.TrainFrac))
		}
	case SplitFixed:
	default:
		return fmt.Errorf("unknown kind %q (want per-class, ratio, masks, inductive or fixed)", string(s.Kind))
	}
	return nil
}

// ParseSplit parses a split specification:
//
//	per-class:T:V:E  T training nodes per class, then V validation and E test
//	                 nodes drawn at random from the remaining labelled nodes
//	                 (T, E ≥ 1, V ≥ 0)
//	ratio:a:b        stratified by class: fraction a train, b test, the rest
//	                 validation (0 < a, b and a + b < 1)
//	masks:K          the graph's published split MaskSplits[K]
//	masks            run r uses MaskSplits[r mod count] (see ForRun)
//	inductive:a:b    fraction a of the nodes on the training side, b test,
//	                 the rest validation (0 < a, b and a + b < 1); every
//	                 edge between the training side and the rest is removed
//	inductive:a      the same with the rest test and no validation; a:b
//	                 with a + b = 1 (within 1e-9) is this form
//	fixed            the split the graph comes with (chain generators)
//
// Errors name the spec.
func ParseSplit(s string) (SplitSpec, error) {
	fail := func(format string, args ...any) (SplitSpec, error) {
		return SplitSpec{}, fmt.Errorf("split %q: %s", s, fmt.Sprintf(format, args...))
	}
	parts := strings.Split(strings.TrimSpace(s), ":")
	kind := SplitKind(strings.ToLower(parts[0]))
	args := parts[1:]
	want := map[SplitKind]int{SplitPerClass: 3, SplitRatio: 2, SplitMasks: 1, SplitInductive: 1, SplitFixed: 0}
	n, ok := want[kind]
	if kind == SplitMasks && len(args) == 0 {
		return SplitSpec{Kind: SplitMasks, MaskPerRun: true}, nil
	}
	if !ok {
		return fail("unknown kind %q (want per-class:T:V:E, ratio:TRAIN:TEST, masks:K, inductive:TRAIN[:TEST] or fixed)", parts[0])
	}
	if kind == SplitInductive && len(args) == 2 {
		n = 2
	}
	if kind == SplitInductive && len(args) != n {
		return fail("inductive takes 1 or 2 numbers separated by ':' (TRAIN or TRAIN:TEST), got %d", len(args))
	}
	if len(args) != n {
		return fail("%s takes %d numbers separated by ':', got %d", kind, n, len(args))
	}
	ints := func(names ...string) ([]int, error) {
		out := make([]int, len(args))
		for k, a := range args {
			v, err := strconv.Atoi(strings.TrimSpace(a))
			if err != nil {
				return nil, fmt.Errorf("%s %q is not an integer", names[k], a)
			}
			if v < 0 {
				return nil, fmt.Errorf("%s %d is negative", names[k], v)
			}
			out[k] = v
		}
		return out, nil
	}
	floats := func(names ...string) ([]float64, error) {
		out := make([]float64, len(args))
		for k, a := range args {
			v, err := strconv.ParseFloat(strings.TrimSpace(a), 64)
			if err != nil {
				return nil, fmt.Errorf("%s %q is not a number", names[k], a)
			}
			out[k] = v
		}
		return out, nil
	}
	spec := SplitSpec{Kind: kind}
	switch kind {
	case SplitPerClass:
		v, err := ints("train count", "val count", "test count")
		if err != nil {
			return fail("%v", err)
		}
		spec.TrainPerClass, spec.NumVal, spec.NumTest = v[0], v[1], v[2]
	case SplitRatio:
		v, err := floats("train fraction", "test fraction")
		if err != nil {
			return fail("%v", err)
		}
		spec.TrainFrac, spec.TestFrac = v[0], v[1]
	case SplitMasks:
		v, err := ints("mask index")
		if err != nil {
			return fail("%v", err)
		}
		spec.Mask = v[0]
	case SplitInductive:
		v, err := floats("train fraction", "test fraction")
		if err != nil {
			return fail("%v", err)
		}
		spec.TrainFrac = v[0]
		if len(v) == 2 {
			if !(v[1] > 0 && v[1] < 1) { // TestFrac 0 is the one-number form
				return fail("test fraction %v is not in (0, 1)", v[1])
			}
			spec.TestFrac = v[1]
			if math.Abs(v[0]+v[1]-1) <= 1e-9 {
				spec.TestFrac = 0 // a:(1−a) is a: the rest test, the same draw
			}
		}
	}
	if err := spec.validate(); err != nil {
		return fail("%v", err)
	}
	return spec, nil
}

// HasValidationPart reports whether the specification sets nodes aside
// for validation: per-class with V > 0, ratio, inductive:a:b, and the
// published splits (masks, fixed), whose validation sets are the
// dataset's. It reads no data: a split whose validation part comes out
// empty on a given graph still has one.
func (s SplitSpec) HasValidationPart() bool {
	switch s.Kind {
	case SplitPerClass:
		return s.NumVal > 0
	case SplitInductive:
		return s.TestFrac > 0
	}
	return true
}

// ForRun returns the spec run r (0-based) uses: with "masks" (no index)
// the mask r mod masks, else spec itself.
func (s SplitSpec) ForRun(r, masks int) SplitSpec {
	if s.Kind != SplitMasks || !s.MaskPerRun || masks == 0 {
		return s
	}
	s.MaskPerRun = false
	s.Mask = r % masks
	return s
}

// classGroups returns the labelled node ids of each class, in increasing
// id order, and the class count (NumClasses, or max label + 1 if larger).
// Labels < 0 (unlabelled) are skipped.
func classGroups(g *Graph) ([][]int, int) {
	c := g.NumClasses
	for _, y := range g.Labels {
		c = max(c, y+1)
	}
	groups := make([][]int, c)
	for i, y := range g.Labels {
		if y >= 0 {
			groups[y] = append(groups[y], i)
		}
	}
	return groups, c
}

// allocate distributes round(frac·Σsizes) items over groups proportionally
// to their sizes (largest remainder; ties to the lower group index), never
// giving group k more than limit[k].
func allocate(sizes, limit []int, frac float64) []int {
	total := 0
	for _, s := range sizes {
		total += s
	}
	target := int(math.Round(frac * float64(total)))
	out := make([]int, len(sizes))
	rem := make([]float64, len(sizes))
	got := 0
	for k, s := range sizes {
		q := frac * float64(s)
		out[k] = min(int(math.Floor(q)), limit[k])
		rem[k] = q - math.Floor(q)
		got += out[k]
	}
	order := make([]int, len(sizes))
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case rem[a] > rem[b]:
			return -1
		case rem[a] < rem[b]:
			return 1
		}
		return 0
	})
	for pass := 0; pass < 2 && got < target; pass++ {
		for _, k := range order {
			if got >= target {
				break
			}
			if out[k] < limit[k] && (pass == 1 || rem[k] > 0) {
				out[k]++
				got++
			}
		}
	}
	return out
}

func shuffled(ids []int, r *rand.Rand) []int {
	out := append([]int(nil), ids...)
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// ApplySplit returns a shallow copy of g with Split set according to spec
// (and, for an inductive split, Adj and Neg without the edges between the
// training side and the rest). g is not modified. Unlabelled nodes (label −1)
// are never put in Train, Val or Test. Each set is sorted by node id. The
// random choices are a pure function of (g, spec, seed).
//
//   - per-class:T:V:E — for each class, T nodes drawn uniformly from its
//     labelled nodes; then V validation and E test nodes drawn uniformly from
//     all remaining labelled nodes. Fails if a class (any id below
//     NumClasses) has fewer than T labelled nodes or fewer than V+E remain:
//     taking fewer than T from a small class would silently change the
//     protocol, so this is an error, not a warning.
//   - ratio:a:b — within each class, a shuffled list of its nodes is cut
//     into train, test and validation; the per-class counts are
//     proportional to the class sizes and rounded (largest remainder) so the
//     totals are round(a·L) and round(b·L) for L labelled nodes. A class
//     that gets no training node is legal but probably not meant: it is
//     reported on Warnings.
//   - masks:K — g.MaskSplits[K], minus unlabelled nodes. Fails if K is out of
//     range or the mask names a node outside the graph.
//   - inductive:a:b — every node (unlabelled ones too, which form their own
//     stratum) goes to the training side, the test side or the validation
//     side, stratified by class as for ratio (round(a·n) and round(b·n) of
//     the n nodes, largest remainder); Train, Test and Val list the
//     labelled nodes of each side, and every edge between the training side
//     and the rest is removed, so the training graph is disconnected from
//     the graph of the validation and test nodes (edges between validation
//     and test nodes stay, as between test nodes). As for ratio, a class
//     with no node on the training side is reported on Warnings.
//   - inductive:a — the same with no validation side: each stratum is
//     shuffled and cut as for inductive:a:b, and everything after the
//     training part is test. So inductive:a:b draws the same training side
//     as inductive:a for every seed, and inductive:a is inductive:a:(1−a).
//
// Every kind fails when the split leaves no training node or no test node
// (a fraction that rounds to zero, a mask with no labelled training node,
// ...), naming the spec, the graph and the counts; an empty validation set
// is allowed (training then keeps the last epoch).
func ApplySplit(g *Graph, spec SplitSpec, seed uint64) (*Graph, error) {
	fail := func(format string, args ...any) (*Graph, error) {
		return nil, fmt.Errorf("split %s on %s: %s", spec, graphName(g), fmt.Sprintf(format, args...))
	}
	if err := spec.validate(); err != nil {
		return fail("%v", err)
	}
	if len(g.Labels) == 0 && g.N > 0 {
		return fail("graph has no node labels")
	}
	if spec.Kind == SplitFixed {
		if len(g.Split.Train) == 0 && len(g.Split.Val) == 0 && len(g.Split.Test) == 0 {
			return fail("the graph comes without a split; choose per-class, ratio, masks or inductive")
		}
		labelled := 0
		for _, y := range g.Labels {
			if y >= 0 {
				labelled++
			}
		}
		warnPublishedSizes(spec, g, g.Split)
		out := *g
		return &out, nil
	}
	if len(g.Labels) != g.N {
		return fail("graph has %d labels for %d nodes", len(g.Labels), g.N)
	}
	groups, nc := classGroups(g)
	labelled := 0
	for _, m := range groups {
		labelled += len(m)
	}
	if labelled == 0 && spec.Kind != SplitMasks {
		return fail("graph has no labelled nodes")
	}
	r := newSeededRand(seed, streamSplit)
	out := *g
	var sp Split
	switch spec.Kind {
	case SplitPerClass:
		var rest []int
		for c := 0; c < nc; c++ {
			if len(groups[c]) < spec.TrainPerClass {
				return fail("class %d has %d labelled nodes, need at least %d for training (choose a smaller per-class count or a ratio split)", c, len(groups[c]), spec.TrainPerClass)
			}
			m := shuffled(groups[c], r)
			sp.Train = append(sp.Train, m[:spec.TrainPerClass]...)
			rest = append(rest, m[spec.TrainPerClass:]...)
		}
		if spec.NumVal > len(rest) || spec.NumTest > len(rest)-spec.NumVal { // V+E may overflow an int
			return fail("%d labelled nodes remain after taking %d per class for training, need %d for validation + %d for test", len(rest), spec.TrainPerClass, spec.NumVal, spec.NumTest)
		}
		slices.Sort(rest)
		rest = shuffled(rest, r)
		sp.Val = rest[:spec.NumVal]
		sp.Test = rest[spec.NumVal : spec.NumVal+spec.NumTest]
	case SplitRatio:
		sizes := make([]int, nc)
		for c := range sizes {
			sizes[c] = len(groups[c])
		}
		nTrain := allocate(sizes, sizes, spec.TrainFrac)
		left := make([]int, nc)
		for c := range left {
			left[c] = sizes[c] - nTrain[c]
		}
		nTest := allocate(sizes, left, spec.TestFrac)
		warnUntrained(spec, g, sizes, nTrain)
		for c := 0; c < nc; c++ {
			m := shuffled(groups[c], r)
			sp.Train = append(sp.Train, m[:nTrain[c]]...)
			sp.Test = append(sp.Test, m[nTrain[c]:nTrain[c]+nTest[c]]...)
			sp.Val = append(sp.Val, m[nTrain[c]+nTest[c]:]...)
		}
	case SplitMasks:
		if spec.Mask >= len(g.MaskSplits) {
			if len(g.MaskSplits) == 0 {
				return fail("the graph has no mask splits")
			}
			return fail("mask index %d out of range: the graph has %d mask splits (0..%d)", spec.Mask, len(g.MaskSplits), len(g.MaskSplits)-1)
		}
		ms := g.MaskSplits[spec.Mask]
		for _, set := range []struct {
			name string
			ids  []int
			dst  *[]int
		}{{"train", ms.Train, &sp.Train}, {"val", ms.Val, &sp.Val}, {"test", ms.Test, &sp.Test}} {
			for _, i := range set.ids {
				if i < 0 || i >= g.N {
					return fail("mask %d %s set holds node %d, outside [0, %d)", spec.Mask, set.name, i, g.N)
				}
				if g.Labels[i] >= 0 {
					*set.dst = append(*set.dst, i)
				}
			}
		}
	case SplitInductive:
		var unl []int
		for i, y := range g.Labels {
			if y < 0 {
				unl = append(unl, i)
			}
		}
		strata := append(groups[:nc:nc], unl)
		sizes := make([]int, len(strata))
		for k := range sizes {
			sizes[k] = len(strata[k])
		}
		nTrain := allocate(sizes, sizes, spec.TrainFrac)
		nTest := make([]int, len(strata)) // inductive:a: every remaining node
		for k := range nTest {
			nTest[k] = sizes[k] - nTrain[k]
		}
		if spec.TestFrac > 0 {
			nTest = allocate(sizes, nTest, spec.TestFrac)
		}
		warnUntrained(spec, g, sizes[:nc], nTrain[:nc])
		var trainSide, rest []int
		for k, m := range strata {
			m = shuffled(m, r)
			trainSide = append(trainSide, m[:nTrain[k]]...)
			rest = append(rest, m[nTrain[k]:]...)
			for _, i := range m[:nTrain[k]] {
				if g.Labels[i] >= 0 {
					sp.Train = append(sp.Train, i)
				}
			}
			for j, i := range m[nTrain[k]:] {
				switch {
				case g.Labels[i] < 0:
				case j < nTest[k]:
					sp.Test = append(sp.Test, i)
				default:
					sp.Val = append(sp.Val, i)
				}
			}
		}
		if g.Adj != nil {
			out.Adj = RemoveEdgesBetween(g.Adj, trainSide, rest)
		}
		if g.Neg != nil {
			out.Neg = RemoveEdgesBetween(g.Neg, trainSide, rest)
		}
	}
	if spec.Kind == SplitMasks {
		warnPublishedSizes(spec, g, sp)
		out.Split = Split{Train: sortedCopy(sp.Train), Val: sortedCopy(sp.Val), Test: sortedCopy(sp.Test)}
		return &out, nil
	}
	if err := checkSplitSizes(sp, "it", labelled); err != nil {
		if hint := splitHint(spec, sp, labelled); hint != "" {
			return fail("%v; %s", err, hint)
		}
		return fail("%v", err)
	}
	out.Split = Split{Train: sortedCopy(sp.Train), Val: sortedCopy(sp.Val), Test: sortedCopy(sp.Test)}
	return &out, nil
}

// warnPublishedSizes warns, without refusing, when a published split
// (fixed, masks) has no training or no test node. Its sets are the
// dataset's: removing a node takes it out of them, so a split whose last
// test node is removed must run as the split with it does (a refusal on
// G − v and not on G would be a release). A run without training nodes
// is refused where a method needs them (DP-SGD's N_train, listed as
// treated as public); without test nodes its test metrics are undefined.
// The warning names no count.
func warnPublishedSizes(spec SplitSpec, g *Graph, sp Split) {
	switch {
	case len(sp.Train) == 0:
		warnf("split %s on %s: the published split has no training node", spec, graphName(g))
	case len(sp.Test) == 0:
		warnf("split %s on %s: the published split has no test node: test metrics are undefined", spec, graphName(g))
	}
}

// checkSplitSizes fails when sp has no training or no test node; what
// names the split in the message ("it", "mask 3", ...), labelled the nodes
// it was drawn from.
func checkSplitSizes(sp Split, what string, labelled int) error {
	var missing string
	switch {
	case len(sp.Train) == 0:
		missing = "training"
	case len(sp.Test) == 0:
		missing = "test"
	default:
		return nil
	}
	return fmt.Errorf("%s leaves no %s node (%d train, %d validation, %d test of %d labelled nodes)",
		what, missing, len(sp.Train), len(sp.Val), len(sp.Test), labelled)
}

// splitHint suggests the smallest fraction that yields a node, for ratio
// and inductive splits whose fractions round to zero.
func splitHint(spec SplitSpec, sp Split, labelled int) string {
	if labelled == 0 || (spec.Kind != SplitRatio && spec.Kind != SplitInductive) {
		return ""
	}
	least := ceilSignificant(0.5/float64(labelled), 3)
	switch {
	case len(sp.Train) == 0:
		return fmt.Sprintf("the train fraction %v of %d labelled nodes rounds to zero: use at least %v", spec.TrainFrac, labelled, least)
	case spec.Kind == SplitRatio && len(sp.Test) == 0:
		return fmt.Sprintf("the test fraction %v of %d labelled nodes rounds to zero: use at least %v", spec.TestFrac, labelled, least)
	case spec.Kind == SplitInductive && spec.TestFrac > 0:
		return fmt.Sprintf("the test fraction %v leaves no labelled test node: use a larger one", spec.TestFrac)
	case spec.Kind == SplitInductive:
		return fmt.Sprintf("the train fraction %v leaves no labelled node on the test side: use a smaller one", spec.TrainFrac)
	}
	return ""
}

// ceilSignificant rounds x > 0 up to d significant digits.
func ceilSignificant(x float64, d int) float64 {
	p := math.Pow(10, float64(d)-math.Ceil(math.Log10(x)))
	v, _ := strconv.ParseFloat(strconv.FormatFloat(math.Ceil(x*p)/p, 'g', d, 64), 64)
	if v < x { // formatting rounded down
		v = math.Nextafter(v, math.Inf(1))
	}
	return v
}

// warnUntrained reports on Warnings the classes with labelled nodes but no
// training node (sizes[c] labelled nodes, train[c] of them for training).
func warnUntrained(spec SplitSpec, g *Graph, sizes, train []int) {
	var missed []string
	nonEmpty := 0
	for c := range sizes {
		if sizes[c] > 0 {
			nonEmpty++
			if train[c] == 0 {
				missed = append(missed, strconv.Itoa(c)) // a class's size is the data's
			}
		}
	}
	switch {
	case len(missed) == 0 || len(missed) == nonEmpty: // none, or no training node at all (an error)
	case len(missed) == 1:
		warnf("split %s on %s: class %s gets no training node, so the model cannot learn it", spec, graphName(g), missed[0])
	default:
		warnf("split %s on %s: classes %s get no training node, so the model cannot learn them", spec, graphName(g), strings.Join(missed, ", "))
	}
}

// Warnings receives the warnings of this package: input that is legal but
// probably not what was meant (a split that leaves a class without
// training nodes), one line each, prefixed "warning: ". It is os.Stderr by
// default (stdout stays clean for --json); set it to io.Discard to silence
// them. Each distinct warning is written once per process (a split redrawn
// for every run would otherwise repeat it).
var Warnings io.Writer = os.Stderr

var (
	warnMu sync.Mutex
	warned = map[string]bool{} // at most maxWarnings messages remembered
)

const maxWarnings = 1000

func warnf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	warnMu.Lock()
	defer warnMu.Unlock()
	if warned[msg] {
		return
	}
	if len(warned) < maxWarnings {
		warned[msg] = true
	}
	fmt.Fprintln(Warnings, "warning: "+msg)
}

func graphName(g *Graph) string {
	if g.Name == "" {
		return "graph"
	}
	return g.Name
}

// Folds cuts nodes into k folds of near-equal size after a seeded shuffle
// (for cross-fitting: fold f is held out while a model trains on the rest).
// It panics unless 1 ≤ k ≤ len(nodes).
func Folds(nodes []int, k int, seed uint64) [][]int {
	if k < 1 || k > len(nodes) {
		panic(fmt.Sprintf("graphs: %d folds of %d nodes", k, len(nodes)))
	}
	order := shuffled(nodes, rand.New(rand.NewPCG(seed, 0xf01d5)))
	out := make([][]int, k)
	for i, v := range order {
		out[i%k] = append(out[i%k], v)
	}
	return out
}

// streamSplit is the PCG stream that splits and held-out edges draw from
// ("split").
const streamSplit = 0x73706c6974

// newSeededRand returns a deterministic PCG-backed generator for (seed,
// stream).
func newSeededRand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}
