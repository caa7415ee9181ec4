package graphs

import (
	"archive/zip"
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"
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
		for k, i := range signedRemapper(ids)(all) {
			if i < 0 || i >= len(ids) || ids[i] != all[k] {
				t.Fatalf("id %d remapped to slot %d", all[k], i)
			}
		}
		if len(ids) > 0 {
			n := len(ids)
			remap := signedRemapper(ids)
			pos, neg := signedUndirected(n, remap(src), remap(dst), sign)
			for _, m := range []*CSR{pos, neg} {
				if err := m.Validate(); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

// FuzzParseNPY: the .npy decoder never panics and, on success, its element
// accessors stay within the data.
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
		arr, err := parseNPY(data)
		if err != nil {
			return
		}
		if len(arr.raw) != arr.n*arr.dtype.size {
			t.Fatalf("raw %d bytes for %d×%d", len(arr.raw), arr.n, arr.dtype.size)
		}
		if v := arr.floats(); len(v) != arr.n {
			t.Fatalf("floats: %d values for %d", len(v), arr.n)
		}
		if v, err := arr.ints(); err == nil && len(v) != arr.n {
			t.Fatalf("ints: %d values for %d", len(v), arr.n)
		}
	})
}

// FuzzLoadNPZ: arbitrary archive bytes never panic; a graph that loads is
// well formed.
func FuzzLoadNPZ(f *testing.F) {
	for _, e := range []npzEntries{toyEntries(), toyMatrixSpelling(), toyEntries().without("labels")} {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, x := range e {
			w, _ := zw.CreateHeader(&zip.FileHeader{Name: x.key + ".npy", Method: zip.Store})
			w.Write(x.data)
		}
		zw.Close()
		f.Add(buf.Bytes())
	}
	f.Add([]byte("PK\x05\x06"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := readSparseGraphNPZ(bytes.NewReader(data), int64(len(data)), "fuzz.npz")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.npz") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
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
	})
}
