package graphio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"

	"github.com/dpgnn/dpgnn/graphs"
)

// Geom-gcn file names (the Actor / "film" dataset and its relatives).
const (
	geomEdgesFile = "out1_graph_edges.txt"
	geomNodesFile = "out1_node_feature_label.txt"
)

// LoadGeomGCN reads a dataset in the geom-gcn text format from dir
// (e.g. Actor):
//
//   - out1_graph_edges.txt: a header line, then "src<TAB>dst" per line;
//   - out1_node_feature_label.txt: a header line, then
//     "node_id<TAB>comma-separated active feature ids<TAB>label" per node;
//   - film_split_0.6_0.2_K.npz for K = 0, 1, ...: train_mask, val_mask,
//     test_mask (uint8 or bool, one entry per node).
//
// The first line of each text file is skipped when its first field is not
// a number (the header); a UTF-8 byte-order mark before it is ignored, and
// a UTF-16 file is refused. Node ids must be exactly 0..N-1, where N ≥ 1 is
// the number of node rows (each once). Blank lines are ignored. The
// returned adjacency is undirected (edges symmetrised), unweighted and
// without self-loops; a file with no edge (besides self-loops) is an
// error. Features are binary and sparse (Data nil); a node may have no
// active feature. Labels must be ≥ -1 (-1 unlabelled); NumClasses =
// largest label + 1.
//
// The feature count F: when the node file's header declares
// "feature_amount:K" (as the published files do: Actor's says 931 for ids
// 0..931), F = K + 1 and every id must be ≤ K. That F is the file's,
// whatever its rows hold: removing a node, or the features of one, leaves
// it unchanged. Without such a header F = largest id + 1, read off the
// rows: removing the one node with the largest id can then lower F, so a
// private run treats that count as public (give the header to make it
// so). A file without the header whose rows name no feature at all (F = 0)
// is refused: no method can train on it.
//
// Because F is implied by the largest id, one stray id (999999 in a file
// of 932 features) would make a million features, and training, which
// builds the dense N×F matrix, would allocate gigabytes. So without the
// header F may be at most 10·D + 1000, D being the number of distinct ids
// the file uses (a file using few ids of a large vocabulary still loads; a
// lone huge id does not), and in both cases the dense features N·F·8 bytes
// must fit MemoryLimit. Likewise a class id ≥ N (more classes than nodes)
// is an error, as is an N×C float64 logit matrix above MemoryLimit.
//
// Mask files are read for K = 0, 1, 2, ... until the first missing one, into
// MaskSplits[K] (none present: MaskSplits is nil, not an error). A mask file
// that exists but is malformed (missing array, wrong length, values other
// than 0/1, or a node in two of the three sets) is an error. Split is left
// empty. Errors name the file and, for text files, the line.
//
// Memory: each text file is read twice; the first pass counts its lines
// and commas, and what the second allocates (sized by those counts) is
// reserved against MemoryLimit before it is allocated (see loadBudget).
// Every input file must be a regular file (a named pipe is refused, not
// waited on).
func LoadGeomGCN(dir string) (*graphs.Graph, error) {
	b, err := newLoadBudget()
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", dir, err)
	}
	return loadGeomGCN(dir, b)
}

func loadGeomGCN(dir string, b *loadBudget) (*graphs.Graph, error) {
	nodesPath := filepath.Join(dir, geomNodesFile)
	edgesPath := filepath.Join(dir, geomEdgesFile)
	var x *graphs.Features
	var labels []int
	var numClasses int
	err := readTextFile(nodesPath, func(r io.Reader, st textStats) error {
		var err error
		x, labels, numClasses, err = readGeomNodes(r, st, nodesPath, b)
		return err
	})
	if err != nil {
		return nil, err
	}
	n := len(labels)
	var adj *graphs.CSR
	err = readTextFile(edgesPath, func(r io.Reader, st textStats) error {
		var err error
		adj, err = readGeomEdges(r, st, edgesPath, n, b)
		return err
	})
	if err != nil {
		return nil, err
	}
	g := &graphs.Graph{N: n, Adj: adj, X: x, Labels: labels, NumClasses: numClasses}
	for k := 0; ; k++ {
		p := filepath.Join(dir, fmt.Sprintf("film_split_0.6_0.2_%d.npz", k))
		s, err := readGeomMasks(p, n, b)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return nil, err
		}
		g.MaskSplits = append(g.MaskSplits, s)
	}
	return g, nil
}

