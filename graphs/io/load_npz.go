package graphio

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/dpgnn/dpgnn/graphs"
)

// maxLoadDim bounds every dimension (nodes, features) a loader accepts, so a
// corrupt shape cannot make later code allocate absurd amounts of memory.
const maxLoadDim = 1<<31 - 1

// intBytes is the size of an int, in bytes.
const intBytes = strconv.IntSize / 8

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
// The length of a 1-D class_names array (unicode or object; only its header
// is read) is the class count; every other array (node_names, metadata,
// edge_attr_matrix and other object or unicode arrays) is ignored without
// being decoded.
//
// The stored adjacency is read as directed; the returned Adj is undirected,
// unweighted and free of self-loops: the pattern of A ∪ Aᵀ with explicit
// zeros and the diagonal removed, rows sorted, Data nil. Sparse features
// stay sparse (rows sorted, duplicates summed); their Data is nil when every
// value is 1, otherwise the values are kept as float64. Dense features stay
// dense. The feature count F is the stored shape's (a property of the file,
// not of any node). NumClasses is the length of class_names when the file
// has it (every label must then be below it), else the largest label plus
// one. The first two are the file's, whatever its rows hold: removing a
// node (its row, edges and label) leaves them unchanged. The largest label
// is the rows': removing the only node of the highest class lowers it, so
// without class_names a private run treats the class count as public. No
// split is set.
//
// Every array is validated; errors name the file, the array and the problem
// (truncated or corrupt archive, missing array, ragged or out-of-range CSR,
// non-finite feature, label count or shape mismatch, ...). Inputs that
// cannot be a usable dataset are refused too: a graph with no nodes or no
// edges (after dropping self-loops and zeros); features with no column (no
// method can train on them); features whose dense float64 form N·F·8 bytes
// exceeds MemoryLimit (16 GB by default); a class id ≥ N (more classes than
// nodes) or an N×C float64 logit matrix above the limit.
//
// Memory: the .npy headers of every array the load reads are read and
// checked first, and what decoding them takes (see loadBudget) is reserved
// against MemoryLimit before any array body is read; bodies are then
// decoded as they stream out of the archive, into buffers of exactly the
// declared size. An archive whose headers declare more than the limit
// allows is refused having read a few kilobytes, whatever its bodies hold,
// and a body longer or shorter than its header declares is an error.
func LoadNPZ(path string) (*graphs.Graph, error) {
	f, size, err := openInput(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	defer f.Close()
	b, err := newLoadBudget()
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return readSparseGraphNPZ(f, size, path, b)
}

// readSparseGraphNPZ is LoadNPZ on an in-memory or open archive; name is
// used in error messages and b is the load's budget.
func readSparseGraphNPZ(r io.ReaderAt, size int64, name string, b *loadBudget) (*graphs.Graph, error) {
	a, err := openNPZArchive(r, size, name, b)
	if err != nil {
		return nil, err
	}
	// Headers first: every shape, length and dtype is checked, and the
	// memory of the whole load reserved, before any body is read.
	adjH, err := a.matrixHeaders("adj")
	if err != nil {
		return nil, err
	}
	if adjH.rows != adjH.cols {
		return nil, a.errf(adjH.what, "adjacency is not square: shape (%d, %d)", adjH.rows, adjH.cols)
	}
	n := adjH.rows
	if n == 0 {
		return nil, a.errf(adjH.what, "adjacency has shape (0, 0): the graph has no nodes")
	}
	attrH, err := a.matrixHeaders("attr")
	if err != nil {
		return nil, err
	}
	if attrH.rows != n {
		return nil, a.errf(attrH.what, "features have %d rows but the adjacency (%s) has %d nodes", attrH.rows, adjH.what, n)
	}
	if attrH.cols == 0 {
		return nil, a.errf(attrH.what, "features have shape (%d, 0): no feature column, and every method needs at least one (give each node a feature, e.g. a constant 1 or its degree)", n)
	}
	if err := checkDenseFeatures(n, attrH.cols); err != nil {
		return nil, a.errf(attrH.what, "%v", err)
	}
	labH, err := a.labelHeader("labels", n)
	if err != nil {
		return nil, err
	}
	declared, err := a.classCount(n)
	if err != nil {
		return nil, err
	}
	est := adjH.adjacencyBytes() + attrH.featureBytes() + labelBytes(labH) +
		zipOpenBytes*float64(adjH.bodies()+attrH.bodies()+1)
	largest := slices.MaxFunc([]*npzMatrixHdr{adjH, attrH}, func(x, y *npzMatrixHdr) int {
		return x.largest().cmpBytes(y.largest())
	}).largest()
	if labH.bytes() > largest.bytes() {
		largest = labH
	}
	if err := b.reserve(est, fmt.Sprintf("decoding the arrays (the largest, %q, holds %d values of %s)", largest.key, largest.n, largest.dtype.descr)); err != nil {
		return nil, fmt.Errorf("load %s: %w", name, err)
	}

	adj, err := a.readAdjacency(adjH)
	if err != nil {
		return nil, err
	}
	// A graph without edges loads: removing the last edge (or the node
	// that holds it) must not turn an accepted input into a refused one.
	x, err := a.readFeatures(attrH)
	if err != nil {
		return nil, err
	}
	labels, numClasses, err := a.readLabels(labH, n, declared)
	if err != nil {
		return nil, err
	}
	return &graphs.Graph{
		N:          n,
		Adj:        adj,
		X:          x,
		Labels:     labels,
		NumClasses: numClasses,
	}, nil
}

// ---------------------------------------------------------------------------
// npz archive and npy headers

// npzArchive is an opened npz file: a zip whose entries are .npy arrays.
type npzArchive struct {
	name   string               // file name for error messages
	files  map[string]*zip.File // by key, without the .npy suffix
	keys   []string             // sorted keys, for error messages
	budget *loadBudget
	buf    []byte // the decoder's read buffer
}

// zipOpenBytes is reserved for every opening of an archive member: the
// flate reader's state (about 45 kB when the pool holds none).
const zipOpenBytes = 64 << 10

// npyChunk is the size of the array decoder's read buffer.
const npyChunk = 64 << 10

func openNPZArchive(r io.ReaderAt, size int64, name string, b *loadBudget) (*npzArchive, error) {
	// archive/zip allocates about 2.5 bytes per byte of the central
	// directory (a File and its name per member); the directory's size is
	// read from the end-of-directory record before the directory is.
	if err := b.reserve(4*float64(zipDirectorySize(r, size))+npyChunk, "reading the zip directory"); err != nil {
		return nil, fmt.Errorf("load %s: %w", name, err)
	}
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("load %s: not a valid npz archive (truncated or corrupt zip): %w", name, err)
	}
	a := &npzArchive{name: name, files: make(map[string]*zip.File, len(zr.File)), budget: b, buf: make([]byte, npyChunk)}
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

// zipDirectorySize returns the size of the zip's central directory as its
// end-of-directory record states it, or size when there is no record (a
// corrupt file, which zip.NewReader then refuses) or it defers to a zip64
// record.
func zipDirectorySize(r io.ReaderAt, size int64) int64 {
	const eocdLen = 22
	tail := min(size, eocdLen+math.MaxUint16)
	if tail < eocdLen {
		return size
	}
	buf := make([]byte, tail)
	if _, err := r.ReadAt(buf, size-tail); err != nil && !errors.Is(err, io.EOF) {
		return size
	}
	for i := len(buf) - eocdLen; i >= 0; i-- {
		if binary.LittleEndian.Uint32(buf[i:]) == 0x06054b50 {
			d := binary.LittleEndian.Uint32(buf[i+12:])
			if d == math.MaxUint32 {
				return size
			}
			return min(int64(d), size)
		}
	}
	return size
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

// integer reports whether the dtype holds integers (bool included).
func (d npyDtype) integer() bool { return d.kind != 'f' }

// npyHeader is a decoded .npy header: what the array's body holds.
type npyHeader struct {
	key     string // array name, for messages
	dtype   npyDtype
	shape   []int
	fortran bool
	n       int // number of elements
}

// bytes is the size of the body the header declares.
func (h *npyHeader) bytes() int64 { return int64(h.n) * int64(h.dtype.size) }

func (h *npyHeader) cmpBytes(o *npyHeader) int {
	switch {
	case h.bytes() < o.bytes():
		return -1
	case h.bytes() > o.bytes():
		return 1
	}
	return 0
}

// shapeString is the shape as numpy prints it: "(3,)", "(2, 4)".
func (h *npyHeader) shapeString() string {
	dims := make([]string, len(h.shape))
	for i, d := range h.shape {
		dims[i] = strconv.Itoa(d)
	}
	if len(dims) == 1 {
		return "(" + dims[0] + ",)"
	}
	return "(" + strings.Join(dims, ", ") + ")"
}

var (
	npyDescrRe   = regexp.MustCompile(`['"]descr['"]\s*:\s*['"]([^'"]*)['"]`)
	npyFortranRe = regexp.MustCompile(`['"]fortran_order['"]\s*:\s*(True|False)`)
	npyShapeRe   = regexp.MustCompile(`['"]shape['"]\s*:\s*\(([^()]*)\)`)
	npyMagic     = []byte("\x93NUMPY")
)

// maxNPYHeader bounds a .npy header's length, in bytes (numpy's own
// reader refuses headers above 10,000 bytes; a numeric array's is about
// 120).
const maxNPYHeader = 1 << 14

// readNPYHeader reads a .npy header from r, leaving r at the first byte of
// the body; buf (at least maxNPYHeader bytes) holds the header while it is
// parsed. Only numeric dtypes (bool, signed and unsigned integers,
// float32/64) are accepted; object, string and structured arrays give an
// error that says so.
func readNPYHeader(r io.Reader, buf []byte) (*npyHeader, error) {
	pre := buf[:10]
	k, err := io.ReadFull(r, pre)
	if k < len(npyMagic) || !bytes.Equal(pre[:len(npyMagic)], npyMagic) {
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, readErr(err, "")
		}
		return nil, errors.New("not a .npy array (bad magic)")
	}
	if err != nil {
		return nil, readErr(err, "truncated .npy header")
	}
	var hlen int
	switch major := pre[6]; major {
	case 1:
		hlen = int(binary.LittleEndian.Uint16(pre[8:10]))
	case 2, 3:
		var ext [2]byte
		if _, err := io.ReadFull(r, ext[:]); err != nil {
			return nil, readErr(err, "truncated .npy header")
		}
		h := uint64(binary.LittleEndian.Uint16(pre[8:10])) | uint64(binary.LittleEndian.Uint16(ext[:]))<<16
		if h > maxNPYHeader {
			return nil, fmt.Errorf(".npy header of %d bytes is implausible (a numeric array's takes about 120; at most %d are read)", h, maxNPYHeader)
		}
		hlen = int(h)
	default:
		return nil, fmt.Errorf("unsupported .npy format version %d", major)
	}
	if hlen > len(buf) {
		return nil, fmt.Errorf(".npy header of %d bytes is implausible (a numeric array's takes about 120; at most %d are read)", hlen, len(buf))
	}
	hdr := buf[:hlen]
	if k, err := io.ReadFull(r, hdr); err != nil {
		return nil, readErr(err, fmt.Sprintf("truncated .npy header (header length %d, %d bytes present)", hlen, k))
	}
	return parseNPYHeader(hdr)
}

// readErr turns an early end of a member into what, and keeps any other
// read error (a zip checksum) as a corrupt entry.
func readErr(err error, what string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New(what)
	}
	return fmt.Errorf("truncated or corrupt zip entry: %v", err)
}

