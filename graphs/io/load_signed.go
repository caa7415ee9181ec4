package graphio

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dpgnn/dpgnn/graphs"
)

// signedWholeFile is the edge list of a signed dataset directory.
const signedWholeFile = "whole_edge.txt"

// ParseSignedEdges parses a signed edge list: one edge per line,
// "src dst sign", fields separated by tabs, spaces or commas (runs of
// separators count as one). src and dst are (possibly negative, not
// necessarily contiguous) 64-bit integer ids; sign is 1, +1 or -1. Blank
// lines and lines whose first non-blank character is '#' are skipped; a
// trailing "\r" and a UTF-8 byte-order mark at the start are ignored. name
// is used in error messages, which have the form "name:LINE: problem". The
// three slices have one entry per edge, in file order; duplicates and
// self-loops are kept (LoadSigned drops them).
func ParseSignedEdges(r io.Reader, name string) (src, dst []int64, sign []int8, err error) {
	l, err := parseSignedEdges(r, name, textStats{}, false)
	if err != nil {
		return nil, nil, nil, err
	}
	return l.src, l.dst, l.sign, nil
}

// signedEdgeBytes is what parseSignedEdges allocates per line when it is
// sized by a first pass: two int64 ids, a sign and a line number.
const signedEdgeBytes = 8 + 8 + 1 + 4

// parseSignedEdges is ParseSignedEdges that also returns the line number
// of every edge. With sized, st is the file's first pass and the slices are
// allocated once at its line count (signedEdgeBytes per line, plus the
// line buffer); otherwise they grow as lines come.
func parseSignedEdges(r io.Reader, name string, st textStats, sized bool) (*signedList, error) {
	lr := newLineReader(r, "", name, st)
	l := &signedList{path: name}
	if sized {
		l.src, l.dst = make([]int64, 0, st.lines), make([]int64, 0, st.lines)
		l.sign, l.lines = make([]int8, 0, st.lines), make([]int32, 0, st.lines)
	}
	var f [4][]byte
	for {
		line, ok := lr.next()
		if !ok {
			break
		}
		k := splitSignedFields(line, &f)
		if k == 0 || f[0][0] == '#' {
			continue
		}
		if k != 3 {
			more := ""
			if k > 3 {
				more = " or more"
			}
			return nil, lr.errf("want 3 fields (src dst sign), got %d%s", k, more)
		}
		var uv [2]int64
		for i, what := range [2]string{"source", "target"} {
			v, st := parseIntBytes(f[i])
			switch st {
			case intSyntax:
				return nil, lr.errf("non-numeric %s node id %s", what, quoteField(f[i]))
			case intRange:
				return nil, lr.errf("%s node id %s is out of range (ids must fit in 64 bits: %d to %d)", what, quoteField(f[i]), math.MinInt64, math.MaxInt64)
			}
			uv[i] = v
		}
		var s int8
		switch string(f[2]) {
		case "1", "+1":
			s = 1
		case "-1":
			s = -1
		default:
			return nil, lr.errf("sign %s is not 1 or -1", quoteField(f[2]))
		}
		if lr.line > math.MaxInt32 {
			return nil, lr.errf("more than %d lines", math.MaxInt32)
		}
		l.src = append(l.src, uv[0])
		l.dst = append(l.dst, uv[1])
		l.sign = append(l.sign, s)
		l.lines = append(l.lines, int32(lr.line))
	}
	if err := lr.err(); err != nil {
		return nil, err
	}
	return l, nil
}

// splitSignedFields splits line at runs of tabs, spaces, commas and "\r"
// into f, returning the number of fields (counting at most len(f); a
// return value of len(f) means "len(f) or more").
func splitSignedFields(line []byte, f *[4][]byte) int {
	k := 0
	i := 0
	for i < len(line) && k < len(f) {
		for i < len(line) && isSignedSep(line[i]) {
			i++
		}
		if i == len(line) {
			break
		}
		j := i
		for j < len(line) && !isSignedSep(line[j]) {
			j++
		}
		f[k] = line[i:j]
		k++
		i = j
	}
	return k
}

