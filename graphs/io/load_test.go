package graphio

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/gen"
	"github.com/dpgnn/dpgnn/internal/testutil"
	"github.com/sbinet/npyio/npz"
)

// ---------------------------------------------------------------------------
// helpers: hand-built .npy / .npz files

// npyBytes builds a version 1.0 .npy file with the given header fields and
// raw element bytes.
func npyBytes(descr string, shape []int, fortran bool, data []byte) []byte {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = fmt.Sprint(d)
	}
	sh := "(" + strings.Join(dims, ", ")
	if len(shape) == 1 {
		sh += ","
	}
	sh += ")"
	fo := "False"
	if fortran {
		fo = "True"
	}
	hdr := fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr, fo, sh)
	for (10+len(hdr)+1)%64 != 0 {
		hdr += " "
	}
	hdr += "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(hdr)))
	b.WriteString(hdr)
	b.Write(data)
	return b.Bytes()
}

func leBytes(v any) []byte {
	var b bytes.Buffer
	if err := binary.Write(&b, binary.LittleEndian, v); err != nil {
		panic(err)
	}
	return b.Bytes()
}

func i32Arr(v ...int32) []byte   { return npyBytes("<i4", []int{len(v)}, false, leBytes(v)) }
func i64Arr(v ...int64) []byte   { return npyBytes("<i8", []int{len(v)}, false, leBytes(v)) }
func i8Arr(v ...int8) []byte     { return npyBytes("|i1", []int{len(v)}, false, leBytes(v)) }
func f32Arr(v ...float32) []byte { return npyBytes("<f4", []int{len(v)}, false, leBytes(v)) }

// npzEntries is an ordered list of archive members (name without .npy).
type npzEntries []struct {
	key  string
	data []byte
}

func (e npzEntries) with(key string, data []byte) npzEntries {
	out := slices.Clone(e)
	for i := range out {
		if out[i].key == key {
			out[i].data = data
			return out
		}
	}
	return append(out, struct {
		key  string
		data []byte
	}{key, data})
}

func (e npzEntries) without(keys ...string) npzEntries {
	var out npzEntries
	for _, x := range e {
		if !slices.Contains(keys, x.key) {
			out = append(out, x)
		}
	}
	return out
}

// writeNPZ writes the entries as a stored (uncompressed) zip, like
// numpy.savez.
func writeNPZ(t *testing.T, path string, e npzEntries) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, x := range e {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: x.key + ".npy", Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(x.data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// toyEntries is a 4-node graph in cora's key spelling:
// directed entries 0→1, 1→0, 1→2, 2→0, 2→2 (self-loop), 3→1;
// features rows {0,2}, {1}, {}, {0,1,2}; labels 0,1,1,-1; plus unicode and
// object arrays a loader must skip.
func toyEntries() npzEntries {
	return npzEntries{
		{"adj_data", f32Arr(1, 1, 1, 1, 1, 1)},
		{"adj_indices", i32Arr(1, 0, 2, 0, 2, 1)},
		{"adj_indptr", i32Arr(0, 1, 3, 5, 6)},
		{"adj_shape", i64Arr(4, 4)},
		{"attr_data", f32Arr(1, 1, 1, 1, 1, 1)},
		{"attr_indices", i32Arr(0, 2, 1, 0, 1, 2)},
		{"attr_indptr", i32Arr(0, 2, 3, 3, 6)},
		{"attr_shape", i64Arr(4, 3)},
		{"labels", i8Arr(0, 1, 1, -1)},
		{"node_names", npyBytes("<U2", []int{4}, false, make([]byte, 4*2*4))},
		{"metadata", npyBytes("|O", nil, false, []byte("\x80\x02}q\x00.garbage pickle"))},
	}
}

// toyMatrixSpelling renames toyEntries to the adj_matrix.* spelling.
func toyMatrixSpelling() npzEntries {
	var out npzEntries
	for _, x := range toyEntries() {
		k := x.key
		for _, p := range []string{"adj", "attr"} {
			if strings.HasPrefix(k, p+"_") && k != "attr_names" {
				k = p + "_matrix." + strings.TrimPrefix(k, p+"_")
			}
		}
		out = append(out, struct {
			key  string
			data []byte
		}{k, x.data})
	}
	return out
}

// checkUndirected asserts Adj is a valid symmetric 0/1 pattern without
// self-loops and with sorted, unique rows.
func checkUndirected(t *testing.T, m *graphs.CSR) {
	t.Helper()
	if err := m.Validate(); err != nil {
		t.Fatalf("adjacency invalid: %v", err)
	}
	if m.Data != nil {
		t.Errorf("adjacency Data not nil")
	}
	if !m.Canonical() {
		t.Errorf("adjacency rows not sorted/unique")
	}
	tr := m.Transpose()
	if !reflect.DeepEqual(tr.Indptr, m.Indptr) || !reflect.DeepEqual(tr.Indices, m.Indices) {
		t.Errorf("adjacency not symmetric")
	}
	for i := 0; i < m.Rows; i++ {
		cols, _ := m.Row(i)
		if slices.Contains(cols, i) {
			t.Errorf("self-loop at node %d", i)
		}
	}
}

func rowsOf(m *graphs.CSR) [][]int {
	out := make([][]int, m.Rows)
	for i := range out {
		c, _ := m.Row(i)
		out[i] = append([]int{}, c...)
	}
	return out
}

func wantErr(t *testing.T, err error, subs ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got nil error, want one containing %q", subs)
	}
	for _, s := range subs {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not contain %q", err, s)
		}
	}
}

// ---------------------------------------------------------------------------
// LoadNPZ

func TestLoadNPZToy(t *testing.T) {
	dir := t.TempDir()
	wantAdj := [][]int{{1, 2}, {0, 2, 3}, {0, 1}, {1}}
	wantX := [][]int{{0, 2}, {1}, {}, {0, 1, 2}}
	cases := []struct {
		name    string
		entries npzEntries
	}{
		{"cora spelling", toyEntries()},
		{"adj_matrix spelling, int64 labels", toyMatrixSpelling().with("labels", i64Arr(0, 1, 1, -1))},
		{"int32 labels, uint8 indptr", toyEntries().
			with("labels", npyBytes("<i4", []int{4}, false, leBytes([]int32{0, 1, 1, -1}))).
			with("adj_indptr", npyBytes("|u1", []int{5}, false, []byte{0, 1, 3, 5, 6}))},
		{"big-endian indices, float64 data", toyEntries().
			with("adj_indices", npyBytes(">i8", []int{6}, false, func() []byte {
				var b bytes.Buffer
				binary.Write(&b, binary.BigEndian, []int64{1, 0, 2, 0, 2, 1})
				return b.Bytes()
			}())).
			with("adj_data", npyBytes("<f8", []int{6}, false, leBytes([]float64{1, 1, 2.5, 1, 1, 1})))},
		{"explicit zero adjacency entry is no edge", toyEntries().
			with("adj_data", f32Arr(1, 1, 1, 1, 1, 1, 0)).
			with("adj_indices", i32Arr(1, 0, 2, 0, 2, 1, 0)).
			with("adj_indptr", i32Arr(0, 1, 3, 5, 7))},
		{"dense adj_matrix", toyEntries().without("adj_data", "adj_indices", "adj_indptr", "adj_shape").
			with("adj_matrix", npyBytes("<f8", []int{4, 4}, false, leBytes([]float64{
				0, 1, 0, 0,
				1, 0, 1, 0,
				1, 0, 1, 0,
				0, 1, 0, 0})))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, fileSafe(c.name)+".npz")
			writeNPZ(t, p, c.entries)
			g, err := LoadNPZ(p)
			if err != nil {
				t.Fatal(err)
			}
			checkUndirected(t, g.Adj)
			if g.N != 4 || !reflect.DeepEqual(rowsOf(g.Adj), wantAdj) {
				t.Errorf("N=%d adj=%v, want 4 %v", g.N, rowsOf(g.Adj), wantAdj)
			}
			if g.X == nil || !g.X.IsSparse() || g.X.N != 4 || g.X.F != 3 {
				t.Fatalf("features %+v, want sparse 4×3", g.X)
			}
			if g.X.Sparse.Data != nil {
				t.Errorf("binary features kept Data %v", g.X.Sparse.Data)
			}
			if !reflect.DeepEqual(rowsOf(g.X.Sparse), wantX) {
				t.Errorf("features %v, want %v", rowsOf(g.X.Sparse), wantX)
			}
			if !reflect.DeepEqual(g.Labels, []int{0, 1, 1, -1}) || g.NumClasses != 2 {
				t.Errorf("labels %v classes %d", g.Labels, g.NumClasses)
			}
		})
	}
}

