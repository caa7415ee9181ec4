package graphio

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/gen"
)

// datasetKind says how a named dataset is obtained.
type datasetKind int

const (
	kindNPZ datasetKind = iota
	kindGeomGCN
	kindSigned
	kindGenerated
)

// datasetNames lists the dataset names Load resolves, in display order.
var datasetNames = []string{
	"cora", "cora_ml", "citeseer", "actor",
	"bitcoin_alpha", "bitcoin_otc", "slashdot", "wikirfa",
	"csbm", "chain-s", "chain-m", "chain-l", "chain-x", "spread", "spread-1000", "star",
	"star-9", "double-star", "path", "powerlaw",
}

// SignedDatasets lists the signed graphs Load resolves, in display order.
func SignedDatasets() []string {
	var out []string
	for _, n := range datasetNames {
		if datasetKinds[n] == kindSigned {
			out = append(out, n)
		}
	}
	return out
}

var datasetKinds = map[string]datasetKind{
	"cora": kindNPZ, "cora_ml": kindNPZ, "citeseer": kindNPZ,
	"actor":         kindGeomGCN,
	"bitcoin_alpha": kindSigned, "bitcoin_otc": kindSigned, "slashdot": kindSigned, "wikirfa": kindSigned,
	"csbm": kindGenerated, "chain-s": kindGenerated, "chain-m": kindGenerated, "chain-l": kindGenerated, "chain-x": kindGenerated,
	"spread": kindGenerated, "spread-1000": kindGenerated, "star": kindGenerated,
	"star-9": kindGenerated, "double-star": kindGenerated, "path": kindGenerated, "powerlaw": kindGenerated,
}

// DatasetNames returns the dataset names Load knows, in display order.
func DatasetNames() []string { return append([]string(nil), datasetNames...) }

// DefaultDataDir is the data directory used when none is given: $DPGNN_DATA
// if set, else "./data".
func DefaultDataDir() string {
	if d := os.Getenv("DPGNN_DATA"); d != "" {
		return d
	}
	return "data"
}

// DatasetPath returns where a file-backed dataset name resolves under
// dataDir (dataDir/NAME.npz, dataDir/actor, dataDir/signed/NAME), and false
// for generated or unknown names.
func DatasetPath(name, dataDir string) (string, bool) {
	k, ok := datasetKinds[name]
	if !ok {
		return "", false
	}
	switch k {
	case kindNPZ:
		return filepath.Join(dataDir, name+".npz"), true
	case kindGeomGCN:
		return filepath.Join(dataDir, name), true
	case kindSigned:
		return filepath.Join(dataDir, "signed", name), true
	}
	return "", false
}

// datasetFiles describes the files of the file-backed datasets and where
// they are published.
var datasetFiles = map[datasetKind]string{
	kindNPZ:     "the sparsegraph npz file",
	kindGeomGCN: "the geom-gcn files " + geomEdgesFile + ", " + geomNodesFile + " and film_split_0.6_0.2_0.npz ... _9.npz",
	kindSigned:  "the signed edge lists " + signedWholeFile + ", NAME.train and NAME.test",
}

var datasetSources = map[string]string{
	"cora":          "github.com/shchur/gnn-benchmark data/npz/cora.npz",
	"cora_ml":       "github.com/klicperajo/ppnp ppnp/data/cora_ml.npz",
	"citeseer":      "github.com/klicperajo/ppnp ppnp/data/citeseer.npz",
	"actor":         "github.com/bingzhewei/geom-gcn new_data/film/ and splits/",
	"bitcoin_alpha": "github.com/KHBDL/ASGL-KDD26 data/",
	"bitcoin_otc":   "github.com/KHBDL/ASGL-KDD26 data/",
	"slashdot":      "github.com/KHBDL/ASGL-KDD26 data/",
	"wikirfa":       "github.com/KHBDL/ASGL-KDD26 data/",
}

