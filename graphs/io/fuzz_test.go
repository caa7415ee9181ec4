package graphio

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/graphstest"
)

// FuzzParseSignedEdges: never panics; on success every sign is ±1, the
// three slices agree in length, the edges survive a format/parse round trip,
// and the id remapping LoadSigned uses maps each id to a slot holding it.
func FuzzParseSignedEdges(f *testing.F) {
	for _, s := range []string{
		"1\t2\t1\n3\t4\t-1\n",
		"1 2 +1\r\n\n# comment\n5,6,-1",
		"-7 8 1\n9223372036854775807 -9223372036854775808 -1\n",
		"",
		"1\t2\n",
		"1 2 0\n",
		"a b c\n",
		"1 2 1 3\n",
		"99999999999999999999 1 1\n",
		"   #\n\t\n,,,\n",
		"1 2 --1\n",
		"+ - 1\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		src, dst, sign, err := ParseSignedEdges(strings.NewReader(in), "fuzz")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz:") {
				t.Fatalf("error %q does not start with the file name", err)
			}
			return
		}
		if len(src) != len(dst) || len(src) != len(sign) {
			t.Fatalf("lengths %d %d %d", len(src), len(dst), len(sign))
		}
		for k, s := range sign {
			if s != 1 && s != -1 {
				t.Fatalf("sign[%d] = %d", k, s)
			}
		}
		src2, dst2, sign2, err := ParseSignedEdges(strings.NewReader(signedFormat(src, dst, sign)), "again")
		if err != nil {
			t.Fatalf("reparse: %v", err)
		}
		if !slices.Equal(src, src2) || !slices.Equal(dst, dst2) || !slices.Equal(sign, sign2) {
			t.Fatalf("round trip changed the edges")
		}
		all := append(slices.Clone(src), dst...)
		ids := distinctSortedIDs(slices.Clone(all))
		if !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
			t.Fatalf("ids not sorted and distinct: %v", ids)
		}
		index := signedIndex(ids)
		for _, x := range all {
			if i, ok := index(x); !ok || i < 0 || i >= len(ids) || ids[i] != x {
				t.Fatalf("id %d remapped to slot %d (%v)", x, i, ok)
			}
		}
		if len(ids) > 0 {
			n := len(ids)
			w := &signedList{path: "fuzz", src: src, dst: dst, sign: sign, lines: make([]int32, len(src))}
			s, d, err := remapSigned(w, index, "fuzz")
			if err != nil {
				t.Fatal(err)
			}
			pos, neg := signedUndirected(n, s, d, sign)
			for _, m := range []*graphs.CSR{pos, neg} {
				if err := m.Validate(); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

// FuzzParseNPY: the .npy header parser and the array decoders never
// panic on any member bytes and, on success, decode exactly as many
// elements as the header declares.
func FuzzParseNPY(f *testing.F) {
	f.Add(i32Arr(1, 2, 3))
	f.Add(f32Arr(1, 0.5))
	f.Add(i8Arr(-1, 0, 1))
	f.Add(npyBytes(">u8", []int{2}, false, make([]byte, 16)))
	f.Add(npyBytes("<f8", []int{2, 2}, true, make([]byte, 32)))
	f.Add(npyBytes("|O", nil, false, []byte("x")))
	f.Add([]byte("\x93NUMPY\x01\x00\x05\x00abcde"))
	f.Add([]byte("\x93NUMPY\x02\x00\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		arc := zipEntries(npzEntries{{"x", data}}, false)
		a, err := openNPZArchive(bytes.NewReader(arc), int64(len(arc)), "fuzz.npz", newBudgetLimit(graphs.DefaultMemoryLimit))
		if err != nil {
			t.Fatal(err)
		}
		h, err := a.header("x", wantNumeric, -1)
		if err != nil {
			return
		}
		if h.bytes() > int64(len(data)) {
			return // the body cannot be there (a loader reserves the declared size first, and refuses it past its limit)
		}
		if v, err := a.readFloats(h); err == nil && len(v) != h.n {
			t.Fatalf("floats: %d values for %d", len(v), h.n)
		}
		if h.dtype.integer() {
			if v, err := a.readInts(h, nil); err == nil && len(v) != h.n {
				t.Fatalf("ints: %d values for %d", len(v), h.n)
			}
		}
	})
}

// splitNPY returns a .npy member's header and body bytes (for tests that
// re-encode arrays), or an error when the header does not parse.
func splitNPY(data []byte) (*npyHeader, []byte, error) {
	r := bytes.NewReader(data)
	h, err := readNPYHeader(r, make([]byte, maxNPYHeader))
	if err != nil {
		return nil, nil, err
	}
	return h, data[len(data)-r.Len():], nil
}

// zipEntries archives e for fuzz seeds, with the smallest .npy headers
// parseNPY accepts. Stored members get no CRC (zip then skips the check), so
// that mutated array bytes reach the npy and graph validation instead of
// failing the checksum; compress deflates them (CRC checked) instead.
func zipEntries(e npzEntries, compress bool) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, x := range e {
		data := compactNPY(x.data)
		if compress {
			w, _ := zw.CreateHeader(&zip.FileHeader{Name: x.key + ".npy", Method: zip.Deflate})
			w.Write(data)
			continue
		}
		w, _ := zw.CreateRaw(&zip.FileHeader{Name: x.key + ".npy", Method: zip.Store,
			CompressedSize64: uint64(len(data)), UncompressedSize64: uint64(len(data))})
		w.Write(data)
	}
	zw.Close()
	return buf.Bytes()
}

// compactNPY rewrites a numeric .npy array with an unpadded header (other
// data is returned unchanged).
func compactNPY(data []byte) []byte {
	arr, raw, err := splitNPY(data)
	if err != nil || int64(len(raw)) != arr.bytes() {
		return data
	}
	dims := make([]string, len(arr.shape))
	for i, d := range arr.shape {
		dims[i] = strconv.Itoa(d)
	}
	sh := strings.Join(dims, ",")
	if len(arr.shape) == 1 {
		sh += ","
	}
	fo := "False"
	if arr.fortran {
		fo = "True"
	}
	hdr := fmt.Sprintf("{'descr':'%s','fortran_order':%s,'shape':(%s)}", arr.dtype.descr, fo, sh)
	out := append([]byte("\x93NUMPY\x01\x00"), byte(len(hdr)), byte(len(hdr)>>8))
	return append(append(out, hdr...), raw...)
}

// npzSeeds are valid archives of every spelling the loader reads plus
// variants that each break one rule (so the fuzzer starts next to every
// error path), and byte-level mutations of the toy archive.
func npzSeeds() [][]byte {
	base := toyEntries().without("node_names", "metadata")
	noAttrCSR := base.without("attr_data", "attr_indices", "attr_indptr", "attr_shape")
	variants := []npzEntries{
		toyEntries(), // with the object and unicode arrays a loader must skip
		toyMatrixSpelling(),
		base.without("labels"),
		noAttrCSR.with("attr_matrix", npyBytes("<f8", []int{4, 2}, true, leBytes([]float64{1, 2, 3, 4, 5, 6, 7, 8}))),
		base.without("adj_data", "adj_indices", "adj_indptr", "adj_shape").
			with("adj_matrix", npyBytes(">f4", []int{4, 4}, false, make([]byte, 64))),
		base.with("labels", i64Arr(0, 1, 1000000, -1)),
		base.with("labels", npyBytes(">u8", []int{4}, false, make([]byte, 32))),
		base.with("attr_shape", i64Arr(4, 1<<30)),
		base.with("adj_shape", i64Arr(0, 0)).with("adj_indptr", i32Arr(0)).with("adj_indices", i32Arr()).with("adj_data", f32Arr()),
		base.with("adj_data", f32Arr(0, 0, 0, 0, 0, 0)),
		base.with("attr_data", f32Arr(2, 1, 1, 1, 1, 1)).with("attr_indices", i32Arr(2, 0, 1, 1, 1, 2)),
		base.with("adj_indptr", i32Arr(0, 3, 1, 5, 6)),
		base.with("labels", npyBytes("<i2", []int{2, 2}, false, make([]byte, 8))),
	}
	var out [][]byte
	for i, e := range variants {
		out = append(out, zipEntries(e, i%3 == 1))
	}
	raw := zipEntries(base, false)
	for _, cut := range []int{len(raw) / 3, len(raw) - 22} {
		out = append(out, raw[:cut])
	}
	for _, at := range []int{40, len(raw) / 2, len(raw) - 10} {
		m := bytes.Clone(raw)
		m[at] ^= 0x5a
		out = append(out, m)
	}
	return append(out, []byte("PK\x05\x06"), nil)
}

// FuzzLoadNPZArchive: arbitrary archive bytes never panic and errors name
// the file. The seeds are whole archives, so this target explores the zip
// and member handling; FuzzLoadNPZ reaches the array and graph checks.
// (Go minimises every new input byte by byte, which for kilobyte archives
// takes most of a short run: expect few executions per second here.)
func FuzzLoadNPZArchive(f *testing.F) {
	seeds := npzSeeds()
	for _, s := range [][]byte{seeds[0], seeds[3], seeds[len(seeds)-3], seeds[len(seeds)-2]} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := readSparseGraphNPZ(bytes.NewReader(data), int64(len(data)), "fuzz.npz", newBudgetLimit(graphs.DefaultMemoryLimit))
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.npz") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		checkNPZGraph(t, g)
	})
}

