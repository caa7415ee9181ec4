package cli

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/graphs/gen"
	"github.com/dpgnn/dpgnn/graphs/io"
	"github.com/dpgnn/dpgnn/trainers"
)

// TestBadInputsFailInOneLine lists, in one place, the inputs a new user may
// get wrong that dpgnn refuses: absurd sizes, implausible ids in dataset
// files, empty or inconsistent files, budgets and noise that mean nothing,
// splits with nothing to train on, mixed records, outputs that are devices,
// contradictory flags, datasets it cannot download. Each must fail (exit
// status 1) before any long work, with a one-line error that names the
// flag or file and the value, and print nothing on stdout. Several are
// also tested where they are handled; this is the list.
func TestBadInputsFailInOneLine(t *testing.T) {
	dir := t.TempDir()
	write := func(path, content string) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// geom-gcn files (graphs/load_geomgcn.go): "node_id<TAB>features<TAB>label"
	// rows with comma-separated feature ids, and a node_id pair per edge.
	const geomNodes = "node_id\tfeature\tlabel\n0\t0,1\t0\n1\t1\t1\n2\t2\t0\n"
	geomStrayFeature := filepath.Join(dir, "geom-stray")
	write(filepath.Join(geomStrayFeature, "out1_graph_edges.txt"), "node_id\tnode_id\n0\t1\n1\t2\n")
	write(filepath.Join(geomStrayFeature, "out1_node_feature_label.txt"), "node_id\tfeature\tlabel\n0\t0,1\t0\n1\t999999\t1\n2\t2\t0\n")
	// signed edge lists (graphs/load_signed.go): "src dst sign" lines.
	signedEmpty := filepath.Join(dir, "signed-empty", "toy")
	write(filepath.Join(signedEmpty, "whole_edge.txt"), "")
	signedAbsent := filepath.Join(dir, "signed-absent", "toy")
	write(filepath.Join(signedAbsent, "whole_edge.txt"), "1\t2\t1\n2\t3\t-1\n3\t4\t1\n")
	write(filepath.Join(signedAbsent, "toy.train"), "1 2 1\n42 3 -1\n")
	write(filepath.Join(signedAbsent, "toy.test"), "1 3 1\n")
	// a cora-like npz whose node 3 has class id 1000000.
	npzBadLabel := filepath.Join(dir, "badlabel.npz")
	cfg := gen.DefaultCSBM()
	cfg.Nodes, cfg.Features, cfg.AvgDegree = 40, 8, 3
	g := gen.CSBM(cfg, 1)
	g.Labels[3] = 1_000_000
	if err := graphio.SaveNPZ(npzBadLabel, g); err != nil {
		t.Fatal(err)
	}
	// records of two datasets for sweep --from.
	recCora := write(filepath.Join(dir, "cora.jsonl"), sweepRec(t, "gap", 1)+"\n")
	recCSBM := write(filepath.Join(dir, "csbm.jsonl"), sweepRec(t, "gap", 8, func(r *trainers.Record) { r.Dataset = "csbm" })+"\n")
	sgm := []string{"account", "sgm", "--rate", "0.01", "--steps", "1000", "--delta", "1e-5"}
	// a mirror nothing listens on (a server that was closed).
	closed := httptest.NewServer(http.NotFoundHandler())
	unreachable := closed.URL
	closed.Close()

	for _, tc := range []struct {
		name string
		args []string
		want []string // substrings of the error
	}{
		{"hidden width 1e9", []string{"train", "gcn", "--hidden", "1000000000"}, []string{"--hidden", "1000000000"}},
		{"csbm with 1e11 nodes", []string{"data", "generate", "--nodes", "1e11", "--out", filepath.Join(dir, "huge.npz")},
			[]string{"100000000000 nodes", "would take 72 TB"}},
		{"geom-gcn feature id 999999", []string{"train", "gcn", "--dataset", geomStrayFeature},
			[]string{filepath.Join(geomStrayFeature, "out1_node_feature_label.txt") + ":3", "feature id 999999"}},
		{"npz class id 1000000", []string{"train", "gcn", "--dataset", npzBadLabel}, []string{npzBadLabel, "class id 1000000"}},
		{"gap with 1000 hops", []string{"train", "gap", "--privacy", "edge", "--epsilon", "1", "--hops", "1000"}, []string{"--hops", "1000"}},
		{"progap with 1000 hops", []string{"train", "progap", "--privacy", "edge", "--epsilon", "1", "--hops", "1000"}, []string{"--hops", "1000"}},
		{"account target ε 1e-300", append(sgm, "--epsilon", "1e-300"), []string{"--epsilon 1e-300", "implausibly small"}},
		{"account noise 1e-300", append(sgm, "--noise", "1e-300"), []string{"--noise 1e-300", "protects nothing"}},
		{"account gaussian σ 1e-300", []string{"account", "gaussian", "--count", "10", "--delta", "1e-5", "--sigma", "1e-300"}, []string{"--sigma 1e-300"}},
		{"split without training nodes", []string{"train", "gcn", "--split", "ratio:0.0001:0.2"}, []string{"ratio:0.0001:0.2", "no training node"}},
		{"sweep --from mixed datasets", []string{"sweep", "--from", recCora + "," + recCSBM}, []string{recCSBM + " line 1 is on dataset csbm", "different datasets"}},
		{"generate to /dev/full", []string{"data", "generate", "--nodes", "50", "--out", "/dev/full"}, []string{"--out /dev/full", "character device"}},
		{"budget without privacy", []string{"train", "mlp", "--privacy", "none", "--epsilon", "1"}, []string{"--epsilon 1", "--privacy none"}},
		// `--features raw --normalize-features` cannot be written: there is
		// no --normalize-features flag, --features raw|l1 is the one switch.
		{"signed empty edge file", []string{"data", "info", signedEmpty}, []string{filepath.Join(signedEmpty, "whole_edge.txt"), "no edges"}},
		{"signed train edge with absent node", []string{"data", "info", signedAbsent},
			[]string{filepath.Join(signedAbsent, "toy.train") + ":2", "node 42 does not occur in", "whole_edge.txt"}},
		{"fetch cora from an unreachable mirror", []string{"data", "fetch", "cora", "--data-dir", filepath.Join(dir, "nodata"), "--mirror", unreachable},
			[]string{"data fetch cora: " + unreachable + "/shchur/gnn-benchmark/", "cora.npz: no response", "connection refused"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := runCLIStreams(t, tc.args...)
			wantCLIErr(t, err, tc.want...)
			if exitStatus(err) != 1 {
				t.Errorf("exit status %d, want 1", exitStatus(err))
			}
			if strings.Contains(err.Error(), "NaN") {
				t.Errorf("error mentions NaN: %q", err)
			}
			if out != "" {
				t.Errorf("stdout: %q", out)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "huge.npz")); err == nil {
		t.Error("the refused csbm was written")
	}
	if st, err := os.Stat("/dev/full"); err != nil || st.Mode()&fs.ModeCharDevice == 0 {
		t.Errorf("/dev/full is no longer a character device: %v, %v", st, err)
	}
}

// TestEdgelessGraphLoads: a geom-gcn directory whose edge file holds its
// header alone loads as a graph without edges (refusing it would refuse
// the neighbour of a one-edge graph that loads).
func TestEdgelessGraphLoads(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "geom-noedges")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"out1_graph_edges.txt":        "node_id\tnode_id\n",
		"out1_node_feature_label.txt": "node_id\tfeature\tlabel\n0\t0,1\t0\n1\t1\t1\n2\t2\t0\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := runCLI(t, "data", "info", dir)
	if err != nil || !strings.Contains(out, "undirected edges") {
		t.Fatalf("data info on an edgeless graph: %v\n%s", err, out)
	}
}