// parseNPYHeader decodes the dictionary of a .npy header. For a dtype it
// does not decode (errUnsupportedDtype) it returns the header too, with its
// shape.
func parseNPYHeader(hdr []byte) (*npyHeader, error) {
	shown := string(bytes.TrimSpace(hdr)) // the header as quoted in errors
	if len(shown) > 120 {
		shown = shown[:120] + "..."
	}
	m := npyDescrRe.FindSubmatch(hdr)
	if m == nil {
		return nil, fmt.Errorf("cannot parse .npy header %q (no simple 'descr')", shown)
	}
	// A dtype dpgnn does not decode still has a shape (class_names'
	// length is its class count): it is parsed, with the dtype's error
	// returned beside it.
	dt, dtErr := parseNPYDtype(string(m[1]))
	if dtErr != nil {
		dt.size = 1
	}
	h := &npyHeader{dtype: dt}
	if m := npyFortranRe.FindSubmatch(hdr); m == nil {
		return nil, fmt.Errorf("cannot parse .npy header %q (no 'fortran_order')", shown)
	} else {
		h.fortran = string(m[1]) == "True"
	}
	sm := npyShapeRe.FindSubmatch(hdr)
	if sm == nil {
		return nil, fmt.Errorf("cannot parse .npy header %q (no 'shape')", shown)
	}
	shapeS := strings.TrimSpace(string(sm[1]))
	if len(shapeS) > 60 {
		shapeS = shapeS[:60] + "..."
	}
	n := 1
	for _, tok := range strings.Split(string(sm[1]), ",") {
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
		h.shape = append(h.shape, d)
	}
	if len(h.shape) > 32 {
		return nil, fmt.Errorf("shape (%s) has more than 32 dimensions", shapeS)
	}
	h.n = n
	return h, dtErr
}