func isSignedSep(c byte) bool { return c == ' ' || c == '\t' || c == ',' || c == '\r' }

// signedList is one parsed edge-list file.
type signedList struct {
	path     string
	src, dst []int64
	sign     []int8
	lines    []int32 // line number of each edge
}

// LoadSigned reads a signed-graph dataset directory (the ASGL layout):
// whole_edge.txt (required) and, when present, NAME.train and NAME.test,
// where NAME is the base name of dir. Lines are parsed by ParseSignedEdges.
//
// The node ids of whole_edge.txt are remapped to 0..N-1 in ascending order
// of the original ids (N = number of distinct ids in whole_edge.txt). The
// train and test edges must join nodes that occur in whole_edge.txt (it is
// the whole graph, train and test edges included): an id that does not is
// an error naming the file and the line.
//
// Adj holds the positive and Neg the negative edges of whole_edge.txt, both
// undirected (symmetrised), unweighted (Data nil) and without self-loops.
// When a node pair is listed more than once (in either direction), the last
// listing in whole_edge.txt decides its sign, so Adj and Neg are disjoint.
// Note that whole_edge.txt includes the test edges: a link-sign predictor
// must build its message-passing graph from EdgeTrain, not from Adj/Neg.
//
// EdgeTrain and EdgeTest (nil when the file is absent) are N×N CSRs with
// values ±1 holding the listed directed edges of NAME.train and NAME.test;
// self-loops are dropped and a directed pair listed more than once keeps its
// last sign. X is nil (these datasets have no node features), Labels is nil
// and NumClasses is 0.
//
// A file that is present but holds no edge (only blank or comment lines),
// and a whole_edge.txt whose every edge is a self-loop, are errors.
//
// Memory: each file is read twice; the first pass counts its lines, and
// what the parse and every later step allocate is reserved against
// MemoryLimit before it is allocated (see loadBudget). Every file must be
// a regular file (a named pipe is refused, not waited on).
func LoadSigned(dir string) (*graphs.Graph, error) {
	b, err := newLoadBudget()
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", dir, err)
	}
	return loadSigned(dir, b)
}

func loadSigned(dir string, b *loadBudget) (*graphs.Graph, error) {
	base := filepath.Base(filepath.Clean(dir))
	whole, err := readSignedList(filepath.Join(dir, signedWholeFile), b)
	if err != nil {
		return nil, err
	}
	var train, test *signedList
	for _, p := range []struct {
		ext string
		dst **signedList
	}{{".train", &train}, {".test", &test}} {
		l, err := readSignedList(filepath.Join(dir, base+p.ext), b)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		*p.dst = l
	}
	return buildSigned(dir, whole, train, test, b)
}

// lastWinsBytes is what buildLastWins allocates for n rows and t entries
// (t counts both directions when symmetrised): row pointers twice, the
// fill cursors, the column stamps, and per entry its column, its listing,
// the packed key, the output column and value.
func lastWinsBytes(n, t int) float64 {
	return intBytes*float64(4*n+2) + (4*intBytes+1)*float64(t)
}

