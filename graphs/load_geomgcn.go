package graphs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
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
// The first line of each text file is skipped when it is not numeric (the
// header). Node ids must be exactly 0..N-1, where N ≥ 1 is the number of
// node rows (each once). Blank lines are ignored. The returned adjacency is
// undirected (edges symmetrised), unweighted and without self-loops; a file
// with no edge (besides self-loops) is an error. Features are binary and
// sparse (Data nil) with F = largest feature id + 1; a node may have no
// active feature. Labels must be ≥ -1 (-1 unlabelled); NumClasses = largest
// label + 1.
//
// Because F is implied by the largest id, one stray id (999999 in a file
// of 932 features) would make a million features, and training, which
// builds the dense N×F matrix, would allocate gigabytes. So feature ids are
// checked against what the file plausibly holds:
//
//   - when the header declares "feature_amount:K" (as the published files
//     do), every id must be ≤ K (the Actor header says 931 for ids 0..931);
//   - without such a header, F may be at most 10·D + 1000, D being the
//     number of distinct ids the file uses (a file using few ids of a large
//     vocabulary still loads; a lone huge id does not);
//   - in both cases the dense features N·F·8 bytes must fit MemoryLimit.
//
// Likewise a class id ≥ N (more classes than nodes) is an error, as is an
// N×C float64 logit matrix above MemoryLimit.
//
// Mask files are read for K = 0, 1, 2, ... until the first missing one, into
// MaskSplits[K] (none present: MaskSplits is nil, not an error). A mask file
// that exists but is malformed (missing array, wrong length, values other
// than 0/1, or a node in two of the three sets) is an error. Split is left
// empty. Errors name the file and, for text files, the line.
func LoadGeomGCN(dir string) (*Graph, error) {
	nodesPath := filepath.Join(dir, geomNodesFile)
	edgesPath := filepath.Join(dir, geomEdgesFile)
	var x *Features
	var labels []int
	var numClasses int
	err := readTextFile(nodesPath, func(r io.Reader) error {
		var err error
		x, labels, numClasses, err = readGeomNodes(r, nodesPath)
		return err
	})
	if err != nil {
		return nil, err
	}
	n := len(labels)
	var adj *CSR
	err = readTextFile(edgesPath, func(r io.Reader) error {
		var err error
		adj, err = readGeomEdges(r, edgesPath, n)
		return err
	})
	if err != nil {
		return nil, err
	}
	g := &Graph{N: n, Adj: adj, X: x, Labels: labels, NumClasses: numClasses}
	for k := 0; ; k++ {
		p := filepath.Join(dir, fmt.Sprintf("film_split_0.6_0.2_%d.npz", k))
		s, err := readGeomMasks(p, n)
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

// readTextFile opens path and passes it to read; an open error is
// reported as "load PATH: ...".
func readTextFile(path string, read func(io.Reader) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("load %s: %w", path, err)
	}
	defer f.Close()
	return read(f)
}

// lineReader yields the lines of a text file with their 1-based numbers,
// trailing "\r" removed.
type lineReader struct {
	sc     *bufio.Scanner
	prefix string // error prefix, e.g. "load "
	name   string
	line   int
}

func newLineReader(r io.Reader, prefix, name string) *lineReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	return &lineReader{sc: sc, prefix: prefix, name: name}
}

func (l *lineReader) next() (string, bool) {
	if !l.sc.Scan() {
		return "", false
	}
	l.line++
	return strings.TrimSuffix(l.sc.Text(), "\r"), true
}

func (l *lineReader) err() error {
	if err := l.sc.Err(); err != nil {
		return fmt.Errorf("%s%s:%d: %w", l.prefix, l.name, l.line+1, err)
	}
	return nil
}

func (l *lineReader) errf(format string, args ...any) error {
	return fmt.Errorf("%s%s:%d: %s", l.prefix, l.name, l.line, fmt.Sprintf(format, args...))
}

// geomIsHeader reports whether the first line of a geom-gcn file is a
// header (its first field is not an integer).
func geomIsHeader(line string) bool {
	f := strings.Fields(line)
	if len(f) == 0 {
		return true
	}
	_, err := strconv.Atoi(f[0])
	return err != nil
}

// geomFeatureAmountRe finds the feature count a geom-gcn header declares.
var geomFeatureAmountRe = regexp.MustCompile(`feature_amount\s*:\s*(\d+)`)