func TestLoadNPZFeatures(t *testing.T) {
	dir := t.TempDir()
	t.Run("weighted unsorted rows are sorted and summed", func(t *testing.T) {
		p := filepath.Join(dir, "w.npz")
		writeNPZ(t, p, toyEntries().
			with("attr_data", f32Arr(0.5, 2, 1, 3, 4, 1)).
			with("attr_indices", i32Arr(2, 0, 1, 2, 0, 2)))
		g, err := LoadNPZ(p)
		if err != nil {
			t.Fatal(err)
		}
		s := g.X.Sparse
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		want := []float64{2, 0, 0.5, 0, 1, 0, 0, 0, 0, 4, 0, 4}
		if got := g.X.ToDense(); !reflect.DeepEqual(got, want) {
			t.Errorf("dense features %v, want %v", got, want)
		}
		if !s.Canonical() || s.Data == nil {
			t.Errorf("rows not canonical or Data dropped: %+v", s)
		}
	})
	for _, fortran := range []bool{false, true} {
		t.Run(fmt.Sprintf("dense attr_matrix fortran=%v", fortran), func(t *testing.T) {
			rowMajor := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
			stored := rowMajor
			if fortran {
				stored = make([]float64, 12)
				for i := 0; i < 4; i++ {
					for j := 0; j < 3; j++ {
						stored[j*4+i] = rowMajor[i*3+j]
					}
				}
			}
			p := filepath.Join(dir, fmt.Sprintf("d%v.npz", fortran))
			writeNPZ(t, p, toyEntries().without("attr_data", "attr_indices", "attr_indptr", "attr_shape").
				with("attr_matrix", npyBytes("<f8", []int{4, 3}, fortran, leBytes(stored))))
			g, err := LoadNPZ(p)
			if err != nil {
				t.Fatal(err)
			}
			if g.X.IsSparse() || g.X.N != 4 || g.X.F != 3 || !reflect.DeepEqual(g.X.Dense, rowMajor) {
				t.Errorf("features %+v, want dense %v", g.X, rowMajor)
			}
		})
	}
}

func TestLoadNPZErrors(t *testing.T) {
	dir := t.TempDir()
	base := toyEntries()
	cases := []struct {
		name    string
		entries npzEntries
		want    []string
	}{
		{"missing labels", base.without("labels"), []string{`missing array "labels"`}},
		{"missing attr", base.without("attr_data", "attr_indices", "attr_indptr", "attr_shape"),
			[]string{"missing array attr_{data,indices,indptr,shape}", "attr_matrix"}},
		{"missing adj", base.without("adj_data", "adj_indices", "adj_indptr", "adj_shape"),
			[]string{"missing array adj_"}},
		{"missing one CSR part", base.without("adj_indptr"), []string{`missing array "adj_indptr"`}},
		{"ragged indptr length", base.with("adj_indptr", i32Arr(0, 1, 3, 6)),
			[]string{"adj_indptr", "ragged", "indptr has length 4, want rows+1 = 5"}},
		{"indptr not monotone", base.with("adj_indptr", i32Arr(0, 3, 1, 5, 6)),
			[]string{"adj_indptr", "indptr decreases at row 1"}},
		{"indptr end mismatch", base.with("adj_indptr", i32Arr(0, 1, 3, 5, 5)),
			[]string{"adj_indptr", "indptr ends at 5 but there are 6 indices"}},
		{"indptr does not start at 0", base.with("adj_indptr", i32Arr(1, 1, 3, 5, 6)),
			[]string{"adj_indptr", "indptr[0] = 1"}},
		{"out-of-range adjacency index", base.with("adj_indices", i32Arr(1, 0, 2, 0, 7, 1)),
			[]string{"adj_indices", "index 7 at position 4 is out of range [0, 4)"}},
		{"negative feature index", base.with("attr_indices", i32Arr(0, 2, 1, 0, -1, 2)),
			[]string{"attr_indices", "out of range"}},
		{"NaN feature", base.with("attr_data", f32Arr(1, 1, float32(math.NaN()), 1, 1, 1)),
			[]string{`"attr_data"`, "attr_data[2] = NaN is not finite"}},
		{"Inf adjacency value", base.with("adj_data", f32Arr(1, float32(math.Inf(1)), 1, 1, 1, 1)),
			[]string{"adj_data[1] = +Inf is not finite"}},
		{"data/indices length mismatch", base.with("attr_data", f32Arr(1, 1, 1)),
			[]string{"attr_data has 3 entries but attr_indices has 6"}},
		{"label count mismatch", base.with("labels", i8Arr(0, 1, 1)),
			[]string{`"labels"`, "has 3 labels but the graph has 4 nodes"}},
		{"negative label", base.with("labels", i8Arr(0, -2, 1, 1)),
			[]string{`"labels"`, "label of node 1 is -2"}},
		{"float labels", base.with("labels", f32Arr(0, 1, 1, 0)),
			[]string{`"labels"`, "want an integer array"}},
		{"2-D labels", base.with("labels", npyBytes("|i1", []int{2, 2}, false, []byte{0, 1, 1, 0})),
			[]string{`"labels"`, "want a 1-D integer array"}},
		{"object labels", base.with("labels", npyBytes("|O", []int{4}, false, []byte("pickle"))),
			[]string{`"labels"`, `unsupported dtype "|O"`}},
		{"unicode adjacency indices", base.with("adj_indices", npyBytes("<U1", []int{6}, false, make([]byte, 24))),
			[]string{`"adj_indices"`, "unsupported dtype"}},
		{"adjacency not square", base.with("adj_shape", i64Arr(4, 5)),
			[]string{"adj_", "not square: shape (4, 5)"}},
		{"feature rows mismatch", base.with("attr_shape", i64Arr(3, 3)).with("attr_indptr", i32Arr(0, 2, 3, 6)),
			[]string{"attr_", "features have 3 rows but the adjacency", "has 4 nodes"}},
		{"bad shape array", base.with("adj_shape", i64Arr(4, 4, 1)),
			[]string{`"adj_shape"`, "want 2 entries"}},
		{"negative shape", base.with("adj_shape", i64Arr(-4, 4)),
			[]string{`"adj_shape"`, "invalid matrix shape (-4, 4)"}},
		{"truncated array data", base.with("adj_indices", npyBytes("<i4", []int{6}, false, leBytes([]int32{1, 0, 2, 0}))),
			[]string{`"adj_indices"`, "truncated data", "needs 24 bytes, 16 present"}},
		{"bad npy magic", base.with("labels", []byte("definitely not numpy")),
			[]string{`"labels"`, "bad magic"}},
		{"header without fields", base.with("labels", append([]byte("\x93NUMPY\x01\x00\x10\x00{'descr': '|i1'}"), 0, 1, 1, 0)),
			[]string{`"labels"`, "cannot parse .npy header"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, fileSafe(c.name)+".npz")
			writeNPZ(t, p, c.entries)
			g, err := LoadNPZ(p)
			if err == nil {
				t.Fatalf("loaded %+v, want an error", g)
			}
			wantErr(t, err, append([]string{p}, c.want...)...)
		})
	}
}

