package trainers

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/dpgnn/dpgnn/dp"
)

// TestRecordJSONFields: a record has every field of the CLI's JSON contract and
// the provenance fields; δ and the privacy report of a run without privacy
// are null, not absent and not 0.
func TestRecordJSONFields(t *testing.T) {
	d := 1e-5
	for _, tc := range []struct {
		name      string
		rec       Record
		nullDelta bool
	}{
		{"none", Record{Method: "gcn", Privacy: "none", Runs: 2, Seed: 3, Seeds: []uint64{3, 4}}, true},
		{"edge", Record{Method: "gap", Privacy: "edge", Epsilon: dp.EpsilonJSON(1), Delta: &d, Runs: 1, Seed: 1, Seeds: []uint64{1},
			PrivacyReport: &dp.Report{Level: "edge", Accountant: "gdp", Delta: d}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.rec)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"method", "dataset", "split", "privacy", "epsilon", "delta", "runs", "seed", "seeds",
				"hyperparameters", "metrics", "privacy_report", "seconds",
				"version", "commit", "timestamp", "command", "dataset_fingerprint"} {
				if _, ok := m[k]; !ok {
					t.Errorf("record lacks %q: %s", k, b)
				}
			}
			if got := m["delta"] == nil; got != tc.nullDelta {
				t.Errorf("delta = %v, want null: %v", m["delta"], tc.nullDelta)
			}
			if tc.nullDelta && m["privacy_report"] != nil {
				t.Errorf("privacy_report = %v, want null", m["privacy_report"])
			}
		})
	}
}

// TestPseudoCommit: a pseudo-version (go install module@commit) names its
// commit's 12-digit prefix, in each of Go's three forms and with a build
// suffix; a release, "(devel)" or a malformed string names none.
func TestPseudoCommit(t *testing.T) {
	for _, tc := range []struct{ version, want string }{
		{"v0.0.0-20260101120000-0123456789ab", "0123456789ab"},
		{"v1.2.4-0.20260101120000-0123456789ab", "0123456789ab"},
		{"v1.2.3-pre.0.20260101120000-abcdefabcdef", "abcdefabcdef"},
		{"v0.0.0-20260101120000-0123456789ab+dirty", "0123456789ab"},
		{"v1.2.3", ""},
		{"(devel)", ""},
		{"v0.0.0-2026-0123456789ab", ""},
		{"v0.0.0-20260101120000-0123456789AB", ""},
	} {
		if got := pseudoCommit(tc.version); got != tc.want {
			t.Errorf("pseudoCommit(%q) = %q, want %q", tc.version, got, tc.want)
		}
	}
}

// TestLinkedCommit: without a VCS stamp (as under go test) the commit is
// the link-time LinkedCommit, "" when none was linked.
func TestLinkedCommit(t *testing.T) {
	if _, c := buildInfo(); c != "" {
		t.Skipf("this test binary carries a VCS stamp (%s)", c)
	}
	defer func(c string) { LinkedCommit = c }(LinkedCommit)
	for _, linked := range []string{"", "0123456789abcdef"} {
		LinkedCommit = linked
		if _, c := BuildInfo(); c != linked {
			t.Errorf("LinkedCommit %q: commit %q", linked, c)
		}
	}
}

// TestBuildInfo: a version is always reported ("(devel)" without one); the
// commit is empty or a revision, "+dirty" when the tree was modified.
func TestBuildInfo(t *testing.T) {
	version, commit := BuildInfo()
	if version == "" {
		t.Error("empty version, want the module version or (devel)")
	}
	if commit != "" && !regexp.MustCompile(`^[0-9a-f]{7,64}(\+dirty)?$`).MatchString(commit) {
		t.Errorf("commit %q is not a revision", commit)
	}
}
