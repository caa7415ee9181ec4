package graphs

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// maxLoadDim bounds every dimension (nodes, features) a loader accepts, so a
// corrupt shape cannot make later code allocate absurd amounts of memory.
const maxLoadDim = 1<<31 - 1

// LoadNPZ reads a graph in the "sparsegraph" npz format (a zip of .npy
// arrays, as published with gnn-benchmark and PPNP).
//
// Recognised arrays, in either key spelling:
//
//   - adjacency: adj_data, adj_indices, adj_indptr, adj_shape, or
//     adj_matrix.data, adj_matrix.indices, adj_matrix.indptr,
//     adj_matrix.shape (CSR), or a dense 2-D adj_matrix;
//   - features: attr_data, attr_indices, attr_indptr, attr_shape, or the
//     attr_matrix.* spelling (CSR), or a dense 2-D attr_matrix;
//   - labels: a 1-D integer array (int8, int16, int32, int64 or unsigned)
//     with one entry per node; -1 marks an unlabelled node.
//
// Every other array (node_names, class_names, metadata, edge_attr_matrix and
// other object or unicode arrays) is ignored without being decoded.
//
// The stored adjacency is read as directed; the returned Adj is undirected,
// unweighted and free of self-loops: the pattern of A ∪ Aᵀ with explicit
// zeros and the diagonal removed, rows sorted, Data nil. Sparse features
// stay sparse (rows sorted, duplicates summed); their Data is nil when every
// value is 1, otherwise the values are kept as float64. Dense features stay
// dense. NumClasses is the largest label plus one. No split is set.
//
// Every array is validated; errors name the file, the array and the problem
// (truncated or corrupt archive, missing array, ragged or out-of-range CSR,
// non-finite feature, label count or shape mismatch, ...). Inputs that
// cannot be a usable dataset are refused too: a graph with no nodes or no
// edges (after dropping self-loops and zeros); features whose dense float64
// form N·F·8 bytes exceeds MemoryLimit (16 GB by default); a class id ≥ N
// (more classes than nodes) or an N×C float64 logit matrix above the limit;
// an array entry that decompresses to more than the limit.
func LoadNPZ(path string) (*Graph, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("load %s: is a directory, want an .npz file", path)
	}
	return readSparseGraphNPZ(f, st.Size(), path)
}

// readSparseGraphNPZ is LoadNPZ on an in-memory or open archive; name is
// used in error messages.
func readSparseGraphNPZ(r io.ReaderAt, size int64, name string) (*Graph, error) {
	a, err := openNPZArchive(r, size, name)
	if err != nil {
		return nil, err
	}
	adjM, err := a.readMatrix("adj")
	if err != nil {
		return nil, err
	}
	if adjM.rows != adjM.cols {
		return nil, a.errf(adjM.what, "adjacency is not square: shape (%d, %d)", adjM.rows, adjM.cols)
	}
	n := adjM.rows
	if n == 0 {
		return nil, a.errf(adjM.what, "adjacency has shape (0, 0): the graph has no nodes")
	}
	adj := adjM.undirectedPattern()
	if adj.NNZ() == 0 {
		return nil, a.errf(adjM.what, "the graph has %d nodes but no edges (%d stored entries, all zeros or self-loops)", n, adjM.nnz())
	}

	attrM, err := a.readMatrix("attr")
	if err != nil {
		return nil, err
	}
	if attrM.rows != n {
		return nil, a.errf(attrM.what, "features have %d rows but the adjacency (%s) has %d nodes", attrM.rows, adjM.what, n)
	}
	if err := checkDenseFeatures(n, attrM.cols); err != nil {
		return nil, a.errf(attrM.what, "%v", err)
	}
	x := attrM.features()

	labels, numClasses, err := a.readLabels("labels", n)
	if err != nil {
		return nil, err
	}
	return &Graph{
		N:          n,
		Adj:        adj,
		X:          x,
		Labels:     labels,
		NumClasses: numClasses,
	}, nil
}

// ---------------------------------------------------------------------------
// npz archive and npy arrays