func TestLoadNPZCorruptArchive(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.npz")
	writeNPZ(t, good, toyEntries())
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("truncated", func(t *testing.T) {
		for _, keep := range []int{0, 10, len(raw) / 2, len(raw) - 5} {
			p := filepath.Join(dir, fmt.Sprintf("trunc%d.npz", keep))
			if err := os.WriteFile(p, raw[:keep], 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadNPZ(p)
			wantErr(t, err, p, "not a valid npz archive (truncated or corrupt zip)")
		}
	})
	t.Run("not a zip", func(t *testing.T) {
		p := filepath.Join(dir, "text.npz")
		os.WriteFile(p, []byte("hello, world\n"), 0o644)
		_, err := LoadNPZ(p)
		wantErr(t, err, p, "not a valid npz archive")
	})
	t.Run("checksum mismatch", func(t *testing.T) {
		p := filepath.Join(dir, "crc.npz")
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, x := range toyEntries() {
			hdr := &zip.FileHeader{Name: x.key + ".npy", Method: zip.Store,
				CRC32:            crc32.ChecksumIEEE(x.data),
				CompressedSize64: uint64(len(x.data)), UncompressedSize64: uint64(len(x.data))}
			if x.key == "adj_indices" {
				hdr.CRC32 ^= 1 // the stored bytes no longer match
			}
			w, err := zw.CreateRaw(hdr)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(x.data)
		}
		zw.Close()
		os.WriteFile(p, buf.Bytes(), 0o644)
		_, err := LoadNPZ(p)
		wantErr(t, err, p, `"adj_indices"`, "corrupt zip entry", "checksum")
	})
	t.Run("duplicate member", func(t *testing.T) {
		p := filepath.Join(dir, "dup.npz")
		writeNPZ(t, p, append(toyEntries(), toyEntries()[0]))
		_, err := LoadNPZ(p)
		wantErr(t, err, p, `array "adj_data" is stored twice`)
	})
	t.Run("missing file", func(t *testing.T) {
		p := filepath.Join(dir, "nope.npz")
		_, err := LoadNPZ(p)
		wantErr(t, err, p, "no such file")
	})
	t.Run("directory", func(t *testing.T) {
		_, err := LoadNPZ(dir)
		wantErr(t, err, dir, "is a directory")
	})
}

// ---------------------------------------------------------------------------
// SaveNPZ

func TestSaveNPZRoundTrip(t *testing.T) {
	dir := t.TempDir()
	adj := graphs.FromCOO(5, 5, []int{0, 1, 1, 2, 3, 4}, []int{1, 0, 2, 1, 4, 3}, nil)
	sparse := graphs.FromCOO(5, 4, []int{0, 0, 2, 4}, []int{1, 3, 0, 2}, nil)
	weighted := graphs.FromCOO(5, 4, []int{0, 0, 2, 4}, []int{1, 3, 0, 2}, []float64{0.5, 1, -2, 3})
	dense := []float64{
		1, 0, 2, 0,
		0, 0, 0, 0,
		-1.5, 0, 0, 3,
		0, 7, 0, 0,
		0.25, 0, 0, 1e-9}
	labels := []int{0, 2, 1, -1, 2}
	cases := []struct {
		name string
		x    *graphs.Features
	}{
		{"binary sparse", &graphs.Features{N: 5, F: 4, Sparse: sparse}},
		{"weighted sparse", &graphs.Features{N: 5, F: 4, Sparse: weighted}},
		{"dense", &graphs.Features{N: 5, F: 4, Dense: dense}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := &graphs.Graph{Name: "x", N: 5, Adj: adj, X: c.x, Labels: labels, NumClasses: 3}
			p := filepath.Join(dir, fileSafe(c.name)+".npz")
			if err := SaveNPZ(p, g); err != nil {
				t.Fatal(err)
			}
			h, err := LoadNPZ(p)
			if err != nil {
				t.Fatal(err)
			}
			if h.N != g.N || !reflect.DeepEqual(h.Adj, g.Adj) {
				t.Errorf("adjacency %+v, want %+v", h.Adj, g.Adj)
			}
			if !reflect.DeepEqual(h.Labels, labels) || h.NumClasses != 3 {
				t.Errorf("labels %v/%d", h.Labels, h.NumClasses)
			}
			if h.X.N != c.x.N || h.X.F != c.x.F || !reflect.DeepEqual(h.X.ToDense(), c.x.ToDense()) {
				t.Errorf("features %+v, want %+v", h.X, c.x)
			}
			if c.x.F > 0 && h.X.IsSparse() != c.x.IsSparse() {
				t.Errorf("sparse=%v, want %v", h.X.IsSparse(), c.x.IsSparse())
			}
			if c.x.IsSparse() && !reflect.DeepEqual(h.X.Sparse, c.x.Sparse) {
				t.Errorf("sparse features %+v, want %+v", h.X.Sparse, c.x.Sparse)
			}
		})
	}
	t.Run("zero feature columns are saved, and refused on load", func(t *testing.T) {
		g := &graphs.Graph{Name: "x", N: 5, Adj: adj, X: &graphs.Features{N: 5, F: 0, Dense: []float64{}}, Labels: labels, NumClasses: 3}
		p := filepath.Join(dir, "nofeatures.npz")
		if err := SaveNPZ(p, g); err != nil {
			t.Fatal(err)
		}
		_, err := LoadNPZ(p)
		wantErr(t, err, p, "attr_", "shape (5, 0): no feature column")
	})
	t.Run("directed weighted adjacency is symmetrised on load", func(t *testing.T) {
		d := graphs.FromCOO(3, 3, []int{0, 1, 2}, []int{1, 1, 0}, []float64{2, 5, 0.5})
		g := &graphs.Graph{N: 3, Adj: d, Directed: true, X: &graphs.Features{N: 3, F: 1, Dense: []float64{1, 2, 3}}, Labels: []int{0, 0, 1}}
		p := filepath.Join(dir, "directed.npz")
		if err := SaveNPZ(p, g); err != nil {
			t.Fatal(err)
		}
		h, err := LoadNPZ(p)
		if err != nil {
			t.Fatal(err)
		}
		checkUndirected(t, h.Adj)
		if want := [][]int{{1, 2}, {0}, {0}}; !reflect.DeepEqual(rowsOf(h.Adj), want) {
			t.Errorf("adjacency %v, want %v", rowsOf(h.Adj), want)
		}
	})
}