// errUnsupportedDtype marks a dtype that is not numeric; callers say what
// the array should hold instead.
var errUnsupportedDtype = errors.New("unsupported dtype")

func parseNPYDtype(s string) (npyDtype, error) {
	dt := npyDtype{descr: s, order: binary.LittleEndian}
	bad := fmt.Errorf("%w %q", errUnsupportedDtype, s)
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
		return dt, bad
	}
	size, err := strconv.Atoi(t[1:])
	if err != nil {
		return dt, bad
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
		return dt, bad
	}
	return dt, nil
}

// Kinds of array a loader reads, and what each accepts.
const (
	wantInteger = "an integer array (int8, int16, int32, int64 or unsigned)"
	wantNumeric = "a numeric array (bool, integer, float32 or float64)"
)

// header reads and checks the header of array key: its dtype must be what
// want names (wantInteger or wantNumeric; any other text only names what is
// wanted in the message for a non-numeric dtype) and it must have dims
// dimensions (any number when dims < 0).
func (a *npzArchive) header(key string, want string, dims int) (*npyHeader, error) {
	f, ok := a.files[key]
	if !ok {
		return nil, a.missing(strconv.Quote(key))
	}
	q := strconv.Quote(key)
	if err := a.budget.reserve(zipOpenBytes, "opening array "+q); err != nil {
		return nil, a.errf(q, "%v", err)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, a.errf(q, "cannot open zip entry: %v", err)
	}
	defer rc.Close()
	h, err := readNPYHeader(rc, a.buf)
	if errors.Is(err, errUnsupportedDtype) {
		return nil, a.errf(q, "%v: want %s", err, want)
	}
	if err != nil {
		return nil, a.errf(q, "%v", err)
	}
	h.key = key
	if want == wantInteger && !h.dtype.integer() {
		return nil, a.errf(q, "has dtype %s: want %s", h.dtype.descr, want)
	}
	if dims >= 0 && len(h.shape) != dims {
		what := "a 1-D array"
		if dims == 2 {
			what = "a 2-D dense matrix"
		} else if want == wantInteger {
			what = "a 1-D integer array"
		}
		return nil, a.errf(q, "want %s, got shape %v", what, h.shape)
	}
	return h, nil
}