// npzArchive is an opened npz file: a zip whose entries are .npy arrays.
type npzArchive struct {
	name  string               // file name for error messages
	files map[string]*zip.File // by key, without the .npy suffix
	keys  []string             // sorted keys, for error messages
}

func openNPZArchive(r io.ReaderAt, size int64, name string) (*npzArchive, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("load %s: not a valid npz archive (truncated or corrupt zip): %w", name, err)
	}
	a := &npzArchive{name: name, files: make(map[string]*zip.File, len(zr.File))}
	for _, f := range zr.File {
		key := strings.TrimSuffix(f.Name, ".npy")
		if _, dup := a.files[key]; dup {
			return nil, fmt.Errorf("load %s: array %q is stored twice", name, key)
		}
		a.files[key] = f
		a.keys = append(a.keys, key)
	}
	sort.Strings(a.keys)
	return a, nil
}

func (a *npzArchive) has(key string) bool { _, ok := a.files[key]; return ok }

// errf formats an error naming the file and the array (or group of arrays).
func (a *npzArchive) errf(what, format string, args ...any) error {
	return fmt.Errorf("load %s: array %s: %s", a.name, what, fmt.Sprintf(format, args...))
}

// missing reports a missing array and lists what the archive holds.
func (a *npzArchive) missing(what string) error {
	if len(a.keys) == 0 {
		return fmt.Errorf("load %s: missing array %s (the file holds no arrays)", a.name, what)
	}
	return fmt.Errorf("load %s: missing array %s (the file has: %s)", a.name, what, strings.Join(a.keys, ", "))
}

// npyDtype is a numeric numpy dtype: kind 'b' (bool), 'u', 'i' or 'f',
// element size in bytes and byte order.
type npyDtype struct {
	kind  byte
	size  int
	order binary.ByteOrder
	descr string
}

// npyArray is a decoded .npy header with its raw element bytes.
type npyArray struct {
	key     string
	dtype   npyDtype
	shape   []int
	fortran bool
	n       int    // number of elements
	raw     []byte // exactly n*dtype.size bytes
}

var (
	npyDescrRe   = regexp.MustCompile(`['"]descr['"]\s*:\s*['"]([^'"]*)['"]`)
	npyFortranRe = regexp.MustCompile(`['"]fortran_order['"]\s*:\s*(True|False)`)
	npyShapeRe   = regexp.MustCompile(`['"]shape['"]\s*:\s*\(([^()]*)\)`)
	npyMagic     = []byte("\x93NUMPY")
)

// read loads and decodes the numeric array key. It reads the whole entry,
// so the zip CRC is verified.
func (a *npzArchive) read(key string) (*npyArray, error) {
	f, ok := a.files[key]
	if !ok {
		return nil, a.missing(strconv.Quote(key))
	}
	rc, err := f.Open()
	if err != nil {
		return nil, a.errf(strconv.Quote(key), "cannot open zip entry: %v", err)
	}
	defer rc.Close()
	// The declared size is only a capacity hint (a corrupt header may
	// claim anything); the buffer grows with the bytes actually read.
	hint := f.UncompressedSize64
	if hint > 1<<22 {
		hint = 1 << 22
	}
	limit, err := MemoryLimit()
	if err != nil {
		return nil, err
	}
	buf := bytes.NewBuffer(make([]byte, 0, int(hint)))
	if _, err := io.Copy(buf, io.LimitReader(rc, limit+1)); err != nil {
		return nil, a.errf(strconv.Quote(key), "truncated or corrupt zip entry: %v", err)
	}
	if int64(buf.Len()) > limit {
		return nil, a.errf(strconv.Quote(key), "decompresses to more than %s (limit %s; set $%s to raise it)",
			FormatBytes(float64(limit)), FormatBytes(float64(limit)), MemoryLimitEnv)
	}
	arr, err := parseNPY(buf.Bytes())
	if err != nil {
		return nil, a.errf(strconv.Quote(key), "%v", err)
	}
	arr.key = key
	return arr, nil
}