// npzFuzzKeys and npzFuzzDtypes are what the compact encoding of
// FuzzLoadNPZ can name.
var (
	npzFuzzKeys = []string{
		"adj_data", "adj_indices", "adj_indptr", "adj_shape",
		"attr_data", "attr_indices", "attr_indptr", "attr_shape", "labels",
		"adj_matrix", "attr_matrix", "adj_matrix.data", "adj_matrix.indices", "adj_matrix.indptr", "adj_matrix.shape",
		"attr_matrix.data", "attr_matrix.indices", "attr_matrix.indptr", "attr_matrix.shape", "node_names",
	}
	npzFuzzDtypes = []string{"|b1", "|i1", "|u1", "<i2", ">u2", "<i4", "<u4", "<i8", ">i8", "<u8", "<f4", "<f8", ">f8", "<U2", "|O"}
)

// decodeNPZFuzz turns FuzzLoadNPZ's compact input into an npz archive: a
// sequence of records key, dtype, flags (bit 0 fortran order, bits 1-2
// the number of dimensions), the dimensions and the data length (uvarints),
// then the data bytes (fewer at the end of the input). Members are stored
// without CRC, so every array reaches the loader.
func decodeNPZFuzz(in []byte) []byte {
	var e npzEntries
	uv := func() int {
		v, k := binary.Uvarint(in)
		if k <= 0 {
			in = nil
			return 0
		}
		in = in[k:]
		return int(min(v, 1<<40))
	}
	for len(in) >= 3 {
		key := npzFuzzKeys[int(in[0])%len(npzFuzzKeys)]
		dt := npzFuzzDtypes[int(in[1])%len(npzFuzzDtypes)]
		fortran, ndim := in[2]&1 == 1, int(in[2]>>1)&3
		in = in[3:]
		shape := make([]int, ndim)
		for i := range shape {
			shape[i] = uv()
		}
		n := min(uv(), len(in))
		data := in[:n]
		in = in[n:]
		e = e.with(key, npyBytes(dt, shape, fortran, data))
	}
	return zipEntries(e, false)
}