// body streams the body of array h.key (whose header h was read) through
// put, in chunks of whole elements starting at element first, and checks
// that the member ends exactly where the header says it does. The caller
// has reserved zipOpenBytes for it (with the rest of what it decodes).
func (a *npzArchive) body(h *npyHeader, put func(chunk []byte, first int) error) error {
	q := strconv.Quote(h.key)
	rc, err := a.files[h.key].Open()
	if err != nil {
		return a.errf(q, "cannot open zip entry: %v", err)
	}
	defer rc.Close()
	if _, err := readNPYHeader(rc, a.buf); err != nil {
		return a.errf(q, "%v", err)
	}
	sz := h.dtype.size
	chunk := a.buf[:len(a.buf)/sz*sz]
	want := h.bytes()
	var got int64
	for got < want {
		c := chunk[:min(int64(len(chunk)), want-got)]
		k, err := io.ReadFull(rc, c)
		got += int64(k)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return a.errf(q, "truncated data: shape %s of %s needs %d bytes, %d present", h.shapeString(), h.dtype.descr, want, got)
			}
			return a.errf(q, "truncated or corrupt zip entry: %v", err)
		}
		if err := put(c, int((got-int64(k))/int64(sz))); err != nil {
			return a.errf(q, "%v", err)
		}
	}
	// The member must end here; reading to its end also has the zip
	// reader verify its checksum.
	for {
		k, err := rc.Read(a.buf)
		if k > 0 {
			return a.errf(q, "corrupt data: shape %s of %s needs %d bytes, more are present", h.shapeString(), h.dtype.descr, want)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return a.errf(q, "truncated or corrupt zip entry: %v", err)
		}
	}
}

// elemInt decodes one integer or bool element. For uint64 elements above
// MaxInt64 it reports ok=false with the value in u.
func elemInt(b []byte, dt npyDtype) (v int64, u uint64, ok bool) {
	signed := dt.kind == 'i'
	switch dt.size {
	case 1:
		if signed {
			return int64(int8(b[0])), 0, true
		}
		return int64(b[0]), 0, true
	case 2:
		if signed {
			return int64(int16(dt.order.Uint16(b))), 0, true
		}
		return int64(dt.order.Uint16(b)), 0, true
	case 4:
		if signed {
			return int64(int32(dt.order.Uint32(b))), 0, true
		}
		return int64(dt.order.Uint32(b)), 0, true
	default:
		w := dt.order.Uint64(b)
		if signed {
			return int64(w), 0, true
		}
		if w > math.MaxInt64 {
			return 0, w, false
		}
		return int64(w), 0, true
	}
}