// Plausibility rule for headerless geom-gcn node files: F ≤
// geomFeatureFactor·D + geomFeatureSlack for D distinct feature ids.
const (
	geomFeatureFactor = 10
	geomFeatureSlack  = 1000
)

// readGeomNodes reads a geom-gcn node file (named path in errors).
func readGeomNodes(r io.Reader, path string) (*Features, []int, int, error) {
	lr := newLineReader(r, "load ", path)

	type nodeRow struct {
		feats []int
		label int
		line  int
	}
	var rows []nodeRow
	ids := []int{}
	maxFeat, maxLabel := -1, -1
	maxFeatLine, maxLabelRow := 0, -1
	declared := -1 // feature_amount of the header, or -1
	distinct := map[int]struct{}{}
	for {
		line, ok := lr.next()
		if !ok {
			break
		}
		if lr.line == 1 && geomIsHeader(line) {
			if m := geomFeatureAmountRe.FindStringSubmatch(line); m != nil {
				if k, err := strconv.Atoi(m[1]); err == nil && k < maxLoadDim {
					declared = k
				}
			}
			continue
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		parts := strings.Split(line, "\t")
		if len(parts) != 3 {
			return nil, nil, 0, lr.errf("want 3 tab-separated fields (node_id, features, label), got %d", len(parts))
		}
		idS := strings.TrimSpace(parts[0])
		id, err := strconv.Atoi(idS)
		if err != nil {
			return nil, nil, 0, lr.errf("non-numeric node id %q", idS)
		}
		if id < 0 || id >= maxLoadDim {
			return nil, nil, 0, lr.errf("node id %d out of range", id)
		}
		labS := strings.TrimSpace(parts[2])
		lab, err := strconv.Atoi(labS)
		if err != nil {
			return nil, nil, 0, lr.errf("non-numeric label %q", labS)
		}
		if lab < -1 || lab >= maxLoadDim {
			return nil, nil, 0, lr.errf("label %d out of range (want a class id ≥ 0 or -1 for unlabelled)", lab)
		}
		var feats []int
		if fstr := strings.TrimSpace(parts[1]); fstr != "" {
			for _, t := range strings.Split(fstr, ",") {
				t = strings.TrimSpace(t)
				j, err := strconv.Atoi(t)
				if err != nil {
					return nil, nil, 0, lr.errf("non-numeric feature id %q", t)
				}
				if j < 0 || j >= maxLoadDim {
					return nil, nil, 0, lr.errf("feature id %d out of range", j)
				}
				if declared >= 0 && j > declared {
					return nil, nil, 0, lr.errf("feature id %d is beyond the header's feature_amount:%d", j, declared)
				}
				feats = append(feats, j)
				distinct[j] = struct{}{}
				if j > maxFeat {
					maxFeat, maxFeatLine = j, lr.line
				}
			}
		}
		if lab > maxLabel {
			maxLabel, maxLabelRow = lab, len(rows)
		}
		rows = append(rows, nodeRow{feats: feats, label: lab, line: lr.line})
		ids = append(ids, id)
	}
	if err := lr.err(); err != nil {
		return nil, nil, 0, err
	}
	n := len(rows)
	if n == 0 {
		return nil, nil, 0, fmt.Errorf("load %s: no node rows (want a header line, then node_id<TAB>features<TAB>label per node)", path)
	}
	// Node ids must be a permutation of 0..n-1.
	where := make([]int, n) // row index + 1 for each id
	for r, id := range ids {
		if id >= n {
			return nil, nil, 0, fmt.Errorf("load %s:%d: node id %d out of range [0, %d): ids must be 0..N-1 with N = %d node rows (is a node missing?)", path, rows[r].line, id, n, n)
		}
		if where[id] != 0 {
			return nil, nil, 0, fmt.Errorf("load %s:%d: duplicate row for node %d (first on line %d)", path, rows[r].line, id, rows[where[id]-1].line)
		}
		where[id] = r + 1
	}
	nf := maxFeat + 1
	if d := len(distinct); declared < 0 && nf > geomFeatureFactor*d+geomFeatureSlack {
		return nil, nil, 0, fmt.Errorf("load %s:%d: feature id %d implies %d features but the file uses only %d distinct feature ids (without a feature_amount header at most %d·%d + %d = %d features are accepted)",
			path, maxFeatLine, maxFeat, nf, d, geomFeatureFactor, d, geomFeatureSlack, geomFeatureFactor*d+geomFeatureSlack)
	}
	if err := checkDenseFeatures(n, nf); err != nil {
		return nil, nil, 0, fmt.Errorf("load %s:%d: feature id %d: %w", path, maxFeatLine, maxFeat, err)
	}
	if maxLabelRow >= 0 {
		row := rows[maxLabelRow]
		if err := checkClassCount(maxLabel+1, n, fmt.Sprintf("node %d", ids[maxLabelRow])); err != nil {
			return nil, nil, 0, fmt.Errorf("load %s:%d: %w", path, row.line, err)
		}
	}
	labels := make([]int, n)
	var src, dst []int
	for id := 0; id < n; id++ {
		row := rows[where[id]-1]
		labels[id] = row.label
		for _, j := range row.feats {
			src = append(src, id)
			dst = append(dst, j)
		}
	}
	x := &Features{N: n, F: nf, Sparse: FromCOO(n, nf, src, dst, nil)}
	return x, labels, maxLabel + 1, nil
}

// readGeomEdges reads a geom-gcn edge file (named path in errors) of a
// graph with n nodes.
func readGeomEdges(r io.Reader, path string, n int) (*CSR, error) {
	lr := newLineReader(r, "load ", path)
	var src, dst []int
	for {
		line, ok := lr.next()
		if !ok {
			break
		}
		if lr.line == 1 && geomIsHeader(line) {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			return nil, (lr.errf("want 2 fields (src, dst), got %d", len(fields)))
		}
		var uv [2]int
		for i, s := range fields {
			v, err := strconv.Atoi(s)
			if err != nil {
				return nil, (lr.errf("non-numeric node id %q", s))
			}
			if v < 0 || v >= n {
				return nil, (lr.errf("node id %d out of range [0, %d) (%s has %d nodes)", v, n, geomNodesFile, n))
			}
			uv[i] = v
		}
		src = append(src, uv[0])
		dst = append(dst, uv[1])
	}
	if err := lr.err(); err != nil {
		return nil, err
	}
	if len(src) == 0 {
		return nil, fmt.Errorf("load %s: no edges (want a header line, then src<TAB>dst per line)", path)
	}
	adj := undirectedFromPairs(n, src, dst)
	if adj.NNZ() == 0 {
		return nil, fmt.Errorf("load %s: no edges besides self-loops (%d edge lines, each joining a node to itself)", path, len(src))
	}
	return adj, nil
}

// readGeomMasks reads one geom-gcn split file. A missing file gives an
// error wrapping fs.ErrNotExist.
func readGeomMasks(path string, n int) (Split, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Split{}, err
		}
		return Split{}, fmt.Errorf("load %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Split{}, fmt.Errorf("load %s: %w", path, err)
	}
	return readGeomMasksFrom(f, st.Size(), path, n)
}

