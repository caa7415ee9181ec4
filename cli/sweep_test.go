package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
	"github.com/dpgnn/dpgnn/internal/testutil"
	"github.com/dpgnn/dpgnn/methods"
	"github.com/dpgnn/dpgnn/trainers"
)

var inf = math.Inf(1)

// sweepRec is a small record for --from tests: gap on cora at edge level,
// seeds 1–3, unless mods change it.
func sweepRec(t *testing.T, method string, eps float64, mods ...func(*trainers.Record)) string {
	t.Helper()
	d := 1e-5
	r := &trainers.Record{Method: method, Dataset: "cora", Split: "ratio:0.1:0.2", Privacy: "edge", Epsilon: dp.EpsilonJSON(eps),
		Delta: &d, Runs: 3, Seed: 1, Seeds: []uint64{1, 2, 3}, DatasetFingerprint: "aa11",
		Metrics:       map[string]trainers.Summary{"test_acc": {Mean: 0.7, CI95: 0.01, Values: []float64{0.69, 0.7, 0.71}}},
		PrivacyReport: &dp.Report{Level: "edge", Accountant: "gdp", Epsilon: dp.EpsilonJSON(eps), Delta: d}}
	for _, m := range mods {
		m(r)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// writeRecords writes each file's lines to dir/f<i>.jsonl and returns the
// paths.
func writeRecords(t *testing.T, dir string, files [][]string) []string {
	t.Helper()
	var paths []string
	for i, lines := range files {
		p := filepath.Join(dir, fmt.Sprintf("f%d.jsonl", i+1))
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// TestSweepFromRefusesMixedRecords: `sweep --from` builds one table only
// from records of one dataset (name and, where recorded, fingerprint), one
// split and one private level, with at most one record per (method, ε)
// cell; a byte-identical copy counts once with a warning. Refusals are one
// line naming both records.
func TestSweepFromRefusesMixedRecords(t *testing.T) {
	acc := func(a float64) func(*trainers.Record) {
		return func(r *trainers.Record) {
			r.Metrics["test_acc"] = trainers.Summary{Mean: a, CI95: 0.01, Values: []float64{a}}
		}
	}
	none := func(r *trainers.Record) { r.Privacy, r.Delta, r.PrivacyReport = "none", nil, nil }
	for _, tc := range []struct {
		name     string
		files    func(t *testing.T) [][]string
		wantErr  []string // substrings; none: no error
		wantWarn string
		rows     []string
	}{
		{"one table from two files", func(t *testing.T) [][]string {
			return [][]string{{sweepRec(t, "gap", 1), sweepRec(t, "gap", 8)},
				{sweepRec(t, "gap", inf), sweepRec(t, "gcn", inf, none)}}
		}, nil, "", []string{"| gap | 0.700 ± 0.010 | 0.700 ± 0.010 | 0.700 ± 0.010 |", "| gcn | – | – | 0.700 ± 0.010 |"}},
		{"records without fingerprint or seeds", func(t *testing.T) [][]string {
			return [][]string{{sweepRec(t, "gap", 1), sweepRec(t, "progap", 1, func(r *trainers.Record) { r.DatasetFingerprint, r.Seeds = "", nil })}}
		}, nil, "", []string{"| gap |", "| progap |"}},
		{"different datasets", func(t *testing.T) [][]string {
			return [][]string{{sweepRec(t, "gap", 1)}, {sweepRec(t, "gap", 8, func(r *trainers.Record) { r.Dataset = "csbm" })}}
		}, []string{"f2.jsonl line 1 is on dataset csbm", "f1.jsonl line 1 is on cora", "different datasets"}, "", nil},
		{"different splits", func(t *testing.T) [][]string {
			return [][]string{{sweepRec(t, "gap", 1), sweepRec(t, "gap", 8, func(r *trainers.Record) { r.Split = "ratio:0.7:0.2" })}}
		}, []string{"f1.jsonl line 2 has split ratio:0.7:0.2", "f1.jsonl line 1 has ratio:0.1:0.2", "different splits"}, "", nil},
		{"same name but different data", func(t *testing.T) [][]string {
			return [][]string{{sweepRec(t, "gap", 1)}, {sweepRec(t, "gap", 8, func(r *trainers.Record) { r.DatasetFingerprint = "bb22" })}}
		}, []string{"f2.jsonl line 1 and", "f1.jsonl line 1", "different data"}, "", nil},
		{"different privacy levels", func(t *testing.T) [][]string {
			return [][]string{{sweepRec(t, "gap", 1)}, {sweepRec(t, "gap", 8, func(r *trainers.Record) { r.Privacy = "node" })}}
		}, []string{"f2.jsonl line 1 is at node level", "f1.jsonl line 1 at edge level"}, "", nil},
		{"duplicate across files", func(t *testing.T) [][]string {
			return [][]string{{sweepRec(t, "gap", 1), sweepRec(t, "gap", 8)}, {sweepRec(t, "gap", 8, acc(0.8))}}
		}, []string{"duplicate records for gap at ε=8", "seeds 1–3", "f1.jsonl line 2 and", "f2.jsonl line 1"}, "", nil},
		{"duplicate in one file", func(t *testing.T) [][]string {
			return [][]string{{sweepRec(t, "gap", 1), sweepRec(t, "gap", 1, acc(0.8))}}
		}, []string{"duplicate records for gap at ε=1", "f1.jsonl line 1 and", "f1.jsonl line 2"}, "", nil},
		{"duplicate of records without seeds", func(t *testing.T) [][]string {
			old := func(r *trainers.Record) { r.Seeds = nil }
			return [][]string{{sweepRec(t, "gap", 1, old)}, {sweepRec(t, "gap", 1, old, acc(0.8))}}
		}, []string{"duplicate records for gap at ε=1", "seeds 1–3"}, "", nil},
		{"same cell with other seeds", func(t *testing.T) [][]string {
			return [][]string{{sweepRec(t, "gap", 1)}, {sweepRec(t, "gap", 1, func(r *trainers.Record) { r.Seed, r.Seeds = 4, []uint64{4, 5, 6} })}}
		}, []string{"f1.jsonl line 1 and", "f2.jsonl line 1 both fill the cell gap at ε=1", "seeds 1–3 vs privacy edge, seeds 4–6"}, "", nil},
		{"byte-identical copy", func(t *testing.T) [][]string {
			return [][]string{{sweepRec(t, "gap", 1), sweepRec(t, "gap", 8)}, {sweepRec(t, "gap", 8)}}
		}, nil, "f2.jsonl line 1 repeats", []string{"| gap | 0.700 ± 0.010 | 0.700 ± 0.010 |"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := writeRecords(t, t.TempDir(), tc.files(t))
			out, stderr, err := runCLIStreams(t, "sweep", "--from", strings.Join(files, ","))
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("accepted; table\n%s", out)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error is not one line: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, row := range tc.rows {
				if strings.Count(out, row) != 1 {
					t.Errorf("table lacks row %q:\n%s", row, out)
				}
			}
			if tc.wantWarn == "" && stderr != "" || !strings.Contains(stderr, tc.wantWarn) {
				t.Errorf("stderr %q, want %q", stderr, tc.wantWarn)
			}
		})
	}
}

// TestSweepAppendsCheckedRecords: a live sweep appends to an existing --out
// file only records that belong in one table with those already there and
// trains only the runs not recorded there; a sweep of another dataset,
// data, split, privacy level or method configuration, or one whose runs a
// per-cell record already fills, stops before training and leaves the file
// as it was.
func TestSweepAppendsCheckedRecords(t *testing.T) {
	base := []string{"sweep", "--methods", "mlp", "--epsilons", "2", "--privacy", "edge", "--runs", "1", "--set", "mlp:--epochs 2"}
	seed := filepath.Join(t.TempDir(), "seed.jsonl")
	if _, err := runCLI(t, append(base, "--out", seed)...); err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(seed)
	if err != nil || strings.Count(string(first), "\n") != 1 {
		t.Fatalf("first sweep wrote %q (%v), want one record", first, err)
	}
	line := strings.TrimSpace(string(first))
	cell, err := runCLI(t, "train", "mlp", "--privacy", "edge", "--epsilon", "2", "--epochs", "2", "--json")
	if err != nil {
		t.Fatal(err)
	}
	cell = strings.TrimSpace(cell)
	inf := append(base[:4:4], "inf", "--privacy", "edge", "--runs", "1", "--set", "mlp:--epochs 2")
	for _, tc := range []struct {
		name     string
		existing string // the --out file before the sweep ("" : none)
		args     []string
		wantErr  []string
		records  int // records in --out afterwards
	}{
		{"new file", "", base, nil, 1},
		{"another budget appended", line + "\n", inf, nil, 2},
		{"byte-identical lines already there", line + "\n" + line + "\n", inf, nil, 3},
		{"rerun trains nothing", line + "\n", base, nil, 1},
		{"other split", line + "\n", append(base, "--split", "ratio:0.3:0.3"), []string{"this sweep's mlp at ε=2 has split ratio:0.3:0.3", "different splits"}, 1},
		{"other data", line + "\n", append(base, "--seed", "2"), []string{"different data"}, 1},
		{"other dataset", strings.Replace(line, `"dataset":"csbm"`, `"dataset":"cora"`, 1) + "\n", base, []string{"this sweep's mlp at ε=2 is on dataset csbm", "different datasets"}, 1},
		{"other level", line + "\n", append(base[:6:6], "node", "--delta", "1e-5", "--runs", "1", "--set", "mlp:--epochs 2 --batch-size 50"),
			[]string{"this sweep's mlp at ε=2 is at node level", "line 1 at edge level"}, 1},
		{"other hyperparameters", line + "\n", append(base, "--set", "mlp:--epochs 3"),
			[]string{"out.jsonl line 1 is a run of mlp with another configuration than this sweep's (epochs=2 vs 3)", "one configuration per method"}, 1},
		{"other --delta", line + "\n", append(base, "--delta", "1e-6"), []string{"(--delta auto vs 1e-06)"}, 1},
		{"the run under another --seed", strings.Replace(strings.Replace(line, `"run":0`, `"run":1`, 1), `"sweep_seed":1`, `"sweep_seed":0`, 1) + "\n", base,
			[]string{"line 1 holds mlp at ε=2, seed 1 as run 1 of --seed 0, but this sweep runs it as run 0 of --seed 1: use --seed 0 or another --out"}, 1},
		{"a per-cell record of the cell", cell + "\n", base, []string{"out.jsonl line 1 is a record of 1 run(s) for the cell mlp at ε=2, which this sweep records run by run"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.jsonl")
			if tc.existing != "" {
				if err := os.WriteFile(out, []byte(tc.existing), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, _, err := runCLIStreams(t, append(tc.args, "--out", out)...)
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatal("accepted")
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error is not one line: %q", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(out)
			if n := strings.Count(string(b), "\n"); n != tc.records {
				t.Fatalf("--out holds %d records, want %d:\n%s", n, tc.records, b)
			}
			if (len(tc.wantErr) > 0 || tc.records == strings.Count(tc.existing, "\n")) && string(b) != tc.existing {
				t.Error("a refused sweep, or one with nothing to train, changed --out")
			}
			if len(tc.wantErr) == 0 {
				if _, err := runCLI(t, "sweep", "--from", out); err != nil {
					t.Errorf("--from the appended file: %v", err)
				}
			}
		})
	}
}

// TestSweepSetForms: --set takes METHOD:key=value,... (keys are flag
// names; a part without "=" continues the value before it) and the flag
// form METHOD:--flag value, in order, and both set the same configuration.
func TestSweepSetForms(t *testing.T) {
	values := func(sets ...string) map[string]any {
		t.Helper()
		p := &sweepPlan{sets: map[string][]string{"gcon": sets}}
		m, err := p.method("gcon")
		if err != nil {
			t.Fatal(err)
		}
		return methods.ConfigValues(m.Config())
	}
	kv := values("steps=0,2,lambda=1,pseudo-labels=false", "solver=adam")
	flags := values("--steps 0,2 --lambda 1 --pseudo-labels=false", "--solver adam")
	mixed := values("--steps 0,2 --pseudo-labels=false", "lambda=1,solver=adam")
	if !reflect.DeepEqual(kv, flags) || !reflect.DeepEqual(kv, mixed) {
		t.Fatalf("key=value %v\nflags %v\nmixed %v", kv, flags, mixed)
	}
	if kv["steps"] != "0,2" || kv["lambda"] != 1.0 || kv["pseudo-labels"] != false || kv["solver"] != "adam" || kv["alpha"] != 0.8 {
		t.Errorf("settings not applied, or defaults lost: %v", kv)
	}
}

// TestSweepChecksGridFirst: every mistake in a sweep's grid fails at once
// with a one-line error, before anything trains (--out is not even
// created), however late in the grid it sits.
func TestSweepChecksGridFirst(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
		real bool // needs the shared datasets
	}{
		{"unknown method last", []string{"--methods", "mlp,gap,nosuch"}, `unknown method "nosuch"`, false},
		{"empty method name", []string{"--methods", "mlp,,gap"}, "empty method name", false},
		{"method twice", []string{"--methods", "gap,mlp,gap"}, "gap is listed twice", false},
		{"bad budget", []string{"--epsilons", "1,8,eight"}, `"eight" is not a number`, false},
		{"non-positive budget", []string{"--epsilons", "1,0"}, "must be positive", false},
		{"budget twice", []string{"--epsilons", "1,8,8.0"}, "8 and 8.0 are the same budget", false},
		{"--set without method", []string{"--set", "--hops 1"}, "want METHOD:KEY=VALUE,... or METHOD:FLAGS", false},
		{"--set unknown method", []string{"--set", "gpa:--hops 1"}, `unknown method "gpa"`, false},
		{"--set method not swept", []string{"--set", "gcn:--epochs 5"}, "gcn is not among --methods mlp,gap,progap", false},
		{"--set unknown flag", []string{"--set", "progap:--hopz 1"}, "--set progap: unknown flag: --hopz", false},
		{"--set bad value", []string{"--set", "gap:--hops two"}, `--set gap: invalid argument "two"`, false},
		{"--set stray word", []string{"--set", "gap:--hops 1 2"}, `--set gap: "2" is not a flag`, false},
		{"--set invalid hyperparameter", []string{"--set", "progap:--lr -1"}, "progap at ε=1: LR (--lr) must be positive and finite, got -1", false},
		{"--set unknown key", []string{"--set", "progap:hops=1,hopz=1"}, `--set progap: unknown key "hopz" (keys: accountant, base-layers,`, false},
		{"--set bad value by key", []string{"--set", "gap:hops=two"}, "--set gap: hops=two: want an integer", false},
		{"--set bool by key", []string{"--set", "gap:hops=1", "--set", "progap:hops=1", "--set", "mlp:layers=2,hidden=yes"}, "--set mlp: hidden=yes: want an integer", false},
		{"--set no key", []string{"--set", "gap:1"}, `--set gap: "1": want key=value`, false},
		{"--set invalid hyperparameter by key", []string{"--set", "progap:lr=-1"}, "progap at ε=1: LR (--lr) must be positive and finite, got -1", false},
		{"level without inf column", []string{"--methods", "mlp,gcn", "--epsilons", "1,8"}, "gcn does not support --privacy edge", false},
		{"node level δ auto", []string{"--privacy", "node", "--methods", "mlp"}, "mlp at ε=1: --delta auto", false},
		{"private selection at edge level", []string{"--selection", "private", "--selection-epsilon", "1"}, "--selection private is for node-level", false},
		{"unknown dataset", []string{"--dataset", "nosuch"}, `unknown dataset "nosuch"`, false},
		{"split unparseable", []string{"--split", "ratio:0.1"}, `split "ratio:0.1"`, false},
		{"split impossible", []string{"--split", "ratio:0.9:0.9"}, "must be below 1", false},
		{"no runs", []string{"--runs", "0"}, "--runs must be positive", false},
		{"methods' default splits differ", []string{"--methods", "mlp,gcon", "--dataset", "actor"}, "the methods' splits differ on actor (mlp: masks:0, gcon: masks)", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.jsonl")
			args := append([]string{"sweep", "--privacy", "edge", "--out", out}, tc.args...)
			if tc.real {
				args = append(args, "--data-dir", testutil.DataDir(t))
			}
			_, err := runCLI(t, args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error with %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("--out exists after a refused grid (%v): the sweep got past its checks", err)
			}
		})
	}
}