// elemFloat decodes one element of any numeric dtype as a float64.
func elemFloat(b []byte, dt npyDtype) float64 {
	switch {
	case dt.kind == 'f' && dt.size == 4:
		return float64(math.Float32frombits(dt.order.Uint32(b)))
	case dt.kind == 'f':
		return math.Float64frombits(dt.order.Uint64(b))
	}
	v, u, ok := elemInt(b, dt)
	if !ok {
		return float64(u)
	}
	return float64(v)
}

// readInts decodes integer array h into ints; check (may be nil) vets
// each value with its index.
func (a *npzArchive) readInts(h *npyHeader, check func(i int, v int64) error) ([]int, error) {
	out := make([]int, h.n)
	sz := h.dtype.size
	err := a.body(h, func(c []byte, first int) error {
		for k := 0; k < len(c)/sz; k++ {
			v, u, ok := elemInt(c[k*sz:], h.dtype)
			i := first + k
			if !ok {
				return fmt.Errorf("%s[%d] = %d overflows int64", h.key, i, u)
			}
			if int64(int(v)) != v {
				return fmt.Errorf("%s[%d] = %d does not fit in int", h.key, i, v)
			}
			if check != nil {
				if err := check(i, v); err != nil {
					return err
				}
			}
			out[i] = int(v)
		}
		return nil
	})
	return out, err
}

// readFloats decodes numeric array h into finite float64s.
func (a *npzArchive) readFloats(h *npyHeader) ([]float64, error) {
	out := make([]float64, h.n)
	sz := h.dtype.size
	err := a.body(h, func(c []byte, first int) error {
		for k := 0; k < len(c)/sz; k++ {
			v := elemFloat(c[k*sz:], h.dtype)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%s[%d] = %v is not finite", h.key, first+k, v)
			}
			out[first+k] = v
		}
		return nil
	})
	return out, err
}

// readNonzero decodes numeric array h into a mask of its non-zero entries;
// every value must be finite.
func (a *npzArchive) readNonzero(h *npyHeader) ([]bool, error) {
	out := make([]bool, h.n)
	sz := h.dtype.size
	err := a.body(h, func(c []byte, first int) error {
		for k := 0; k < len(c)/sz; k++ {
			v := elemFloat(c[k*sz:], h.dtype)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%s[%d] = %v is not finite", h.key, first+k, v)
			}
			out[first+k] = v != 0
		}
		return nil
	})
	return out, err
}

// ---------------------------------------------------------------------------
// matrices

// npzMatrixHdr is a matrix of an npz archive as its headers describe it:
// CSR (data, indices, indptr; shape read) or dense.
type npzMatrixHdr struct {
	what                  string // arrays it comes from, for messages
	rows, cols            int
	data, indices, indptr *npyHeader // CSR, or nil
	dense                 *npyHeader // dense, or nil
}

// nnz is the number of stored entries (CSR) or of entries (dense).
func (m *npzMatrixHdr) nnz() int {
	if m.dense != nil {
		return m.dense.n
	}
	return m.indices.n
}

// bodies is the number of array bodies reading the matrix decodes.
func (m *npzMatrixHdr) bodies() int {
	if m.dense != nil {
		return 1
	}
	return 3
}

// largest is the matrix's largest array.
func (m *npzMatrixHdr) largest() *npyHeader {
	if m.dense != nil {
		return m.dense
	}
	return slices.MaxFunc([]*npyHeader{m.data, m.indices, m.indptr}, (*npyHeader).cmpBytes)
}

// adjacencyBytes is what readAdjacency allocates: for CSR, the indices
// and row pointers as ints and a non-zero mask, then the pattern's row
// pointers, its fill cursors and its column ids (two per stored entry);
// for a dense matrix, its non-zero mask and the pattern's row pointers and
// cursors (its column ids are reserved once counted).
func (m *npzMatrixHdr) adjacencyBytes() float64 {
	n, nnz := float64(m.rows), float64(m.nnz())
	pattern := 2 * intBytes * (n + 1)
	if m.dense != nil {
		return nnz + pattern
	}
	return intBytes*nnz + intBytes*(n+1) + nnz + pattern + 2*intBytes*nnz
}