// geomIsHeader reports whether the first line of a geom-gcn file is a
// header: its first field (up to a tab or a space) is not a number. A
// number too large for an id is data (and refused as such).
func geomIsHeader(line []byte) bool {
	f := bytes.Fields(line)
	if len(f) == 0 {
		return true
	}
	_, st := parseIntBytes(f[0])
	return st == intSyntax
}

// asciiSpace separates the fields of an edge line.
const asciiSpace = " \t\v\f\r"

// geomFeatureAmountRe finds the feature count a geom-gcn header declares.
var geomFeatureAmountRe = regexp.MustCompile(`feature_amount\s*:\s*(\d+)`)

// Plausibility rule for headerless geom-gcn node files: F ≤
// geomFeatureFactor·D + geomFeatureSlack for D distinct feature ids.
const (
	geomFeatureFactor = 10
	geomFeatureSlack  = 1000
)

// geomID parses an id, label or feature id field of a geom-gcn file: an
// integer in [lo, maxLoadDim). what names the field in the error.
func geomID(lr *lineReader, field []byte, what string, lo int64) (int, error) {
	field = bytes.TrimSpace(field)
	v, st := parseIntBytes(field)
	switch {
	case st == intSyntax:
		return 0, lr.errf("non-numeric %s %s", what, quoteField(field))
	case st == intRange || v < lo || v >= maxLoadDim:
		if lo < 0 {
			return 0, lr.errf("%s %s out of range (want a class id in [0, %d) or -1 for unlabelled)", what, field, maxLoadDim)
		}
		return 0, lr.errf("%s %s out of range [0, %d)", what, field, maxLoadDim)
	}
	return int(v), nil
}

// Bytes reserved per line and per comma of a geom-gcn node file for its
// parsed rows: an id, a label, a line number and the end of the row's
// features (4+4+4+8 bytes), and one feature id (4 bytes) per comma or
// line (a row has at most one more feature id than commas).
const (
	geomRowBytes  = 20
	geomFeatBytes = 4
)