// parseNPY decodes a .npy file held in data. Only numeric dtypes (bool,
// signed and unsigned integers, float32/64) are accepted; object, string
// and structured arrays give an error.
func parseNPY(data []byte) (*npyArray, error) {
	if len(data) < 10 || !bytes.Equal(data[:6], npyMagic) {
		return nil, errors.New("not a .npy array (bad magic)")
	}
	major := data[6]
	var hlen, off int
	switch major {
	case 1:
		hlen, off = int(binary.LittleEndian.Uint16(data[8:10])), 10
	case 2, 3:
		if len(data) < 12 {
			return nil, errors.New("truncated .npy header")
		}
		h := binary.LittleEndian.Uint32(data[8:12])
		if uint64(h) > uint64(len(data)) {
			return nil, fmt.Errorf("truncated .npy header (header length %d, %d bytes in entry)", h, len(data))
		}
		hlen, off = int(h), 12
	default:
		return nil, fmt.Errorf("unsupported .npy format version %d", major)
	}
	if off+hlen > len(data) {
		return nil, fmt.Errorf("truncated .npy header (header length %d, %d bytes in entry)", hlen, len(data))
	}
	hdr := string(data[off : off+hlen])
	body := data[off+hlen:]
	shown := strings.TrimSpace(hdr) // the header as quoted in errors
	if len(shown) > 120 {
		shown = shown[:120] + "..."
	}

	m := npyDescrRe.FindStringSubmatch(hdr)
	if m == nil {
		return nil, fmt.Errorf("cannot parse .npy header %q (no simple 'descr')", shown)
	}
	dt, err := parseNPYDtype(m[1])
	if err != nil {
		return nil, err
	}
	arr := &npyArray{dtype: dt}
	if m := npyFortranRe.FindStringSubmatch(hdr); m == nil {
		return nil, fmt.Errorf("cannot parse .npy header %q (no 'fortran_order')", shown)
	} else {
		arr.fortran = m[1] == "True"
	}
	sm := npyShapeRe.FindStringSubmatch(hdr)
	if sm == nil {
		return nil, fmt.Errorf("cannot parse .npy header %q (no 'shape')", shown)
	}
	shapeS := strings.TrimSpace(sm[1])
	if len(shapeS) > 60 {
		shapeS = shapeS[:60] + "..."
	}
	n := 1
	for _, tok := range strings.Split(sm[1], ",") {
		tok = strings.TrimSpace(tok)
		tok = strings.TrimSuffix(tok, "L") // Python 2 longs
		if tok == "" {
			continue
		}
		d, err := strconv.Atoi(tok)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("bad dimension in .npy shape (%s)", shapeS)
		}
		if d > 0 && n > math.MaxInt/dt.size/d {
			return nil, fmt.Errorf("shape (%s) is too large", shapeS)
		}
		n *= d
		arr.shape = append(arr.shape, d)
	}
	arr.n = n
	want := n * dt.size
	switch {
	case len(body) < want:
		return nil, fmt.Errorf("truncated data: shape (%s) of %s needs %d bytes, %d present", shapeS, dt.descr, want, len(body))
	case len(body) > want:
		return nil, fmt.Errorf("corrupt data: shape (%s) of %s needs %d bytes, %d present", shapeS, dt.descr, want, len(body))
	}
	arr.raw = body
	return arr, nil
}

func parseNPYDtype(s string) (npyDtype, error) {
	dt := npyDtype{descr: s, order: binary.LittleEndian}
	t := s
	if t != "" {
		switch t[0] {
		case '<', '|', '=':
			t = t[1:]
		case '>':
			dt.order = binary.BigEndian
			t = t[1:]
		}
	}
	if len(t) < 2 {
		return dt, fmt.Errorf("unsupported dtype %q", s)
	}
	size, err := strconv.Atoi(t[1:])
	if err != nil {
		return dt, fmt.Errorf("unsupported dtype %q (want a numeric array)", s)
	}
	dt.kind, dt.size = t[0], size
	ok := false
	switch dt.kind {
	case 'b':
		ok = size == 1
	case 'i', 'u':
		ok = size == 1 || size == 2 || size == 4 || size == 8
	case 'f':
		ok = size == 4 || size == 8
	}
	if !ok {
		return dt, fmt.Errorf("unsupported dtype %q (want bool, integer or float32/64)", s)
	}
	return dt, nil
}

