package graphs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
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
// header). Node ids must be exactly 0..N-1, where N is the number of node
// rows (each once). Blank lines are ignored. The returned adjacency is
// undirected (edges symmetrised), unweighted and without self-loops.
// Features are binary and sparse (Data nil) with F = largest feature id + 1;
// a node may have no active feature. Labels must be ≥ -1 (-1 unlabelled);
// NumClasses = largest label + 1.
//
// Mask files are read for K = 0, 1, 2, ... until the first missing one, into
// MaskSplits[K] (none present: MaskSplits is nil, not an error). A mask file
// that exists but is malformed (missing array, wrong length, values other
// than 0/1, or a node in two of the three sets) is an error. Split is left
// empty. Errors name the file and, for text files, the line.
func LoadGeomGCN(dir string) (*Graph, error) {
	nodesPath := filepath.Join(dir, geomNodesFile)
	x, labels, numClasses, err := readGeomNodes(nodesPath)
	if err != nil {
		return nil, err
	}
	n := len(labels)
	edgesPath := filepath.Join(dir, geomEdgesFile)
	adj, err := readGeomEdges(edgesPath, n)
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

func readGeomNodes(path string) (*Features, []int, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("load %s: %w", path, err)
	}
	defer f.Close()
	lr := newLineReader(f, "load ", path)

	type nodeRow struct {
		feats []int
		label int
		line  int
	}
	var rows []nodeRow
	ids := []int{}
	maxFeat, maxLabel := -1, -1
	for {
		line, ok := lr.next()
		if !ok {
			break
		}
		if lr.line == 1 && geomIsHeader(line) {
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
				feats = append(feats, j)
				maxFeat = max(maxFeat, j)
			}
		}
		maxLabel = max(maxLabel, lab)
		rows = append(rows, nodeRow{feats: feats, label: lab, line: lr.line})
		ids = append(ids, id)
	}
	if err := lr.err(); err != nil {
		return nil, nil, 0, err
	}
	n := len(rows)
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
	x := &Features{N: n, F: maxFeat + 1, Sparse: FromCOO(n, maxFeat+1, src, dst, nil)}
	return x, labels, maxLabel + 1, nil
}

func readGeomEdges(path string, n int) (*CSR, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	defer f.Close()
	lr := newLineReader(f, "load ", path)
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
	return undirectedFromPairs(n, src, dst), nil
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
	a, err := openNPZArchive(f, st.Size(), path)
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
