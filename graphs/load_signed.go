package graphs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// signedWholeFile is the edge list of a signed dataset directory.
const signedWholeFile = "whole_edge.txt"

// ParseSignedEdges parses a signed edge list: one edge per line,
// "src dst sign", fields separated by tabs, spaces or commas (runs of
// separators count as one). src and dst are (possibly negative, not
// necessarily contiguous) 64-bit integer ids; sign is 1, +1 or -1. Blank
// lines and lines whose first non-blank character is '#' are skipped; a
// trailing "\r" is ignored. name is used in error messages, which have the
// form "name:LINE: problem". The three slices have one entry per edge, in
// file order; duplicates and self-loops are kept (LoadSigned drops them).
func ParseSignedEdges(r io.Reader, name string) (src, dst []int64, sign []int8, err error) {
	lr := newLineReader(r, "", name)
	var f [4][]byte
	for lr.sc.Scan() {
		lr.line++
		k := splitSignedFields(lr.sc.Bytes(), &f)
		if k == 0 || f[0][0] == '#' {
			continue
		}
		if k != 3 {
			more := ""
			if k > 3 {
				more = " or more"
			}
			return nil, nil, nil, lr.errf("want 3 fields (src dst sign), got %d%s", k, more)
		}
		u, ok := parseInt64Bytes(f[0])
		if !ok {
			return nil, nil, nil, lr.errf("non-numeric source node id %q", f[0])
		}
		v, ok := parseInt64Bytes(f[1])
		if !ok {
			return nil, nil, nil, lr.errf("non-numeric target node id %q", f[1])
		}
		var s int8
		switch string(f[2]) {
		case "1", "+1":
			s = 1
		case "-1":
			s = -1
		default:
			return nil, nil, nil, lr.errf("sign %q is not 1 or -1", f[2])
		}
		src = append(src, u)
		dst = append(dst, v)
		sign = append(sign, s)
	}
	if err := lr.err(); err != nil {
		return nil, nil, nil, err
	}
	return src, dst, sign, nil
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

// parseInt64Bytes parses an optionally signed decimal int64 (what
// strconv.ParseInt(s, 10, 64) accepts, without underscores).
func parseInt64Bytes(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		if u > (1<<63)/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
		if u > 1<<63 {
			return 0, false
		}
	}
	if neg {
		return -int64(u), true // -(1<<63) wraps to itself, which is MinInt64
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// signedList is one parsed edge-list file.
type signedList struct {
	path     string
	src, dst []int64
	sign     []int8
}

// LoadSigned reads a signed-graph dataset directory (the ASGL layout):
// whole_edge.txt (required) and, when present, NAME.train and NAME.test,
// where NAME is the base name of dir. Lines are parsed by ParseSignedEdges.
//
// Node ids of the three files are remapped together to 0..N-1 in ascending
// order of the original ids (N = number of distinct ids in all three files).
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
func LoadSigned(dir string) (*Graph, error) {
	base := filepath.Base(filepath.Clean(dir))
	whole, err := readSignedList(filepath.Join(dir, signedWholeFile))
	if err != nil {
		return nil, err
	}
	lists := []*signedList{whole}
	var train, test *signedList
	for _, p := range []struct {
		ext string
		dst **signedList
	}{{".train", &train}, {".test", &test}} {
		l, err := readSignedList(filepath.Join(dir, base+p.ext))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		*p.dst = l
		lists = append(lists, l)
	}

	// Remap ids: sorted distinct ids of all files → 0..N-1.
	total := 0
	for _, l := range lists {
		total += 2 * len(l.src)
	}
	ids := make([]int64, 0, total)
	for _, l := range lists {
		ids = append(ids, l.src...)
		ids = append(ids, l.dst...)
	}
	ids = distinctSortedIDs(ids)
	n := len(ids)
	if n > maxLoadDim {
		return nil, fmt.Errorf("load %s: %d distinct node ids is too many", dir, n)
	}
	remap := signedRemapper(ids)
	g := &Graph{N: n}
	g.Adj, g.Neg = signedUndirected(n, remap(whole.src), remap(whole.dst), whole.sign)
	if train != nil {
		g.EdgeTrain = signedDirected(n, remap(train.src), remap(train.dst), train.sign)
	}
	if test != nil {
		g.EdgeTest = signedDirected(n, remap(test.src), remap(test.dst), test.sign)
	}
	return g, nil
}

func readSignedList(path string) (*signedList, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	defer f.Close()
	src, dst, sign, err := ParseSignedEdges(f, path)
	if err != nil {
		return nil, fmt.Errorf("load %w", err)
	}
	return &signedList{path: path, src: src, dst: dst, sign: sign}, nil
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

// signedRemapper returns a function mapping each original id to its index
// in the sorted distinct ids (a dense table when the id range is small).
func signedRemapper(ids []int64) func([]int64) []int {
	n := len(ids)
	if n > 0 && uint64(ids[n-1]-ids[0]) < uint64(4*n+1<<16) {
		lo := ids[0]
		table := make([]int32, ids[n-1]-lo+1)
		for i, x := range ids {
			table[x-lo] = int32(i)
		}
		return func(v []int64) []int {
			out := make([]int, len(v))
			for i, x := range v {
				out[i] = int(table[x-lo])
			}
			return out
		}
	}
	return func(v []int64) []int {
		out := make([]int, len(v))
		for i, x := range v {
			out[i], _ = slices.BinarySearch(ids, x)
		}
		return out
	}
}

// signedUndirected builds the symmetrised positive and negative patterns
// without self-loops; for a pair listed several times (in either
// direction) the last listing wins.
func signedUndirected(n int, src, dst []int, sign []int8) (pos, neg *CSR) {
	indptr, indices, vals := buildLastWins(n, src, dst, sign, true)
	pos = &CSR{Rows: n, Cols: n, Indptr: make([]int, n+1)}
	neg = &CSR{Rows: n, Cols: n, Indptr: make([]int, n+1)}
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
	if pos.Indices == nil {
		pos.Indices = []int{}
	}
	if neg.Indices == nil {
		neg.Indices = []int{}
	}
	return pos, neg
}

// signedDirected builds an N×N CSR with values ±1 from directed signed
// edges; self-loops are dropped and the last listing of a pair wins.
func signedDirected(n int, src, dst []int, sign []int8) *CSR {
	indptr, indices, vals := buildLastWins(n, src, dst, sign, false)
	m := &CSR{Rows: n, Cols: n, Indptr: indptr, Indices: indices, Data: make([]float64, len(vals))}
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