// readGeomNodes reads a geom-gcn node file (named path in errors) whose
// first pass gave st, reserving what it allocates on b.
func readGeomNodes(r io.Reader, st textStats, path string, b *loadBudget) (*graphs.Features, []int, int, error) {
	capRows, capFeats := st.lines, st.commas+st.lines
	if err := b.reserve(lineBufferBytes(st)+geomRowBytes*float64(capRows)+geomFeatBytes*float64(capFeats),
		fmt.Sprintf("reading %d lines", st.lines)); err != nil {
		return nil, nil, 0, fmt.Errorf("load %s: %w", path, err)
	}
	lr := newLineReader(r, "load ", path, st)
	ids := make([]int32, 0, capRows)
	labs := make([]int32, 0, capRows)
	lines := make([]int32, 0, capRows)
	ends := make([]int, 0, capRows)
	feats := make([]int32, 0, capFeats)
	maxFeat, maxLabel := -1, -1
	maxFeatLine, maxLabelRow := 0, -1
	declared := -1 // feature_amount of the header, or -1
	for {
		line, ok := lr.next()
		if !ok {
			break
		}
		if lr.line == 1 && geomIsHeader(line) {
			if m := geomFeatureAmountRe.FindSubmatch(line); m != nil {
				if k, st := parseIntBytes(m[1]); st == intOK && k < maxLoadDim {
					declared = int(k)
				}
			}
			continue
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if lr.line > math.MaxInt32 {
			return nil, nil, 0, lr.errf("more than %d lines", math.MaxInt32)
		}
		var parts [3][]byte
		k := 0
		for rest := line; ; k++ {
			i := bytes.IndexByte(rest, '\t')
			if k < 3 {
				parts[k] = rest
				if i >= 0 {
					parts[k] = rest[:i]
				}
			}
			if i < 0 {
				k++
				break
			}
			rest = rest[i+1:]
		}
		if k != 3 {
			return nil, nil, 0, lr.errf("want 3 tab-separated fields (node_id, features, label), got %d", k)
		}
		id, err := geomID(lr, parts[0], "node id", 0)
		if err != nil {
			return nil, nil, 0, err
		}
		lab, err := geomID(lr, parts[2], "label", -1)
		if err != nil {
			return nil, nil, 0, err
		}
		if fstr := bytes.TrimSpace(parts[1]); len(fstr) > 0 {
			for rest := fstr; ; {
				i := bytes.IndexByte(rest, ',')
				tok := rest
				if i >= 0 {
					tok = rest[:i]
				}
				j, err := geomID(lr, tok, "feature id", 0)
				if err != nil {
					return nil, nil, 0, err
				}
				if declared >= 0 && j > declared {
					return nil, nil, 0, lr.errf("feature id %d is beyond the header's feature_amount:%d", j, declared)
				}
				feats = append(feats, int32(j))
				if j > maxFeat {
					maxFeat, maxFeatLine = j, lr.line
				}
				if i < 0 {
					break
				}
				rest = rest[i+1:]
			}
		}
		if lab > maxLabel {
			maxLabel, maxLabelRow = lab, len(ids)
		}
		ids = append(ids, int32(id))
		labs = append(labs, int32(lab))
		lines = append(lines, int32(lr.line))
		ends = append(ends, len(feats))
	}
	if err := lr.err(); err != nil {
		return nil, nil, 0, err
	}
	n := len(ids)
	if n == 0 {
		return nil, nil, 0, fmt.Errorf("load %s: no node rows (want a header line, then node_id<TAB>features<TAB>label per node)", path)
	}
	if err := b.reserve(4*float64(n)+intBytes*float64(n)+intBytes*float64(n+1)+intBytes*float64(len(feats)),
		fmt.Sprintf("the features of %d nodes (%d feature ids)", n, len(feats))); err != nil {
		return nil, nil, 0, fmt.Errorf("load %s: %w", path, err)
	}
	// Node ids must be a permutation of 0..n-1.
	where := make([]int32, n) // row index + 1 for each id
	for r, id := range ids {
		if int(id) >= n {
			return nil, nil, 0, fmt.Errorf("load %s:%d: node id %d out of range [0, %d): ids must be 0..N-1 with N = %d node rows (is a node missing?)", path, lines[r], id, n, n)
		}
		if where[id] != 0 {
			return nil, nil, 0, fmt.Errorf("load %s:%d: duplicate row for node %d (first on line %d)", path, lines[r], id, lines[where[id]-1])
		}
		where[id] = int32(r + 1)
	}
	nf := maxFeat + 1
	if declared >= 0 {
		nf = declared + 1
	} else if nf > geomFeatureSlack {
		// The plausibility rule needs the number of distinct ids.
		if err := b.reserve(4*float64(len(feats)), "counting the distinct feature ids"); err != nil {
			return nil, nil, 0, fmt.Errorf("load %s: %w", path, err)
		}
		d := len(slices.Compact(slices.Sorted(slices.Values(feats))))
		if nf > geomFeatureFactor*d+geomFeatureSlack {
			return nil, nil, 0, fmt.Errorf("load %s:%d: feature id %d implies %d features but the file uses only %d distinct feature ids (without a feature_amount header at most %d·%d + %d = %d features are accepted)",
				path, maxFeatLine, maxFeat, nf, d, geomFeatureFactor, d, geomFeatureSlack, geomFeatureFactor*d+geomFeatureSlack)
		}
	}
	if nf == 0 {
		return nil, nil, 0, fmt.Errorf("load %s: no node has a feature (the feature column is empty on all %d rows), and every method needs at least one feature: give the nodes features, or declare the vocabulary with a feature_amount:K header", path, n)
	}
	if err := checkDenseFeatures(n, nf); err != nil {
		at := fmt.Sprintf("load %s:%d: feature id %d", path, maxFeatLine, maxFeat)
		if declared >= 0 {
			at = fmt.Sprintf("load %s:1: feature_amount:%d", path, declared)
		}
		return nil, nil, 0, fmt.Errorf("%s: %w", at, err)
	}
	if maxLabelRow >= 0 {
		if err := checkClassCount(maxLabel+1, n, fmt.Sprintf("node %d", ids[maxLabelRow])); err != nil {
			return nil, nil, 0, fmt.Errorf("load %s:%d: %w", path, lines[maxLabelRow], err)
		}
	}
	labels := make([]int, n)
	indptr := make([]int, n+1)
	indices := make([]int, len(feats))
	w := 0
	for id := 0; id < n; id++ {
		r := int(where[id] - 1)
		labels[id] = int(labs[r])
		start := 0
		if r > 0 {
			start = ends[r-1]
		}
		row := indices[w : w+ends[r]-start]
		for k, j := range feats[start:ends[r]] {
			row[k] = int(j)
		}
		slices.Sort(row)
		row = slices.Compact(row)
		w += len(row)
		indptr[id+1] = w
	}
	x := &graphs.Features{N: n, F: nf, Sparse: &graphs.CSR{Rows: n, Cols: nf, Indptr: indptr, Indices: indices[:w:w]}}
	return x, labels, maxLabel + 1, nil
}

// readGeomEdges reads a geom-gcn edge file (named path in errors, first
// pass st) of a graph with n nodes, reserving what it allocates on b.
func readGeomEdges(r io.Reader, st textStats, path string, n int, b *loadBudget) (*graphs.CSR, error) {
	// Each line holds at most one edge: its two ids, and two column ids of
	// the pattern (reserved at this bound, before the file is parsed).
	if err := b.reserve(lineBufferBytes(st)+(8+2*intBytes)*float64(st.lines)+intBytes*float64(2*n+1),
		fmt.Sprintf("the adjacency of %d lines", st.lines)); err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	lr := newLineReader(r, "load ", path, st)
	src := make([]int32, 0, st.lines)
	dst := make([]int32, 0, st.lines)
	for {
		line, ok := lr.next()
		if !ok {
			break
		}
		if lr.line == 1 && geomIsHeader(line) {
			continue
		}
		var fields [2][]byte
		k := 0
		for rest := line; ; k++ {
			rest = bytes.TrimLeft(rest, asciiSpace)
			if len(rest) == 0 {
				break
			}
			i := bytes.IndexAny(rest, asciiSpace)
			if i < 0 {
				i = len(rest)
			}
			if k < 2 {
				fields[k] = rest[:i]
			}
			rest = rest[i:]
		}
		if k == 0 {
			continue
		}
		if k != 2 {
			return nil, lr.errf("want 2 fields (src, dst), got %d", k)
		}
		var uv [2]int32
		for i, f := range fields {
			v, st := parseIntBytes(f)
			switch {
			case st == intSyntax:
				return nil, lr.errf("non-numeric node id %s", quoteField(f))
			case st == intRange || v < 0 || v >= int64(n):
				return nil, lr.errf("node id %s out of range [0, %d) (%s has %d nodes)", f, n, geomNodesFile, n)
			}
			uv[i] = int32(v)
		}
		src = append(src, uv[0])
		dst = append(dst, uv[1])
	}
	if err := lr.err(); err != nil {
		return nil, err
	}
	// A file of no edges (its header alone, or self-loops only) loads as a
	// graph without edges: removing the last edge must not turn an
	// accepted input into a refused one.
	total := 0
	for k := range src {
		if src[k] != dst[k] {
			total += 2
		}
	}
	return pairPattern(n, total, func(edge func(i, j int)) {
		for k := range src {
			if u, v := int(src[k]), int(dst[k]); u != v {
				edge(u, v)
			}
		}
	}), nil
}

// readGeomMasks reads one geom-gcn split file, reserving on b. A missing
// file gives an error wrapping fs.ErrNotExist.
func readGeomMasks(path string, n int, b *loadBudget) (graphs.Split, error) {
	f, size, err := openInput(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return graphs.Split{}, err
		}
		return graphs.Split{}, fmt.Errorf("load %s: %w", path, err)
	}
	defer f.Close()
	return readGeomMasksFrom(f, size, path, n, b)
}