func TestSaveNPZErrors(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.npz")
	adj := graphs.FromCOO(2, 2, []int{0, 1}, []int{1, 0}, nil)
	x := &graphs.Features{N: 2, F: 1, Dense: []float64{1, 2}}
	cases := []struct {
		name string
		g    *graphs.Graph
		want string
	}{
		{"nil graph", nil, "nil graph"},
		{"no adjacency", &graphs.Graph{N: 2, X: x, Labels: []int{0, 1}}, "no adjacency"},
		{"no features", &graphs.Graph{N: 2, Adj: adj, Labels: []int{0, 1}}, "no features"},
		{"no labels", &graphs.Graph{N: 2, Adj: adj, X: x}, "no labels"},
		{"label count", &graphs.Graph{N: 2, Adj: adj, X: x, Labels: []int{0}}, "1 labels for 2 nodes"},
		{"dense size", &graphs.Graph{N: 2, Adj: adj, X: &graphs.Features{N: 2, F: 2, Dense: []float64{1}}, Labels: []int{0, 1}}, "dense features have 1 values"},
		{"adjacency size", &graphs.Graph{N: 3, Adj: adj, X: x, Labels: []int{0, 1}}, "adjacency is 2×2 but the graph has 3 nodes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantErr(t, SaveNPZ(p, c.g), p, c.want)
		})
	}
	t.Run("missing directory", func(t *testing.T) {
		q := filepath.Join(t.TempDir(), "no", "such", "dir", "g.npz")
		wantErr(t, SaveNPZ(q, &graphs.Graph{N: 2, Adj: adj, X: x, Labels: []int{0, 1}}), q, "directory "+filepath.Dir(q)+" does not exist")
	})
	if _, err := os.Stat(p); err == nil {
		t.Errorf("failed saves left %s behind", p)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(p), ".*tmp*")); len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

