package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/internal/testutil"
)

// TestReproduceList: --list names every preset with its paper.
func TestReproduceList(t *testing.T) {
	out, err := runCLI(t, "reproduce", "--list")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range reproPresets {
		if !strings.Contains(out, p.name) || !strings.Contains(out, p.paper) {
			t.Errorf("--list does not show %s (%s):\n%s", p.name, p.paper, out)
		}
	}
}

// TestReproduceUnknownPreset: an unknown name is a one-line error listing
// the presets.
func TestReproduceUnknownPreset(t *testing.T) {
	_, err := runCLI(t, "reproduce", "nope", "--out", t.TempDir())
	if err == nil {
		t.Fatal("unknown preset accepted")
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "nope") {
		t.Errorf("error %q: want one line naming the preset", msg)
	}
	for _, name := range reproPresetNames() {
		if !strings.Contains(msg, name) {
			t.Errorf("error %q does not list %s", msg, name)
		}
	}
}

// TestReproduceQuickProGAP: the quick progap-cora preset on the real cora
// writes DIR/table.md with the paper's numbers beside ours and a per-grid
// sweep directory; the same command again trains nothing.
func TestReproduceQuickProGAP(t *testing.T) {
	data, ok := testutil.SharedDatasets()
	if !ok {
		t.Skip("real datasets not found: set DPGNN_DATA or place them at ../shared/datasets beside the repository")
	}
	dir := t.TempDir()
	args := []string{"reproduce", "progap-cora", "--quick", "--out", dir, "--data-dir", data, "--workers", "2"}
	out, err := runCLI(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, sweepTableFile))
	if err != nil {
		t.Fatal(err)
	}
	table := string(b)
	if table != out {
		t.Errorf("stdout and table.md differ:\n%s\n---\n%s", out, table)
	}
	for _, want := range []string{"## edge-finite", "## edge-inf", "## node", "| gap | ", "(paper 0.760)", "(paper 0.852)", "| progap | ", "| mlp | "} {
		if !strings.Contains(table, want) {
			t.Errorf("table.md lacks %q:\n%s", want, table)
		}
	}
	results := map[string]string{}
	for _, g := range []string{"edge-finite", "edge-inf", "node"} {
		r, err := os.ReadFile(filepath.Join(dir, g, sweepResultsFile))
		if err != nil {
			t.Fatal(err)
		}
		results[g] = string(r)
	}
	out2, err := runCLI(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	if out2 != out {
		t.Errorf("the rerun's table differs:\n%s\n---\n%s", out2, out)
	}
	for g, before := range results {
		r, _ := os.ReadFile(filepath.Join(dir, g, sweepResultsFile))
		if string(r) != before {
			t.Errorf("the rerun trained %s again: results.jsonl changed", g)
		}
	}

	// Progress on a stderr file names each grid, and --quiet silences it
	// (the reruns train nothing: only the progress differs).
	for _, quiet := range []bool{false, true} {
		stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		root := newRoot(&b, stderr)
		a := slices.Clone(args)
		if quiet {
			a = append(a, "--quiet")
		}
		root.SetArgs(a)
		err = root.Execute()
		stderr.Close()
		got, _ := os.ReadFile(stderr.Name())
		if err != nil || b.String() != out {
			t.Fatalf("--quiet=%v: %v\n%s", quiet, err, b.String())
		}
		if named := strings.Contains(string(got), "reproduce progap-cora: grid edge-finite (1 of 3)"); named == quiet || quiet && len(got) > 0 {
			t.Errorf("--quiet=%v: stderr\n%s", quiet, got)
		}
	}
}