// rawInt decodes element i of an integer or bool array. For uint64
// elements above MaxInt64 it reports ok=false.
func (x *npyArray) rawInt(i int) (v int64, u uint64, ok bool) {
	sz, ord := x.dtype.size, x.dtype.order
	b := x.raw[i*sz : (i+1)*sz]
	signed := x.dtype.kind == 'i'
	switch sz {
	case 1:
		if signed {
			return int64(int8(b[0])), 0, true
		}
		return int64(b[0]), 0, true
	case 2:
		if signed {
			return int64(int16(ord.Uint16(b))), 0, true
		}
		return int64(ord.Uint16(b)), 0, true
	case 4:
		if signed {
			return int64(int32(ord.Uint32(b))), 0, true
		}
		return int64(ord.Uint32(b)), 0, true
	default:
		w := ord.Uint64(b)
		if signed {
			return int64(w), 0, true
		}
		if w > math.MaxInt64 {
			return 0, w, false
		}
		return int64(w), 0, true
	}
}

// ints decodes an integer or bool array into int64s.
func (x *npyArray) ints() ([]int64, error) {
	if x.dtype.kind == 'f' {
		return nil, fmt.Errorf("has dtype %s, want an integer array", x.dtype.descr)
	}
	out := make([]int64, x.n)
	for i := range out {
		v, u, ok := x.rawInt(i)
		if !ok {
			return nil, fmt.Errorf("element %d = %d overflows int64", i, u)
		}
		out[i] = v
	}
	return out, nil
}

// floats decodes any numeric array into float64s.
func (x *npyArray) floats() []float64 {
	out := make([]float64, x.n)
	sz, ord, raw := x.dtype.size, x.dtype.order, x.raw
	for i := range out {
		switch {
		case x.dtype.kind == 'f' && sz == 4:
			out[i] = float64(math.Float32frombits(ord.Uint32(raw[i*4:])))
		case x.dtype.kind == 'f':
			out[i] = math.Float64frombits(ord.Uint64(raw[i*8:]))
		default:
			v, u, ok := x.rawInt(i)
			if ok {
				out[i] = float64(v)
			} else {
				out[i] = float64(u)
			}
		}
	}
	return out
}

// ---------------------------------------------------------------------------
// matrices

// npzMatrix is a matrix read from an npz archive, CSR or dense.
type npzMatrix struct {
	what       string // arrays it came from, for messages
	rows, cols int
	csr        *CSR      // CSR form (Data always set), or nil
	dense      []float64 // row-major rows×cols, or nil
}

// readMatrix reads the matrix stored under prefix ("adj" or "attr") in
// any of the supported spellings.
func (a *npzArchive) readMatrix(prefix string) (*npzMatrix, error) {
	spellings := [][4]string{
		{prefix + "_data", prefix + "_indices", prefix + "_indptr", prefix + "_shape"},
		{prefix + "_matrix.data", prefix + "_matrix.indices", prefix + "_matrix.indptr", prefix + "_matrix.shape"},
	}
	for _, keys := range spellings {
		present := 0
		for _, k := range keys {
			if a.has(k) {
				present++
			}
		}
		if present == 0 {
			continue
		}
		for _, k := range keys {
			if !a.has(k) {
				return nil, a.missing(strconv.Quote(k))
			}
		}
		return a.readCSR(keys)
	}
	if dk := prefix + "_matrix"; a.has(dk) {
		return a.readDense(dk)
	}
	return nil, a.missing(fmt.Sprintf("%s_{data,indices,indptr,shape}, %s_matrix.{data,indices,indptr,shape} or a dense %s_matrix", prefix, prefix, prefix))
}