// buildSigned is LoadSigned on parsed lists (train and test may be nil),
// reserving what it allocates on b.
func buildSigned(dir string, whole, train, test *signedList, b *loadBudget) (*graphs.Graph, error) {
	for _, l := range []*signedList{whole, train, test} {
		if l != nil && len(l.src) == 0 {
			return nil, fmt.Errorf("load %s: no edges (want one \"src dst sign\" line per edge)", l.path)
		}
	}
	e := len(whole.src)
	// The distinct ids: a copy of every endpoint, and a presence table
	// when their range is small (distinctSortedIDs).
	if err := b.reserve(16*float64(e)+float64(4*e+1<<16+1), fmt.Sprintf("the node ids of %d edges", e)); err != nil {
		return nil, fmt.Errorf("load %s: %w", whole.path, err)
	}
	ids := make([]int64, 0, 2*e)
	ids = append(ids, whole.src...)
	ids = append(ids, whole.dst...)
	ids = distinctSortedIDs(ids)
	n := len(ids)
	if n > maxLoadDim {
		return nil, fmt.Errorf("load %s: %d distinct node ids is too many", dir, n)
	}
	// The id lookup table (signedIndex), then for whole_edge.txt its
	// edges remapped, both directions built last-wins, and the two
	// patterns; for each of the train and test lists its edges remapped,
	// built last-wins, and its values.
	t := 0
	for k := range whole.src {
		if whole.src[k] != whole.dst[k] {
			t += 2
		}
	}
	need := 4*float64(4*n+1<<16+1) + 2*intBytes*float64(e) + lastWinsBytes(n, t) + intBytes*float64(2*(n+1)+t)
	for _, l := range []*signedList{train, test} {
		if l != nil {
			need += 2*intBytes*float64(len(l.src)) + lastWinsBytes(n, len(l.src)) + 8*float64(len(l.src))
		}
	}
	if err := b.reserve(need, fmt.Sprintf("the signed graph of %d nodes and %d edge lines", n, e)); err != nil {
		return nil, fmt.Errorf("load %s: %w", whole.path, err)
	}
	index := signedIndex(ids)
	g := &graphs.Graph{N: n}
	src, dst, err := remapSigned(whole, index, whole.path)
	if err != nil {
		return nil, err
	}
	g.Adj, g.Neg = signedUndirected(n, src, dst, whole.sign)
	if g.Adj.NNZ()+g.Neg.NNZ() == 0 {
		return nil, fmt.Errorf("load %s: no edges besides self-loops (%d edge lines, each joining a node to itself)", whole.path, len(whole.src))
	}
	for _, p := range []struct {
		l   *signedList
		out **graphs.CSR
	}{{train, &g.EdgeTrain}, {test, &g.EdgeTest}} {
		if p.l == nil {
			continue
		}
		src, dst, err := remapSigned(p.l, index, whole.path)
		if err != nil {
			return nil, err
		}
		*p.out = signedDirected(n, src, dst, p.l.sign)
	}
	return g, nil
}

// remapSigned maps the edges of l to node indices; an id index does not
// know is an error naming l's file and line and the whole edge list.
func remapSigned(l *signedList, index func(int64) (int, bool), wholePath string) (src, dst []int, err error) {
	src, dst = make([]int, len(l.src)), make([]int, len(l.dst))
	for k := range l.src {
		for _, e := range [2]struct {
			id  int64
			out *int
		}{{l.src[k], &src[k]}, {l.dst[k], &dst[k]}} {
			i, ok := index(e.id)
			if !ok {
				return nil, nil, fmt.Errorf("load %s:%d: node %d does not occur in %s (train and test edges must join nodes of the whole edge list)",
					l.path, l.lines[k], e.id, wholePath)
			}
			*e.out = i
		}
	}
	return src, dst, nil
}