// readGeomMasksFrom reads a geom-gcn split archive of size bytes from r
// (named path in errors) for a graph of n nodes. Each node's set is
// decoded into one byte per node and the three sets are then allocated at
// their exact sizes; both are reserved on b first.
func readGeomMasksFrom(r io.ReaderAt, size int64, path string, n int, b *loadBudget) (graphs.Split, error) {
	a, err := openNPZArchive(r, size, path, b)
	if err != nil {
		return graphs.Split{}, err
	}
	names := [3]string{"train_mask", "val_mask", "test_mask"}
	var hs [3]*npyHeader
	for s, key := range names {
		h, err := a.header(key, "a mask (bool or integer 0/1 array)", -1)
		if err != nil {
			return graphs.Split{}, err
		}
		if len(h.shape) != 1 || h.n != n {
			return graphs.Split{}, a.errf(strconv.Quote(key), "has shape %v, want (%d,) (one entry per node)", h.shape, n)
		}
		if !h.dtype.integer() {
			return graphs.Split{}, a.errf(strconv.Quote(key), "has dtype %s: want a mask (bool or integer 0/1 array)", h.dtype.descr)
		}
		hs[s] = h
	}
	if err := b.reserve(3*zipOpenBytes+float64(n)+intBytes*float64(n), fmt.Sprintf("the masks of %d nodes", n)); err != nil {
		return graphs.Split{}, fmt.Errorf("load %s: %w", path, err)
	}
	owner := make([]int8, n) // 0 = none, else 1 + set index
	var counts [3]int
	for s, h := range hs {
		sz := h.dtype.size
		err := a.body(h, func(c []byte, first int) error {
			for k := 0; k < len(c)/sz; k++ {
				i := first + k
				v, u, ok := elemInt(c[k*sz:], h.dtype)
				switch {
				case ok && v == 0:
				case ok && v == 1:
					if owner[i] != 0 {
						return fmt.Errorf("node %d is also in %s", i, names[owner[i]-1])
					}
					owner[i] = int8(s + 1)
					counts[s]++
				case !ok:
					return fmt.Errorf("%s[%d] = %d, want 0 or 1", h.key, i, u)
				default:
					return fmt.Errorf("%s[%d] = %d, want 0 or 1", h.key, i, v)
				}
			}
			return nil
		})
		if err != nil {
			return graphs.Split{}, err
		}
	}
	var sets [3][]int
	all := make([]int, 0, counts[0]+counts[1]+counts[2])
	for s := range sets {
		sets[s] = all[len(all) : len(all) : len(all)+counts[s]]
		all = all[:len(all)+counts[s]]
	}
	for i, o := range owner {
		if o != 0 {
			sets[o-1] = append(sets[o-1], i)
		}
	}
	return graphs.Split{Train: sets[0], Val: sets[1], Test: sets[2]}, nil
}
