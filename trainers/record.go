package trainers

import (
	"encoding/json"
	"math"
	"regexp"
	"runtime/debug"

	"github.com/dpgnn/dpgnn/dp"
)

// Record is the JSON result of `dpgnn train --json`.
// Epsilon is null for ε = ∞ (JSON has no infinity); Delta and
// PrivacyReport are null when the run claims no privacy (privacy "none", or
// ε = ∞). The provenance fields (Seeds, Version, Commit, Timestamp, Command,
// DatasetFingerprint) say which code ran which data and how.
type Record struct {
	Method  string `json:"method"`
	Dataset string `json:"dataset"`
	Split   string `json:"split"`
	// Privacy is the level: "none", "edge" or "node".
	Privacy string   `json:"privacy"`
	Epsilon *float64 `json:"epsilon"`
	Delta   *float64 `json:"delta"`
	Runs    int      `json:"runs"`
	Seed    uint64   `json:"seed"`
	// Seeds are the seeds of the runs, in order: Seed, Seed+1, ….
	Seeds           []uint64           `json:"seeds"`
	Hyperparameters map[string]any     `json:"hyperparameters"`
	Metrics         map[string]Summary `json:"metrics"`
	PrivacyReport   *dp.Report         `json:"privacy_report"`
	Seconds         float64            `json:"seconds"`
	// SecureNoise is true when the mechanisms' randomness came from
	// crypto/rand rather than from Seed.
	SecureNoise bool `json:"secure_noise,omitempty"`
	// Version is the dpgnn module version of the binary ("(devel)" when
	// it carries none) and Commit its VCS revision, with "+dirty" for a
	// modified checkout, or "unknown" when the build carries none (go
	// test, -buildvcs=false without -ldflags -X, a library build): see
	// BuildInfo and UnknownCommit.
	Version string `json:"version"`
	Commit  string `json:"commit"`
	// Timestamp is when the runs started (RFC 3339, UTC).
	Timestamp string `json:"timestamp"`
	// Command is the command line that produced the record.
	Command string `json:"command"`
	// DatasetFingerprint is the SHA-256 (hex) of the dataset's arrays as
	// loaded (run.DatasetFingerprint).
	DatasetFingerprint string `json:"dataset_fingerprint"`
}

// ModulePath is dpgnn's module path, looked up in the build information.
const ModulePath = "github.com/dpgnn/dpgnn"

// UnknownCommit is what a record states as its commit when the binary
// carries none (BuildInfo returns ""): said, never left out.
const UnknownCommit = "unknown"

// LinkedCommit is the commit stamped at link time, for builds without VCS
// information (-buildvcs=false, a source tarball):
//
//	go build -ldflags "-X github.com/dpgnn/dpgnn/trainers.LinkedCommit=$(git rev-parse HEAD)" ./cmd/dpgnn
//
// BuildInfo uses it when the build information has no revision.
var LinkedCommit string

// pseudoRevision matches a Go pseudo-version (vX.Y.Z-yyyymmddhhmmss-rev,
// vX.Y.Z-pre.0.yyyymmddhhmmss-rev, vX.Y.(Z+1)-0.yyyymmddhhmmss-rev, with
// an optional +incompatible or +dirty): its last part is the commit's
// 12-hex-digit prefix.
var pseudoRevision = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+-(?:[0-9A-Za-z.-]*\.)?(?:0\.)?[0-9]{14}-([0-9a-f]{12})(\+[0-9A-Za-z.]+)*$`)

// BuildInfo returns the version of the dpgnn module in the running binary
// (from runtime/debug.ReadBuildInfo; "(devel)" when it has none, as in a
// build without version control information) and the commit it was built
// from: the vcs.revision setting, with "+dirty" when vcs.modified is true;
// without one, the revision a pseudo-version names (go install
// module@commit), else LinkedCommit; "" when none is known (go test,
// -buildvcs=false, or dpgnn used as a library of another main module).
func BuildInfo() (version, commit string) {
	version, commit = buildInfo()
	if commit == "" {
		if commit = pseudoCommit(version); commit == "" {
			commit = LinkedCommit
		}
	}
	return version, commit
}

// pseudoCommit is the revision prefix a pseudo-version names, "" for any
// other version.
func pseudoCommit(version string) string {
	if m := pseudoRevision.FindStringSubmatch(version); m != nil {
		return m[1]
	}
	return ""
}

// buildInfo is BuildInfo from the build information alone.
func buildInfo() (version, commit string) {
	version = "(devel)"
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return version, ""
	}
	main := info.Main.Path == ModulePath
	if main {
		if info.Main.Version != "" {
			version = info.Main.Version
		}
	} else {
		for _, d := range info.Deps {
			if d.Path == ModulePath && d.Version != "" {
				version = d.Version
			}
		}
		return version, "" // vcs.* describe the main module, not dpgnn
	}
	var dirty bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if commit != "" && dirty {
		commit += "+dirty"
	}
	return version, commit
}

// MarshalJSON replaces NaN values (e.g. validation accuracy without a
// validation set) with null.
func (s Summary) MarshalJSON() ([]byte, error) {
	type out struct {
		Mean   *float64   `json:"mean"`
		Std    *float64   `json:"std"`
		CI95   *float64   `json:"ci95"`
		Values []*float64 `json:"values"`
	}
	f := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	o := out{Mean: f(s.Mean), Std: f(s.Std), CI95: f(s.CI95), Values: make([]*float64, len(s.Values))}
	for i, v := range s.Values {
		o.Values[i] = f(v)
	}
	return json.Marshal(o)
}
