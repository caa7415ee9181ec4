package graphio

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dpgnn/dpgnn/graphs"
	"github.com/dpgnn/dpgnn/graphs/gen"
)

// Tests for inputs a new user may get wrong: absurd sizes, implausible
// feature and class ids, empty graphs, splits that leave nothing to train
// or test on, outputs that are not regular files, missing datasets.

// ---------------------------------------------------------------------------
// memory limit

func TestParseBytes(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		err  string
	}{
		{"4GB", 4e9, ""},
		{"16 gb", 16e9, ""},
		{"512MiB", 512 << 20, ""},
		{"2e10", 2e10, ""},
		{"1.5G", 1.5e9, ""},
		{"100", 100, ""},
		{"3kB", 3000, ""},
		{"1TiB", 1 << 40, ""},
		{"", 0, "not a number"},
		{"lots", 0, "unknown unit"},
		{"5 parsecs", 0, "unknown unit"},
		{"-1GB", 0, "out of range"},
		{"0", 0, "out of range"},
		{"1e30TB", 0, "out of range"},
		{"NaN", 0, "unknown unit"},
		{"GB", 0, "not a number"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := graphs.ParseBytes(c.in)
			if c.err != "" {
				wantErr(t, err, c.err)
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("ParseBytes(%q) = %d, %v; want %d", c.in, got, err, c.want)
			}
		})
	}
}

func TestFormatBytes(t *testing.T) {
	for _, c := range []struct {
		b    float64
		want string
	}{
		{0, "0 B"}, {999, "999 B"}, {1000, "1 kB"}, {31_000_000, "31 MB"},
		{21_664_021_664, "21.7 GB"}, {4e9, "4 GB"}, {7.2e13, "72 TB"}, {150e3, "150 kB"}, {999.96e6, "1 GB"},
	} {
		if got := graphs.FormatBytes(c.b); got != c.want {
			t.Errorf("FormatBytes(%v) = %q, want %q", c.b, got, c.want)
		}
	}
}

func TestMemoryLimitEnv(t *testing.T) {
	t.Setenv(graphs.MemoryLimitEnv, "")
	if l, err := graphs.MemoryLimit(); err != nil || l != graphs.DefaultMemoryLimit {
		t.Fatalf("unset: %d, %v", l, err)
	}
	t.Setenv(graphs.MemoryLimitEnv, "16GB")
	if l, err := graphs.MemoryLimit(); err != nil || l != 16e9 {
		t.Fatalf("16GB: %d, %v", l, err)
	}
	t.Setenv(graphs.MemoryLimitEnv, "plenty")
	_, err := graphs.MemoryLimit()
	wantErr(t, err, "$DPGNN_MAX_MEMORY", `"plenty"`)
}

// ---------------------------------------------------------------------------
// 1. generator sizes