// encodeNPZFuzz is the inverse of decodeNPZFuzz for seeds (members with
// other keys or dtypes are dropped).
func encodeNPZFuzz(e npzEntries) []byte {
	var out []byte
	for _, x := range e {
		ki := slices.Index(npzFuzzKeys, x.key)
		arr, raw, err := splitNPY(x.data)
		if ki < 0 || err != nil || int64(len(raw)) != arr.bytes() {
			continue
		}
		di := slices.Index(npzFuzzDtypes, arr.dtype.descr)
		if di < 0 {
			continue
		}
		flags := byte(len(arr.shape)) << 1
		if arr.fortran {
			flags |= 1
		}
		out = append(out, byte(ki), byte(di), flags)
		for _, d := range arr.shape {
			out = binary.AppendUvarint(out, uint64(d))
		}
		out = binary.AppendUvarint(out, uint64(len(raw)))
		out = append(out, raw...)
	}
	return out
}

// FuzzLoadNPZ: npz archives built from fuzzed arrays (decodeNPZFuzz)
// never make the loader panic; errors name the file; a graph that loads is
// well formed and within the loader's limits. Seeds: the toy graph in both
// key spellings, dense features and adjacency, and variants that each
// break one rule (class id ≥ N, absurd feature count, no nodes, no edges,
// unsorted features, ragged CSR, 2-D labels, big-endian labels).
func FuzzLoadNPZ(f *testing.F) {
	base := toyEntries().without("node_names", "metadata")
	noAttrCSR := base.without("attr_data", "attr_indices", "attr_indptr", "attr_shape")
	for _, e := range []npzEntries{
		toyEntries(),
		toyMatrixSpelling(),
		base.without("labels"),
		noAttrCSR.with("attr_matrix", npyBytes("<f8", []int{4, 2}, true, leBytes([]float64{1, 2, 3, 4, 5, 6, 7, 8}))),
		base.without("adj_data", "adj_indices", "adj_indptr", "adj_shape").
			with("adj_matrix", npyBytes(">f8", []int{4, 4}, false, leBytes([]float64{0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0}))),
		base.with("labels", i64Arr(0, 1, 1000000, -1)),
		base.with("labels", npyBytes(">i8", []int{4}, false, make([]byte, 32))),
		base.with("attr_shape", i64Arr(4, 1<<30)),
		base.with("adj_shape", i64Arr(0, 0)).with("adj_indptr", i32Arr(0)).with("adj_indices", i32Arr()).with("adj_data", f32Arr()),
		base.with("adj_data", f32Arr(0, 0, 0, 0, 0, 0)),
		base.with("attr_data", f32Arr(2, 1, 1, 1, 1, 1)).with("attr_indices", i32Arr(2, 0, 1, 1, 1, 2)),
		base.with("adj_indptr", i32Arr(0, 3, 1, 5, 6)),
		base.with("labels", npyBytes("<i2", []int{2, 2}, false, make([]byte, 8))),
	} {
		f.Add(encodeNPZFuzz(e))
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, in []byte) {
		data := decodeNPZFuzz(in)
		g, err := readSparseGraphNPZ(bytes.NewReader(data), int64(len(data)), "fuzz.npz", newBudgetLimit(graphs.DefaultMemoryLimit))
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.npz") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		checkNPZGraph(t, g)
	})
}