// The npz archives npyio writes (deflate-compressed) load too.
func TestLoadNPZCompressed(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.npz")
	w, err := npz.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range []struct {
		k string
		v any
	}{
		{"adj_matrix.data.npy", []float32{1, 1}},
		{"adj_matrix.indices.npy", []int32{1, 0}},
		{"adj_matrix.indptr.npy", []int32{0, 1, 2}},
		{"adj_matrix.shape.npy", []int64{2, 2}},
		{"attr_matrix.data.npy", []float32{1, 1}},
		{"attr_matrix.indices.npy", []int32{0, 0}},
		{"attr_matrix.indptr.npy", []int32{0, 1, 2}},
		{"attr_matrix.shape.npy", []int64{2, 1}},
		{"labels.npy", []int8{1, 0}},
	} {
		if err := w.Write(kv.k, kv.v); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	g, err := LoadNPZ(p)
	if err != nil {
		t.Fatal(err)
	}
	if g.N != 2 || g.Adj.NNZ() != 2 || g.NumClasses != 2 || g.X.F != 1 {
		t.Errorf("got %+v", g)
	}
}

// ---------------------------------------------------------------------------
// LoadGeomGCN

type geomFixture struct {
	edges, nodes string
	masks        map[int][3]any // k → train, val, test arrays (nil: file absent)
	rawMasks     map[int]npzEntries
	garbageMask  bool // overwrite film_split_0.6_0.2_0.npz with non-zip bytes
}

func (f geomFixture) write(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if f.edges != "" {
		os.WriteFile(filepath.Join(dir, geomEdgesFile), []byte(f.edges), 0o644)
	}
	if f.nodes != "" {
		os.WriteFile(filepath.Join(dir, geomNodesFile), []byte(f.nodes), 0o644)
	}
	for k, m := range f.masks {
		w, err := npz.Create(filepath.Join(dir, fmt.Sprintf("film_split_0.6_0.2_%d.npz", k)))
		if err != nil {
			t.Fatal(err)
		}
		for i, key := range []string{"train_mask.npy", "val_mask.npy", "test_mask.npy"} {
			if m[i] != nil {
				if err := w.Write(key, m[i]); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for k, e := range f.rawMasks {
		writeNPZ(t, filepath.Join(dir, fmt.Sprintf("film_split_0.6_0.2_%d.npz", k)), e)
	}
	if f.garbageMask {
		os.WriteFile(filepath.Join(dir, "film_split_0.6_0.2_0.npz"), []byte("PK\x03\x04 truncated"), 0o644)
	}
	return dir
}

const (
	geomNodes = "node_id\tfeature(feature_amount:5)\tlabel\n" +
		"3\t4,0\t1\n" +
		"0\t1,2\t0\n" +
		"4\t\t2\n" +
		"1\t0\t0\r\n" +
		"\n" +
		"2\t3,3\t1\n"
	geomEdges = "node_id\tnode_id\n0\t1\n1\t0\n1\t2\n3\t3\n4\t2\n\n2 0\n"
)

func TestLoadGeomGCN(t *testing.T) {
	u8 := func(v ...uint8) []uint8 { return v }
	dir := geomFixture{
		edges: geomEdges, nodes: geomNodes,
		masks: map[int][3]any{
			0: {u8(1, 1, 0, 0, 0), u8(0, 0, 1, 0, 0), u8(0, 0, 0, 1, 1)},
			1: {[]bool{false, false, true, true, false}, []bool{true, false, false, false, false}, []bool{false, true, false, false, true}},
			3: {u8(1, 1, 1, 1, 1), u8(0, 0, 0, 0, 0), u8(0, 0, 0, 0, 0)}, // after a gap: ignored
		},
	}.write(t)
	g, err := LoadGeomGCN(dir)
	if err != nil {
		t.Fatal(err)
	}
	checkUndirected(t, g.Adj)
	if want := [][]int{{1, 2}, {0, 2}, {0, 1, 4}, {}, {2}}; !reflect.DeepEqual(rowsOf(g.Adj), want) {
		t.Errorf("adjacency %v, want %v", rowsOf(g.Adj), want)
	}
	// The header's feature_amount:5 bounds the ids (ids 0..5): F = 6
	// whatever the rows hold.
	if want := [][]int{{1, 2}, {0}, {3}, {0, 4}, {}}; !reflect.DeepEqual(rowsOf(g.X.Sparse), want) || g.X.F != 6 || g.X.Sparse.Data != nil {
		t.Errorf("features %v F=%d, want %v F=6 binary", rowsOf(g.X.Sparse), g.X.F, want)
	}
	if !reflect.DeepEqual(g.Labels, []int{0, 0, 1, 1, 2}) || g.NumClasses != 3 {
		t.Errorf("labels %v classes %d", g.Labels, g.NumClasses)
	}
	want := []graphs.Split{
		{Train: []int{0, 1}, Val: []int{2}, Test: []int{3, 4}},
		{Train: []int{2, 3}, Val: []int{0}, Test: []int{1, 4}},
	}
	if !reflect.DeepEqual(g.MaskSplits, want) {
		t.Errorf("mask splits %+v, want %+v", g.MaskSplits, want)
	}

	// No mask files at all: no MaskSplits, no error.
	g, err = LoadGeomGCN(geomFixture{edges: geomEdges, nodes: geomNodes}.write(t))
	if err != nil || g.MaskSplits != nil {
		t.Errorf("without masks: err %v, MaskSplits %v", err, g.MaskSplits)
	}
}

func TestLoadGeomGCNErrors(t *testing.T) {
	u8 := func(v ...uint8) []uint8 { return v }
	okMask := [3]any{u8(1, 1, 0, 0, 0), u8(0, 0, 1, 0, 0), u8(0, 0, 0, 1, 1)}
	cases := []struct {
		name string
		fix  geomFixture
		want []string
	}{
		{"non-numeric edge id", geomFixture{edges: "node_id\tnode_id\n0\t1\nx\t2\n", nodes: geomNodes},
			[]string{geomEdgesFile + `:3: non-numeric node id "x"`}},
		{"edge id out of range", geomFixture{edges: "h\n0\t1\n9\t2\n", nodes: geomNodes},
			[]string{geomEdgesFile + ":3: node id 9 out of range [0, 5)"}},
		{"negative edge id", geomFixture{edges: "0\t1\n-1\t2\n", nodes: geomNodes},
			[]string{geomEdgesFile + ":2: node id -1 out of range"}},
		{"edge with three fields", geomFixture{edges: "h\n0\t1\t1\n", nodes: geomNodes},
			[]string{geomEdgesFile + ":2: want 2 fields (src, dst), got 3"}},
		{"missing edge file", geomFixture{nodes: geomNodes}, []string{geomEdgesFile, "no such file"}},
		{"missing node file", geomFixture{edges: geomEdges}, []string{geomNodesFile, "no such file"}},
		{"non-numeric node id", geomFixture{edges: geomEdges, nodes: "h\n0\t1\t0\nabc\t1\t0\n"},
			[]string{geomNodesFile + `:3: non-numeric node id "abc"`}},
		{"non-numeric feature", geomFixture{edges: geomEdges, nodes: "h\n0\t1,z\t0\n"},
			[]string{geomNodesFile + `:2: non-numeric feature id "z"`}},
		{"negative feature", geomFixture{edges: geomEdges, nodes: "h\n0\t1,-3\t0\n"},
			[]string{geomNodesFile + ":2: feature id -3 out of range"}},
		{"non-numeric label", geomFixture{edges: geomEdges, nodes: "h\n0\t1\tcat\n"},
			[]string{geomNodesFile + `:2: non-numeric label "cat"`}},
		{"bad label", geomFixture{edges: geomEdges, nodes: "h\n0\t1\t-4\n"},
			[]string{geomNodesFile + ":2: label -4 out of range"}},
		{"wrong field count", geomFixture{edges: geomEdges, nodes: "h\n0\t1\n"},
			[]string{geomNodesFile + ":2: want 3 tab-separated fields"}},
		{"duplicate node row", geomFixture{edges: geomEdges, nodes: "h\n0\t1\t0\n1\t1\t0\n1\t2\t0\n"},
			[]string{geomNodesFile + ":4: duplicate row for node 1 (first on line 3)"}},
		{"missing node", geomFixture{edges: "h\n0\t1\n", nodes: "h\n0\t1\t0\n1\t1\t0\n3\t2\t0\n"},
			[]string{geomNodesFile + ":4: node id 3 out of range [0, 3)", "missing"}},
		{"mask wrong length", geomFixture{edges: geomEdges, nodes: geomNodes,
			masks: map[int][3]any{0: {u8(1, 1, 0, 0), u8(0, 0, 1, 0, 0), u8(0, 0, 0, 1, 1)}}},
			[]string{"film_split_0.6_0.2_0.npz", `"train_mask"`, "has shape [4], want (5,)"}},
		{"mask value", geomFixture{edges: geomEdges, nodes: geomNodes,
			masks: map[int][3]any{0: okMask, 1: {u8(1, 1, 0, 0, 0), u8(0, 0, 2, 0, 0), u8(0, 0, 0, 1, 1)}}},
			[]string{"film_split_0.6_0.2_1.npz", "val_mask[2] = 2, want 0 or 1"}},
		{"mask overlap", geomFixture{edges: geomEdges, nodes: geomNodes,
			masks: map[int][3]any{0: {u8(1, 1, 0, 0, 0), u8(0, 1, 1, 0, 0), u8(0, 0, 0, 1, 1)}}},
			[]string{"film_split_0.6_0.2_0.npz", `"val_mask"`, "node 1 is also in train_mask"}},
		{"mask missing array", geomFixture{edges: geomEdges, nodes: geomNodes,
			masks: map[int][3]any{0: {u8(1, 1, 0, 0, 0), nil, u8(0, 0, 0, 1, 1)}}},
			[]string{"film_split_0.6_0.2_0.npz", `missing array "val_mask"`}},
		{"mask float", geomFixture{edges: geomEdges, nodes: geomNodes,
			masks: map[int][3]any{0: {[]float64{1, 1, 0, 0, 0}, u8(0, 0, 1, 0, 0), u8(0, 0, 0, 1, 1)}}},
			[]string{"film_split_0.6_0.2_0.npz", `"train_mask"`, "has dtype <f8: want a mask (bool or integer 0/1 array)"}},
		{"mask archive empty", geomFixture{edges: geomEdges, nodes: geomNodes,
			rawMasks: map[int]npzEntries{0: nil}},
			[]string{"film_split_0.6_0.2_0.npz", `missing array "train_mask" (the file holds no arrays)`}},
		{"mask archive not a zip", geomFixture{edges: geomEdges, nodes: geomNodes,
			rawMasks: map[int]npzEntries{0: nil}, garbageMask: true},
			[]string{"film_split_0.6_0.2_0.npz", "not a valid npz archive"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := c.fix.write(t)
			g, err := LoadGeomGCN(dir)
			if err == nil {
				t.Fatalf("loaded %+v, want an error", g)
			}
			wantErr(t, err, append([]string{dir}, c.want...)...)
		})
	}
}

// ---------------------------------------------------------------------------
// signed edge lists

func TestParseSignedEdges(t *testing.T) {
	cases := []struct {
		name, in       string
		src, dst       []int64
		sign           []int8
		wantErrSubstrs []string
	}{
		{name: "mixed separators", in: "1\t2\t1\n3 4 -1\n\n# comment\n  5,6,+1\r\n-7\t8\t1",
			src: []int64{1, 3, 5, -7}, dst: []int64{2, 4, 6, 8}, sign: []int8{1, -1, 1, 1}},
		{name: "empty", in: "", src: nil, dst: nil, sign: nil},
		{name: "only comments", in: "# a\n   # b\n\n", src: nil, dst: nil, sign: nil},
		{name: "large ids", in: "9223372036854775807 -9223372036854775808 -1\n",
			src: []int64{math.MaxInt64}, dst: []int64{math.MinInt64}, sign: []int8{-1}},
		{name: "two fields", in: "1\t2\t1\n\n1\t2\n", wantErrSubstrs: []string{"t.txt:3: want 3 fields (src dst sign), got 2"}},
		{name: "four fields", in: "1 2 1 1700000000\n", wantErrSubstrs: []string{"t.txt:1: want 3 fields", "got 4 or more"}},
		{name: "zero sign", in: "1 2 0\n", wantErrSubstrs: []string{`t.txt:1: sign "0" is not 1 or -1`}},
		{name: "weight sign", in: "1 2 5\n", wantErrSubstrs: []string{`sign "5" is not 1 or -1`}},
		{name: "non-numeric src", in: "# h\na 2 1\n", wantErrSubstrs: []string{`t.txt:2: non-numeric source node id "a"`}},
		{name: "non-numeric dst", in: "1 2.5 1\n", wantErrSubstrs: []string{`t.txt:1: non-numeric target node id "2.5"`}},
		{name: "overflow", in: "9223372036854775808 1 1\n", wantErrSubstrs: []string{`t.txt:1: source node id "9223372036854775808" is out of range (ids must fit in 64 bits`}},
		{name: "overflow far", in: "1 -99999999999999999999999 1\n", wantErrSubstrs: []string{`target node id "-99999999999999999999999" is out of range`}},
		{name: "byte-order mark", in: "\xef\xbb\xbf1 2 1\n2 3 -1\n", src: []int64{1, 2}, dst: []int64{2, 3}, sign: []int8{1, -1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src, dst, sign, err := ParseSignedEdges(strings.NewReader(c.in), "t.txt")
			if c.wantErrSubstrs != nil {
				wantErr(t, err, c.wantErrSubstrs...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(src, c.src) || !reflect.DeepEqual(dst, c.dst) || !reflect.DeepEqual(sign, c.sign) {
				t.Errorf("got %v %v %v, want %v %v %v", src, dst, sign, c.src, c.dst, c.sign)
			}
		})
	}
}

func writeSignedDir(t *testing.T, name string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for f, s := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadSigned(t *testing.T) {
	dir := writeSignedDir(t, "toy", map[string]string{
		"whole_edge.txt": "100\t-5\t1\n" +
			"-5\t7\t-1\n" +
			"7\t100\t1\n" +
			"100\t100\t1\n" + // self-loop: dropped
			"7\t-5\t1\n" + // pair {-5,7} listed again: last (+) wins
			"100\t7\t-1\n" + // pair {7,100} listed again: last (-) wins
			"42\t42\t1\n5\t5\t-1\n", // self-loops: dropped, but nodes 42 and 5 occur
		"toy.train": "100\t-5\t1\n100\t-5\t-1\n42\t7\t1\n",
		"toy.test":  "7\t100\t-1\n5\t5\t1\n",
	})
	g, err := LoadSigned(dir)
	if err != nil {
		t.Fatal(err)
	}
	// ids ascending: -5, 5, 7, 42, 100 → 0..4
	id := map[int64]int{-5: 0, 5: 1, 7: 2, 42: 3, 100: 4}
	if g.N != 5 || !g.Signed() {
		t.Fatalf("N=%d signed=%v", g.N, g.Signed())
	}
	checkUndirected(t, g.Adj)
	checkUndirected(t, g.Neg)
	pos := [][]int{{id[7], id[100]}, {}, {id[-5]}, {}, {id[-5]}}
	neg := [][]int{{}, {}, {id[100]}, {}, {id[7]}}
	if !reflect.DeepEqual(rowsOf(g.Adj), pos) || !reflect.DeepEqual(rowsOf(g.Neg), neg) {
		t.Errorf("pos %v neg %v, want %v %v", rowsOf(g.Adj), rowsOf(g.Neg), pos, neg)
	}
	wantTrain := graphs.FromCOO(5, 5, []int{id[100], id[42]}, []int{id[-5], id[7]}, []float64{-1, 1})
	if !reflect.DeepEqual(g.EdgeTrain, wantTrain) {
		t.Errorf("EdgeTrain %+v, want %+v", g.EdgeTrain, wantTrain)
	}
	wantTest := graphs.FromCOO(5, 5, []int{id[7]}, []int{id[100]}, []float64{-1})
	if !reflect.DeepEqual(g.EdgeTest, wantTest) {
		t.Errorf("EdgeTest %+v, want %+v", g.EdgeTest, wantTest)
	}
	if g.X != nil || g.Labels != nil || g.NumClasses != 0 {
		t.Errorf("signed graph has X %v labels %v classes %d", g.X, g.Labels, g.NumClasses)
	}

	// Sparse, far-apart ids take the sorted path of the remapping.
	dir = writeSignedDir(t, "far", map[string]string{"whole_edge.txt": "-9000000000000 9000000000000 1\n3 -9000000000000 -1\n"})
	g, err = LoadSigned(dir)
	if err != nil {
		t.Fatal(err)
	}
	if g.N != 3 || g.EdgeTrain != nil || g.EdgeTest != nil ||
		!reflect.DeepEqual(rowsOf(g.Adj), [][]int{{2}, {}, {0}}) || !reflect.DeepEqual(rowsOf(g.Neg), [][]int{{1}, {0}, {}}) {
		t.Errorf("far ids: N=%d pos %v neg %v", g.N, rowsOf(g.Adj), rowsOf(g.Neg))
	}
}

func TestLoadSignedErrors(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"missing whole", map[string]string{"toy.train": "1 2 1\n"}, []string{"whole_edge.txt", "no such file"}},
		{"bad whole line", map[string]string{"whole_edge.txt": "1 2 1\n2 3 x\n"}, []string{`whole_edge.txt:2: sign "x" is not 1 or -1`}},
		{"bad train line", map[string]string{"whole_edge.txt": "1 2 1\n", "toy.train": "1 2 1\n\n1 2\n"}, []string{"toy.train:3: want 3 fields"}},
		{"bad test line", map[string]string{"whole_edge.txt": "1 2 1\n", "toy.test": "q 2 1\n"}, []string{`toy.test:1: non-numeric source node id "q"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := writeSignedDir(t, "toy", c.files)
			_, err := LoadSigned(dir)
			wantErr(t, err, append([]string{dir}, c.want...)...)
		})
	}
}

// ---------------------------------------------------------------------------
// Load

func TestLoadResolve(t *testing.T) {
	dataDir := t.TempDir()
	toy := &graphs.Graph{N: 3, Adj: graphs.FromCOO(3, 3, []int{0, 1}, []int{1, 0}, nil),
		X: &graphs.Features{N: 3, F: 1, Dense: []float64{1, 2, 3}}, Labels: []int{0, 1, 0}}
	if err := SaveNPZ(filepath.Join(dataDir, "cora.npz"), toy); err != nil {
		t.Fatal(err)
	}
	mypath := filepath.Join(dataDir, "my_graph.npz")
	if err := SaveNPZ(mypath, toy); err != nil {
		t.Fatal(err)
	}
	geom := geomFixture{edges: geomEdges, nodes: geomNodes}.write(t)
	os.MkdirAll(filepath.Join(dataDir, "signed"), 0o755)
	signed := filepath.Join(dataDir, "signed", "bitcoin_otc")
	os.Mkdir(signed, 0o755)
	os.WriteFile(filepath.Join(signed, "whole_edge.txt"), []byte("1 2 1\n2 3 -1\n"), 0o644)
	actor := filepath.Join(dataDir, "actor")
	os.Mkdir(actor, 0o755)
	for _, f := range []string{geomEdgesFile, geomNodesFile} {
		b, err := os.ReadFile(filepath.Join(geom, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(actor, f), b, 0o644)
	}

	ok := []struct {
		name, dataDir, wantName string
		wantN                   int
	}{
		{"cora", dataDir, "cora", 3},
		{"CORA", dataDir, "cora", 3},
		{"actor", dataDir, "actor", 5},
		{"bitcoin_otc", dataDir, "bitcoin_otc", 3},
		{mypath, "", "my_graph", 3},
		{geom, "", filepath.Base(geom), 5},
		{signed, "/nonexistent", "bitcoin_otc", 3},
	}
	for _, c := range ok {
		t.Run("ok "+c.name, func(t *testing.T) {
			g, err := Load(c.name, c.dataDir, 1)
			if err != nil {
				t.Fatal(err)
			}
			if g.Name != c.wantName || g.N != c.wantN {
				t.Errorf("Name %q N %d, want %q %d", g.Name, g.N, c.wantName, c.wantN)
			}
		})
	}

	empty := t.TempDir()
	txt := filepath.Join(empty, "graph.txt")
	os.WriteFile(txt, []byte("x"), 0o644)
	bad := []struct {
		name, dataDir string
		want          []string
	}{
		{"no_such_dataset", dataDir, []string{`unknown dataset "no_such_dataset"`, "cora, cora_ml, citeseer, actor", "wikirfa", "chain-x", "csbm", "path"}},
		{"cora_ml", empty, []string{filepath.Join(empty, "cora_ml.npz"), "not found", "--data-dir", "$DPGNN_DATA"}},
		{"wikirfa", empty, []string{filepath.Join(empty, "signed", "wikirfa"), "not found", "--data-dir"}},
		{"actor", empty, []string{filepath.Join(empty, "actor"), "not found"}},
		{empty, "", []string{empty, "neither", geomEdgesFile, signedWholeFile}},
		{txt, "", []string{txt, "not an .npz file"}},
		{filepath.Join(empty, "missing.npz"), "", []string{filepath.Join(empty, "missing.npz"), "no such file"}},
		{"other.npz", "", []string{"other.npz", "no such file"}},
	}
	for _, c := range bad {
		t.Run("error "+c.name, func(t *testing.T) {
			_, err := Load(c.name, c.dataDir, 1)
			wantErr(t, err, c.want...)
		})
	}

	t.Run("default data dir", func(t *testing.T) {
		t.Setenv("DPGNN_DATA", dataDir)
		if DefaultDataDir() != dataDir {
			t.Fatalf("DefaultDataDir() = %q", DefaultDataDir())
		}
		g, err := Load("cora", "", 1)
		if err != nil || g.N != 3 {
			t.Fatalf("Load with $DPGNN_DATA: %v", err)
		}
	})

	if got := DatasetNames(); len(got) != 20 || got[0] != "cora" {
		t.Errorf("DatasetNames() = %v", got)
	}
}

func TestLoadGenerated(t *testing.T) {
	for _, name := range []string{"chain-s", "csbm", "spread", "star", "star-9", "double-star", "path", "powerlaw"} {
		t.Run(name, func(t *testing.T) {
			g, err := Load(name, "/nonexistent", 7)
			if err != nil {
				t.Fatal(err)
			}
			if g.Name != name || g.N == 0 || g.Adj == nil {
				t.Errorf("Name %q N %d", g.Name, g.N)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// real datasets

func edgeHomophily(g *graphs.Graph) float64 {
	same, total := 0, 0
	for i := 0; i < g.N; i++ {
		cols, _ := g.Adj.Row(i)
		for _, j := range cols {
			total++
			if g.Labels[i] == g.Labels[j] {
				same++
			}
		}
	}
	return float64(same) / float64(total)
}

func TestLoadRealNPZ(t *testing.T) {
	dataDir := testutil.DataDir(t)
	cases := []struct {
		name                     string
		n, nnz, f, classes       int
		minDeg, maxDeg, isolated int
		homophily                float64
		binary                   bool
	}{
		{"cora", 2708, 10556, 1433, 7, 1, 168, 0, 0.81, true},
		{"cora_ml", 2995, 16316, 2879, 7, 1, 246, 0, 0.79, false},
		{"citeseer", 3312, 9072, 3703, 6, 0, 99, 48, 0.74, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := Load(c.name, dataDir, 0)
			if err != nil {
				t.Fatal(err)
			}
			checkUndirected(t, g.Adj)
			deg := g.Adj.Degrees()
			iso := 0
			for _, d := range deg {
				if d == 0 {
					iso++
				}
			}
			if g.N != c.n || g.Adj.NNZ() != c.nnz || g.X.F != c.f || g.NumClasses != c.classes ||
				slices.Min(deg) != c.minDeg || slices.Max(deg) != c.maxDeg || iso != c.isolated {
				t.Errorf("N=%d nnz=%d F=%d C=%d deg %d/%d isolated %d; want %d %d %d %d %d/%d %d",
					g.N, g.Adj.NNZ(), g.X.F, g.NumClasses, slices.Min(deg), slices.Max(deg), iso,
					c.n, c.nnz, c.f, c.classes, c.minDeg, c.maxDeg, c.isolated)
			}
			if err := g.X.Sparse.Validate(); err != nil || !g.X.Sparse.Canonical() {
				t.Errorf("features: %v", err)
			}
			if (g.X.Sparse.Data == nil) != c.binary {
				t.Errorf("binary features = %v, want %v", g.X.Sparse.Data == nil, c.binary)
			}
			if slices.Min(g.Labels) < 0 {
				t.Errorf("unlabelled nodes present")
			}
			testutil.AssertClose(t, "edge homophily", edgeHomophily(g), c.homophily, 0.006)
		})
	}
}

func TestLoadRealActor(t *testing.T) {
	g, err := Load("actor", testutil.DataDir(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	checkUndirected(t, g.Adj)
	if g.N != 7600 || g.X.F != 932 || g.NumClasses != 5 || g.X.Sparse.Data != nil {
		t.Errorf("N=%d F=%d C=%d, want 7600 932 5 binary", g.N, g.X.F, g.NumClasses)
	}
	// 33,391 listed edges, 122 self-loops, 26,659 undirected edges.
	if g.Adj.NNZ() != 53318 {
		t.Errorf("nnz = %d, want 53318", g.Adj.NNZ())
	}
	if len(g.MaskSplits) != 10 {
		t.Fatalf("%d mask splits, want 10", len(g.MaskSplits))
	}
	for k, s := range g.MaskSplits {
		if len(s.Train) != 3648 || len(s.Val) != 2432 || len(s.Test) != 1520 {
			t.Errorf("split %d sizes %d/%d/%d, want 3648/2432/1520", k, len(s.Train), len(s.Val), len(s.Test))
		}
	}
}

func TestLoadRealSigned(t *testing.T) {
	dataDir := testutil.DataDir(t)
	cases := []struct {
		name        string
		n, pos, neg int // nodes, undirected positive/negative edges
		train, test int // directed entries after dropping self-loops and repeats
		maxSeconds  float64
	}{
		{"bitcoin_alpha", 3783, 12888, 1236, 19348, 4838, 1},
		{"bitcoin_otc", 5881, 18484, 3008, 28473, 7119, 1},
		{"slashdot", 13182, 28884, 5376, 29070, 7268, 1},
		{"wikirfa", 11258, 132915, 38647, 143462, 36758, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			g, err := Load(c.name, dataDir, 0)
			if err != nil {
				t.Fatal(err)
			}
			sec := time.Since(start).Seconds()
			t.Logf("%s loaded in %.3fs", c.name, sec)
			// wikirfa (185k lines + 185k in train/test) takes ~0.2s, ~1s
			// under -race; the bound only catches pathological slowdowns.
			if sec > 5 {
				t.Errorf("loading took %.2fs, want well under 5s", sec)
			}
			checkUndirected(t, g.Adj)
			checkUndirected(t, g.Neg)
			if g.N != c.n || g.Adj.NNZ() != 2*c.pos || g.Neg.NNZ() != 2*c.neg {
				t.Errorf("N=%d pos=%d neg=%d, want %d %d %d", g.N, g.Adj.NNZ()/2, g.Neg.NNZ()/2, c.n, c.pos, c.neg)
			}
			if g.EdgeTrain == nil || g.EdgeTest == nil {
				t.Fatal("missing edge split")
			}
			if g.EdgeTrain.NNZ() != c.train || g.EdgeTest.NNZ() != c.test {
				t.Errorf("train %d test %d, want %d %d", g.EdgeTrain.NNZ(), g.EdgeTest.NNZ(), c.train, c.test)
			}
			for _, m := range []*graphs.CSR{g.EdgeTrain, g.EdgeTest} {
				if err := m.Validate(); err != nil {
					t.Fatal(err)
				}
				for _, v := range m.Data {
					if v != 1 && v != -1 {
						t.Fatalf("edge value %v", v)
					}
				}
			}
		})
	}
}

// fileSafe turns a test-case name into a file name.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '/' || r == ',' || r == '=' {
			return '_'
		}
		return r
	}, s)
}

// TestAdversarialGraphs: the audit graphs have the shape their docs state.
func TestAdversarialGraphs(t *testing.T) {
	deg := func(g *graphs.Graph, i int) int { return g.Adj.Indptr[i+1] - g.Adj.Indptr[i] }
	s := gen.SmallStar(9, 1)
	if s.N != 10 || deg(s, 0) != 9 || deg(s, 3) != 1 {
		t.Errorf("star-9: N %d, hub degree %d, leaf degree %d", s.N, deg(s, 0), deg(s, 3))
	}
	d := gen.DoubleStar(1)
	if d.N != 52 || deg(d, 0) != 51 || deg(d, 1) != 51 || deg(d, 2) != 2 {
		t.Errorf("double-star: N %d, hub degrees %d %d, leaf degree %d", d.N, deg(d, 0), deg(d, 1), deg(d, 2))
	}
	p := gen.Path(1)
	ends := 0
	for i := range p.N {
		if deg(p, i) == 1 {
			ends++
		}
	}
	if p.N != 41 || deg(p, 0) != 2 || ends != 2 || p.Adj.NNZ() != 2*40 {
		t.Errorf("path: N %d, node 0 degree %d, %d ends, %d entries", p.N, deg(p, 0), ends, p.Adj.NNZ())
	}
	// node 0 in the middle: removing it leaves two paths of 20 nodes
	cut := graphs.RemoveNode(p.Adj, 0)
	seen := map[int]bool{}
	var walk func(int) int
	walk = func(i int) int {
		seen[i] = true
		n := 1
		for _, j := range cut.Indices[cut.Indptr[i]:cut.Indptr[i+1]] {
			if !seen[j] {
				n += walk(j)
			}
		}
		return n
	}
	if a, b := walk(1), walk(40); a != 20 || b != 20 {
		t.Errorf("path without node 0: components of %d and %d nodes, want 20 and 20", a, b)
	}
	w := gen.PowerLaw(1)
	if w.N != 300 || w.Adj.NNZ() != 2*(3+2*297) {
		t.Errorf("powerlaw: N %d, %d entries", w.N, w.Adj.NNZ())
	}
	for i := 1; i < w.N; i++ {
		if deg(w, i) > deg(w, 0) {
			t.Errorf("powerlaw: node %d has degree %d above node 0's %d", i, deg(w, i), deg(w, 0))
			break
		}
	}
	if !graphs.IsSymmetric(w.Adj) {
		t.Error("powerlaw is not symmetric")
	}
}

// TestFeatureRange: a feature value beyond the public range ±1e30 is refused
// at load with a message that names the bound only (not the node), the
// value at the bound loads, and removing the node that holds the value (the
// raw neighbour, its feature row zeroed) loads too.
func TestFeatureRange(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		v   float64
		bad bool
	}{{1e30, false}, {-1e30, false}, {1.0000001e30, true}, {-1.797e308, true}, {1e160, true}} {
		g := gen.SmallStar(9, 1)
		g.X.Dense[3*g.X.F+2] = tc.v
		path := filepath.Join(dir, "g.npz")
		if err := SaveNPZ(path, g); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path, "", 1)
		if tc.bad != (err != nil) {
			t.Fatalf("value %g: err = %v, want refused %v", tc.v, err, tc.bad)
		}
		if err != nil && !strings.Contains(err.Error(), "public range |x| ≤ 1e+30") {
			t.Errorf("value %g: message %q", tc.v, err)
		}
		if err != nil {
			for _, leak := range []string{"row 3", "node 3", "[3", fmt.Sprint(tc.v)} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("value %g: the refusal names %q: %v", tc.v, leak, err)
				}
			}
		}
		// the neighbour without node 3
		for f := range g.X.F {
			g.X.Dense[3*g.X.F+f] = 0
		}
		if err := SaveNPZ(path, g); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(path, "", 1); err != nil {
			t.Errorf("value %g, node 3 removed: %v", tc.v, err)
		}
	}
}

// TestL1NormalizeSignedRows: l1 normalisation divides by Σ|x|, so every
// value stays in [−1, 1] (a signed sum sent (1, −1, 5e-324) to ±Inf), and
// non-negative rows still sum to 1.
func TestL1NormalizeSignedRows(t *testing.T) {
	f := &graphs.Features{N: 2, F: 3, Dense: []float64{1, -1, 5e-324, 1, 2, 1}}
	for _, g := range []*graphs.Features{graphs.L1NormalizeFeatures(f), graphs.L1NormalizeFeatures(&graphs.Features{N: 2, F: 3, Sparse: graphs.FromCOO(2, 3, []int{0, 0, 0, 1, 1, 1}, []int{0, 1, 2, 0, 1, 2}, f.Dense)})} {
		d := g.ToDense()
		for i, v := range d {
			if !(math.Abs(v) <= 1) {
				t.Fatalf("value %d = %v outside [−1, 1]", i, v)
			}
		}
		if s := d[3] + d[4] + d[5]; math.Abs(s-1) > 1e-15 {
			t.Errorf("non-negative row sums to %v, want 1", s)
		}
		if math.Abs(d[0]-0.5) > 1e-15 || math.Abs(d[1]+0.5) > 1e-15 {
			t.Errorf("signed row → %v, want (0.5, −0.5, ~0)", d[:3])
		}
	}
}