// featureBytes is what readFeatures allocates: for CSR, the indices and
// row pointers as ints and the values as float64 (rows are put in order
// in place); for a dense matrix its float64 values, twice when stored in
// Fortran order.
func (m *npzMatrixHdr) featureBytes() float64 {
	if m.dense != nil {
		k := 1.0
		if m.dense.fortran && m.rows > 1 && m.cols > 1 {
			k = 2
		}
		return k * 8 * float64(m.nnz())
	}
	return (intBytes+8)*float64(m.nnz()) + intBytes*float64(m.rows+1)
}

// labelBytes is what readLabels allocates.
func labelBytes(h *npyHeader) float64 { return intBytes * float64(h.n) }

// matrixHeaders reads the headers of the matrix stored under prefix ("adj"
// or "attr") in any of the supported spellings, and its shape array.
func (a *npzArchive) matrixHeaders(prefix string) (*npzMatrixHdr, error) {
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
		return a.csrHeaders(keys)
	}
	if dk := prefix + "_matrix"; a.has(dk) {
		h, err := a.header(dk, wantNumeric, 2)
		if err != nil {
			return nil, err
		}
		rows, cols := h.shape[0], h.shape[1]
		if rows > maxLoadDim || cols > maxLoadDim {
			return nil, a.errf(strconv.Quote(dk), "invalid matrix shape (%d, %d)", rows, cols)
		}
		return &npzMatrixHdr{what: strconv.Quote(dk), rows: rows, cols: cols, dense: h}, nil
	}
	return nil, a.missing(fmt.Sprintf("%s_{data,indices,indptr,shape}, %s_matrix.{data,indices,indptr,shape} or a dense %s_matrix", prefix, prefix, prefix))
}

func (a *npzArchive) csrHeaders(keys [4]string) (*npzMatrixHdr, error) {
	dataK, indK, ptrK, shapeK := keys[0], keys[1], keys[2], keys[3]
	m := &npzMatrixHdr{what: fmt.Sprintf("%s/%s/%s/%s", dataK, indK, ptrK, shapeK)}
	shapeH, err := a.header(shapeK, wantInteger, 1)
	if err != nil {
		return nil, err
	}
	if shapeH.n != 2 {
		return nil, a.errf(strconv.Quote(shapeK), "want 2 entries (rows, cols), got shape %v", shapeH.shape)
	}
	if err := a.budget.reserve(zipOpenBytes+2*intBytes, "reading array "+strconv.Quote(shapeK)); err != nil {
		return nil, a.errf(strconv.Quote(shapeK), "%v", err)
	}
	shp, err := a.readInts(shapeH, nil)
	if err != nil {
		return nil, err
	}
	for _, d := range shp {
		if d < 0 || d > maxLoadDim {
			return nil, a.errf(strconv.Quote(shapeK), "invalid matrix shape (%d, %d)", shp[0], shp[1])
		}
	}
	m.rows, m.cols = shp[0], shp[1]
	if m.indices, err = a.header(indK, wantInteger, 1); err != nil {
		return nil, err
	}
	if m.indptr, err = a.header(ptrK, wantInteger, 1); err != nil {
		return nil, err
	}
	if m.data, err = a.header(dataK, wantNumeric, 1); err != nil {
		return nil, err
	}
	if m.data.n != m.indices.n {
		return nil, a.errf(m.what, "%s has %d entries but %s has %d", dataK, m.data.n, indK, m.indices.n)
	}
	if m.indptr.n != m.rows+1 {
		return nil, a.errf(m.what, "ragged or out-of-range CSR of shape (%d, %d): indptr has length %d, want rows+1 = %d", m.rows, m.cols, m.indptr.n, m.rows+1)
	}
	return m, nil
}

// readCSRIndex reads a CSR's indices and row pointers and validates them
// (CSR.Validate's checks, with the same messages).
func (a *npzArchive) readCSRIndex(m *npzMatrixHdr) (*graphs.CSR, error) {
	indices, err := a.readInts(m.indices, nil)
	if err != nil {
		return nil, err
	}
	indptr, err := a.readInts(m.indptr, nil)
	if err != nil {
		return nil, err
	}
	c := &graphs.CSR{Rows: m.rows, Cols: m.cols, Indptr: indptr, Indices: indices}
	if err := c.Validate(); err != nil {
		return nil, a.errf(m.what, "ragged or out-of-range CSR of shape (%d, %d): %v", m.rows, m.cols, err)
	}
	return c, nil
}