// checkNPZGraph asserts what LoadNPZ promises about a graph it returns.
func checkNPZGraph(t *testing.T, g *graphs.Graph) {
	t.Helper()
	if err := g.Adj.Validate(); err != nil || g.Adj.Rows != g.N || g.Adj.Cols != g.N || g.Adj.Data != nil {
		t.Fatalf("bad adjacency %+v: %v", g.Adj, err)
	}
	tr := g.Adj.Transpose()
	if !reflect.DeepEqual(tr.Indices, g.Adj.Indices) {
		t.Fatalf("adjacency not symmetric")
	}
	if g.X == nil || g.X.N != g.N || len(g.Labels) != g.N {
		t.Fatalf("features/labels do not match N=%d", g.N)
	}
	if g.X.Sparse != nil {
		if err := g.X.Sparse.Validate(); err != nil {
			t.Fatal(err)
		}
	} else if len(g.X.Dense) != g.X.N*g.X.F {
		t.Fatalf("dense features of wrong size")
	}
	checkLoadedGraph(t, g)
}

// checkLoadedGraph asserts the invariants every node-classification loader
// promises: nodes and edges present, labels in [-1, NumClasses), at most N
// classes, dense features and logits within the memory limit.
func checkLoadedGraph(t *testing.T, g *graphs.Graph) {
	t.Helper()
	if g.N < 1 { // a graph without edges loads; one without nodes does not
		t.Fatalf("empty graph loaded: N=%d, %d entries", g.N, g.Adj.NNZ())
	}
	if g.NumClasses > g.N {
		t.Fatalf("%d classes for %d nodes", g.NumClasses, g.N)
	}
	for i, y := range g.Labels {
		if y < -1 || y >= g.NumClasses {
			t.Fatalf("label %d of node %d outside [-1, %d)", y, i, g.NumClasses)
		}
	}
	if 8*float64(g.N)*float64(g.X.F) > graphs.DefaultMemoryLimit || 8*float64(g.N)*float64(g.NumClasses) > graphs.DefaultMemoryLimit {
		t.Fatalf("N=%d F=%d C=%d beyond the memory limit", g.N, g.X.F, g.NumClasses)
	}
}