// DatasetHelp says where the files of a file-backed dataset go under
// dataDir and where they are published, as one clause for a message:
// "put the sparsegraph npz file at data/cora.npz (published at
// github.com/shchur/gnn-benchmark data/npz/cora.npz)". The layout is
// dataDir/NAME.npz for cora, cora_ml and citeseer, the directory
// dataDir/actor for the geom-gcn files and dataDir/signed/NAME for the
// signed edge lists. It returns false for generated or unknown names.
func DatasetHelp(name, dataDir string) (string, bool) {
	if dataDir == "" {
		dataDir = DefaultDataDir()
	}
	key := strings.ToLower(name)
	path, ok := DatasetPath(key, dataDir)
	if !ok {
		return "", false
	}
	kind := datasetKinds[key]
	what := strings.ReplaceAll(datasetFiles[kind], "NAME", key)
	where := "at " + path
	if kind != kindNPZ {
		where = "in the directory " + path + string(os.PathSeparator)
	}
	return fmt.Sprintf("put %s %s (published at %s)", what, where, datasetSources[key]), true
}

// FetchCommand is the command line that downloads the dataset called name
// into dataDir: "dpgnn data fetch NAME", with "--data-dir DIR" when dataDir
// is not DefaultDataDir().
func FetchCommand(name, dataDir string) string {
	c := "dpgnn data fetch " + strings.ToLower(name)
	if dataDir != "" && filepath.Clean(dataDir) != filepath.Clean(DefaultDataDir()) {
		c += " --data-dir " + dataDir
	}
	return c
}

// Load returns the dataset called name.
//
// Known names (case-insensitive) resolve to the stored files: cora, cora_ml,
// citeseer → dataDir/NAME.npz (LoadNPZ); actor → dataDir/actor
// (LoadGeomGCN); bitcoin_alpha, bitcoin_otc, slashdot, wikirfa →
// dataDir/signed/NAME (LoadSigned); csbm → CSBM(DefaultCSBM(), seed);
// chain-s, chain-m, chain-l, chain-x → Chain(size, seed); spread, star →
// the node-level audit graphs Spread(seed), Star(seed). seed is used only
// by the generated datasets. An empty dataDir means DefaultDataDir(). When
// a known name's files are missing, the error gives the FetchCommand that
// downloads them and where they go.
//
// Any other name is taken as a path: an .npz file is read by LoadNPZ, a
// directory holding out1_graph_edges.txt by LoadGeomGCN and one holding
// whole_edge.txt by LoadSigned. The returned graph's Name is the dataset
// name (for a path, its base name without extension).
func Load(name, dataDir string, seed uint64) (*graphs.Graph, error) {
	g, err := load(name, dataDir, seed)
	if err != nil {
		return nil, err
	}
	if err := graphs.CheckFeatureRange(g.X); err != nil {
		return nil, fmt.Errorf("dataset %s: %w", name, err)
	}
	return g, nil
}

func load(name, dataDir string, seed uint64) (*graphs.Graph, error) {
	if dataDir == "" {
		dataDir = DefaultDataDir()
	}
	key := strings.ToLower(name)
	if kind, ok := datasetKinds[key]; ok {
		g, err := loadKnown(key, kind, dataDir, seed)
		if err != nil {
			return nil, err
		}
		g.Name = key
		return g, nil
	}
	st, err := os.Stat(name)
	if err != nil {
		if strings.ContainsRune(name, os.PathSeparator) || strings.ContainsRune(name, '/') || strings.EqualFold(filepath.Ext(name), ".npz") {
			return nil, fmt.Errorf("dataset %s: %w", name, err)
		}
		return nil, fmt.Errorf("unknown dataset %q: known names are %s, or give the path of an .npz file or of a dataset directory",
			name, strings.Join(datasetNames, ", "))
	}
	var g *graphs.Graph
	switch {
	case !st.IsDir():
		if !strings.EqualFold(filepath.Ext(name), ".npz") {
			return nil, fmt.Errorf("dataset %s: not an .npz file or a dataset directory", name)
		}
		g, err = LoadNPZ(name)
	case loadFileExists(filepath.Join(name, geomEdgesFile)):
		g, err = LoadGeomGCN(name)
	case loadFileExists(filepath.Join(name, signedWholeFile)):
		g, err = LoadSigned(name)
	default:
		return nil, fmt.Errorf("dataset %s: directory holds neither %s (geom-gcn format) nor %s (signed edge list)",
			name, geomEdgesFile, signedWholeFile)
	}
	if err != nil {
		return nil, err
	}
	base := filepath.Base(filepath.Clean(name))
	if !st.IsDir() {
		base = strings.TrimSuffix(base, filepath.Ext(base))
	}
	g.Name = base
	return g, nil
}