// readAdjacency reads the adjacency m and returns the symmetrised 0/1
// pattern of its non-zero entries without the diagonal.
func (a *npzArchive) readAdjacency(m *npzMatrixHdr) (*graphs.CSR, error) {
	n := m.rows
	if m.dense != nil {
		nz, err := a.readNonzero(m.dense)
		if err != nil {
			return nil, err
		}
		// In Fortran order nz[j*n+i] is entry (i, j): the transpose,
		// whose symmetrised pattern is the same.
		total := 0
		for i := 0; i < n; i++ {
			for j, v := range nz[i*n : (i+1)*n] {
				if v && i != j {
					total += 2
				}
			}
		}
		if err := a.budget.reserve(intBytes*float64(total), fmt.Sprintf("the adjacency's %d non-zero entries", total/2)); err != nil {
			return nil, a.errf(m.what, "%v", err)
		}
		return pairPattern(n, total, func(edge func(i, j int)) {
			for i := 0; i < n; i++ {
				for j, v := range nz[i*n : (i+1)*n] {
					if v && i != j {
						edge(i, j)
					}
				}
			}
		}), nil
	}
	c, err := a.readCSRIndex(m)
	if err != nil {
		return nil, err
	}
	nz, err := a.readNonzero(m.data)
	if err != nil {
		return nil, err
	}
	total := 0
	for i := 0; i < n; i++ {
		for k := c.Indptr[i]; k < c.Indptr[i+1]; k++ {
			if nz[k] && c.Indices[k] != i {
				total += 2
			}
		}
	}
	return pairPattern(n, total, func(edge func(i, j int)) {
		for i := 0; i < n; i++ {
			for k := c.Indptr[i]; k < c.Indptr[i+1]; k++ {
				if j := c.Indices[k]; nz[k] && j != i {
					edge(i, j)
				}
			}
		}
	}), nil
}

// pairPattern builds the n×n 0/1 pattern (Data nil, rows sorted and
// unique) of the undirected edges that each(edge) lists, self-loops
// excluded; total is twice the number of listings. It allocates the row
// pointers and fill cursors (n+1 and n ints) and total column ids, and
// removes duplicates in place.
func pairPattern(n, total int, each func(edge func(i, j int))) *graphs.CSR {
	ptr := make([]int, n+1)
	each(func(i, j int) { ptr[i+1]++; ptr[j+1]++ })
	for i := 0; i < n; i++ {
		ptr[i+1] += ptr[i]
	}
	cols := make([]int, total)
	next := make([]int, n)
	copy(next, ptr[:n])
	each(func(i, j int) {
		cols[next[i]] = j
		next[i]++
		cols[next[j]] = i
		next[j]++
	})
	w, start := 0, 0
	for i := 0; i < n; i++ {
		row := cols[start:ptr[i+1]]
		start = ptr[i+1]
		slices.Sort(row)
		for k, j := range row {
			if k == 0 || j != row[k-1] {
				cols[w] = j
				w++
			}
		}
		ptr[i+1] = w
	}
	return &graphs.CSR{Rows: n, Cols: n, Indptr: ptr, Indices: cols[:w:w]}
}

// readFeatures reads the feature matrix m: dense stays dense; CSR rows are
// put in order in place (duplicates summed) and Data is dropped when every
// value is 1.
func (a *npzArchive) readFeatures(m *npzMatrixHdr) (*graphs.Features, error) {
	if m.dense != nil {
		v, err := a.readFloats(m.dense)
		if err != nil {
			return nil, err
		}
		rows, cols := m.rows, m.cols
		if m.dense.fortran && rows > 1 && cols > 1 {
			t := make([]float64, len(v))
			for j := 0; j < cols; j++ {
				for i := 0; i < rows; i++ {
					t[i*cols+j] = v[j*rows+i]
				}
			}
			v = t
		}
		return &graphs.Features{N: rows, F: cols, Dense: v}, nil
	}
	s, err := a.readCSRIndex(m)
	if err != nil {
		return nil, err
	}
	if s.Data, err = a.readFloats(m.data); err != nil {
		return nil, err
	}
	canonicalRows(s)
	if !slices.ContainsFunc(s.Data, func(v float64) bool { return v != 1 }) {
		s.Data = nil
	}
	return &graphs.Features{N: m.rows, F: m.cols, Sparse: s}, nil
}