// geomSeeds are (node file, edge file, mask archive) triples: the toy
// dataset of the tests, headerless and header-declared variants, and
// variants that each break one rule.
func geomSeeds() [][3][]byte {
	u8 := func(v ...uint8) []byte { return npyBytes("|u1", []int{len(v)}, false, v) }
	mask := zipEntries(npzEntries{
		{"train_mask", u8(1, 1, 0, 0, 0)}, {"val_mask", u8(0, 0, 1, 0, 0)}, {"test_mask", u8(0, 0, 0, 1, 1)},
	}, false)
	overlap := zipEntries(npzEntries{
		{"train_mask", u8(1, 1, 0, 0, 0)}, {"val_mask", u8(0, 1, 1, 0, 0)}, {"test_mask", u8(0, 0, 0, 1, 1)},
	}, true)
	b := func(s string) []byte { return []byte(s) }
	return [][3][]byte{
		{b(geomNodes), b(geomEdges), mask},
		{b(geomNodes), b(geomEdges), overlap},
		{b(geomNodes), b(geomEdges), nil},
		{b("0\t1,2\t0\n1\t\t1\n2\t0\t-1\n"), b("0 1\n1 2\n"), nil},
		{b("node_id\tfeature(feature_amount:3)\tlabel\n0\t3\t0\n1\t0\t1\n"), b("h\n0\t1\n"), nil},
		{b("h\n0\t999999\t0\n1\t0\t1\n"), b("h\n0\t1\n"), nil},
		{b("h\n0\t1\t1000000\n1\t0\t1\n"), b("h\n0\t1\n"), nil},
		{b("h\n0\t1\t0\n1\t0\t1\n"), b("h\n"), nil},
		{b("h\n0\t1\t0\n1\t0\t1\n"), b("h\n1\t1\n"), nil},
		{b("h\n"), b("h\n0\t1\n"), nil},
		{b("h\n0\t1\t0\n0\t0\t1\n"), b("h\n0\t1\n"), nil},
		{b("h\n0\t1\t0\n3\t0\t1\n"), b("h\n0\t1\n"), nil},
		{b("h\n0\t1,x\t0\n"), b("h\n0\t1\n"), nil},
		{b(geomNodes), b("h\n0\t9\n"), nil},
		{b(geomNodes), b(geomEdges), []byte("PK\x03\x04 truncated")},
	}
}

// FuzzLoadGeomGCN: the geom-gcn node, edge and mask readers never panic on
// any input; errors name the file; a dataset that loads is well formed.
func FuzzLoadGeomGCN(f *testing.F) {
	for _, s := range geomSeeds() {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, nodes, edges, mask []byte) {
		b := newBudgetLimit(graphs.DefaultMemoryLimit)
		var x *graphs.Features
		var labels []int
		var nc int
		err := readText(bytes.NewReader(nodes), "nodes.txt", func(r io.Reader, st textStats) (err error) {
			x, labels, nc, err = readGeomNodes(r, st, "nodes.txt", b)
			return err
		})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "load nodes.txt") {
				t.Fatalf("error %q does not name the node file", err)
			}
			return
		}
		n := len(labels)
		if x.N != n || x.Sparse == nil || x.Sparse.Rows != n || x.Sparse.Cols != x.F || x.Sparse.Data != nil {
			t.Fatalf("features %d×%d for %d nodes", x.N, x.F, n)
		}
		if err := x.Sparse.Validate(); err != nil || !x.Sparse.Canonical() {
			t.Fatalf("features: %v", err)
		}
		var adj *graphs.CSR
		err = readText(bytes.NewReader(edges), "edges.txt", func(r io.Reader, st textStats) (err error) {
			adj, err = readGeomEdges(r, st, "edges.txt", n, b)
			return err
		})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "load edges.txt") {
				t.Fatalf("error %q does not name the edge file", err)
			}
			return
		}
		g := &graphs.Graph{N: n, Adj: adj, X: x, Labels: labels, NumClasses: nc}
		if err := adj.Validate(); err != nil || adj.Rows != n || adj.Data != nil {
			t.Fatalf("adjacency: %v", err)
		}
		tr := adj.Transpose()
		if !reflect.DeepEqual(tr.Indices, adj.Indices) {
			t.Fatalf("adjacency not symmetric")
		}
		checkLoadedGraph(t, g)
		if mask == nil {
			return
		}
		sp, err := readGeomMasksFrom(bytes.NewReader(mask), int64(len(mask)), "mask.npz", n, b)
		if err != nil {
			if !strings.Contains(err.Error(), "mask.npz") {
				t.Fatalf("error %q does not name the mask file", err)
			}
			return
		}
		if !graphstest.Disjoint(sp.Train, sp.Val, sp.Test) {
			t.Fatalf("mask sets overlap")
		}
		for _, set := range [][]int{sp.Train, sp.Val, sp.Test} {
			for _, i := range set {
				if i < 0 || i >= n {
					t.Fatalf("mask node %d outside [0, %d)", i, n)
				}
			}
		}
	})
}