func loadKnown(name string, kind datasetKind, dataDir string, seed uint64) (*graphs.Graph, error) {
	if kind == kindGenerated {
		switch name {
		case "csbm":
			return gen.CSBM(gen.DefaultCSBM(), seed), nil
		case "spread":
			return gen.Spread(seed), nil
		case "spread-1000":
			return gen.SpreadGraph(1000, 100, seed), nil
		case "star":
			return gen.Star(seed), nil
		case "star-9":
			return gen.SmallStar(9, seed), nil
		case "double-star":
			return gen.DoubleStar(seed), nil
		case "path":
			return gen.Path(seed), nil
		case "powerlaw":
			return gen.PowerLaw(seed), nil
		}
		return gen.Chain(strings.TrimPrefix(name, "chain-"), seed)
	}
	path, _ := DatasetPath(name, dataDir)
	if _, err := os.Stat(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("dataset %s: %w", name, err)
	} else if err != nil {
		help, _ := DatasetHelp(name, dataDir)
		return nil, fmt.Errorf("dataset %s not found: run `%s` to download it, or %s, or point --data-dir or $DPGNN_DATA at the directory that holds it",
			name, FetchCommand(name, dataDir), help)
	}
	switch kind {
	case kindNPZ:
		return LoadNPZ(path)
	case kindGeomGCN:
		return LoadGeomGCN(path)
	default:
		return LoadSigned(path)
	}
}

func loadFileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}

// buildLastWins builds the rows of an n×n sparse matrix from listings
// (src[k], dst[k], val[k]) taken in order k = 0, 1, ...; with sym, each
// listing also stands for (dst[k], src[k]). Self-loops are dropped and when
// a pair is listed more than once the last listing's value wins. val may be
// nil (a 0/1 pattern; vals is then nil). Rows come out sorted. It runs in
// O(n + E) plus a sort of each row, with no global sort.
func buildLastWins(n int, src, dst []int, val []int8, sym bool) (indptr, indices []int, vals []int8) {
	indptr = make([]int, n+1)
	for k, u := range src {
		if v := dst[k]; u != v {
			indptr[u+1]++
			if sym {
				indptr[v+1]++
			}
		}
	}
	for i := 0; i < n; i++ {
		indptr[i+1] += indptr[i]
	}
	total := indptr[n]
	cols := make([]int, total)
	seqs := make([]int, total)
	next := append([]int(nil), indptr[:n]...)
	put := func(u, v, k int) {
		p := next[u]
		cols[p], seqs[p] = v, k
		next[u]++
	}
	for k, u := range src {
		if v := dst[k]; u != v {
			put(u, v, k)
			if sym {
				put(v, u, k)
			}
		}
	}
	// Per row: walk listings from last to first, keep the first (= last
	// listed) occurrence of each column, then sort the row. Kept entries are
	// packed as col<<2 | (val+1) so one integer sort orders them.
	stamp := make([]int, n) // row+1 that last saw each column
	packed := make([]int64, 0, total)
	out := make([]int, n+1)
	for u := 0; u < n; u++ {
		start := len(packed)
		for p := indptr[u+1] - 1; p >= indptr[u]; p-- {
			v := cols[p]
			if stamp[v] == u+1 {
				continue
			}
			stamp[v] = u + 1
			x := int64(1)
			if val != nil {
				x = int64(val[seqs[p]]) + 1
			}
			packed = append(packed, int64(v)<<2|x)
		}
		slices.Sort(packed[start:])
		out[u+1] = len(packed)
	}
	indices = make([]int, len(packed))
	if val != nil {
		vals = make([]int8, len(packed))
	}
	for k, x := range packed {
		indices[k] = int(x >> 2)
		if val != nil {
			vals[k] = int8(x&3) - 1
		}
	}
	return out, indices, vals
}

// undirectedFromPairs returns the symmetrised, self-loop-free 0/1 pattern of
// the n-node graph with edges src[k]–dst[k] (Data nil).
func undirectedFromPairs(n int, src, dst []int) *graphs.CSR {
	total := 0
	for k := range src {
		if src[k] != dst[k] {
			total += 2
		}
	}
	return pairPattern(n, total, func(edge func(i, j int)) {
		for k := range src {
			if src[k] != dst[k] {
				edge(src[k], dst[k])
			}
		}
	})
}
