package degree

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/graphs"
)

// Mode is how a node-level mechanism gets its degree bound D (see the
// package doc for what each proves).
type Mode int

const (
	// Public takes D as a public bound on the raw graph and refuses an
	// input above it: proven for every raw input within D. The zero value.
	Public Mode = iota
	// Sample keeps at most D edges per node, chosen by keyed ranks: the
	// guarantee assumes the raw graph is already within D.
	Sample
	// None bounds nothing: the raw graph (runs without privacy, or an
	// accounting whose report states ε = ∞).
	None
)

// modeNames are the --degree-bound values, in Mode order.
var modeNames = [...]string{Public: "public", Sample: "sample", None: "none"}

// String returns "public", "sample" or "none".
func (m Mode) String() string {
	if m >= 0 && int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode parses a --degree-bound value: public, sample or none. "cap",
// ASGL's earlier name for its keyed sampling, is read as sample.
func ParseMode(s string) (Mode, error) {
	if s == "cap" {
		return Sample, nil
	}
	if i := slices.Index(modeNames[:], s); i >= 0 {
		return Mode(i), nil
	}
	return 0, fmt.Errorf("degree bound %q: want public, sample or none", s)
}

// Kind is which degree D bounds, and so how a mode reads the adjacency.
type Kind int

const (
	// Out bounds the rows of the adjacency: node j's out-neighbours j→i,
	// the number of aggregates j's embedding enters (GAP's and ProGAP's
	// NAP reads the rows through the transpose). Sample is SampleOut.
	Out Kind = iota
	// Undirected bounds the degrees of a symmetric adjacency (every
	// stored entry one end of an undirected edge; self-loops not stored).
	// Sample is SampleSymmetric.
	Undirected
)

// Flags is the flag pair of every method that bounds degrees at node
// level; a method's Config embeds it, so every such method has the same
// two flags with the same values and help. A method declares the degree
// it bounds and the modes it offers with Flags.Bound.
type Flags struct {
	// MaxDegree is D: a public bound on every node's degree (the method's
	// Kind says which), in edges per node.
	MaxDegree int `flag:"max-degree" help:"node level: D, a public bound on every node's degree in the graph the method aggregates over (gap, progap: out-degree;\ncaribou, sage: degree; asgl: degree in G+ and in G−), stated without looking at the data; --degree-bound says how it is enforced"`
	// DegreeBound is the Mode by name (ParseMode).
	DegreeBound string `flag:"degree-bound" help:"node level: public (D bounds the raw graph: an input above it is refused before anything is released and no edge is dropped;\nproven for every graph within D), sample (every node keeps ≤ D edges chosen by keyed ranks from the mechanism source; the guarantee\nassumes the raw graph is already within D) or none (no bound: only without privacy, or where the report states ε = ∞).\nA method refuses a mode it does not offer"`
}

// DefaultFlags is a public bound D.
func DefaultFlags(d int) Flags { return Flags{MaxDegree: d, DegreeBound: Public.String()} }

// Mode returns the mode the flags set, if it is one of offered (all three
// when none are listed); the error reads after the flag's name ("must be
// public or sample, got \"none\"").
func (f Flags) Mode(offered ...Mode) (Mode, error) {
	if len(offered) == 0 {
		offered = []Mode{Public, Sample, None}
	}
	m, err := ParseMode(f.DegreeBound)
	if err != nil || !slices.Contains(offered, m) {
		names := make([]string, len(offered))
		for i, o := range offered {
			names[i] = o.String()
		}
		want := strings.Join(names, " or ")
		if n := len(names); n > 2 {
			want = strings.Join(names[:n-1], ", ") + " or " + names[n-1]
		}
		return 0, fmt.Errorf("must be %s, got %q", want, f.DegreeBound)
	}
	return m, nil
}

// Bound returns the bound the flags set for a method that bounds the
// degree kind (of describes it for messages and reports, e.g. "every
// node's out-degree") and offers the given modes (all three when none are
// listed). It fails for a mode the method does not offer and for D < 1.
func (f Flags) Bound(kind Kind, of string, offered ...Mode) (Bound, error) {
	m, err := f.Mode(offered...)
	if err != nil {
		return Bound{}, fmt.Errorf("--degree-bound %w", err)
	}
	if f.MaxDegree < 1 {
		return Bound{}, fmt.Errorf("--max-degree must be at least 1, got %d", f.MaxDegree)
	}
	if len(offered) == 0 {
		offered = []Mode{Public, Sample, None}
	}
	return Bound{Mode: m, D: f.MaxDegree, Kind: kind, Of: of, Offered: offered}, nil
}

// Bound is one node-level degree bound: the mode, D, the degree it bounds
// and what the method offers (for refusals that name the alternatives).
type Bound struct {
	Mode Mode
	// D is the bound, in edges per node.
	D int
	// Kind is which degree D bounds.
	Kind Kind
	// Of describes what D bounds ("every node's out-degree"), for
	// messages and the report.
	Of string
	// Offered are the modes the method offers.
	Offered []Mode
}

// Apply returns what the mechanism reads of the adjacency a under the
// bound (a symmetric a for Undirected): with Public a itself, after an a
// with a row above D was refused (a *BoundError naming the bound
// only); with Sample a's keyed sample (SampleOut or SampleSymmetric under
// key, which the caller draws from the mechanism source); with None a.
// The stability of each is the package doc's.
func (b Bound) Apply(a *graphs.CSR, key Key) (*graphs.CSR, error) {
	switch b.Mode {
	case Public:
		if b.D < 0 {
			return nil, fmt.Errorf("degree: bound must be non-negative, got %d", b.D)
		}
		if !rowsAtMost(a, b.D) {
			return nil, OutsideBound(fmt.Sprintf("at most %d %s per node", b.D, b.neighbours()))
		}
		return a, nil
	case Sample:
		if b.Kind == Undirected {
			return SampleSymmetric(a, b.D, key), nil
		}
		return SampleOut(a, b.D, key), nil
	case None:
		return a, nil
	}
	return nil, fmt.Errorf("degree: unknown mode %d", int(b.Mode))
}

// neighbours names what a row counts.
func (b Bound) neighbours() string {
	if b.Kind == Out {
		return "out-neighbours"
	}
	return "neighbours"
}

// Refusal is the run's error for an input outside a public bound (err
// from Apply): the flags that set the bound, the dataset, what the bound
// covers and what the user may do instead — without anything about the
// input beyond its being outside the bound (BoundError's argument).
func (b Bound) Refusal(dataset string, err error) error {
	alt := ""
	if slices.Contains(b.Offered, Sample) {
		alt = ", or pass --degree-bound sample (keyed sampling, whose guarantee assumes the input is already within the bound)"
	}
	return fmt.Errorf("node level, --max-degree %d (--degree-bound public) on %s: %w. --max-degree is a public bound on %s and the guarantee covers graphs within it: %s%s",
		b.D, dataset, err, b.Of, Advice, alt)
}

// sampling describes how Sample keeps edges, for the report.
func (b Bound) sampling() string {
	if b.Kind == Undirected {
		return "undirected pairs kept in the order of keyed ranks while both ends have room (the key from the mechanism source)"
	}
	return "every node keeps its D out-neighbours of smallest keyed rank (the key from the mechanism source)"
}

// knockOn is what sampling a graph above the bound lets a node's removal
// change, for the report.
func (b Bound) knockOn() string {
	if b.Kind == Undirected {
		return "every slot the removed node frees can start a chain of swapped edges among other nodes"
	}
	return "every node that kept an edge to the removed node promotes another out-neighbour"
}

// Use is the report's line for the bound (Kind "degree-bound"): what was
// done to the graph and what the guarantee covers — proven for a public
// bound, assumed with sampling, not covered without a bound.
func (b Bound) Use() dp.Use {
	switch b.Mode {
	case Sample:
		return dp.Use{Kind: "degree-bound",
			What:    fmt.Sprintf("degree bound D=%d on %s by keyed sampling: %s", b.D, b.Of, b.sampling()),
			Covered: fmt.Sprintf("assumption: the raw graph is already within D=%d on %s (sampling is then the identity); for an input above it the ε is not a guarantee", b.D, b.Of)}
	case None:
		return dp.Use{Kind: "degree-bound", What: "no degree bound: the mechanism reads the raw graph",
			Covered: "not covered: nothing bounds how much of the release one node changes"}
	}
	return dp.Use{Kind: "degree-bound",
		What: fmt.Sprintf("public degree bound D=%d on %s: the raw graph was checked to be within it before anything was released; no edge is dropped", b.D, b.Of),
		Covered: fmt.Sprintf("public bound: the guarantee covers every graph within D=%d on %s and its node neighbours G − v (removing a node never raises a degree, so they are accepted too); "+
			"an input above it is refused, and a pair whose larger graph is above it is not covered", b.D, b.Of)}
}

// Note is the report note of the Sample mode ("" for the others): the
// sensitivity it names (e.g. "NAP's sensitivity √100") assumes the raw
// graph is within D, and what sampling a graph above it breaks.
func (b Bound) Note(sensitivity string) string {
	if b.Mode != Sample {
		return ""
	}
	return fmt.Sprintf("node level, --degree-bound sample: %s assumes the raw graph is within D=%d on %s (a public bound on the input graph); "+
		"sampling a graph above the bound changes more than the removed node's own edges when a node is removed (%s), "+
		"which the sensitivity does not cover: for such an input the ε above is not a guarantee", sensitivity, b.D, b.Of, b.knockOn())
}
