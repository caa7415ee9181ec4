package nn

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// NodeKind classifies a node of a model's expression graph for inspection.
type NodeKind int

const (
	KindParam    NodeKind = iota // a learnable parameter
	KindInput                    // a leaf whose value is fed: features, targets, dropout masks
	KindConstant                 // a constant (an op without inputs)
	KindForward                  // an op of the forward pass, the loss included
	KindGrad                     // a node that symbolic differentiation (Model.Grad) added
	KindDP                       // a privacy node: noise, per-sample norms, clip factors, clipped sums, objective-perturbation terms
)

func (k NodeKind) String() string {
	switch k {
	case KindParam:
		return "param"
	case KindInput:
		return "input"
	case KindConstant:
		return "const"
	case KindForward:
		return "forward"
	case KindGrad:
		return "grad"
	case KindDP:
		return "DP"
	}
	return "unknown"
}

// ViewNode is one node of a GraphView.
type ViewNode struct {
	ID     int64  // gorgonia's node id (unique in the graph, increasing in creation order)
	Name   string // the name the node was given; "" for an unnamed op node
	Op     string // the op; "" for leaves (parameters, inputs)
	Shape  tensor.Shape
	Inputs []int64 // ids of the op's inputs, in argument order
	Kind   NodeKind
	// DP says what a privacy node is ("noise", "clip-factors",
	// "clipped-sum", ...); "" for other kinds.
	DP string
	// Tags are the labels given by Model.Tag; Section is the one given by
	// Model.TagNew (TagGrad for gradient nodes), or "".
	Tags    []string
	Section string
}

// KindLabel is the kind as the text listing shows it: "param", "grad",
// "DP: noise", ...
func (n *ViewNode) KindLabel() string {
	if n.Kind == KindDP && n.DP != "" {
		return "DP: " + n.DP
	}
	return n.Kind.String()
}

// GraphView is a model's expression graph as a list of classified nodes, in
// creation order (which is a topological order: inputs before the ops that
// use them).
type GraphView struct {
	Nodes []ViewNode
}

// View classifies every node of m's expression graph:
//
//   - param: one of m.Params;
//   - DP: labelled "dp:WHAT" (Tag, TagNew; WHAT is shown), or made by a
//     privacy op of ghost.go (GhostNormSq, ClipFactor, ExpandToRows,
//     GaussianNoise); an explicit Tag names the node before the op does,
//     and the op before a TagNew section label;
//   - grad: added by Model.Grad (Compile and dpnn.BuildSGD use it), or marked
//     by gorgonia as the gradient of another node (DerivOf) when the
//     gradient was taken with G.Grad directly;
//   - input (leaf) or const (op without inputs);
//   - forward: every other op.
//
// A node that gorgonia shares between the forward and the gradient graph
// (it merges equal nodes) keeps the kind of its first construction.
func (m *Model) View() *GraphView {
	all := m.G.AllNodes()
	// Children are reached through ExprGraph.From, whose id lookup caches
	// positions in the node list; gorgonia's Grad removes dangling nodes
	// from that list without clearing the cache. A fresh subgraph over the
	// same nodes has a fresh cache.
	sub := m.G.Subgraph(all...)
	params := map[*G.Node]bool{}
	for _, p := range m.Params {
		params[p.Node] = true
	}
	v := &GraphView{}
	for _, n := range all {
		vn := ViewNode{ID: n.ID(), Shape: n.Shape(), Tags: slices.Clone(m.tags[n]), Section: m.section[n]}
		if op := n.Op(); op != nil {
			vn.Op = opLabel(op.String())
		}
		for it := sub.From(n.ID()); it != nil && it.Next(); {
			vn.Inputs = append(vn.Inputs, it.Node().ID())
		}
		vn.Name = givenName(n, vn.Inputs)
		vn.Kind, vn.DP = m.classify(n, params[n], len(vn.Inputs))
		v.Nodes = append(v.Nodes, vn)
	}
	slices.SortStableFunc(v.Nodes, func(a, b ViewNode) int { return int(a.ID - b.ID) })
	return v
}