// canonicalRows sorts every row of s by column id, summing the values of
// duplicate ids, in place (s.Data must be set).
func canonicalRows(s *graphs.CSR) {
	if s.Canonical() {
		return
	}
	rs := &rowSorter{}
	w, start := 0, 0
	for i := 0; i < s.Rows; i++ {
		end := s.Indptr[i+1]
		rs.idx, rs.val = s.Indices[start:end], s.Data[start:end]
		sort.Sort(rs)
		for k := start; k < end; k++ {
			if k > start && s.Indices[k] == s.Indices[w-1] {
				s.Data[w-1] += s.Data[k]
				continue
			}
			s.Indices[w], s.Data[w] = s.Indices[k], s.Data[k]
			w++
		}
		start = end
		s.Indptr[i+1] = w
	}
	s.Indices, s.Data = s.Indices[:w:w], s.Data[:w:w]
}

// rowSorter sorts one row's column ids with their values (a pointer to
// one value serves every row without allocating).
type rowSorter struct {
	idx []int
	val []float64
}

func (r *rowSorter) Len() int           { return len(r.idx) }
func (r *rowSorter) Less(i, j int) bool { return r.idx[i] < r.idx[j] }
func (r *rowSorter) Swap(i, j int) {
	r.idx[i], r.idx[j] = r.idx[j], r.idx[i]
	r.val[i], r.val[j] = r.val[j], r.val[i]
}

// labelHeader reads and checks the header of the label array key: a 1-D
// integer array with one entry per node.
func (a *npzArchive) labelHeader(key string, n int) (*npyHeader, error) {
	h, err := a.header(key, wantInteger, 1)
	if err != nil {
		return nil, err
	}
	if h.n != n {
		return nil, a.errf(strconv.Quote(key), "has %d labels but the graph has %d nodes", h.n, n)
	}
	return h, nil
}

// classNamesKey is the array whose length, when an archive has it, is the
// dataset's class count (gnn-benchmark's and PPNP's files store it).
const classNamesKey = "class_names"

// classCount returns the number of classes the archive's class_names
// array lists (its length, read from its header; its names, unicode or
// pickled, are not decoded), or 0 when the archive has no class_names (or
// an empty one: the labels then count the classes). The
// count is the file's, not its rows': removing a node and its label leaves
// it unchanged, where the largest label + 1 can drop. A class_names that is
// not 1-D, or lists more classes than there are nodes, is an error.
func (a *npzArchive) classCount(n int) (int, error) {
	f, ok := a.files[classNamesKey]
	if !ok {
		return 0, nil
	}
	q := strconv.Quote(classNamesKey)
	if err := a.budget.reserve(zipOpenBytes, "opening array "+q); err != nil {
		return 0, a.errf(q, "%v", err)
	}
	rc, err := f.Open()
	if err != nil {
		return 0, a.errf(q, "cannot open zip entry: %v", err)
	}
	defer rc.Close()
	h, err := readNPYHeader(rc, a.buf)
	if err != nil && !errors.Is(err, errUnsupportedDtype) {
		return 0, a.errf(q, "%v (the class count is read from it: repair it, or remove it to count the classes from the labels)", err)
	}
	if len(h.shape) != 1 {
		return 0, a.errf(q, "has shape %v, want one name per class (the class count is read from it: repair it, or remove it to count the classes from the labels)", h.shape)
	}
	c := h.shape[0]
	if err := checkClassCount(c, n, "as "+classNamesKey+" lists"); err != nil {
		return 0, a.errf(q, "%v", err)
	}
	return c, nil
}

// readLabels reads the label array h of n nodes; values must be ≥ -1 (-1 =
// unlabelled), and below declared when it is positive (the class count of
// class_names). It returns the labels and the class count: declared, or
// else the largest label + 1; either must pass checkClassCount (at most n
// classes, logits within the memory limit).
func (a *npzArchive) readLabels(h *npyHeader, n, declared int) ([]int, int, error) {
	q := strconv.Quote(h.key)
	labels, err := a.readInts(h, func(i int, l int64) error {
		if l < -1 || l >= maxLoadDim {
			return fmt.Errorf("label of node %d is %d; want a class id ≥ 0 or -1 (unlabelled)", i, l)
		}
		if declared > 0 && l >= int64(declared) {
			return fmt.Errorf("label of node %d is %d, but %s lists %d classes (ids 0 to %d)", i, l, classNamesKey, declared, declared-1)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	if declared > 0 {
		return labels, declared, nil
	}
	maxL, at := -1, -1
	for i, l := range labels {
		if l > maxL {
			maxL, at = l, i
		}
	}
	if err := checkClassCount(maxL+1, n, fmt.Sprintf("node %d", at)); err != nil {
		return nil, 0, a.errf(q, "%v", err)
	}
	return labels, maxL + 1, nil
}
