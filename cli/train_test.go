package cli

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/internal/testutil"
)

func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRoot(&out, &errb)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func TestTrainJSONRecord(t *testing.T) {
	out, err := runCLI(t, "train", "gcn", "--epochs", "20", "--runs", "2", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("--json output is not one JSON object: %v\n%s", err, out)
	}
	for _, k := range []string{"method", "dataset", "privacy", "epsilon", "delta", "runs", "seed", "hyperparameters", "metrics", "seconds"} {
		if _, ok := r[k]; !ok {
			t.Errorf("JSON record lacks %q", k)
		}
	}
	if r["epsilon"] != nil {
		t.Errorf("ε = ∞ must be null, got %v", r["epsilon"])
	}
	m := r["metrics"].(map[string]any)["test_acc"].(map[string]any)
	if vals := m["values"].([]any); len(vals) != 2 {
		t.Errorf("want 2 run values, got %v", vals)
	}
	hp := r["hyperparameters"].(map[string]any)
	if hp["epochs"] != 20.0 || hp["hidden"] == nil {
		t.Errorf("hyperparameters %v", hp)
	}
}

func TestTrainSummaryTable(t *testing.T) {
	out, err := runCLI(t, "train", "mlp", "--epochs", "5")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "test_acc") || !strings.Contains(out, "mlp on csbm") {
		t.Fatalf("summary:\n%s", out)
	}
}