// FuzzLoadSigned: whole/train/test edge lists (present = bits of which)
// never panic; errors name the file; a graph that loads has disjoint
// symmetric positive and negative patterns and ±1 edge splits over the
// whole list's nodes.
func FuzzLoadSigned(f *testing.F) {
	whole := "100\t-5\t1\n-5\t7\t-1\n7\t100\t1\n100\t100\t1\n7\t-5\t1\n100\t7\t-1\n42\t42\t1\n"
	for _, s := range []struct {
		whole, train, test string
		which              uint8
	}{
		{whole, "100\t-5\t1\n100\t-5\t-1\n42\t7\t1\n", "7\t100\t-1\n", 3},
		{whole, "", "", 0},
		{whole, "", "7 100 -1\n", 2},
		{whole, "1 2 1\n", "", 1},
		{whole, "# only a comment\n", "", 1},
		{"-9000000000000 9000000000000 1\n3 -9000000000000 -1\n", "3 9000000000000 1\n", "4 3 1\n", 3},
		{"", "", "", 0},
		{"1 1 1\n2 2 -1\n", "", "", 0},
		{"1,2,+1\r\n# c\n\n2 3 -1", "2\t1\t-1\n", "3 2 1\n", 3},
		{"1 2 0\n", "", "", 0},
		{"9223372036854775807 -9223372036854775808 -1\n", "-9223372036854775808 9223372036854775807 1\n", "", 1},
	} {
		f.Add(s.whole, s.train, s.test, s.which)
	}
	f.Fuzz(func(t *testing.T, whole, train, test string, which uint8) {
		named := func(err error, file string) {
			if !strings.HasPrefix(err.Error(), "load "+file) {
				t.Fatalf("error %q does not name %s", err, file)
			}
		}
		b := newBudgetLimit(graphs.DefaultMemoryLimit)
		w, err := parseSignedList(strings.NewReader(whole), "d/whole_edge.txt", b)
		if err != nil {
			named(err, "d/whole_edge.txt")
			return
		}
		var tr, te *signedList
		if which&1 != 0 {
			if tr, err = parseSignedList(strings.NewReader(train), "d/d.train", b); err != nil {
				named(err, "d/d.train")
				return
			}
		}
		if which&2 != 0 {
			if te, err = parseSignedList(strings.NewReader(test), "d/d.test", b); err != nil {
				named(err, "d/d.test")
				return
			}
		}
		g, err := buildSigned("d", w, tr, te, b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "load d/") {
				t.Fatalf("error %q does not name a file", err)
			}
			return
		}
		if g.N < 2 || g.Adj.NNZ()+g.Neg.NNZ() == 0 {
			t.Fatalf("empty signed graph loaded: N=%d", g.N)
		}
		for _, m := range []*graphs.CSR{g.Adj, g.Neg} {
			if err := m.Validate(); err != nil || m.Rows != g.N || !m.Canonical() {
				t.Fatalf("pattern: %v", err)
			}
			if !reflect.DeepEqual(m.Transpose().Indices, m.Indices) {
				t.Fatalf("pattern not symmetric")
			}
		}
		for i := 0; i < g.N; i++ {
			p, _ := g.Adj.Row(i)
			q, _ := g.Neg.Row(i)
			for _, j := range p {
				if slices.Contains(q, j) {
					t.Fatalf("pair %d-%d both positive and negative", i, j)
				}
			}
		}
		for _, m := range []*graphs.CSR{g.EdgeTrain, g.EdgeTest} {
			if m == nil {
				continue
			}
			if err := m.Validate(); err != nil || m.Rows != g.N || m.Cols != g.N {
				t.Fatalf("edge split: %v", err)
			}
			for _, v := range m.Data {
				if v != 1 && v != -1 {
					t.Fatalf("edge sign %v", v)
				}
			}
		}
		if (which&1 != 0) != (g.EdgeTrain != nil) || (which&2 != 0) != (g.EdgeTest != nil) {
			t.Fatalf("edge splits present %v %v for which=%d", g.EdgeTrain != nil, g.EdgeTest != nil, which)
		}
	})
}

func TestNPZFuzzEncoding(t *testing.T) {
	for _, e := range []npzEntries{toyEntries(), toyMatrixSpelling()} {
		in := encodeNPZFuzz(e)
		data := decodeNPZFuzz(in)
		g, err := readSparseGraphNPZ(bytes.NewReader(data), int64(len(data)), "seed.npz", newBudgetLimit(graphs.DefaultMemoryLimit))
		if err != nil || g.N != 4 || g.NumClasses != 2 {
			t.Fatalf("%d-byte seed: %v", len(in), err)
		}
	}
}