func (a *npzArchive) readCSR(keys [4]string) (*npzMatrix, error) {
	dataK, indK, ptrK, shapeK := keys[0], keys[1], keys[2], keys[3]
	what := fmt.Sprintf("%s/%s/%s/%s", dataK, indK, ptrK, shapeK)
	shapeA, err := a.read(shapeK)
	if err != nil {
		return nil, err
	}
	if len(shapeA.shape) != 1 || shapeA.n != 2 {
		return nil, a.errf(strconv.Quote(shapeK), "want 2 entries (rows, cols), got shape %v", shapeA.shape)
	}
	shp, err := shapeA.ints()
	if err != nil {
		return nil, a.errf(strconv.Quote(shapeK), "%v", err)
	}
	for _, d := range shp {
		if d < 0 || d > maxLoadDim {
			return nil, a.errf(strconv.Quote(shapeK), "invalid matrix shape (%d, %d)", shp[0], shp[1])
		}
	}
	rows, cols := int(shp[0]), int(shp[1])

	indices, err := a.readIndexArray(indK)
	if err != nil {
		return nil, err
	}
	indptr, err := a.readIndexArray(ptrK)
	if err != nil {
		return nil, err
	}
	dataA, err := a.read(dataK)
	if err != nil {
		return nil, err
	}
	if len(dataA.shape) != 1 {
		return nil, a.errf(strconv.Quote(dataK), "want a 1-D array, got shape %v", dataA.shape)
	}
	data := dataA.floats()
	if len(data) != len(indices) {
		return nil, a.errf(what, "%s has %d entries but %s has %d", dataK, len(data), indK, len(indices))
	}
	for k, v := range data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, a.errf(strconv.Quote(dataK), "%s[%d] = %v is not finite", dataK, k, v)
		}
	}
	m := &CSR{Rows: rows, Cols: cols, Indptr: indptr, Indices: indices, Data: data}
	if err := m.Validate(); err != nil {
		return nil, a.errf(what, "ragged or out-of-range CSR of shape (%d, %d): %v", rows, cols, err)
	}
	return &npzMatrix{what: what, rows: rows, cols: cols, csr: m}, nil
}

// readIndexArray reads a 1-D integer array whose values must fit in int
// (range checks against the matrix shape are CSR.Validate's job).
func (a *npzArchive) readIndexArray(key string) ([]int, error) {
	arr, err := a.read(key)
	if err != nil {
		return nil, err
	}
	if len(arr.shape) != 1 {
		return nil, a.errf(strconv.Quote(key), "want a 1-D array, got shape %v", arr.shape)
	}
	v, err := arr.ints()
	if err != nil {
		return nil, a.errf(strconv.Quote(key), "%v", err)
	}
	out := make([]int, len(v))
	for i, x := range v {
		if int64(int(x)) != x {
			return nil, a.errf(strconv.Quote(key), "%s[%d] = %d does not fit in int", key, i, x)
		}
		out[i] = int(x)
	}
	return out, nil
}

func (a *npzArchive) readDense(key string) (*npzMatrix, error) {
	arr, err := a.read(key)
	if err != nil {
		return nil, err
	}
	if len(arr.shape) != 2 {
		return nil, a.errf(strconv.Quote(key), "want a 2-D dense matrix, got shape %v", arr.shape)
	}
	rows, cols := arr.shape[0], arr.shape[1]
	if rows > maxLoadDim || cols > maxLoadDim {
		return nil, a.errf(strconv.Quote(key), "invalid matrix shape (%d, %d)", rows, cols)
	}
	v := arr.floats()
	for k, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, a.errf(strconv.Quote(key), "%s[%d] = %v is not finite", key, k, x)
		}
	}
	if arr.fortran && rows > 1 && cols > 1 {
		t := make([]float64, len(v))
		for j := 0; j < cols; j++ {
			for i := 0; i < rows; i++ {
				t[i*cols+j] = v[j*rows+i]
			}
		}
		v = t
	}
	return &npzMatrix{what: strconv.Quote(key), rows: rows, cols: cols, dense: v}, nil
}