func TestCSBMCheckMemory(t *testing.T) {
	def := gen.DefaultCSBM()
	with := func(f func(*gen.CSBMConfig)) gen.CSBMConfig { c := def; f(&c); return c }
	cases := []struct {
		name  string
		cfg   gen.CSBMConfig
		limit string
		want  []string // nil: accepted
	}{
		{"default", def, "", nil},
		{"1e11 nodes", with(func(c *gen.CSBMConfig) { c.Nodes = 1e11 }), "",
			[]string{"csbm: 100000000000 nodes × 32 features with average degree 8 would take 72 TB", "limit 16 GB", "$DPGNN_MAX_MEMORY"}},
		{"many features", with(func(c *gen.CSBMConfig) { c.Nodes = 1e6; c.Features = 1e4 }), "",
			[]string{"1000000 nodes × 10000 features", "would take 80.5 GB"}},
		{"dense degree", with(func(c *gen.CSBMConfig) { c.Nodes = 1e6; c.AvgDegree = 1000 }), "",
			[]string{"average degree 1000", "would take 50.3 GB"}},
		{"raised limit", with(func(c *gen.CSBMConfig) { c.Nodes = 1e6; c.Features = 1e4 }), "100GB", nil},
		{"lowered limit", def, "1MB", []string{"2000 nodes × 32 features", "would take 1.4 MB (limit 1 MB"}},
		{"bad limit", def, "much", []string{"$DPGNN_MAX_MEMORY", `"much"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(graphs.MemoryLimitEnv, c.limit)
			if err := c.cfg.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			err := c.cfg.CheckMemory()
			if c.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantErr(t, err, c.want...)
		})
	}
}

// Validate must stay fast for absurd class counts (it used to loop over
// the classes) and refuse edge counts that overflow an int.
func TestCSBMValidateHugeConfigs(t *testing.T) {
	cases := []struct {
		name string
		cfg  gen.CSBMConfig
		want string
	}{
		{"1e12 classes", gen.CSBMConfig{Nodes: 1e12, Classes: 1e12, Features: 1, AvgDegree: 8, Homophily: 0.8}, "intra-class pairs"},
		{"overflowing edges", gen.CSBMConfig{Nodes: 1e18, Classes: 2, Features: 1, AvgDegree: 8, Homophily: 0.5}, "edges, more than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			wantErr(t, c.cfg.Validate(), c.want)
			if d := time.Since(start); d > time.Second {
				t.Fatalf("Validate took %v", d)
			}
		})
	}
	wantErr(t, gen.SignedSBMConfig{Nodes: 1e18, Communities: 2, AvgDegree: 8}.Validate(), "edges, more than")
	// The estimate agrees with what CSBM allocates, within a factor 3.
	cfg := gen.CSBMConfig{Nodes: 20000, Classes: 4, Features: 16, AvgDegree: 10, Homophily: 0.8, Signal: 1}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	g := gen.CSBM(cfg, 1)
	runtime.ReadMemStats(&after)
	alloc := float64(after.TotalAlloc - before.TotalAlloc)
	if est := cfg.EstimateBytes(); alloc > 3*est || est > 3*alloc {
		t.Errorf("estimate %s, CSBM allocated %s", graphs.FormatBytes(est), graphs.FormatBytes(alloc))
	}
	_ = g
}

// ---------------------------------------------------------------------------
// 2. implausible feature ids (geom-gcn)

func TestGeomGCNFeatureRules(t *testing.T) {
	edges := "h\n0\t1\n1\t2\n"
	nodes := func(header string, feats ...string) string {
		var b strings.Builder
		b.WriteString(header + "\n")
		for i, f := range feats {
			fmt.Fprintf(&b, "%d\t%s\t%d\n", i, f, i%2)
		}
		return b.String()
	}
	cases := []struct {
		name, nodes, limit string
		wantF              int
		want               []string // nil: loads with wantF features
	}{
		{"header bound ok", nodes("node_id\tfeature(feature_amount:5)\tlabel", "0,5", "1", "2"), "", 6, nil},
		{"beyond header", nodes("node_id\tfeature(feature_amount:931)\tlabel", "0,5", "999999", "2"), "",
			0, []string{geomNodesFile + ":3: feature id 999999 is beyond the header's feature_amount:931"}},
		{"header allows many", nodes("node_id\tfeature(feature_amount:5000)\tlabel", "0", "4999", "2"), "", 5001, nil},
		{"header fixes F", nodes("node_id\tfeature(feature_amount:931)\tlabel", "0", "", "2"), "", 932, nil},
		{"header without any feature", nodes("node_id\tfeature(feature_amount:3)\tlabel", "", "", ""), "", 4, nil},
		{"headerless without any feature", nodes("node_id\tfeatures\tlabel", "", "", ""), "",
			0, []string{geomNodesFile + ": no node has a feature (the feature column is empty on all 3 rows)"}},
		{"headerless plausible", nodes("node_id\tfeatures\tlabel", "0", "900", "2"), "", 901, nil},
		{"headerless stray id", nodes("node_id\tfeatures\tlabel", "0,1", "999999", "2"), "",
			0, []string{geomNodesFile + ":3: feature id 999999 implies 1000000 features but the file uses only 4 distinct feature ids",
				"at most 10·4 + 1000 = 1040"}},
		{"no header line", "0\t1\t0\n1\t3000\t1\n2\t2\t0\n", "",
			0, []string{geomNodesFile + ":2: feature id 3000 implies 3001 features", "only 3 distinct"}},
		{"dense too large", nodes("node_id\tfeatures\tlabel", "0", "900", "2", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1"), "100kB",
			0, []string{geomNodesFile + ":3: feature id 900: 20 nodes × 901 features as a dense float64 matrix would take 144 kB (limit 100 kB"}},
		{"declared too large", nodes("node_id\tfeature(feature_amount:2000000000)\tlabel", "0", "1", "2"), "",
			0, []string{geomNodesFile + ":1: feature_amount:2000000000: 3 nodes × 2000000001 features as a dense float64 matrix would take 48 GB (limit 16 GB"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// A limit far below what the process holds is refused by the
			// load's budget before anything is read; these cases check the
			// dense-matrix rule alone.
			limit, err := graphs.ParseBytes(c.limit)
			if c.limit == "" {
				limit, err = graphs.DefaultMemoryLimit, nil
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Setenv(graphs.MemoryLimitEnv, c.limit)
			dir := geomFixture{edges: edges, nodes: c.nodes}.write(t)
			g, err := loadGeomGCN(dir, newBudgetLimit(max(limit, graphs.DefaultMemoryLimit)))
			if c.want != nil {
				wantErr(t, err, c.want...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g.X.F != c.wantF {
				t.Errorf("F = %d, want %d", g.X.F, c.wantF)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// 3. implausible class ids (npz, geom-gcn)

func TestLabelRules(t *testing.T) {
	dir := t.TempDir()
	npzCases := []struct {
		name   string
		labels []byte
		limit  string
		want   []string
	}{
		{"npz class id 1000000", i64Arr(0, 1, 1000000, -1), "",
			[]string{`array "labels": class id 1000000 (node 2) but only 4 nodes`, "at most as many classes as nodes"}},
		{"npz class id = N", i8Arr(0, 4, 1, 1), "", []string{"class id 4 (node 1) but only 4 nodes"}},
		{"npz class id N-1", i8Arr(0, 3, 1, 1), "", nil},
	}
	for _, c := range npzCases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(graphs.MemoryLimitEnv, c.limit)
			p := filepath.Join(dir, fileSafe(c.name)+".npz")
			writeNPZ(t, p, toyEntries().with("labels", c.labels))
			g, err := LoadNPZ(p)
			if c.want == nil {
				if err != nil || g.NumClasses != 4 {
					t.Fatalf("NumClasses %v, err %v", g, err)
				}
				return
			}
			wantErr(t, err, append([]string{p}, c.want...)...)
		})
	}
	geomCases := []struct {
		name, nodes, limit string
		want               []string
	}{
		{"geom class id 1000000", "h\n0\t0\t0\n1\t0\t1000000\n2\t0\t1\n", "",
			[]string{geomNodesFile + ":3: class id 1000000 (node 1) but only 3 nodes"}},
		{"geom logits over limit", "h\n0\t0\t0\n1\t0\t4\n2\t0\t1\n3\t0\t1\n4\t0\t1\n", "100B",
			[]string{geomNodesFile + ":3: 5 classes (largest class id 4, node 1): one 5×5 float64 matrix of logits would take 200 B (limit 100 B"}},
		{"geom unlabelled only", "h\n0\t0\t-1\n1\t0\t-1\n2\t0\t-1\n", "", nil},
	}
	for _, c := range geomCases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(graphs.MemoryLimitEnv, c.limit)
			// the logit rule alone (a 100 B limit is far below what the
			// process holds, which the load's budget refuses first)
			g, err := loadGeomGCN(geomFixture{edges: "h\n0\t1\n1\t2\n", nodes: c.nodes}.write(t), newBudgetLimit(graphs.DefaultMemoryLimit))
			if c.want == nil {
				if err != nil || g.NumClasses != 0 {
					t.Fatalf("got %v, %v", g, err)
				}
				return
			}
			wantErr(t, err, c.want...)
		})
	}
	// The rule in isolation.
	wantErr(t, checkClassCount(1_000_001, 2708, "node 7"), "class id 1000000 (node 7) but only 2708 nodes")
	wantErr(t, checkClassCount(30_000, 200_000, "node 7"), "30000 classes", "200000×30000 float64 matrix of logits would take 48 GB")
	if err := checkClassCount(7, 2708, "node 7"); err != nil {
		t.Fatal(err)
	}
}

// ---------------------------------------------------------------------------
// 4. empty graphs

func TestEmptyGraphs(t *testing.T) {
	t.Run("npz", func(t *testing.T) {
		dir := t.TempDir()
		cases := []struct {
			name    string
			entries npzEntries
			want    []string
		}{
			{"no nodes", npzEntries{
				{"adj_data", f32Arr()}, {"adj_indices", i32Arr()}, {"adj_indptr", i32Arr(0)}, {"adj_shape", i64Arr(0, 0)},
				{"attr_data", f32Arr()}, {"attr_indices", i32Arr()}, {"attr_indptr", i32Arr(0)}, {"attr_shape", i64Arr(0, 3)},
				{"labels", i8Arr()}}, []string{"adjacency has shape (0, 0): the graph has no nodes"}},
			// A graph without edges loads (want nil): removing the last
			// edge must not turn an accepted input into a refused one.
			{"no edges", toyEntries().with("adj_data", f32Arr()).with("adj_indices", i32Arr()).with("adj_indptr", i32Arr(0, 0, 0, 0, 0)), nil},
			{"only self-loops and zeros", toyEntries().with("adj_data", f32Arr(1, 0)).with("adj_indices", i32Arr(0, 2)).with("adj_indptr", i32Arr(0, 1, 2, 2, 2)), nil},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				p := filepath.Join(dir, fileSafe(c.name)+".npz")
				writeNPZ(t, p, c.entries)
				g, err := LoadNPZ(p)
				if c.want == nil {
					if err != nil || g.N != 4 || g.Adj.NNZ() != 0 {
						t.Fatalf("an edgeless graph: %v, %v", g, err)
					}
					return
				}
				wantErr(t, err, append([]string{p}, c.want...)...)
			})
		}
	})
	t.Run("geom-gcn", func(t *testing.T) {
		cases := []struct {
			name string
			fix  geomFixture
			want []string
		}{
			// edge files without an edge load as graphs without edges (want nil)
			{"empty edge file", geomFixture{edges: "node_id\tnode_id\n", nodes: geomNodes}, nil},
			{"blank edge file", geomFixture{edges: "\n\n  \n", nodes: geomNodes}, nil},
			{"self-loops only", geomFixture{edges: "h\n1\t1\n3\t3\n", nodes: geomNodes}, nil},
			{"empty node file", geomFixture{edges: geomEdges, nodes: "node_id\tfeature\tlabel\n"}, []string{geomNodesFile + ": no node rows"}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				g, err := LoadGeomGCN(c.fix.write(t))
				if c.want == nil {
					if err != nil || g.Adj.NNZ() != 0 {
						t.Fatalf("an edgeless graph: %v, %v", g, err)
					}
					return
				}
				wantErr(t, err, c.want...)
			})
		}
	})
	t.Run("signed", func(t *testing.T) {
		whole := "1\t2\t1\n2\t3\t-1\n3\t4\t1\n"
		cases := []struct {
			name  string
			files map[string]string
			want  []string
		}{
			{"empty whole", map[string]string{"whole_edge.txt": ""}, []string{"whole_edge.txt: no edges"}},
			{"comments only", map[string]string{"whole_edge.txt": "# src dst sign\n\n"}, []string{"whole_edge.txt: no edges"}},
			{"self-loops only", map[string]string{"whole_edge.txt": "1 1 1\n2 2 -1\n"}, []string{"whole_edge.txt: no edges besides self-loops (2 edge lines"}},
			{"empty train", map[string]string{"whole_edge.txt": whole, "toy.train": ""}, []string{"toy.train: no edges"}},
			{"empty test", map[string]string{"whole_edge.txt": whole, "toy.test": "\n"}, []string{"toy.test: no edges"}},
			{"train node absent", map[string]string{"whole_edge.txt": whole, "toy.train": "1 2 1\n\n42 3 -1\n"},
				[]string{"toy.train:3: node 42 does not occur in", "whole_edge.txt"}},
			{"test node absent", map[string]string{"whole_edge.txt": whole, "toy.test": "4 -7 1\n"},
				[]string{"toy.test:1: node -7 does not occur in", "whole_edge.txt"}},
			{"test node beyond id range", map[string]string{"whole_edge.txt": whole, "toy.test": "1 9223372036854775807 1\n"},
				[]string{"toy.test:1: node 9223372036854775807 does not occur"}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				dir := writeSignedDir(t, "toy", c.files)
				_, err := LoadSigned(dir)
				wantErr(t, err, append([]string{dir}, c.want...)...)
			})
		}
		// Far-apart ids (binary-search lookup) are checked the same way.
		dir := writeSignedDir(t, "toy", map[string]string{
			"whole_edge.txt": "-9000000000000 9000000000000 1\n3 -9000000000000 -1\n",
			"toy.train":      "3 9000000000000 1\n4 3 1\n",
		})
		_, err := LoadSigned(dir)
		wantErr(t, err, "toy.train:2: node 4 does not occur")
	})
}

// ---------------------------------------------------------------------------
// 6. output files

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	mustWrite := func(p, s string, mode os.FileMode) {
		if err := os.WriteFile(p, []byte(s), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
	}
	type check func(t *testing.T)
	cases := []struct {
		name  string
		setup func() string // returns the path to write to
		write func(io.Writer) error
		want  []string // error substrings; nil: success
		after check
	}{
		{"new file", func() string { return filepath.Join(dir, "new.npz") }, write("data"), nil, func(t *testing.T) {
			wantFile(t, filepath.Join(dir, "new.npz"), "data", 0o644)
		}},
		{"replace keeps mode", func() string {
			p := filepath.Join(dir, "old.npz")
			mustWrite(p, "old", 0o600)
			return p
		}, write("fresh"), nil, func(t *testing.T) { wantFile(t, filepath.Join(dir, "old.npz"), "fresh", 0o600) }},
		{"through symlink", func() string {
			mustWrite(filepath.Join(dir, "target.npz"), "old", 0o644)
			os.Symlink("target.npz", filepath.Join(dir, "link.npz"))
			return filepath.Join(dir, "link.npz")
		}, write("new"), nil, func(t *testing.T) {
			wantFile(t, filepath.Join(dir, "target.npz"), "new", 0o644)
			if st, err := os.Lstat(filepath.Join(dir, "link.npz")); err != nil || st.Mode()&fs.ModeSymlink == 0 {
				t.Fatalf("link replaced: %v %v", st, err)
			}
		}},
		{"dangling symlink chain", func() string {
			os.Mkdir(filepath.Join(dir, "sub"), 0o755)
			os.Symlink("sub/mid", filepath.Join(dir, "first"))
			os.Symlink("created.npz", filepath.Join(dir, "sub", "mid"))
			return filepath.Join(dir, "first")
		}, write("x"), nil, func(t *testing.T) { wantFile(t, filepath.Join(dir, "sub", "created.npz"), "x", 0o644) }},
		{"directory", func() string { return dir }, write("x"), []string{"is a directory, not a regular file"}, nil},
		{"link to directory", func() string {
			os.Symlink(".", filepath.Join(dir, "dirlink"))
			return filepath.Join(dir, "dirlink")
		}, write("x"), []string{"links to", "which is a directory, not a regular file"}, nil},
		{"character device", func() string { return "/dev/null" }, write("x"), []string{"is a character device, not a regular file"}, nil},
		{"missing directory", func() string { return filepath.Join(dir, "no", "x.npz") }, write("x"),
			[]string{"directory " + filepath.Join(dir, "no") + " does not exist"}, nil},
		{"symlink loop", func() string {
			os.Symlink("loopB", filepath.Join(dir, "loopA"))
			os.Symlink("loopA", filepath.Join(dir, "loopB"))
			return filepath.Join(dir, "loopA")
		}, write("x"), []string{"levels of symbolic links"}, nil},
		{"empty path", func() string { return "" }, write("x"), []string{"no output path"}, nil},
		{"write error keeps old file", func() string {
			p := filepath.Join(dir, "keep.npz")
			mustWrite(p, "precious", 0o644)
			return p
		}, func(w io.Writer) error {
			io.WriteString(w, "partial")
			return errors.New("disk on fire")
		}, []string{"writing failed: disk on fire (nothing was written)"}, func(t *testing.T) {
			wantFile(t, filepath.Join(dir, "keep.npz"), "precious", 0o644)
		}},
		{"write error leaves no new file", func() string { return filepath.Join(dir, "never.npz") },
			func(w io.Writer) error { return errors.New("boom") }, []string{"writing failed: boom"}, func(t *testing.T) {
				if _, err := os.Lstat(filepath.Join(dir, "never.npz")); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("file left behind: %v", err)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "character device" && runtime.GOOS == "windows" {
				t.Skip("no /dev/null")
			}
			err := WriteFileAtomic(c.setup(), c.write)
			if c.want != nil {
				wantErr(t, err, c.want...)
			} else if err != nil {
				t.Fatal(err)
			}
			if c.after != nil {
				c.after(t)
			}
		})
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*", ".*tmp*"))
	left2, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
	if len(left)+len(left2) > 0 {
		t.Errorf("temporary files left behind: %v %v", left, left2)
	}
	if st, err := os.Stat("/dev/null"); err == nil && st.Mode()&fs.ModeCharDevice == 0 {
		t.Errorf("/dev/null is no longer a device")
	}
}

func wantFile(t *testing.T, p, content string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil || string(b) != content {
		t.Fatalf("%s holds %q (%v), want %q", p, b, err, content)
	}
	if st, _ := os.Stat(p); runtime.GOOS != "windows" && st.Mode().Perm() != mode {
		t.Errorf("%s has mode %v, want %v", p, st.Mode().Perm(), mode)
	}
}

// shortWriter accepts at most 3 bytes per call without an error.
type shortWriter struct{}

func (shortWriter) Write(p []byte) (int, error) { return min(len(p), 3), nil }

func TestCheckedWriterShortWrite(t *testing.T) {
	w := &checkedWriter{w: shortWriter{}}
	if _, err := w.Write([]byte("ab")); err != nil {
		t.Fatal(err)
	}
	if n, err := w.Write([]byte("abcdef")); n != 3 || !errors.Is(err, io.ErrShortWrite) {
		t.Fatalf("short write: %d, %v", n, err)
	}
	if w.n != 5 {
		t.Fatalf("counted %d bytes", w.n)
	}
}

func TestSaveNPZRefusesDevices(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	g := &graphs.Graph{N: 2, Adj: graphs.FromCOO(2, 2, []int{0, 1}, []int{1, 0}, nil),
		X: &graphs.Features{N: 2, F: 1, Dense: []float64{1, 2}}, Labels: []int{0, 1}}
	wantErr(t, SaveNPZ("/dev/full", g), "save /dev/full: is a character device, not a regular file")
	if st, err := os.Stat("/dev/full"); err != nil || st.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("/dev/full replaced: %v %v", st, err)
	}
	// Through a link: the link target is named.
	link := filepath.Join(t.TempDir(), "out.npz")
	os.Symlink("/dev/full", link)
	wantErr(t, SaveNPZ(link, g), "save "+link+": links to /dev/full, which is a character device")
}

// ---------------------------------------------------------------------------
// 7. missing datasets

func TestMissingDatasetMessage(t *testing.T) {
	empty := t.TempDir()
	cases := []struct {
		name string
		want []string
	}{
		{"cora", []string{"dataset cora not found", "run `dpgnn data fetch cora --data-dir " + empty + "` to download it", "put the sparsegraph npz file at " + filepath.Join(empty, "cora.npz"), "gnn-benchmark", "--data-dir or $DPGNN_DATA"}},
		{"citeseer", []string{"at " + filepath.Join(empty, "citeseer.npz"), "klicperajo/ppnp"}},
		{"actor", []string{"in the directory " + filepath.Join(empty, "actor") + string(os.PathSeparator), geomEdgesFile, geomNodesFile, "film_split_0.6_0.2_0.npz"}},
		{"slashdot", []string{"in the directory " + filepath.Join(empty, "signed", "slashdot") + string(os.PathSeparator), "whole_edge.txt, slashdot.train and slashdot.test", "ASGL"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(c.name, empty, 1)
			wantErr(t, err, c.want...)
			if !strings.Contains(err.Error(), "`dpgnn data fetch "+c.name+" --data-dir "+empty+"`") {
				t.Errorf("message does not give the fetch command: %v", err)
			}
		})
	}
	for _, name := range []string{"csbm", "chain-s", "nonsense"} {
		if _, ok := DatasetHelp(name, empty); ok {
			t.Errorf("DatasetHelp(%q) claims files", name)
		}
	}
}