func TestTrainBadInputs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "nosuch"}, "unknown"},
		{[]string{"train", "gcn", "--dataset", "nosuch"}, "nosuch"},
		{[]string{"train", "mlp", "--privacy", "node", "--epsilon", "0"}, "epsilon"},
		{[]string{"train", "mlp", "--privacy", "node", "--epsilon", "-1"}, "epsilon"},
		{[]string{"train", "mlp", "--delta", "2"}, "delta"},
		{[]string{"train", "mlp", "--privacy", "everything"}, "privacy"},
		{[]string{"train", "gcn", "--split", "ratio:0.9:0.9"}, "split"},
		{[]string{"train", "gcn", "--privacy", "edge", "--epsilon", "1"}, "does not support"},
		{[]string{"train", "gcn", "--lr", "-1"}, "LR (--lr) must be positive and finite, got -1"},
		{[]string{"train", "mlp", "--privacy", "node", "--norm", "batchnorm", "--epsilon", "1"}, "groupnorm"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, err := runCLI(t, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error mentioning %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestDataGenerateAndInfo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.npz")
	if _, err := runCLI(t, "data", "generate", "--out", path, "--nodes", "300", "--classes", "3"); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "data", "info", path, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Stats struct {
			Nodes   int `json:"nodes"`
			Classes int `json:"classes"`
		} `json:"stats"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Stats.Nodes != 300 || r.Stats.Classes != 3 {
		t.Fatalf("info of the generated graph: %v %s", err, out)
	}
}

func TestDataInfoCora(t *testing.T) {
	dir := testutil.DataDir(t)
	out, err := runCLI(t, "data", "info", "cora", "--data-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"2708", "5278", "1 / 168", "0.81"} {
		if !strings.Contains(out, want) {
			t.Errorf("cora info lacks %q:\n%s", want, out)
		}
	}
}

func TestAccountProGAPAndGAP(t *testing.T) {
	// ProGAP's edge-level σ table (exact Gaussian column): K = 2, ε = 1,
	// δ = 1e-7 → 6.6166.
	out, err := runCLI(t, "account", "progap", "--hops", "2", "--epsilon", "1", "--delta", "1e-7", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Noise    float64 `json:"noise"`
		Achieved float64 `json:"achieved_epsilon"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Noise < 6.6166*(1-1e-4) || r.Noise > 6.6166*(1+1e-4) || r.Achieved > 1 {
		t.Fatalf("progap edge σ = %v (achieved ε %v), spec 6.6166", r.Noise, r.Achieved)
	}
	// An undirected edge unit keeps the multiplier and scales the NAP std by √2.
	out, err = runCLI(t, "account", "progap", "--hops", "2", "--epsilon", "1", "--delta", "1e-7", "--edge-unit", "undirected", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var u struct {
		Noise  float64 `json:"noise"`
		NAPStd float64 `json:"nap_std"`
	}
	if err := json.Unmarshal([]byte(out), &u); err != nil {
		t.Fatal(err)
	}
	if u.Noise != r.Noise || math.Abs(u.NAPStd-math.Sqrt2*r.Noise) > 1e-9*r.Noise {
		t.Fatalf("undirected unit: multiplier %v, NAP std %v; want %v and √2 times it", u.Noise, u.NAPStd, r.Noise)
	}
	if _, err := runCLI(t, "account", "progap", "--hops", "2", "--epsilon", "1", "--delta", "1e-7", "--edge-unit", "both"); err == nil ||
		!strings.Contains(err.Error(), "--edge-unit") {
		t.Fatalf("--edge-unit both: %v", err)
	}
	// Node level needs the DP-SGD parameters and uses the PLD accountant
	// (every release has a PLD), RDP when asked.
	if _, err := runCLI(t, "account", "gap", "--level", "node", "--hops", "2", "--noise", "1", "--delta", "1e-5"); err == nil ||
		!strings.Contains(err.Error(), "train-nodes") {
		t.Fatalf("node level without --train-nodes: %v", err)
	}
	out, err = runCLI(t, "account", "gap", "--level", "node", "--hops", "2", "--noise", "1", "--delta", "1e-5",
		"--train-nodes", "1000", "--batch-size", "100", "--epochs", "5", "--encoder-epochs", "5", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"accountant":"pld"`) || !strings.Contains(out, "PoissonGaussian") {
		t.Fatalf("node-level gap account: %s", out)
	}
	var pld, rdp struct {
		Epsilon float64 `json:"epsilon"`
	}
	if err := json.Unmarshal([]byte(out), &pld); err != nil {
		t.Fatal(err)
	}
	out, err = runCLI(t, "account", "gap", "--level", "node", "--hops", "2", "--noise", "1", "--delta", "1e-5",
		"--train-nodes", "1000", "--batch-size", "100", "--epochs", "5", "--encoder-epochs", "5", "--accountant", "rdp", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &rdp); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"accountant":"rdp"`) || !(pld.Epsilon < rdp.Epsilon) {
		t.Fatalf("node-level gap with --accountant rdp: %s (pld ε %v, want below rdp's)", out, pld.Epsilon)
	}
}

// TestSweepTableAndRecords: the table, one record per run cell, a PNG plot,
// and refusals for a missing privacy level and an unwritable plot format.
func TestSweepTableAndRecords(t *testing.T) {
	out := filepath.Join(t.TempDir(), "s.jsonl")
	png := filepath.Join(t.TempDir(), "s.png")
	table, err := runCLI(t, "sweep", "--methods", "mlp,gcn", "--epsilons", "2,inf", "--privacy", "edge", "--runs", "1",
		"--set", "mlp:--epochs 5", "--set", "gcn:--epochs 5", "--out", out, "--plot", png)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table, "| mlp |") || !strings.Contains(table, "| gcn | – |") {
		t.Fatalf("table:\n%s", table)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// mlp at ε=2 and ε=∞, gcn only at ∞ (non-private reference)
	if n := strings.Count(string(b), "\n"); n != 3 {
		t.Fatalf("%d records, want 3:\n%s", n, b)
	}
	// --from rebuilds the same table from the records, training nothing
	again, err := runCLI(t, "sweep", "--from", out)
	if err != nil || again != table {
		t.Fatalf("sweep --from: err %v, table\n%s\nwant\n%s", err, again, table)
	}
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, append(b, []byte("{not json\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runCLI(t, "sweep", "--from", bad); err == nil || !strings.Contains(err.Error(), "line 4") {
		t.Fatalf("--from with a malformed line 4: err %v", err)
	}
	if p, err := os.ReadFile(png); err != nil || len(p) < 1000 || !bytes.HasPrefix(p, []byte("\x89PNG")) {
		t.Fatalf("--plot wrote %d bytes (%v), want a PNG image", len(p), err)
	}
	if _, err := runCLI(t, "sweep", "--privacy", "none"); err == nil {
		t.Fatal("sweep without a privacy level accepted")
	}
	if _, err := runCLI(t, "sweep", "--privacy", "edge", "--plot", "x.jpg"); err == nil || !strings.Contains(err.Error(), ".png") {
		t.Fatalf("--plot x.jpg: err %v, want a refusal naming the formats", err)
	}
}

// TestSecureNoiseRunsDiffer: with --secure-noise two runs with the same seed
// add different noise (so different models), and the record says so;
// without it they repeat exactly.
func TestSecureNoiseRunsDiffer(t *testing.T) {
	args := []string{"train", "mlp", "--privacy", "node", "--epsilon", "1", "--delta", "1e-5", "--epochs", "2", "--batch-size", "20", "--json"}
	loss := func(extra ...string) (string, bool) {
		out, err := runCLI(t, append(args, extra...)...)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Metrics map[string]struct {
				Values []float64 `json:"values"`
			} `json:"metrics"`
			SecureNoise bool `json:"secure_noise"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(r.Metrics)
		return string(b), r.SecureNoise
	}
	a, _ := loss()
	b, _ := loss()
	if a != b {
		t.Fatal("seeded runs do not repeat")
	}
	c, sec := loss("--secure-noise")
	d, _ := loss("--secure-noise")
	if !sec {
		t.Fatal("record lacks secure_noise")
	}
	if c == d && c == a {
		t.Fatal("--secure-noise runs repeat the seeded run exactly")
	}
}

// TestTrainGCONEndToEnd: GCON at edge level on the default graph through
// the CLI, both solvers: the record's receipt is objective perturbation
// with ε ≤ the target and δ = 1/|E|, the solve is exact (Newton) or its
// gradient norm is reported (Adam), and the model beats chance.
func TestTrainGCONEndToEnd(t *testing.T) {
	for _, solver := range []string{"newton", "adam"} {
		out, err := runCLI(t, "train", "gcon", "--privacy", "edge", "--epsilon", "2", "--encoder-epochs", "40",
			"--solver", solver, "--adam-epochs", "200", "--json")
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			PrivacyReport struct {
				Accountant string
				Epsilon    float64
				Delta      float64
				Notes      string
			} `json:"privacy_report"`
			Metrics map[string]struct{ Mean float64 }
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		p := r.PrivacyReport
		if p.Accountant != "objective-perturbation" || !(p.Epsilon > 1.9 && p.Epsilon <= 2) || !(p.Delta > 0 && p.Delta < 1e-3) {
			t.Errorf("%s: receipt %+v", solver, p)
		}
		if solver == "newton" && r.Metrics["solver_grad_norm"].Mean > 1e-8 {
			t.Errorf("newton stopped at ‖∇‖ = %g", r.Metrics["solver_grad_norm"].Mean)
		}
		if solver == "adam" && !strings.Contains(p.Notes, "solver adam") {
			t.Errorf("adam run does not say so: %q", p.Notes)
		}
		if acc := r.Metrics["test_acc"].Mean; acc < 0.4 { // 5 classes: chance 0.2
			t.Errorf("%s: test accuracy %.3f", solver, acc)
		}
	}
}