// givenName returns n's name, or "" when gorgonia made it up from the op
// and the input ids (its format: "op(%a, %b)" with hexadecimal ids).
func givenName(n *G.Node, inputs []int64) string {
	name := n.Name()
	if n.Op() == nil {
		return name
	}
	if len(inputs) == 0 && n.Op().String() == "const "+name {
		return "" // gorgonia names constants by their value
	}
	var auto strings.Builder
	fmt.Fprintf(&auto, "%s(", n.Op())
	for i, id := range inputs {
		if i > 0 {
			auto.WriteString(", ")
		}
		fmt.Fprintf(&auto, "%%%x", id)
	}
	auto.WriteString(")")
	if name == auto.String() {
		return ""
	}
	return name
}

// opDP names the privacy ops of ghost.go.
func opDP(op G.Op) string {
	switch op.(type) {
	case *groupGramOp:
		return "per-sample norm²"
	case clipFactorOp:
		return "clip-factors"
	case expandOp:
		return "clip-factors per row"
	case gaussianNoiseOp:
		return "noise"
	}
	return ""
}

func (m *Model) classify(n *G.Node, param bool, inputs int) (NodeKind, string) {
	if param {
		return KindParam, ""
	}
	for _, t := range m.tags[n] {
		if what, ok := strings.CutPrefix(t, DPTagPrefix); ok {
			return KindDP, what
		}
	}
	op := n.Op()
	if op != nil {
		if what := opDP(op); what != "" {
			return KindDP, what
		}
	}
	sec := m.section[n]
	if what, ok := strings.CutPrefix(sec, DPTagPrefix); ok {
		return KindDP, what
	}
	if sec == TagGrad || slices.Contains(m.tags[n], TagGrad) || len(n.DerivOf()) > 0 {
		return KindGrad, ""
	}
	switch {
	case op == nil:
		return KindInput, ""
	case inputs == 0:
		return KindConstant, ""
	}
	return KindForward, ""
}

// Count returns the number of nodes of kind k.
func (v *GraphView) Count(k NodeKind) int {
	c := 0
	for i := range v.Nodes {
		if v.Nodes[i].Kind == k {
			c++
		}
	}
	return c
}

// Summary is one line with the node counts by kind.
func (v *GraphView) Summary() string {
	parts := []string{fmt.Sprintf("%d nodes", len(v.Nodes))}
	for k := KindParam; k <= KindDP; k++ {
		parts = append(parts, fmt.Sprintf("%d %s", v.Count(k), k))
	}
	return parts[0] + ": " + strings.Join(parts[1:], ", ")
}