// nnz is the number of stored entries (CSR) or of non-zero entries (dense).
func (m *npzMatrix) nnz() int {
	if m.csr != nil {
		return m.csr.NNZ()
	}
	k := 0
	for _, v := range m.dense {
		if v != 0 {
			k++
		}
	}
	return k
}

// undirectedPattern returns the symmetrised 0/1 pattern of m without the
// diagonal and without explicit zeros.
func (m *npzMatrix) undirectedPattern() *CSR {
	var src, dst []int
	if m.csr != nil {
		src = make([]int, 0, m.csr.NNZ())
		dst = make([]int, 0, m.csr.NNZ())
		for i := 0; i < m.rows; i++ {
			for k := m.csr.Indptr[i]; k < m.csr.Indptr[i+1]; k++ {
				if m.csr.Data[k] != 0 {
					src = append(src, i)
					dst = append(dst, m.csr.Indices[k])
				}
			}
		}
	} else {
		for i := 0; i < m.rows; i++ {
			for j := 0; j < m.cols; j++ {
				if m.dense[i*m.cols+j] != 0 {
					src = append(src, i)
					dst = append(dst, j)
				}
			}
		}
	}
	return undirectedFromPairs(m.rows, src, dst)
}

// features converts m to node features: dense stays dense; CSR rows are
// sorted (duplicates summed) and Data dropped when every value is 1.
func (m *npzMatrix) features() *Features {
	if m.dense != nil {
		return &Features{N: m.rows, F: m.cols, Dense: m.dense}
	}
	s := m.csr
	if !csrRowsCanonical(s) {
		src := make([]int, 0, s.NNZ())
		for i := 0; i < s.Rows; i++ {
			for k := s.Indptr[i]; k < s.Indptr[i+1]; k++ {
				src = append(src, i)
			}
		}
		s = FromCOO(s.Rows, s.Cols, src, s.Indices, s.Data)
	}
	if !slices.ContainsFunc(s.Data, func(v float64) bool { return v != 1 }) {
		s.Data = nil
	}
	return &Features{N: m.rows, F: m.cols, Sparse: s}
}

// csrRowsCanonical reports whether every row has strictly increasing
// column ids.
func csrRowsCanonical(m *CSR) bool {
	for i := 0; i < m.Rows; i++ {
		for k := m.Indptr[i] + 1; k < m.Indptr[i+1]; k++ {
			if m.Indices[k] <= m.Indices[k-1] {
				return false
			}
		}
	}
	return true
}

// readLabels reads a 1-D integer label array of length n; values must be
// ≥ -1 (-1 = unlabelled). It returns the labels and max+1, which must pass
// checkClassCount (at most n classes, logits within the memory limit).
func (a *npzArchive) readLabels(key string, n int) ([]int, int, error) {
	if !a.has(key) {
		return nil, 0, a.missing(strconv.Quote(key))
	}
	arr, err := a.read(key)
	if err != nil {
		return nil, 0, err
	}
	q := strconv.Quote(key)
	if len(arr.shape) != 1 {
		return nil, 0, a.errf(q, "want a 1-D integer array, got shape %v", arr.shape)
	}
	v, err := arr.ints()
	if err != nil {
		return nil, 0, a.errf(q, "%v", err)
	}
	if len(v) != n {
		return nil, 0, a.errf(q, "has %d labels but the graph has %d nodes", len(v), n)
	}
	labels := make([]int, n)
	maxL, at := int64(-1), -1
	for i, l := range v {
		if l < -1 || l >= maxLoadDim {
			return nil, 0, a.errf(q, "label of node %d is %d; want a class id ≥ 0 or -1 (unlabelled)", i, l)
		}
		labels[i] = int(l)
		if l > maxL {
			maxL, at = l, i
		}
	}
	if err := checkClassCount(int(maxL+1), n, fmt.Sprintf("node %d", at)); err != nil {
		return nil, 0, a.errf(q, "%v", err)
	}
	return labels, int(maxL + 1), nil
}