// readGeomMasksFrom reads a geom-gcn split archive of size bytes from r
// (named path in errors) for a graph of n nodes.
func readGeomMasksFrom(r io.ReaderAt, size int64, path string, n int) (Split, error) {
	a, err := openNPZArchive(r, size, path)
	if err != nil {
		return Split{}, err
	}
	var sets [3][]int
	owner := make([]int8, n) // 0 = none, else 1 + set index
	names := [3]string{"train_mask", "val_mask", "test_mask"}
	for s, key := range names {
		arr, err := a.read(key)
		if err != nil {
			return Split{}, err
		}
		q := strconv.Quote(key)
		if len(arr.shape) != 1 || arr.n != n {
			return Split{}, a.errf(q, "has shape %v, want (%d,) (one entry per node)", arr.shape, n)
		}
		v, err := arr.ints()
		if err != nil {
			return Split{}, a.errf(q, "%v", err)
		}
		for i, b := range v {
			switch b {
			case 0:
			case 1:
				if owner[i] != 0 {
					return Split{}, a.errf(q, "node %d is also in %s", i, names[owner[i]-1])
				}
				owner[i] = int8(s + 1)
				sets[s] = append(sets[s], i)
			default:
				return Split{}, a.errf(q, "%s[%d] = %d, want 0 or 1", key, i, b)
			}
		}
	}
	return Split{Train: sets[0], Val: sets[1], Test: sets[2]}, nil
}