func shapeString(s tensor.Shape) string {
	if len(s) == 0 {
		return "()"
	}
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = fmt.Sprint(d)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func idList(ids []int64) string {
	if len(ids) == 0 {
		return "-"
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return strings.Join(parts, ",")
}

// otherTags are the labels given by Tag that the kind does not already
// show.
func (n *ViewNode) otherTags() []string {
	var out []string
	for _, t := range n.Tags {
		if t == TagGrad || t == DPTagPrefix+n.DP {
			continue
		}
		out = append(out, t)
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// WriteText writes the summary line and then one node a line: id, name,
// op, shape, the ids of its inputs, and its kind (param, input, const,
// forward, grad, or "DP: what"), with further labels in brackets.
func (v *GraphView) WriteText(w io.Writer) error {
	var buf bytes.Buffer
	fmt.Fprintln(&buf, v.Summary())
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "id\tname\top\tshape\tinputs\tkind")
	for i := range v.Nodes {
		n := &v.Nodes[i]
		kind := n.KindLabel()
		if o := n.otherTags(); len(o) > 0 {
			kind += " [" + strings.Join(o, ", ") + "]"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", n.ID, orDash(n.Name), orDash(n.Op), shapeString(n.Shape), idList(n.Inputs), kind)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// dotQuote quotes s as a DOT string.
func dotQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// dot clusters and fill colours by kind.
var dotClusters = []struct {
	name, label, style string
	kinds              []NodeKind
}{
	{"cluster_inputs", "inputs and parameters", `style=dashed; color="#999999"`, []NodeKind{KindParam, KindInput, KindConstant}},
	{"cluster_forward", "forward", `style=rounded; color="#555555"`, []NodeKind{KindForward}},
	{"cluster_grad", "gradient (symbolic differentiation)", `style=rounded; color="#3b6fb6"`, []NodeKind{KindGrad}},
	{"cluster_dp", "privacy (DP)", `style="rounded,filled"; color="#b22222"; fillcolor="#fdf0f0"`, []NodeKind{KindDP}},
}

var dotFill = map[NodeKind]string{
	KindParam:    "#ffe8a3",
	KindInput:    "#eeeeee",
	KindConstant: "#f7f7f7",
	KindForward:  "#ffffff",
	KindGrad:     "#d6e6fa",
	KindDP:       "#f08080",
}

// WriteDOT writes the graph in Graphviz's DOT language, titled title:
// data flows from inputs to outputs, with one cluster each for inputs and
// parameters, forward ops, gradient nodes and privacy nodes; privacy nodes
// are filled red and labelled with what they are.
func (v *GraphView) WriteDOT(w io.Writer, title string) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "digraph %s {\n", dotQuote(title))
	fmt.Fprintf(&b, "  label=%s; labelloc=t; fontname=\"Helvetica\";\n", dotQuote(title+"\n"+v.Summary()))
	b.WriteString("  rankdir=TB; newrank=true; compound=true;\n")
	b.WriteString("  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n")
	b.WriteString("  edge [color=\"#777777\", arrowsize=0.6];\n")
	for _, c := range dotClusters {
		var nodes []*ViewNode
		for i := range v.Nodes {
			if slices.Contains(c.kinds, v.Nodes[i].Kind) {
				nodes = append(nodes, &v.Nodes[i])
			}
		}
		if len(nodes) == 0 {
			continue
		}
		fmt.Fprintf(&b, "  subgraph %s {\n    label=%s; %s;\n", c.name, dotQuote(c.label), c.style)
		for _, n := range nodes {
			lines := []string{}
			if n.Name != "" {
				lines = append(lines, n.Name)
			}
			if n.Op != "" {
				lines = append(lines, n.Op)
			}
			lines = append(lines, shapeString(n.Shape))
			if n.Kind == KindDP {
				lines = append(lines, "DP: "+n.DP)
			}
			if o := n.otherTags(); len(o) > 0 {
				lines = append(lines, "["+strings.Join(o, ", ")+"]")
			}
			attrs := fmt.Sprintf("label=%s, fillcolor=%s, tooltip=%s", dotQuote(strings.Join(lines, "\n")),
				dotQuote(dotFill[n.Kind]), dotQuote(fmt.Sprintf("id %d, %s", n.ID, n.KindLabel())))
			if n.Kind == KindDP {
				attrs += `, color="#b22222", penwidth=1.5`
			}
			if n.Kind == KindParam {
				attrs += ", shape=box3d"
			}
			fmt.Fprintf(&b, "    n%d [%s];\n", n.ID, attrs)
		}
		b.WriteString("  }\n")
	}
	for i := range v.Nodes {
		n := &v.Nodes[i]
		for k, in := range n.Inputs {
			if len(n.Inputs) > 1 {
				fmt.Fprintf(&b, "  n%d -> n%d [headlabel=\"%d\", labelfontsize=8];\n", in, n.ID, k)
			} else {
				fmt.Fprintf(&b, "  n%d -> n%d;\n", in, n.ID)
			}
		}
	}
	b.WriteString("}\n")
	_, err := w.Write(b.Bytes())
	return err
}

// opLabel is an op's name for people: gorgonia prints elementwise binary
// ops with a "retSame" flag ("⊙ false", ">= true"), which means nothing to a
// reader of the graph.
func opLabel(s string) string {
	for _, suffix := range []string{" false", " true"} {
		if t, ok := strings.CutSuffix(s, suffix); ok && !strings.ContainsAny(t, "( ") {
			return t
		}
	}
	return s
}
