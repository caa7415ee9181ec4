package cli

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dpgnn/dpgnn/trainers"
	"github.com/spf13/cobra"
)

// runCLIStreams runs the CLI and returns its stdout and stderr.
func runCLIStreams(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRoot(&out, &errb)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), errb.String(), err
}

// TestTrainRecordProvenance: every `train --json` record says which code
// ran (version, commit), when (timestamp, RFC 3339 UTC), how (command, the
// seeds of the runs) and on which data (dataset fingerprint); δ and the
// privacy report are null without privacy and δ is the report's with it.
func TestTrainRecordProvenance(t *testing.T) {
	for _, tc := range []struct {
		name      string
		args      []string
		privacy   string
		seeds     []any
		wantDelta any
	}{
		{"none", []string{"train", "gcn", "--epochs", "2", "--runs", "2", "--seed", "7", "--json"}, "none", []any{7.0, 8.0}, nil},
		{"node", []string{"train", "mlp", "--privacy", "node", "--epsilon", "2", "--delta", "1e-5", "--epochs", "2",
			"--batch-size", "50", "--json"}, "node", []any{1.0}, 1e-5},
		{"edge at ε = ∞", []string{"train", "gap", "--privacy", "edge", "--epsilon", "inf", "--epochs", "2",
			"--encoder-epochs", "2", "--json"}, "edge", []any{1.0}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := time.Now().UTC().Truncate(time.Second)
			out, err := runCLI(t, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			var r map[string]any
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("not one JSON object: %v\n%s", err, out)
			}
			for _, k := range []string{"method", "dataset", "privacy", "epsilon", "delta", "runs", "seed", "hyperparameters",
				"metrics", "privacy_report", "seconds", "version", "commit", "timestamp", "command", "dataset_fingerprint", "seeds"} {
				if _, ok := r[k]; !ok {
					t.Errorf("record lacks %q", k)
				}
			}
			if r["privacy"] != tc.privacy {
				t.Errorf("privacy %v, want %s", r["privacy"], tc.privacy)
			}
			if r["delta"] != tc.wantDelta {
				t.Errorf("delta %v, want %v", r["delta"], tc.wantDelta)
			}
			if tc.privacy == "none" && r["privacy_report"] != nil {
				t.Errorf("privacy_report %v, want null", r["privacy_report"])
			}
			if v, _ := r["version"].(string); v == "" {
				t.Error("empty version")
			}
			// A revision, or "unknown" said in so many words: never dropped.
			if c, _ := r["commit"].(string); !regexp.MustCompile(`^([0-9a-f]+(\+dirty)?|unknown)$`).MatchString(c) {
				t.Errorf("commit %q: want a revision or unknown", c)
			}
			ts, err := time.Parse(time.RFC3339, r["timestamp"].(string))
			if err != nil || !strings.HasSuffix(r["timestamp"].(string), "Z") || ts.Before(before) || ts.After(time.Now()) {
				t.Errorf("timestamp %v (%v): want RFC 3339 UTC at the start of the run", r["timestamp"], err)
			}
			for _, want := range []string{"dpgnn " + strings.Join(tc.args[:2], " ") + " ", " --epochs 2", " --json"} {
				if !strings.Contains(r["command"].(string), want) {
					t.Errorf("command %q lacks %q", r["command"], want)
				}
			}
			if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(r["dataset_fingerprint"].(string)) {
				t.Errorf("dataset_fingerprint %v", r["dataset_fingerprint"])
			}
			if seeds, _ := r["seeds"].([]any); len(seeds) != len(tc.seeds) || seeds[0] != tc.seeds[0] || seeds[len(seeds)-1] != tc.seeds[len(tc.seeds)-1] {
				t.Errorf("seeds %v, want %v", r["seeds"], tc.seeds)
			}
		})
	}
}

// TestTrainFingerprintFollowsData: the same dataset gives the same
// fingerprint whatever the method; the generated graph of another seed
// gives another.
func TestTrainFingerprintFollowsData(t *testing.T) {
	fp := func(args ...string) string {
		out, err := runCLI(t, append([]string{"train"}, append(args, "--epochs", "1", "--json")...)...)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			FP string `json:"dataset_fingerprint"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return r.FP
	}
	a, b, c := fp("gcn"), fp("mlp"), fp("gcn", "--seed", "2")
	if a != b || a == c {
		t.Errorf("fingerprints gcn %s, mlp %s (same data: want equal), gcn seed 2 %s (other csbm draw: want different)", a, b, c)
	}
}

// TestVersionFlag: dpgnn --version prints the version and the commit: the
// link-time one where the build carries no VCS stamp (as under go test),
// else "unknown" with how to stamp it, and the records say the same.
func TestVersionFlag(t *testing.T) {
	if _, c := trainers.BuildInfo(); c != "" && trainers.LinkedCommit == "" {
		t.Skipf("this test binary carries a commit (%s)", c)
	}
	defer func(c string) { trainers.LinkedCommit = c }(trainers.LinkedCommit)
	for _, tc := range []struct {
		linked, want, record string
	}{
		{"", `^dpgnn version \S+, commit unknown \(the build carries no VCS stamp, .*-ldflags .*trainers\.LinkedCommit=.*\)\n$`, "unknown"},
		{"0123456789ab", `^dpgnn version \S+, commit 0123456789ab\n$`, "0123456789ab"},
	} {
		trainers.LinkedCommit = tc.linked
		for _, flag := range []string{"--version", "-v"} {
			out, err := runCLI(t, flag)
			if err != nil {
				t.Fatal(err)
			}
			if !regexp.MustCompile(tc.want).MatchString(out) {
				t.Errorf("linked %q: %s printed %q", tc.linked, flag, out)
			}
		}
		out, err := runCLI(t, "train", "gcn", "--epochs", "1", "--json")
		if err != nil {
			t.Fatal(err)
		}
		var r trainers.Record
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		if r.Commit != tc.record {
			t.Errorf("linked %q: the record's commit is %q, want %q", tc.linked, r.Commit, tc.record)
		}
	}
}

// TestCommandLine: the process's arguments when run as a program (quoted
// where a shell would split them), else the command rebuilt from cobra.
func TestCommandLine(t *testing.T) {
	defer func(a []string) { argv = a }(argv)
	cmd := &cobra.Command{Use: "sweep"}
	var sets []string
	var runs int
	cmd.Flags().StringArrayVar(&sets, "set", nil, "")
	cmd.Flags().IntVar(&runs, "runs", 5, "")
	root := &cobra.Command{Use: "dpgnn"}
	root.AddCommand(cmd)
	if err := cmd.Flags().Parse([]string{"--set", "mlp:--epochs 5", "--set", "gap:--hops=1", "--runs", "2"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		argv []string
		want string
	}{
		{"program", []string{"/usr/local/bin/dpgnn", "train", "gcn", "--set", "it's"}, `dpgnn train gcn --set 'it'\''s'`},
		{"cobra", nil, `dpgnn sweep --runs 2 --set 'mlp:--epochs 5' --set gap:--hops=1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			argv = tc.argv
			if got := commandLine(cmd, nil); got != tc.want {
				t.Errorf("got %s\nwant %s", got, tc.want)
			}
		})
	}
}