// readSignedList reads the edge list at path, reserving on b what its
// parse allocates (sized by a first pass).
func readSignedList(path string, b *loadBudget) (*signedList, error) {
	f, _, err := openInput(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	defer f.Close()
	return parseSignedList(f, path, b)
}

// parseSignedList parses an edge list read from r (named path), making a
// first pass to size it and reserving what the second allocates on b.
func parseSignedList(r io.ReadSeeker, path string, b *loadBudget) (*signedList, error) {
	var l *signedList
	err := readText(r, path, func(r io.Reader, st textStats) error {
		if err := b.reserve(lineBufferBytes(st)+signedEdgeBytes*float64(st.lines), fmt.Sprintf("reading %d lines", st.lines)); err != nil {
			return fmt.Errorf("load %s: %w", path, err)
		}
		var err error
		if l, err = parseSignedEdges(r, path, st, true); err != nil {
			return fmt.Errorf("load %w", err)
		}
		return nil
	})
	return l, err
}

// distinctSortedIDs returns the distinct values of ids in ascending order,
// reusing ids' storage. When the value range is small it uses a presence
// table instead of sorting.
func distinctSortedIDs(ids []int64) []int64 {
	if len(ids) == 0 {
		return ids
	}
	lo, hi := slices.Min(ids), slices.Max(ids)
	if span := uint64(hi - lo); span < uint64(2*len(ids)+1<<16) {
		seen := make([]bool, span+1)
		for _, x := range ids {
			seen[x-lo] = true
		}
		out := ids[:0]
		for d, ok := range seen {
			if ok {
				out = append(out, lo+int64(d))
			}
		}
		return out
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// signedIndex returns a lookup from an original id to its index in the
// sorted distinct ids (false for an id not among them), through a dense
// table when the id range is small, else by binary search.
func signedIndex(ids []int64) func(int64) (int, bool) {
	n := len(ids)
	if n > 0 && uint64(ids[n-1]-ids[0]) < uint64(4*n+1<<16) {
		lo, hi := ids[0], ids[n-1]
		table := make([]int32, hi-lo+1)
		for i := range table {
			table[i] = -1
		}
		for i, x := range ids {
			table[x-lo] = int32(i)
		}
		return func(x int64) (int, bool) {
			if x < lo || x > hi || table[x-lo] < 0 {
				return 0, false
			}
			return int(table[x-lo]), true
		}
	}
	return func(x int64) (int, bool) {
		return slices.BinarySearch(ids, x)
	}
}

// signedUndirected builds the symmetrised positive and negative patterns
// without self-loops; for a pair listed several times (in either
// direction) the last listing wins. Each pattern's ids are allocated at
// their exact count.
func signedUndirected(n int, src, dst []int, sign []int8) (pos, neg *graphs.CSR) {
	indptr, indices, vals := buildLastWins(n, src, dst, sign, true)
	npos := 0
	for _, v := range vals {
		if v > 0 {
			npos++
		}
	}
	pos = &graphs.CSR{Rows: n, Cols: n, Indptr: make([]int, n+1), Indices: make([]int, 0, npos)}
	neg = &graphs.CSR{Rows: n, Cols: n, Indptr: make([]int, n+1), Indices: make([]int, 0, len(vals)-npos)}
	for u := 0; u < n; u++ {
		for k := indptr[u]; k < indptr[u+1]; k++ {
			if vals[k] > 0 {
				pos.Indices = append(pos.Indices, indices[k])
			} else {
				neg.Indices = append(neg.Indices, indices[k])
			}
		}
		pos.Indptr[u+1], neg.Indptr[u+1] = len(pos.Indices), len(neg.Indices)
	}
	return pos, neg
}

// signedDirected builds an N×N CSR with values ±1 from directed signed
// edges; self-loops are dropped and the last listing of a pair wins.
func signedDirected(n int, src, dst []int, sign []int8) *graphs.CSR {
	indptr, indices, vals := buildLastWins(n, src, dst, sign, false)
	m := &graphs.CSR{Rows: n, Cols: n, Indptr: indptr, Indices: indices, Data: make([]float64, len(vals))}
	for k, v := range vals {
		m.Data[k] = float64(v)
	}
	return m
}

// signedFormat writes edges in the "src\tdst\tsign" format ParseSignedEdges
// reads (used by tests).
func signedFormat(src, dst []int64, sign []int8) string {
	var b strings.Builder
	for k := range src {
		b.WriteString(strconv.FormatInt(src[k], 10))
		b.WriteByte('\t')
		b.WriteString(strconv.FormatInt(dst[k], 10))
		b.WriteByte('\t')
		b.WriteString(strconv.Itoa(int(sign[k])))
		b.WriteByte('\n')
	}
	return b.String()
}