// TestReproduceQuickEveryPreset: every other preset runs end to end with
// --quick on the real datasets (about 10 s in all) and tabulates each of
// its grids with every row (method or label) and its paper cells.
func TestReproduceQuickEveryPreset(t *testing.T) {
	data, ok := testutil.SharedDatasets()
	if !ok {
		t.Skip("real datasets not found: set DPGNN_DATA or place them at ../shared/datasets beside the repository")
	}
	for _, p := range reproPresets {
		if p.name == "progap-cora" { // TestReproduceQuickProGAP
			continue
		}
		t.Run(p.name, func(t *testing.T) {
			out, err := runCLI(t, "reproduce", p.name, "--quick", "--out", t.TempDir(), "--data-dir", data, "--workers", "2")
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range p.grids {
				if !strings.Contains(out, "## "+g.name+":") {
					t.Errorf("no table for grid %s:\n%s", g.name, out)
				}
				for _, m := range g.methods {
					if !strings.Contains(out, "| "+m+" | ") {
						t.Errorf("grid %s: no row %s:\n%s", g.name, m, out)
					}
				}
			}
		})
	}
}

// TestSweepLabelsAndMetric: a method runs twice under labels with its own
// settings, each label a row; --metric tabulates another metric and an
// unknown one is refused.
func TestSweepLabelsAndMetric(t *testing.T) {
	dir := t.TempDir()
	out, err := runCLI(t, "sweep", "--methods", "mlp,mlp@short", "--set", "mlp@short:epochs=3", "--set", "mlp:epochs=10",
		"--epsilons", "1", "--privacy", "node", "--delta", "1e-5", "--runs", "1", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "| mlp | ") || !strings.Contains(out, "| mlp@short | ") {
		t.Errorf("want rows mlp and mlp@short:\n%s", out)
	}
	b, _ := os.ReadFile(filepath.Join(dir, sweepResultsFile))
	if !strings.Contains(string(b), `"method":"mlp@short"`) {
		t.Errorf("the label's record does not carry it:\n%s", b)
	}
	if out, err = runCLI(t, "sweep", "--from", dir, "--metric", "val_acc"); err != nil || strings.Contains(out, "–") {
		t.Errorf("--metric val_acc: %v\n%s", err, out)
	}
	if _, err = runCLI(t, "sweep", "--from", dir, "--metric", "nope"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("--metric nope: got %v, want an error naming it", err)
	}
}

// TestReproduceDPARPaperSettings: dpar-table1's paper-calibrated rows run
// the paper's training settings whatever DPAR's defaults are (every key of
// dparPaperSet, which states the same values as dparPaperFlags), the strict
// rows run the defaults (no paper setting, no paper accounting).
func TestReproduceDPARPaperSettings(t *testing.T) {
	var flags []string
	for _, kv := range strings.Split(dparPaperSet, ",") {
		k, v, _ := strings.Cut(kv, "=")
		flags = append(flags, "--"+k, v)
	}
	if got := strings.Join(flags, " "); got != dparPaperFlags {
		t.Fatalf("dparPaperSet as flags %q, dparPaperFlags %q", got, dparPaperFlags)
	}
	i := slices.IndexFunc(reproPresets, func(p reproPreset) bool { return p.name == "dpar-table1" })
	if i < 0 {
		t.Fatal("no dpar-table1 preset")
	}
	paperRows := 0
	for _, set := range reproPresets[i].grids[0].sets {
		label, list, _ := strings.Cut(set, ":")
		kvs := strings.Split(list, ",")
		if !slices.Contains(kvs, "accounting=paper") {
			if strings.Contains(list, "node-rate") || strings.Contains(list, "rows=") {
				t.Errorf("%s: a strict row sets %q", label, list)
			}
			continue
		}
		paperRows++
		for _, kv := range strings.Split(dparPaperSet, ",") {
			k, _, _ := strings.Cut(kv, "=")
			last := ""
			for _, x := range kvs { // a later key overrides an earlier one
				if strings.HasPrefix(x, k+"=") {
					last = x
				}
			}
			if last == "" {
				t.Errorf("%s: the paper's %s is not set: %q", label, k, list)
			}
		}
		if !slices.Contains(kvs, "node-rate=0.09") {
			t.Errorf("%s: not the paper's node subsampling: %q", label, list)
		}
	}
	if paperRows != 4 {
		t.Errorf("%d paper-calibrated rows, want 4 (three variants and em1-selected)", paperRows)
	}
}
